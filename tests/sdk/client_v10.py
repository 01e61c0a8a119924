"""A2A v1.0 client on the real a2a-sdk 1.x, JSON-RPC 1.0 only (the SDK's
own v0.3 fallback transport is never used: a card without a 1.0 JSON-RPC
interface is a failure).

Drives BASE_URL: card discovery, send, stream, get, cancel, resubscribe,
and two expected errors (get of an unknown task, cancel of a completed one).
Prints one JSON line per step (`{"step": ..., "ok": true, ...observed}` or
`{"step": ..., "ok": false, "error": ...}`); exits 1 if any step failed.
States are printed as the SDK's enum names (TASK_STATE_*).

    python client_v10.py BASE_URL

A2A_BINDING=HTTP+JSON in the environment makes it use the HTTP+JSON (REST)
binding instead, through the plain 1.0 REST transport.
"""

import asyncio
import base64
import json
import os
import sys
import uuid

import httpx
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.client.transports.rest import RestTransport
from a2a.utils.errors import A2AError
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)

STEP_TIMEOUT = 20.0
BINDING = os.environ.get("A2A_BINDING", "JSONRPC")

# The "parts" step: one part of every kind, and message metadata.
PARTS_DATA = {"k": [1, "x", True, None], "nested": {"z": 2.5}}
PARTS_BYTES = b"\x00\x01binary\xff"
PARTS_URI = "https://example.com/f.txt"
PARTS_METADATA = {"trace": "abc", "n": 2}

# The "big" steps: bodies past the proxy's 64 KiB read-ahead, both ways.
BIG_TEXT = "big " + "0123456789abcdef" * 6400


def part_summary(p) -> dict:
    """One common shape for both SDKs: text / data / bytes (base64) / uri."""
    which = p.WhichOneof("content")
    if which == "text":
        return {"text": p.text}
    if which == "data":
        return {"data": MessageToDict(p.data)}
    if which == "raw":
        return {"bytes": base64.b64encode(p.raw).decode(), "name": p.filename or None, "mime": p.media_type or None}
    return {"uri": p.url, "name": p.filename or None, "mime": p.media_type or None}


def user_message(text: str, context_id: str = "") -> Message:
    return Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=[Part(text=text)],
        context_id=context_id,
    )


def texts(artifacts) -> list:
    return [p.text for a in artifacts for p in a.parts if p.HasField("text")]


def state_name(s) -> str:
    return TaskState.Name(s)


def task_summary(task: Task) -> dict:
    return {
        "kind": "task",
        "task_id": task.id,
        "context_id": task.context_id,
        "state": state_name(task.status.state),
        "artifact_texts": texts(task.artifacts),
        "history": [
            {
                "role": Role.Name(m.role),
                "text": [p.text for p in m.parts if p.HasField("text")],
            }
            for m in task.history
        ],
    }


def event_summary(ev) -> dict:
    which = ev.WhichOneof("payload")
    if which == "task":
        return task_summary(ev.task)
    if which == "message":
        return {"kind": "message", "text": [p.text for p in ev.message.parts]}
    if which == "status_update":
        return {
            "kind": "status-update",
            "task_id": ev.status_update.task_id,
            "state": state_name(ev.status_update.status.state),
        }
    if which == "artifact_update":
        return {
            "kind": "artifact-update",
            "task_id": ev.artifact_update.task_id,
            "artifact_texts": texts([ev.artifact_update.artifact]),
        }
    return {"kind": str(which)}


async def collect(stream) -> dict:
    events = []
    task_id, final_state, artifact_texts = None, None, []
    async for ev in stream:
        s = event_summary(ev)
        events.append(s)
        task_id = s.get("task_id", task_id)
        if "state" in s:
            final_state = s["state"]
        if s["kind"] == "artifact-update":
            artifact_texts += s["artifact_texts"]
        elif s["kind"] == "task" and s["artifact_texts"]:
            artifact_texts = list(s["artifact_texts"])
    return {
        "events": events,
        "task_id": task_id,
        "final_state": final_state,
        "artifact_texts": artifact_texts,
    }


def v10_only(factory: ClientFactory) -> None:
    """Replaces the SDK's producer for BINDING (which falls back to its v0.3
    compat transport for 0.3 interfaces) by the plain 1.0 transport."""

    def producer(card, url, config):
        transport = RestTransport if BINDING == "HTTP+JSON" else JsonRpcTransport
        return transport(config.httpx_client, card, url, is_shared_httpx=True)

    factory.register(BINDING, producer)


