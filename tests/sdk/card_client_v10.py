"""Header-less card discovery and one call on the real a2a-sdk 1.x.

Fetches BASE_URL's agent card with no A2A-Version header (as the v1.0 TCK
and many v1.0 clients do: the proxy's hybrid card), reports the
`supportedInterfaces` the SDK parsed, then lets the SDK's own ClientFactory
pick the JSON-RPC interface (it prefers 1.0) and sends one blocking
message. Prints one JSON line per step; exits 1 on failure.

    python card_client_v10.py BASE_URL
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

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
            "interfaces": [
                {
                    "url": i.url,
                    "binding": i.protocol_binding,
                    "protocol_version": i.protocol_version,
                }
                for i in card.supported_interfaces
            ],
        },
    )
    config = ClientConfig(streaming=False, supported_protocol_bindings=["JSONRPC"])
    client = ClientFactory(config).create(card)
    req = SendMessageRequest(
        message=Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            parts=[Part(text="hello")],
        )
    )
    last = None
    async for ev in client.send_message(req):
        last = ev
    task = last.task if last is not None and last.HasField("task") else None
    report(
        "send",
        {
            "ok": task is not None,
            "transport": type(client._transport).__name__,
            "state": TaskState.Name(task.status.state) if task else None,
            "artifact_texts": [p.text for a in (task.artifacts if task else []) for p in a.parts if p.text],
        },
    )
    if hasattr(client, "close"):
        await client.close()


def main() -> int:
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1]), 60))
    except Exception as e:  # noqa: BLE001 - reported as a failed step
        report("error", {"ok": False, "error": f"{type(e).__name__}: {e}"})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
