"""A2A v0.3 echo agent on the real a2a-sdk 0.3.x serving HTTP+JSON (`/v1/...`,
the SDK's FastAPI app) beside JSON-RPC, with security schemes of every kind,
security requirements and an authenticated extended card (`GET /v1/card`,
which this SDK answers in the JSON-schema shape). Prints `PORT <n>`.

    python rest_card_agent_v03.py [--port N]   (0 = pick a free one)

The echo executor is `agent_v03.py`'s (a text starting with "slow" works
for a while before it completes).
"""

import argparse
import socket
import sys

import uvicorn
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCard
from agent_v03 import EchoExecutor

SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
    "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
    "oauth": {
        "type": "oauth2",
        "flows": {
            "clientCredentials": {
                "tokenUrl": "https://auth.example/token",
                "scopes": {"read": "read tasks"},
            }
        },
    },
    "oidc": {
        "type": "openIdConnect",
        "openIdConnectUrl": "https://auth.example/.well-known/openid-configuration",
    },
    "mtls": {"type": "mutualTLS", "description": "client certificates"},
}
SECURITY = [{"bearer": []}, {"oauth": ["read"], "key": []}]


def card(port: int, name: str, skill: str) -> AgentCard:
    return AgentCard.model_validate(
        {
            "name": name,
            "description": "a2a-sdk 0.3 echo agent with security schemes",
            "url": f"http://127.0.0.1:{port}/",
            "version": "1.0.0",
            "protocolVersion": "0.3.0",
            "preferredTransport": "JSONRPC",
            "additionalInterfaces": [
                {"url": f"http://127.0.0.1:{port}/", "transport": "JSONRPC"},
                {"url": f"http://127.0.0.1:{port}", "transport": "HTTP+JSON"},
            ],
            "capabilities": {"streaming": True},
            "securitySchemes": SCHEMES,
            "security": SECURITY,
            "supportsAuthenticatedExtendedCard": True,
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [
                {
                    "id": skill,
                    "name": skill,
                    "description": "echoes",
                    "tags": ["echo"],
                    "security": [{"oidc": ["openid"]}],
                }
            ],
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    public = card(port, "secure-v03", "echo")
    extended = card(port, "secure-v03-extended", "echo-extended")
    handler = DefaultRequestHandler(agent_executor=EchoExecutor(), task_store=InMemoryTaskStore())
    app = A2ARESTFastAPIApplication(
        agent_card=public, http_handler=handler, extended_agent_card=extended
    ).build()
    A2AStarletteApplication(
        agent_card=public, http_handler=handler, extended_agent_card=extended
    ).add_routes_to_app(app)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