async def run(base: str) -> bool:
    ok = True
    state: dict = {}

    def report(step: str, data: dict) -> None:
        print(json.dumps({"step": step, **data}), flush=True)

    async with httpx.AsyncClient(timeout=15.0, headers={"A2A-Version": "1.0"}) as http:
        card = await asyncio.wait_for(A2ACardResolver(http, base).get_agent_card(), STEP_TIMEOUT)
        ifaces = [
            {"url": i.url, "protocol_version": i.protocol_version}
            for i in card.supported_interfaces
            if i.protocol_binding == BINDING
        ]
        report(
            "card",
            {
                "ok": True,
                "name": card.name,
                "binding": BINDING,
                "interfaces": ifaces,
                "streaming": bool(card.capabilities.streaming),
            },
        )
        if not any(i["protocol_version"].startswith("1.0") for i in ifaces):
            report("send", {"ok": False, "error": f"card has no {BINDING} 1.0 interface"})
            return False

        def client(**kw):
            f = ClientFactory(ClientConfig(httpx_client=http, supported_protocol_bindings=[BINDING], **kw))
            v10_only(f)
            return f.create(card)

        blocking = client(streaming=False)
        polling = client(streaming=False, polling=True)
        streaming = client(streaming=True)

        async def send_with(c, text: str, context_id: str = "") -> dict:
            req = SendMessageRequest(message=user_message(text, context_id))
            out = [event_summary(ev) async for ev in c.send_message(req)]
            return out[-1]

        async def stream() -> dict:
            return await collect(streaming.send_message(SendMessageRequest(message=user_message("stream me"))))

        async def get() -> dict:
            return task_summary(await streaming.get_task(GetTaskRequest(id=state["send"]["task_id"])))

        async def cancel() -> dict:
            started = await send_with(polling, "slow cancel")
            task = await streaming.cancel_task(CancelTaskRequest(id=started["task_id"]))
            return {"started": started, **task_summary(task)}

        async def resubscribe() -> dict:
            started = await send_with(polling, "slow resubscribe")
            got = await collect(streaming.subscribe(SubscribeToTaskRequest(id=started["task_id"])))
            return {"started": started, **got}

        async def expect_error(call) -> dict:
            try:
                got = await call
            except A2AError as e:
                return {"error_type": type(e).__name__, "message": str(e)}
            raise AssertionError(f"no error, got {got!r}")

        async def parts() -> dict:
            msg = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                parts=[
                    Part(text="parts"),
                    Part(data=ParseDict(PARTS_DATA, struct_pb2.Value())),
                    Part(raw=PARTS_BYTES, filename="b.bin", media_type="application/octet-stream"),
                    Part(url=PARTS_URI, filename="f.txt", media_type="text/plain"),
                ],
                metadata=PARTS_METADATA,
            )
            out = [ev async for ev in blocking.send_message(SendMessageRequest(message=msg))]
            task = out[-1].task
            art = task.artifacts[-1]
            return {
                **task_summary(task),
                "artifact_parts": [part_summary(p) for p in art.parts],
                "artifact_metadata": MessageToDict(art.metadata),
            }

        def big_summary(got: dict) -> dict:
            arts = got.get("artifact_texts", [])
            return {
                "task_id": got.get("task_id"),
                "state": got.get("final_state", got.get("state")),
                "sent_len": len(BIG_TEXT),
                "echo_len": len(arts[0]) if arts else None,
                "echo_ok": arts == ["echo: " + BIG_TEXT],
            }

        async def big() -> dict:
            return big_summary(await send_with(blocking, BIG_TEXT))

        async def big_stream() -> dict:
            got = await collect(streaming.send_message(SendMessageRequest(message=user_message(BIG_TEXT))))
            return {"events": len(got["events"]), **big_summary(got)}

        async def get_no_history() -> dict:
            req = GetTaskRequest(id=state["send"]["task_id"], history_length=0)
            return task_summary(await streaming.get_task(req))

        async def resubscribe_done() -> dict:
            try:
                return await collect(streaming.subscribe(SubscribeToTaskRequest(id=state["send"]["task_id"])))
            except Exception as e:  # noqa: BLE001 - observed as is
                return {"error_type": type(e).__name__, "message": str(e)}

        async def get_missing() -> dict:
            return await expect_error(streaming.get_task(GetTaskRequest(id="no-such-task")))

        async def cancel_done() -> dict:
            return await expect_error(streaming.cancel_task(CancelTaskRequest(id=state["send"]["task_id"])))

        steps = [
            ("send", lambda: send_with(blocking, "hello")),
            ("stream", stream),
            ("get", get),
            ("cancel", cancel),
            ("resubscribe", resubscribe),
            ("follow_up", lambda: send_with(blocking, "again", state["send"]["context_id"])),
            ("parts", parts),
            ("big", big),
            ("big_stream", big_stream),
            ("get_no_history", get_no_history),
            ("resubscribe_done", resubscribe_done),
            ("get_missing", get_missing),
            ("cancel_done", cancel_done),
        ]
        for name, fn in steps:
            try:
                data = await asyncio.wait_for(fn(), STEP_TIMEOUT)
                state[name] = data
                report(name, {"ok": True, **data})
            except Exception as e:  # noqa: BLE001 - every failure is reported
                ok = False
                report(name, {"ok": False, "error": f"{type(e).__name__}: {e}"})
    return ok


def main() -> int:
    base = sys.argv[1].rstrip("/")
    try:
        return 0 if asyncio.run(run(base)) else 1
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"step": "card", "ok": False, "error": f"{type(e).__name__}: {e}"}), flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
