"""The card of the real a2a-sdk 0.3 gRPC client (`GrpcTransport`), issue #37
item 1. Needs a venv with `a2a-sdk[grpc]` 0.3 (`.venv-v03-grpc`).

Reads BASE_URL's public card over HTTP (the SDK's card resolver), takes its
GRPC interface and makes the SDK's client for it twice: anonymous, and with
an interceptor sending `authorization: Bearer <token>` metadata on every
call (as an authenticated deployment does). Each asks `client.get_card()`,
which, when the card says `supportsAuthenticatedExtendedCard`, calls
`GetAgentCard` over gRPC. Prints one JSON line per client (`{"step":
"anonymous" | "authorized", "ok", "name", "skills", "url"}`) and sends one
message with the authorized client (`send`).

    python grpc_card_client_v03.py BASE_URL

The card's gRPC `url` is `http://host:port` (the v0.3 form); grpc's
`insecure_channel` takes a target without a scheme, so the channel factory
strips it (proxy/README.md, `grpc.card_url_form`).
"""

import asyncio
import json
import sys
import uuid

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart, TransportProtocol

TIMEOUT = 20.0
TOKEN = "Bearer extended-card-token"


class Authorize(grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, details, request):
        md = list(details.metadata or []) + [("authorization", TOKEN)]
        details = grpc.aio.ClientCallDetails(
            details.method, details.timeout, md, details.credentials, details.wait_for_ready
        )
        return await continuation(details, request)


def target(url: str) -> str:
    return url.split("://", 1)[-1].rstrip("/")


async def main(base: str) -> int:
    failed = False
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
    grpc_urls = [i.url for i in card.additional_interfaces or [] if i.transport == "GRPC"]
    print(json.dumps({"step": "public", "ok": bool(grpc_urls), "name": card.name,
                      "extended": card.supports_authenticated_extended_card,
                      "grpc_urls": grpc_urls}), flush=True)
    if not grpc_urls:
        return 1
    for step, interceptors in (("anonymous", []), ("authorized", [Authorize()])):
        channels = []

        def channel(url, interceptors=interceptors):
            ch = grpc.aio.insecure_channel(target(url), interceptors=interceptors)
            channels.append(ch)
            return ch

        config = ClientConfig(
            grpc_channel_factory=channel,
            supported_transports=[TransportProtocol.grpc],
            streaming=False,
        )
        client = ClientFactory(config).create(card)
        try:
            got = await asyncio.wait_for(client.get_card(), TIMEOUT)
            print(json.dumps({"step": step, "ok": True, "name": got.name,
                              "skills": [s.id for s in got.skills], "url": got.url}), flush=True)
            if step == "authorized":
                msg = Message(role=Role.user, message_id=str(uuid.uuid4()),
                              parts=[Part(root=TextPart(text="hi"))])
                events = [e async for e in client.send_message(msg)]
                print(json.dumps({"step": "send", "ok": bool(events)}), flush=True)
        except Exception as e:  # noqa: BLE001 - reported
            failed = True
            print(json.dumps({"step": step, "ok": False, "error": f"{type(e).__name__}: {e}"}), flush=True)
        finally:
            for ch in channels:
                await ch.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
