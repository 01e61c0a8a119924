"""A2A v0.3 client on the real a2a-sdk 0.3.x, JSON-RPC only.

Drives BASE_URL: card discovery, send, stream, get, cancel, resubscribe,
and two expected errors (get of an unknown task, cancel of a completed one).
Prints one JSON line per step (`{"step": ..., "ok": true, ...observed}` or
`{"step": ..., "ok": false, "error": ...}`); exits 1 if any step failed.

    python client_v03.py BASE_URL

A2A_BINDING=HTTP+JSON in the environment makes it use the HTTP+JSON (REST)
binding instead.
"""

import asyncio
import base64
import json
import os
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)

STEP_TIMEOUT = 20.0

# The "parts" step: one part of every kind, and message metadata.
PARTS_DATA = {"k": [1, "x", True, None], "nested": {"z": 2.5}}
PARTS_BYTES = b"\x00\x01binary\xff"
PARTS_URI = "https://example.com/f.txt"
PARTS_METADATA = {"trace": "abc", "n": 2}

# The "big" steps: bodies past the proxy's 64 KiB read-ahead, both ways.
BIG_TEXT = "big " + "0123456789abcdef" * 6400


def part_summary(p) -> dict:
    """One common shape for both SDKs: text / data / bytes (base64) / uri."""
    r = p.root
    if isinstance(r, TextPart):
        return {"text": r.text}
    if isinstance(r, DataPart):
        return {"data": r.data}
    f = r.file
    if isinstance(f, FileWithBytes):
        raw = base64.b64decode(f.bytes)
        return {"bytes": base64.b64encode(raw).decode(), "name": f.name, "mime": f.mime_type}
    return {"uri": f.uri, "name": f.name, "mime": f.mime_type}


def user_message(text: str, context_id: str | None = None) -> Message:
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=TextPart(text=text))],
        context_id=context_id,
    )


def texts(artifacts) -> list:
    return [
        p.root.text
        for a in artifacts or []
        for p in a.parts
        if isinstance(p.root, TextPart)
    ]


def task_summary(task: Task) -> dict:
    return {
        "kind": "task",
        "task_id": task.id,
        "context_id": task.context_id,
        "state": task.status.state.value,
        "artifact_texts": texts(task.artifacts),
        "history": [
            {
                "role": m.role.value,
                "text": [p.root.text for p in m.parts if isinstance(p.root, TextPart)],
            }
            for m in task.history or []
        ],
    }


def event_summary(ev) -> dict:
    if isinstance(ev, Message):
        return {"kind": "message", "text": [p.root.text for p in ev.parts]}
    task, update = ev
    if update is None:
        return task_summary(task)
    if isinstance(update, TaskStatusUpdateEvent):
        return {
            "kind": "status-update",
            "task_id": update.task_id,
            "state": update.status.state.value,
            "final": update.final,
        }
    if isinstance(update, TaskArtifactUpdateEvent):
        return {
            "kind": "artifact-update",
            "task_id": update.task_id,
            "artifact_texts": texts([update.artifact]),
        }
    return {"kind": type(update).__name__}


async def collect(stream) -> dict:
    events, last_task = [], None
    async for ev in stream:
        events.append(event_summary(ev))
        if isinstance(ev, tuple):
            last_task = ev[0]
    out = {"events": events}
    if last_task is not None:
        out.update(
            task_id=last_task.id,
            final_state=last_task.status.state.value,
            artifact_texts=texts(last_task.artifacts),
        )
    return out


