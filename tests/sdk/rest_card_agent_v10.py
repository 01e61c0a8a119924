"""A2A v1.0 echo agent on the real a2a-sdk 1.x serving HTTP+JSON (and
JSON-RPC) with security schemes of every kind and an extended agent card
(`GET /extendedAgentCard`), the SDK's own v0.3 compatibility off: v0.3
REST clients reach it only through the proxy. Prints `PORT <n>`.

    python rest_card_agent_v10.py [--port N]   (0 = pick a free one)

The echo executor is `agent_v10.py`'s (a text starting with "slow" works
for a while before it completes).
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
from a2a.types import AgentCard
from agent_v10 import EchoExecutor
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette

SCHEMES = {
    "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}},
    "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
    "oauth": {
        "oauth2SecurityScheme": {
            "flows": {
                "clientCredentials": {
                    "tokenUrl": "https://auth.example/token",
                    "scopes": {"read": "read tasks"},
                }
            }
        }
    },
    "oidc": {
        "openIdConnectSecurityScheme": {
            "openIdConnectUrl": "https://auth.example/.well-known/openid-configuration"
        }
    },
    "mtls": {"mtlsSecurityScheme": {"description": "client certificates"}},
}
REQUIREMENTS = [
    {"schemes": {"bearer": {"list": []}}},
    {"schemes": {"oauth": {"list": ["read"]}, "key": {"list": []}}},
]


def card(port: int, name: str, skill: str) -> AgentCard:
    return ParseDict(
        {
            "name": name,
            "description": "a2a-sdk 1.x echo agent with security schemes",
            "version": "1.0.0",
            "supportedInterfaces": [
                {
                    "url": f"http://127.0.0.1:{port}/",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                },
                {
                    "url": f"http://127.0.0.1:{port}",
                    "protocolBinding": "HTTP+JSON",
                    "protocolVersion": "1.0",
                },
            ],
            "capabilities": {"streaming": True, "extendedAgentCard": True},
            "securitySchemes": SCHEMES,
            "securityRequirements": REQUIREMENTS,
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [
                {
                    "id": skill,
                    "name": skill,
                    "description": "echoes",
                    "tags": ["echo"],
                    "securityRequirements": [{"schemes": {"oidc": {"list": ["openid"]}}}],
                }
            ],
        },
        AgentCard(),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    public = card(port, "secure-v10", "echo")
    extended = card(port, "secure-v10-extended", "echo-extended")
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=public,
        extended_agent_card=extended,
    )
    routes = (
        create_agent_card_routes(public)
        + create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=False)
        + create_rest_routes(handler, enable_v0_3_compat=False)
    )
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level="warning", lifespan="off"))
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
