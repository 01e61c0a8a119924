"""A2A v1.0 client on the real a2a-sdk 1.x for several proxy instances
(issue #36): each call goes to the instance it names, whatever the card
says (its interfaces are pointed at that instance's base), so a scenario
can do one thing through one instance and the next through another.

    A2A_INSTANCES_A=BASE_A A2A_INSTANCES_B=BASE_B python instances_client_v10.py list
        A task sent by "alice" through A is listed to her through B (the
        time it took, polled every 20 ms up to 5 s), and to "bob" nowhere.
    A2A_INSTANCES_A=BASE_A A2A_INSTANCES_B=BASE_B python instances_client_v10.py relay
        (the TCK agent, tests/tck/sut_v03.py) alice's task idles in
        input-required; she subscribes to it through A, completes it
        through B, and the subscription must end with the completion.

BASE_*: an agent's base URL at one instance (`http://127.0.0.1:PORT/a03`).
Prints one JSON line per step, as client_v10.py (whose helpers it uses);
exits 1 if any step failed. A2A_BINDING=HTTP+JSON uses the REST binding.
"""

import asyncio
import json
import os
import sys
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import httpx  # noqa: E402
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory  # noqa: E402
from a2a.types import (  # noqa: E402
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)

from client_v10 import BINDING, STEP_TIMEOUT, event_summary, user_message, v10_only  # noqa: E402


def report(step: str, data: dict) -> None:
    print(json.dumps({"step": step, **data}), flush=True)


async def client_at(http: httpx.AsyncClient, base: str, streaming: bool):
    """An SDK client of the agent at `base` whose calls all go to `base`'s
    instance (the card's interfaces pointed there)."""
    card = await asyncio.wait_for(A2ACardResolver(http, base).get_agent_card(), STEP_TIMEOUT)
    at = urlsplit(base)
    for i in card.supported_interfaces:
        u = urlsplit(i.url)
        i.url = urlunsplit((at.scheme, at.netloc, u.path, u.query, u.fragment))
    f = ClientFactory(ClientConfig(httpx_client=http, supported_protocol_bindings=[BINDING], streaming=streaming))
    v10_only(f)
    return f.create(card)


def http_as(who: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=15.0, headers={"A2A-Version": "1.0", "Authorization": f"Bearer {who}"})


async def listed(c) -> list:
    got = await c.list_tasks(ListTasksRequest())
    return [t.id for t in got.tasks]


async def list_scenario(base_a: str, base_b: str) -> bool:
    async with http_as("alice") as alice, http_as("bob") as bob:
        on_a = await client_at(alice, base_a, streaming=False)
        on_b = await client_at(alice, base_b, streaming=False)
        bob_b = await client_at(bob, base_b, streaming=False)
        out = [ev async for ev in on_a.send_message(SendMessageRequest(message=user_message("hello list")))]
        task_id = event_summary(out[-1])["task_id"]
        report("send", {"ok": bool(task_id), "task_id": task_id})
        started = time.monotonic()
        ids: list = []
        while time.monotonic() - started < 5.0:
            ids = await listed(on_b)
            if task_id in ids:
                break
            await asyncio.sleep(0.02)
        took_ms = round((time.monotonic() - started) * 1000)
        report("list_other", {"ok": task_id in ids, "ms": took_ms, "ids": ids})
        others = await listed(bob_b)
        report("list_other_caller", {"ok": task_id not in others, "ids": others})
        return task_id in ids and task_id not in others


def tck_message(prefix: str, task_id: str = "") -> Message:
    return Message(
        role=Role.ROLE_USER,
        message_id=f"{prefix}-{uuid.uuid4()}",
        parts=[Part(text="relay")],
        task_id=task_id,
    )


async def relay_scenario(base_a: str, base_b: str) -> bool:
    async with http_as("alice") as alice:
        blocking_a = await client_at(alice, base_a, streaming=False)
        streaming_a = await client_at(alice, base_a, streaming=True)
        blocking_b = await client_at(alice, base_b, streaming=False)
        out = [ev async for ev in blocking_a.send_message(SendMessageRequest(message=tck_message("tck-input-required")))]
        idle = event_summary(out[-1])
        report("idle", {"ok": idle.get("state") == "TASK_STATE_INPUT_REQUIRED", **idle})
        task_id = idle["task_id"]
        events: list = []
        first = asyncio.Event()

        async def follow() -> None:
            async for ev in streaming_a.subscribe(SubscribeToTaskRequest(id=task_id)):
                events.append(event_summary(ev))
                first.set()

        sub = asyncio.create_task(follow())
        await asyncio.wait_for(first.wait(), STEP_TIMEOUT)
        done = [ev async for ev in blocking_b.send_message(SendMessageRequest(message=tck_message("tck-complete", task_id)))]
        done = event_summary(done[-1])
        report("complete_other", {"ok": done.get("state") == "TASK_STATE_COMPLETED", **done})
        await asyncio.wait_for(sub, STEP_TIMEOUT)
        states = [e.get("state") for e in events]
        ok = (
            bool(events)
            and states[0] == "TASK_STATE_INPUT_REQUIRED"
            and states[-1] == "TASK_STATE_COMPLETED"
            and all(e.get("task_id") == task_id for e in events)
        )
        report("subscription", {"ok": ok, "events": events})
        return ok


def main() -> int:
    scenario = sys.argv[1]
    base_a = os.environ["A2A_INSTANCES_A"].rstrip("/")
    base_b = os.environ["A2A_INSTANCES_B"].rstrip("/")
    run = {"list": list_scenario, "relay": relay_scenario}[scenario]
    try:
        return 0 if asyncio.run(run(base_a, base_b)) else 1
    except Exception as e:  # noqa: BLE001 - every failure is reported
        report(scenario, {"ok": False, "error": f"{type(e).__name__}: {e}"})
        return 1


if __name__ == "__main__":
    sys.exit(main())
