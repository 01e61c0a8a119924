"""Header-less card discovery and one call on the real a2a-sdk 0.3.x.

Fetches BASE_URL's agent card the way a v0.3 client does (no A2A-Version
header: the proxy's hybrid card), reads its v0.3 members, then sends one
blocking JSON-RPC message through a client built from that card. Prints
one JSON line per step (`{"step": ..., "ok": ..., ...}`); exits 1 on failure.

    python card_client_v03.py BASE_URL
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart, TransportProtocol

TIMEOUT = 20.0


def report(step: str, data: dict) -> None:
    print(json.dumps({"step": step, **data}), flush=True)


async def run(base: str) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        card = await asyncio.wait_for(A2ACardResolver(http, base).get_agent_card(), TIMEOUT)
        report(
            "card",
            {
                "ok": True,
                "name": card.name,
                "url": card.url,
                "protocol_version": card.protocol_version,
                "preferred_transport": card.preferred_transport,
                "interfaces": [
                    {"url": i.url, "transport": i.transport}
                    for i in card.additional_interfaces or []
                ],
            },
        )
        config = ClientConfig(
            streaming=False,
            httpx_client=http,
            supported_transports=[TransportProtocol.jsonrpc],
        )
        client = ClientFactory(config).create(card)
        msg = Message(
            role=Role.user,
            message_id=str(uuid.uuid4()),
            parts=[Part(root=TextPart(text="hello"))],
        )
        last = None
        async for ev in client.send_message(msg):
            last = ev
        task = last[0] if isinstance(last, tuple) else None
        report(
            "send",
            {
                "ok": task is not None,
                "transport": type(client._transport).__name__,
                "state": task.status.state.value if task else None,
                "artifact_texts": [
                    p.root.text
                    for a in (task.artifacts or [] if task else [])
                    for p in a.parts
                    if isinstance(p.root, TextPart)
                ],
            },
        )


def main() -> int:
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1]), 60))
    except Exception as e:  # noqa: BLE001 - reported as a failed step
        report("error", {"ok": False, "error": f"{type(e).__name__}: {e}"})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
