"""The v0.3 REST card and a v0.3 REST send without `configuration`, on the
real a2a-sdk 0.3.x REST client (`RestTransport`).

Steps (one JSON line each, `{"step": ..., "ok": ..., ...}`; exit 1 on an
exception):
- `card`: BASE_URL's header-less agent card (`A2ACardResolver`) and the
  HTTP+JSON interface it lists;
- `extended`: `RestTransport.get_card()`, i.e. `GET /v1/card` read with
  `AgentCard.model_validate` (the JSON-schema card): its name, security
  requirements, security scheme types and skills;
- `raw_card`: the ProtoJSON member (`httpAuthSecurityScheme`, ...) of
  each scheme of the raw `/v1/card` body, which a2a-js 0.3's REST client
  needs;
- `send`: `RestTransport.send_message` with `blocking: true`;
- `no_config`: a raw `POST /v1/message:send` whose body has no
  `configuration` (the text starts with "slow", so an agent that waits
  answers `completed`, one that returns immediately an earlier state),
  then `GET /v1/tasks/{id}` until the task completes (bounded).

    python rest_card_client_v03.py BASE_URL
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver
from a2a.client.transports.rest import RestTransport
from a2a.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Part,
    Role,
    Task,
    TaskQueryParams,
    TextPart,
)

TIMEOUT = 20.0


def report(step: str, data: dict) -> None:
    print(json.dumps({"step": step, **data}), flush=True)


def texts(task: Task) -> list:
    return [
        p.root.text
        for a in task.artifacts or []
        for p in a.parts
        if isinstance(p.root, TextPart)
    ]


async def run(base: str) -> None:
    async with httpx.AsyncClient(timeout=15.0) as http:
        card = await asyncio.wait_for(A2ACardResolver(http, base).get_agent_card(), TIMEOUT)
        rest = [i.url for i in card.additional_interfaces or [] if i.transport == "HTTP+JSON"]
        report(
            "card",
            {
                "ok": bool(rest),
                "rest_url": rest[0] if rest else None,
                "extended": card.supports_authenticated_extended_card,
            },
        )
        transport = RestTransport(http, agent_card=card, url=rest[0])
        try:
            ext = await asyncio.wait_for(transport.get_card(), TIMEOUT)
            report(
                "extended",
                {
                    "ok": True,
                    "name": ext.name,
                    "security": ext.security,
                    "schemes": {k: v.root.type for k, v in (ext.security_schemes or {}).items()},
                    "skills": [s.id for s in ext.skills],
                    "skill_security": [s.security for s in ext.skills],
                },
            )
        except Exception as e:  # noqa: BLE001 - reported, the other steps go on
            report("extended", {"ok": False, "error": f"{type(e).__name__}: {e}"})
        # What a ProtoJSON reader (a2a-js 0.3's `SecurityScheme.fromJSON`)
        # needs: each scheme with its oneof member.
        raw = (await http.get(f"{rest[0].rstrip('/')}/v1/card")).json()
        report(
            "raw_card",
            {
                "ok": True,
                "proto_forms": {
                    k: sorted(m for m in v if m.endswith("SecurityScheme"))
                    for k, v in (raw.get("securitySchemes") or {}).items()
                },
            },
        )
        msg = Message(
            role=Role.user,
            message_id=str(uuid.uuid4()),
            parts=[Part(root=TextPart(text="hello"))],
        )
        sent = await asyncio.wait_for(
            transport.send_message(
                MessageSendParams(
                    message=msg, configuration=MessageSendConfiguration(blocking=True)
                )
            ),
            TIMEOUT,
        )
        report(
            "send",
            {
                "ok": isinstance(sent, Task),
                "state": sent.status.state.value if isinstance(sent, Task) else None,
                "artifact_texts": texts(sent) if isinstance(sent, Task) else [],
            },
        )
        body = {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "content": [{"text": "slow no configuration"}],
            }
        }
        r = await http.post(f"{rest[0].rstrip('/')}/v1/message:send", json=body)
        answer = r.json()
        task = answer.get("task") or {}
        state = (task.get("status") or {}).get("state")
        final = None
        if task.get("id"):
            for _ in range(100):
                got = await transport.get_task(TaskQueryParams(id=task["id"]))
                final = got.status.state.value
                if final in ("completed", "failed", "canceled", "rejected"):
                    break
                await asyncio.sleep(0.1)
        report(
            "no_config",
            {"ok": r.status_code == 200, "status": r.status_code, "state": state, "final": final},
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
