"""A2A v1.0 echo agent on the real a2a-sdk 1.x (JSON-RPC, streaming on,
the SDK's own v0.3 compatibility switched off: v0.3 callers need the proxy).

Every message becomes a Task: submitted -> working -> artifact "echo: <text>"
-> completed; the message's other parts and its metadata are echoed in
the artifact too. A text starting with "slow" waits SLOW_SECS while working (so
it can be canceled or resubscribed to). Prints `PORT <n>` once listening.

    python agent_v10.py [--port N] [--push] [--rest]   (0 = pick a free one)

With --rest it serves the HTTP+JSON binding (root paths, the SDK's own v0.3
compatibility off) beside JSON-RPC, and its card lists both interfaces.
"""

import argparse
import asyncio
import socket
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

SLOW_SECS = 2.0


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = new_task(
                context.task_id,
                context.context_id,
                TaskState.TASK_STATE_SUBMITTED,
                history=[context.message],
            )
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if text.startswith("slow"):
            await asyncio.sleep(SLOW_SECS)
        others = [p for p in context.message.parts if not p.HasField("text")]
        metadata = MessageToDict(context.message.metadata) or None
        await updater.add_artifact(
            [new_text_part(f"echo: {text}"), *others], name="echo", metadata=metadata
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    # Push notifications on: the SDK stores configs and POSTs a v1.0
    # StreamResponse to each webhook on every event.
    ap.add_argument("--push", action="store_true")
    ap.add_argument("--rest", action="store_true")
    args = ap.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    card = AgentCard(
        name="echo-v10",
        description="a2a-sdk 1.x echo agent",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ]
        + (
            [
                AgentInterface(
                    url=f"http://127.0.0.1:{port}",
                    protocol_binding="HTTP+JSON",
                    protocol_version="1.0",
                )
            ]
            if args.rest
            else []
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True, push_notifications=args.push),
        skills=[
            AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])
        ],
    )
    push = {}
    if args.push:
        import httpx

        configs = InMemoryPushNotificationConfigStore()
        push = {
            "push_config_store": configs,
            "push_sender": BasePushNotificationSender(httpx.AsyncClient(), configs),
        }
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        **push,
    )
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(
        handler, rpc_url="/", enable_v0_3_compat=False
    )
    if args.rest:
        routes += create_rest_routes(handler, enable_v0_3_compat=False)
    app = Starlette(routes=routes)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
