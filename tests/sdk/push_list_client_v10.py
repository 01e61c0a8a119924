"""A2A v1.0 client on the real a2a-sdk 1.x, HTTP+JSON (REST) only: the
push-config calls of one task (issue #37 item 2).

Sends a message, creates two push configs for its task (`c1` with a token
and Bearer authentication, `c2` without), lists them, gets `c2`, deletes
`c1` and lists again. The transport is the SDK's plain 1.0 `RestTransport`
at the card's 1.0 HTTP+JSON interface. Prints one JSON line per step
(`{"step": ..., "ok": ..., ...observed}`); exits 1 if any step failed.

    python push_list_client_v10.py BASE_URL
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver
from a2a.client.transports.rest import RestTransport
from a2a.types import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

TIMEOUT = 20.0
HOOK = "https://hooks.example.com/a2a/"


def summary(c) -> dict:
    out = {"id": c.id, "task_id": c.task_id, "url": c.url}
    if c.token:
        out["token"] = c.token
    if c.HasField("authentication"):
        out["auth"] = [c.authentication.scheme, c.authentication.credentials]
    return out


async def main(base: str) -> int:
    failed = False

    def report(step, ok, **kw):
        nonlocal failed
        failed |= not ok
        print(json.dumps({"step": step, "ok": ok, **kw}), flush=True)

    async with httpx.AsyncClient(timeout=TIMEOUT, headers={"A2A-Version": "1.0"}) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        urls = [
            i.url
            for i in card.supported_interfaces
            if i.protocol_binding == "HTTP+JSON" and i.protocol_version.startswith("1.0")
        ]
        report("card", bool(urls), rest_urls=urls, push=card.capabilities.push_notifications)
        if not urls:
            return 1
        t = RestTransport(http, card, urls[0], is_shared_httpx=True)
        msg = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="hi")])
        sent = await asyncio.wait_for(t.send_message(SendMessageRequest(message=msg)), TIMEOUT)
        task_id = sent.task.id
        report("send", bool(task_id), task_id=task_id)

        failure = object()

        async def step(name, call):
            try:
                return await asyncio.wait_for(call, TIMEOUT)
            except Exception as e:  # noqa: BLE001 - reported
                report(name, False, error=f"{type(e).__name__}: {e}")
                return failure

        auth = AuthenticationInfo(scheme="Bearer", credentials="hook-secret")
        for cid, extra in (("c1", {"token": "tok-1", "authentication": auth}), ("c2", {})):
            cfg = TaskPushNotificationConfig(task_id=task_id, id=cid, url=HOOK + cid, **extra)
            made = await step(f"create {cid}", t.create_task_push_notification_config(cfg))
            if made is not failure:
                report(f"create {cid}", made.id == cid, config=summary(made))

        async def listed(name):
            req = ListTaskPushNotificationConfigsRequest(task_id=task_id)
            got = await step(name, t.list_task_push_notification_configs(req))
            if got is not failure:
                configs = sorted((summary(c) for c in got.configs), key=lambda c: c["id"])
                report(name, True, configs=configs)

        await listed("list")
        req = GetTaskPushNotificationConfigRequest(task_id=task_id, id="c2")
        got = await step("get c2", t.get_task_push_notification_config(req))
        if got is not failure:
            report("get c2", got.id == "c2", config=summary(got))
        req = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="c1")
        if await step("delete c1", t.delete_task_push_notification_config(req)) is not failure:
            report("delete c1", True)
        await listed("list after delete")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
