"""The a2a-sdk 1.x echo agent of agent_v10.py (its own v0.3 compatibility
off) with each binding under a path of its own: JSON-RPC at `/jsonrpc`,
HTTP+JSON under `/rest` (`/rest/message:send`, ...), both listed in its
card at those URLs. Prints `PORT <n>` once listening.

    python paths_agent_v10.py [--port N]   (0 = pick a free one)
"""

import argparse
import socket
import sys

import uvicorn
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from agent_v10 import EchoExecutor


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
        name="echo-v10",
        description="a2a-sdk 1.x echo agent, bindings under paths",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"{base}/jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            AgentInterface(
                url=f"{base}/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = (
        create_agent_card_routes(card)
        + create_jsonrpc_routes(handler, rpc_url="/jsonrpc", enable_v0_3_compat=False)
        + create_rest_routes(handler, enable_v0_3_compat=False, path_prefix="/rest")
    )
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
