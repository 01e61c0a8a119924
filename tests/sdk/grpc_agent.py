"""A2A echo agent on the real a2a-sdk 1.x *gRPC server* (a2a-sdk[grpc]).

--version 1.0: the SDK's `GrpcHandler` (`lf.a2a.v1.A2AService`).
--version 0.3: the SDK's `CompatGrpcHandler` (`a2a.v1.A2AService`, the
               SDK's own v0.3 gRPC binding).
Every message becomes a Task: submitted -> working -> artifact
"echo: <text>" -> completed (as agent_v10.py); a text starting with "slow"
waits SLOW_SECS while working (so it can be subscribed to). The agent card (in the
served version's JSON) is on a small HTTP server next to it, for the
proxy's card cache. Prints `PORT <grpc port> CARD <http port>` once
listening.

    python grpc_agent.py --version 0.3|1.0 [--extended]

With --extended the agent has an extended card (`grpc-echo-<v>-extended`,
one more skill, `echo-extended`), which its card offers
(`capabilities.extendedAgentCard`, v0.3 `supportsAuthenticatedExtendedCard`)
and its card RPC answers (`GetExtendedAgentCard`; the SDK's v0.3
`GetAgentCard` answers the extended card too).
"""

import argparse
import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc as g03
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.helpers.proto_helpers import new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
    a2a_pb2_grpc as g10,
)
from google.protobuf.json_format import MessageToDict

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
        await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card_json(version, grpc_port, card_port, card):
    if version == "1.0":
        return MessageToDict(card)
    extended = {"supportsAuthenticatedExtendedCard": True} if card.capabilities.extended_agent_card else {}
    return {
        **extended,
        "protocolVersion": "0.3.0",
        "name": card.name,
        "description": card.description,
        "version": card.version,
        "url": f"127.0.0.1:{grpc_port}",
        "preferredTransport": "GRPC",
        "additionalInterfaces": [{"url": f"127.0.0.1:{grpc_port}", "transport": "GRPC"}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "capabilities": {"streaming": True},
        "skills": [{"id": "echo", "name": "echo", "description": "echoes", "tags": ["echo"]}],
    }


def serve_card(body):
    class H(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            data = json.dumps(body).encode()
            self.send_response(200 if self.path.startswith("/.well-known/") else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_address[1]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", choices=["0.3", "1.0"], required=True)
    ap.add_argument("--extended", action="store_true")
    args = ap.parse_args()
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    def agent_card(name, skills):
        return AgentCard(
            name=name,
            description="a2a-sdk 1.x gRPC echo agent",
            version="1.0.0",
            supported_interfaces=[
                # The SDK's v0.3 GetAgentCard needs a 0.3 interface to convert
                # its card.
                AgentInterface(url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version=args.version)
            ],
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            capabilities=AgentCapabilities(streaming=True, extended_agent_card=args.extended),
            skills=[AgentSkill(id=s, name=s, description="echoes", tags=["echo"]) for s in skills],
        )

    card = agent_card(f"grpc-echo-{args.version}", ["echo"])
    extended = {}
    if args.extended:
        extended["extended_agent_card"] = agent_card(
            f"grpc-echo-{args.version}-extended", ["echo", "echo-extended"]
        )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card, **extended
    )
    if args.version == "1.0":
        g10.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    else:
        g03.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
    card_port = serve_card(card_json(args.version, port, 0, card))
    await server.start()
    print(f"PORT {port} CARD {card_port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
