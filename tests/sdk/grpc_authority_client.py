"""Real a2a-sdk 1.x gRPC clients reaching one agent of several behind the
proxy's one gRPC listener by name: the channel's authority (`:authority`)
is set to $A2A_AUTHORITY (`grpc.default_authority`), as a client of
`b.example.com:50051` resolved to the proxy would send it.

v1.0: the SDK's `GrpcTransport` sends one message; v0.3: the SDK's bundled
v0.3 stub reads the card (`GetAgentCard`) and sends one message. Prints one
JSON line per step (with the status code and message of a failed call);
exits 1 if any failed. Needs a venv with `a2a-sdk[grpc]`.

    A2A_AUTHORITY=b.example:50051 python grpc_authority_client.py HOST:PORT
"""

import asyncio
import json
import os
import sys
import uuid

import grpc
from a2a.client.transports.grpc import GrpcTransport
from a2a.compat.v0_3 import a2a_v0_3_pb2 as p03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as g03
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

TIMEOUT = 20.0
failed = False


def report(step, ok, **kw):
    global failed
    failed |= not ok
    print(json.dumps({"step": step, "ok": ok, **kw}), flush=True)


def failure(e):
    """What a failed call says: its gRPC code and message, however the SDK
    wrapped it."""
    seen = e
    while seen is not None:
        if isinstance(seen, grpc.aio.AioRpcError):
            return {"code": seen.code().name, "message": seen.details()}
        seen = seen.__cause__ or seen.__context__
    return {"code": None, "error": type(e).__name__, "message": str(e)}


def channel(addr, authority):
    return grpc.aio.insecure_channel(addr, options=[("grpc.default_authority", authority)])


async def v10(addr, authority):
    ch = channel(addr, authority)
    t = GrpcTransport(ch, None)
    try:
        msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="hello")])
        r = await asyncio.wait_for(t.send_message(SendMessageRequest(message=msg)), TIMEOUT)
        texts = [p.text for a in r.task.artifacts for p in a.parts if p.WhichOneof("content") == "text"]
        report("v10 send", r.task.status.state == TaskState.TASK_STATE_COMPLETED,
               state=TaskState.Name(r.task.status.state), artifacts=texts)
    except Exception as e:  # noqa: BLE001
        report("v10 send", False, **failure(e))
    finally:
        await ch.close()


async def v03(addr, authority):
    ch = channel(addr, authority)
    stub = g03.A2AServiceStub(ch)
    try:
        try:
            card = await stub.GetAgentCard(p03.GetAgentCardRequest(), timeout=TIMEOUT)
            interfaces = [{"transport": i.transport, "url": i.url} for i in card.additional_interfaces]
            report("v03 card", True, name=card.name, url=card.url, interfaces=interfaces)
        except Exception as e:  # noqa: BLE001
            report("v03 card", False, **failure(e))
        try:
            msg = p03.Message(message_id=str(uuid.uuid4()), role=p03.ROLE_USER, content=[p03.Part(text="hello")])
            r = await stub.SendMessage(p03.SendMessageRequest(request=msg), timeout=TIMEOUT)
            texts = [p.text for a in r.task.artifacts for p in a.parts]
            report("v03 send", r.task.status.state == p03.TASK_STATE_COMPLETED,
                   state=p03.TaskState.Name(r.task.status.state), artifacts=texts)
        except Exception as e:  # noqa: BLE001
            report("v03 send", False, **failure(e))
    finally:
        await ch.close()


async def main():
    addr, authority = sys.argv[1], os.environ["A2A_AUTHORITY"]
    await v10(addr, authority)
    await v03(addr, authority)
    sys.exit(1 if failed else 0)


asyncio.run(main())
