"""Real a2a-sdk 1.x gRPC clients against the proxy's gRPC listener.

v1.0: the SDK's own `GrpcTransport` (its metadata, its error mapping from
google.rpc.ErrorInfo). v0.3: the SDK's bundled v0.3 stub
(`a2a.compat.v0_3.a2a_v0_3_pb2_grpc`). Behind the proxy any echo agent of
tests/sdk (agent_v03.py / agent_v10.py). Prints one JSON line per step;
exits 1 if any failed. Needs a venv with `a2a-sdk[grpc]`.

    python grpc_client.py HOST:PORT
"""

import asyncio
import json
import sys
import uuid

import grpc
from a2a.client.transports.grpc import GrpcTransport
from a2a.compat.v0_3 import a2a_v0_3_pb2 as p03
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as g03
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import A2AError

TIMEOUT = 20.0
failed = False


def report(step, ok, **kw):
    global failed
    failed |= not ok
    print(json.dumps({"step": step, "ok": ok, **kw}), flush=True)


def v10_msg(text):
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])


def artifact_texts(task):
    return [p.text for a in task.artifacts for p in a.parts if p.WhichOneof("content") == "text"]


async def v10(addr):
    channel = grpc.aio.insecure_channel(addr)
    t = GrpcTransport(channel, None)
    try:
        r = await asyncio.wait_for(t.send_message(SendMessageRequest(message=v10_msg("hi grpc"))), TIMEOUT)
        task = r.task
        report("v10 send", task.status.state == TaskState.TASK_STATE_COMPLETED and "echo: hi grpc" in artifact_texts(task),
               state=TaskState.Name(task.status.state), artifacts=artifact_texts(task))
        kinds = []
        async for ev in t.send_message_streaming(SendMessageRequest(message=v10_msg("hi stream"))):
            kinds.append(ev.WhichOneof("payload"))
        report("v10 stream", kinds[:1] == ["task"] and len(kinds) >= 2, kinds=kinds)
        await v10_subscribe(t, task.id)
        got = await asyncio.wait_for(t.get_task(GetTaskRequest(id=task.id)), TIMEOUT)
        report("v10 get", got.id == task.id, state=TaskState.Name(got.status.state))
        try:
            await asyncio.wait_for(t.get_task(GetTaskRequest(id="no-such-task")), TIMEOUT)
            report("v10 get unknown", False, error="no error")
        except A2AError as e:
            report("v10 get unknown", type(e).__name__ == "TaskNotFoundError", error=type(e).__name__, message=str(e))
    finally:
        await channel.close()


async def v10_subscribe(t, done_id):
    """SubscribeToTask as v1.0 has it: the Task first, then its updates to
    the end; a finished task refused (UnsupportedOperation), an unknown one
    TaskNotFound."""
    cfg = SendMessageConfiguration(return_immediately=True)
    req = SendMessageRequest(message=v10_msg("slow subscribe"), configuration=cfg)
    started = (await asyncio.wait_for(t.send_message(req), TIMEOUT)).task
    events = []
    async for ev in t.subscribe(SubscribeToTaskRequest(id=started.id)):
        events.append(ev)
    kinds = [ev.WhichOneof("payload") for ev in events]
    first_id = events[0].task.id if kinds[:1] == ["task"] else None
    last = events[-1].status_update.status.state if kinds[-1:] == ["status_update"] else None
    report("v10 subscribe", first_id == started.id and last == TaskState.TASK_STATE_COMPLETED,
           started=TaskState.Name(started.status.state), kinds=kinds)
    for step, task_id, want in (("v10 subscribe finished", done_id, "UnsupportedOperationError"),
                                ("v10 subscribe unknown", "no-such-task", "TaskNotFoundError")):
        try:
            got = [ev.WhichOneof("payload") async for ev in t.subscribe(SubscribeToTaskRequest(id=task_id))]
            report(step, False, error="no error", kinds=got)
        except A2AError as e:
            report(step, type(e).__name__ == want, error=type(e).__name__, message=str(e))


async def v03(addr):
    channel = grpc.aio.insecure_channel(addr)
    stub = g03.A2AServiceStub(channel)
    try:
        msg = p03.Message(message_id=str(uuid.uuid4()), role=p03.ROLE_USER, content=[p03.Part(text="hi v03")])
        r = await stub.SendMessage(p03.SendMessageRequest(request=msg), timeout=TIMEOUT)
        texts = [p.text for a in r.task.artifacts for p in a.parts]
        report("v03 send", r.task.status.state == p03.TASK_STATE_COMPLETED and "echo: hi v03" in texts,
               state=p03.TaskState.Name(r.task.status.state), artifacts=texts)
        kinds = []
        async for ev in stub.SendStreamingMessage(p03.SendMessageRequest(request=msg), timeout=TIMEOUT):
            kinds.append(ev.WhichOneof("payload"))
        report("v03 stream", kinds[:1] == ["task"] and len(kinds) >= 2, kinds=kinds)
        await v03_subscribe(stub)
        try:
            await stub.GetTask(p03.GetTaskRequest(name="tasks/no-such-task"), timeout=TIMEOUT)
            report("v03 get unknown", False, error="no error")
        except grpc.aio.AioRpcError as e:
            report("v03 get unknown", e.code() == grpc.StatusCode.NOT_FOUND and e.details().startswith("TaskNotFoundError: "),
                   code=e.code().name, details=e.details())
    finally:
        await channel.close()


async def v03_subscribe(stub):
    """TaskSubscription of a working task: its updates to the final
    status (COMPLETED); an unknown task NOT_FOUND."""
    msg = p03.Message(message_id=str(uuid.uuid4()), role=p03.ROLE_USER, content=[p03.Part(text="slow subscribe")])
    cfg = p03.SendMessageConfiguration(blocking=False)
    r = await stub.SendMessage(p03.SendMessageRequest(request=msg, configuration=cfg), timeout=TIMEOUT)
    started = r.task
    kinds, last = [], None
    req = p03.TaskSubscriptionRequest(name=f"tasks/{started.id}")
    async for ev in stub.TaskSubscription(req, timeout=TIMEOUT):
        kinds.append(ev.WhichOneof("payload"))
        if ev.HasField("status_update"):
            last = ev.status_update
    ok = (started.id != "" and last is not None and last.task_id == started.id
          and last.status.state == p03.TASK_STATE_COMPLETED and last.final)
    report("v03 subscribe", ok, started=p03.TaskState.Name(started.status.state), kinds=kinds)
    try:
        got = [ev.WhichOneof("payload") async for ev in
               stub.TaskSubscription(p03.TaskSubscriptionRequest(name="tasks/no-such-task"), timeout=TIMEOUT)]
        report("v03 subscribe unknown", False, error="no error", kinds=got)
    except grpc.aio.AioRpcError as e:
        report("v03 subscribe unknown", e.code() == grpc.StatusCode.NOT_FOUND, code=e.code().name, details=e.details())


async def main():
    addr = sys.argv[1]
    for f in (v10, v03):
        try:
            await f(addr)
        except Exception as e:  # noqa: BLE001
            report(f.__name__, False, error=repr(e))
    sys.exit(1 if failed else 0)


asyncio.run(main())
