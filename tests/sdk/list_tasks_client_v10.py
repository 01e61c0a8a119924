"""ListTasks on the real a2a-sdk 1.x client, over both HTTP bindings, of an
agent whose card lists only JSON-RPC (issue #37 item 3).

Sends two messages over the card's 1.0 JSON-RPC interface (the plain 1.0
`JsonRpcTransport`), with `authorization: Bearer <TOKEN>` (the caller),
then lists this caller's tasks over JSON-RPC and over HTTP+JSON (the plain
1.0 `RestTransport` at BASE_URL: `GET /tasks`, as raw REST clients and the
TCK ask it whatever the card lists), and once more over HTTP+JSON as
another caller (another token). Prints one JSON line per step (`{"step":
..., "ok", "task_ids", "total_size"}`).

    python list_tasks_client_v10.py BASE_URL
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.client.transports.rest import RestTransport
from a2a.types import ListTasksRequest, Message, Part, Role, SendMessageRequest

TIMEOUT = 20.0


def headers(token):
    return {"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}


async def main(base: str) -> int:
    async with httpx.AsyncClient(timeout=TIMEOUT, headers=headers("owner")) as http, \
            httpx.AsyncClient(timeout=TIMEOUT, headers=headers("someone-else")) as other:
        card = await A2ACardResolver(http, base).get_agent_card()
        bindings = sorted({i.protocol_binding for i in card.supported_interfaces})
        rpc = [i.url for i in card.supported_interfaces
               if i.protocol_binding == "JSONRPC" and i.protocol_version.startswith("1.0")]
        print(json.dumps({"step": "card", "ok": bool(rpc), "bindings": bindings}), flush=True)
        if not rpc:
            return 1
        t = JsonRpcTransport(http, card, rpc[0], is_shared_httpx=True)
        sent = []
        for text in ("one", "two"):
            msg = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])
            r = await asyncio.wait_for(t.send_message(SendMessageRequest(message=msg)), TIMEOUT)
            sent.append(r.task.id)
        print(json.dumps({"step": "send", "ok": all(sent), "task_ids": sorted(sent)}), flush=True)
        lists = (
            ("list jsonrpc", t),
            ("list rest", RestTransport(http, card, base, is_shared_httpx=True)),
            ("list rest other caller", RestTransport(other, card, base, is_shared_httpx=True)),
        )
        for step, transport in lists:
            try:
                got = await asyncio.wait_for(transport.list_tasks(ListTasksRequest(page_size=50)), TIMEOUT)
                ids = sorted(task.id for task in got.tasks)
                print(json.dumps({"step": step, "ok": True, "task_ids": ids,
                                  "total_size": got.total_size}), flush=True)
            except Exception as e:  # noqa: BLE001 - reported
                print(json.dumps({"step": step, "ok": False, "error": f"{type(e).__name__}: {e}"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
