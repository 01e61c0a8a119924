"""The a2a-sdk 0.3 echo agent of agent_v03.py with each binding under a
path of its own: JSON-RPC at `/jsonrpc`, HTTP+JSON under `/rest`
(`/rest/v1/message:send`, ...), both listed in its card at those URLs.
Prints `PORT <n>` once listening.

    python paths_agent_v03.py [--port N]   (0 = pick a free one)
"""

import argparse
import socket
import sys

import uvicorn
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

from agent_v03 import EchoExecutor


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="echo-v03",
        description="a2a-sdk 0.3 echo agent, bindings under paths",
        url=f"{base}/jsonrpc",
        version="1.0.0",
        protocol_version="0.3.0",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(url=f"{base}/jsonrpc", transport="JSONRPC"),
            AgentInterface(url=f"{base}/rest", transport="HTTP+JSON"),
        ],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore()
    )
    app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build(
        rpc_url="/rest"
    )
    A2AStarletteApplication(agent_card=card, http_handler=handler).add_routes_to_app(
        app, rpc_url="/jsonrpc"
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
