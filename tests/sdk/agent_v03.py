"""A2A v0.3 echo agent on the real a2a-sdk 0.3.x (JSON-RPC, streaming on).

Every message becomes a Task: submitted -> working -> artifact "echo: <text>"
-> completed; the message's other parts and its metadata are echoed in
the artifact too. A text starting with "slow" waits SLOW_SECS while working (so
it can be canceled or resubscribed to). Prints `PORT <n>` once listening.

    python agent_v03.py [--port N] [--push]   (0 = pick a free one)

With --push the agent supports push notifications: its SDK stores the
configs and POSTs the Task (v0.3 JSON) to each webhook on every event.
With --rest it serves the HTTP+JSON binding (`/v1/...`, the SDK's FastAPI
app) beside JSON-RPC, and its card lists both interfaces; with
--jsonrpc-path P its JSON-RPC binding is at P instead of `/` (REST stays at
the base URL). With --rest-push-list its REST binding also answers
`GET /v1/tasks/{id}/pushNotificationConfigs` (which a2a-sdk 0.3.26 answers
500, not implemented) as the v0.3 spec §7.7 has it: a bare array of
TaskPushNotificationConfig in its JSON-schema shape (`{taskId,
pushNotificationConfig}`, the JSON-RPC result's items).
"""

import argparse
import asyncio
import socket
import sys

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TextPart
from a2a.utils import new_task

SLOW_SECS = 2.0


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if text.startswith("slow"):
            await asyncio.sleep(SLOW_SECS)
        others = [p for p in context.message.parts if not isinstance(p.root, TextPart)]
        await updater.add_artifact(
            [Part(root=TextPart(text=f"echo: {text}")), *others],
            name="echo",
            metadata=context.message.metadata,
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--push", action="store_true")
    ap.add_argument("--rest", action="store_true")
    ap.add_argument("--jsonrpc-path", default="/")
    ap.add_argument("--rest-push-list", action="store_true")
    # HTTPS agent (issue #23): PEM certificate chain and key; the card's
    # URLs are then https://.
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    args = ap.parse_args()
    scheme = "https" if args.tls_cert else "http"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    rpc_url = f"{scheme}://127.0.0.1:{port}{args.jsonrpc_path}"
    card = AgentCard(
        name="echo-v03",
        description="a2a-sdk 0.3 echo agent",
        url=rpc_url,
        version="1.0.0",
        protocol_version="0.3.0",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(url=rpc_url, transport="JSONRPC"),
            AgentInterface(url=f"{scheme}://127.0.0.1:{port}", transport="HTTP+JSON"),
        ]
        if args.rest
        else None,
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
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), **push
    )
    jsonrpc = A2AStarletteApplication(agent_card=card, http_handler=handler)
    if args.rest:
        rest = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler)
        if args.rest_push_list:
            from a2a.types import ListTaskPushNotificationConfigParams

            async def list_configs(request, context):
                params = ListTaskPushNotificationConfigParams(id=request.path_params["id"])
                configs = await handler.on_list_task_push_notification_config(params, context)
                return [c.model_dump(mode="json", exclude_none=True) for c in configs]

            # The SDK's REST routes call this handler's methods.
            rest._adapter.handler.list_push_notifications = list_configs
        app = rest.build()
        jsonrpc.add_routes_to_app(app, rpc_url=args.jsonrpc_path)
    else:
        app = jsonrpc.build(rpc_url=args.jsonrpc_path)
    tls = {}
    if args.tls_cert:
        tls = {"ssl_certfile": args.tls_cert, "ssl_keyfile": args.tls_key}
    config = uvicorn.Config(app, log_level="warning", lifespan="off", **tls)
    server = uvicorn.Server(config)
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
