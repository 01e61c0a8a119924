"""The A2A TCK's own v1.0 agent behaviour (the executor of the TCK's
`sut/a2a-python/sut_agent.py`, imported from the TCK checkout) served by
the released a2a-sdk 1.x: the TCK's script targets an unreleased a2a-python
whose `a2a.server.apps` module 1.x no longer has, so this only supplies the
server around the TCK's executor. JSON-RPC at `/` and REST at the root too
(the TCK's script serves REST under `/a2a/rest`; the proxy offers v0.3 REST
clients only an agent REST interface at its base URL), gRPC on PORT+1;
streaming on, push off.

    python sut_v10.py TCK_DIR PORT
"""

import asyncio
import sys
import types

import grpc.aio
import uvicorn
from starlette.applications import Starlette

import a2a.types.a2a_pb2_grpc as a2a_grpc
from a2a.helpers.proto_helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState


def tck_executor(tck_dir):
    # The TCK script imports the server classes of the older API at its
    # top; placeholders let it load (only its executor is used).
    shim = types.ModuleType("a2a.server.apps")
    shim.A2ARESTFastAPIApplication = shim.A2AStarletteApplication = object
    sys.modules["a2a.server.apps"] = shim
    import a2a.server.request_handlers.default_request_handler as drh

    if not hasattr(drh, "DefaultRequestHandler"):
        drh.DefaultRequestHandler = DefaultRequestHandler
    sys.path.insert(0, f"{tck_dir}/sut/a2a-python")
    import sut_agent

    return FirstTask(sut_agent.TckAgentExecutor())


class FirstTask(AgentExecutor):
    """a2a-sdk 1.x wants a new task's Task enqueued before its updates; the
    SDK the TCK script targets made it itself. Enqueued here first, except
    for the scenario that answers with a bare Message."""

    def __init__(self, inner):
        self.inner = inner

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        mid = context.message.message_id if context.message else ""
        if context.current_task is None and not mid.startswith("tck-message-response"):
            task = new_task(
                context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED,
                history=[context.message],
            )
            await event_queue.enqueue_event(task)
        await self.inner.execute(context, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self.inner.cancel(context, event_queue)


async def main() -> None:
    tck_dir, port = sys.argv[1], int(sys.argv[2])
    host = f"127.0.0.1:{port}"
    card = AgentCard(
        name="tck-sut-v10",
        description="A2A TCK system under test on the released a2a-sdk 1.x",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"http://{host}", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=f"http://{host}", protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=f"127.0.0.1:{port + 1}", protocol_binding="GRPC", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="tck", name="TCK", description="TCK scenarios", tags=["tck"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=tck_executor(tck_dir), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, rpc_url="/")
    routes += create_rest_routes(handler)
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    g = grpc.aio.server()
    g.add_insecure_port(f"127.0.0.1:{port + 1}")
    a2a_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), g)
    await g.start()
    try:
        await server.serve()
    finally:
        await g.stop(0)


if __name__ == "__main__":
    asyncio.run(main())