async def run(base: str) -> bool:
    ok = True
    state: dict = {}

    def report(step: str, data: dict) -> None:
        print(json.dumps({"step": step, **data}), flush=True)

    async with httpx.AsyncClient(timeout=15.0) as http:
        resolver = A2ACardResolver(http, base)
        card = await asyncio.wait_for(resolver.get_agent_card(), STEP_TIMEOUT)
        binding = os.environ.get("A2A_BINDING", "JSONRPC")
        report(
            "card",
            {
                "ok": True,
                "name": card.name,
                "url": card.url,
                "protocol_version": card.protocol_version,
                "preferred_transport": card.preferred_transport,
                "binding": binding,
                "interfaces": [
                    {"url": i.url, "transport": i.transport}
                    for i in card.additional_interfaces or []
                    if i.transport == binding
                ],
                "streaming": bool(card.capabilities.streaming),
            },
        )
        transports = [TransportProtocol(binding)]
        blocking = ClientFactory(
            ClientConfig(streaming=False, httpx_client=http, supported_transports=transports)
        ).create(card)
        polling = ClientFactory(
            ClientConfig(
                streaming=False, polling=True, httpx_client=http, supported_transports=transports
            )
        ).create(card)
        streaming = ClientFactory(
            ClientConfig(streaming=True, httpx_client=http, supported_transports=transports)
        ).create(card)

        async def send(text: str, context_id: str | None = None) -> dict:
            msg = user_message(text, context_id)
            out = [event_summary(ev) async for ev in blocking.send_message(msg)]
            return out[-1]

        async def send_nonblocking(text: str) -> dict:
            out = [event_summary(ev) async for ev in polling.send_message(user_message(text))]
            return out[-1]

        async def stream() -> dict:
            return await collect(streaming.send_message(user_message("stream me")))

        async def get() -> dict:
            task = await streaming.get_task(TaskQueryParams(id=state["send"]["task_id"]))
            return task_summary(task)

        async def cancel() -> dict:
            started = await send_nonblocking("slow cancel")
            task = await streaming.cancel_task(TaskIdParams(id=started["task_id"]))
            return {"started": started, **task_summary(task)}

        async def resubscribe() -> dict:
            started = await send_nonblocking("slow resubscribe")
            got = await collect(streaming.resubscribe(TaskIdParams(id=started["task_id"])))
            return {"started": started, **got}

        async def expect_error(call) -> dict:
            try:
                got = await call
            except A2AClientJSONRPCError as e:
                return {"error_type": type(e).__name__, "code": e.error.code, "message": e.error.message}
            except A2AClientHTTPError as e:
                # The REST transport reports only the HTTP status.
                return {"error_type": type(e).__name__, "status": e.status_code, "message": e.message}
            raise AssertionError(f"no error, got {got!r}")

        async def parts() -> dict:
            msg = Message(
                role=Role.user,
                message_id=str(uuid.uuid4()),
                parts=[
                    Part(root=TextPart(text="parts")),
                    Part(root=DataPart(data=PARTS_DATA)),
                    Part(root=FilePart(file=FileWithBytes(
                        bytes=base64.b64encode(PARTS_BYTES).decode(), name="b.bin", mime_type="application/octet-stream"))),
                    Part(root=FilePart(file=FileWithUri(uri=PARTS_URI, name="f.txt", mime_type="text/plain"))),
                ],
                metadata=PARTS_METADATA,
            )
            out = [ev async for ev in blocking.send_message(msg)]
            task = out[-1][0]
            art = task.artifacts[-1]
            return {
                **task_summary(task),
                "artifact_parts": [part_summary(p) for p in art.parts],
                "artifact_metadata": art.metadata,
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
            return big_summary(await send(BIG_TEXT))

        async def big_stream() -> dict:
            got = await collect(streaming.send_message(user_message(BIG_TEXT)))
            return {"events": len(got["events"]), **big_summary(got)}

        async def get_no_history() -> dict:
            task = await streaming.get_task(TaskQueryParams(id=state["send"]["task_id"], history_length=0))
            return task_summary(task)

        async def resubscribe_done() -> dict:
            try:
                got = await collect(streaming.resubscribe(TaskIdParams(id=state["send"]["task_id"])))
            except A2AClientJSONRPCError as e:
                return {"error_type": type(e).__name__, "code": e.error.code, "message": e.error.message}
            except Exception as e:  # noqa: BLE001 - observed as is
                return {"error_type": type(e).__name__, "message": str(e)}
            return got

        async def get_missing() -> dict:
            return await expect_error(streaming.get_task(TaskQueryParams(id="no-such-task")))

        async def cancel_done() -> dict:
            return await expect_error(streaming.cancel_task(TaskIdParams(id=state["send"]["task_id"])))

        steps = [
            ("send", lambda: send("hello")),
            ("stream", stream),
            ("get", get),
            ("cancel", cancel),
            ("resubscribe", resubscribe),
            ("follow_up", lambda: send("again", state["send"]["context_id"])),
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
