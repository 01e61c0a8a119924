"""What the A2A TCK (1.0-dev) asks of what the proxy answers itself, checked
with the real a2a-sdk 1.x (issue #37 item 4). Needs `a2a-sdk[grpc]` 1.x
(`.venv-grpc`).

    A2A_GRPC=HOST:PORT python tck_requirements_client.py BASE_URL

(A2A_GRPC: the proxy's gRPC listener.)

Steps (one JSON line each, `{"step", "ok", ...observed}`):
- `last_modified`: the header-less card and the 1.0 card carry
  `Last-Modified` (CARD-CACHE-003), an HTTP date, the same on a second
  fetch, with `ETag` and `Cache-Control` as before;
- `grpc_version`: a v1.0 gRPC SendMessage with `a2a-version: 99.0` (the
  TCK's `test_version_not_supported_returns_unimplemented`): its status and
  ErrorInfo reason;
- `jsonrpc_content_type`: a JSON-RPC body that is no JSON sent as
  `text/plain` (the TCK's `test_content_type_not_supported_error`), and the
  same as `application/json`: the JSON-RPC error codes;
- `hybrid_schemes`: the header-less card read by the SDK's own card parser
  (`parse_agent_card`, v0.3 members mapped as it maps them): each security
  scheme's kind, the card's and the skills' security requirements;
- `hybrid_v10_members`: the header-less card with the v0.3-only members
  left out, parsed strictly as a v1.0 `AgentCard` (`ParseDict` refusing
  unknown fields): what the v1.0 schema says of the rest;
- `v10_card_strict`: the `A2A-Version: 1.0` card parsed strictly.
"""

import asyncio
import copy
import email.utils
import json
import os
import sys
import uuid

import grpc
import httpx
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard, a2a_pb2, a2a_pb2_grpc
from google.protobuf.json_format import MessageToDict, ParseDict

TIMEOUT = 20.0
# Members of the hybrid card only v0.3 readers read (the v1.0 schema's
# `additionalProperties: false` refuses them): top level, in each security
# scheme, in each skill.
V03_TOP = ["url", "preferredTransport", "additionalInterfaces", "protocolVersion", "security",
           "supportsAuthenticatedExtendedCard"]
V03_SCHEME = ["type", "scheme", "bearerFormat", "in", "name", "flows", "openIdConnectUrl",
              "description"]
V03_SKILL = ["security"]
V10_MEMBERS = ["httpAuthSecurityScheme", "apiKeySecurityScheme", "oauth2SecurityScheme",
               "openIdConnectSecurityScheme", "mtlsSecurityScheme"]


def report(step, ok, **kw):
    print(json.dumps({"step": step, "ok": ok, **kw}), flush=True)


def v10_part(card):
    c = copy.deepcopy(card)
    for k in V03_TOP:
        c.pop(k, None)
    for s in (c.get("securitySchemes") or {}).values():
        for k in V03_SCHEME:
            s.pop(k, None)
    for s in c.get("skills") or []:
        for k in V03_SKILL:
            s.pop(k, None)
    return c


def strict(card):
    try:
        ParseDict(card, AgentCard())
        return None
    except Exception as e:  # noqa: BLE001 - reported
        return f"{type(e).__name__}: {e}"


def error_info(e):
    for k, v in e.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            from google.rpc import error_details_pb2, status_pb2

            st = status_pb2.Status.FromString(v)
            for d in st.details:
                info = error_details_pb2.ErrorInfo()
                if d.Unpack(info):
                    return info.reason
    return None


async def main(base, grpc_addr):
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        heads = {}
        for label, h in (("headerless", {}), ("v10", {"A2A-Version": "1.0"})):
            seen = []
            for _ in range(2):
                r = await http.get(f"{base}/.well-known/agent-card.json", headers=h)
                seen.append(r.headers.get("last-modified"))
                heads[label] = r
            parsed = [email.utils.parsedate_to_datetime(x) if x else None for x in seen]
            ok = bool(seen[0]) and seen[0] == seen[1] and parsed[0] is not None
            report("last_modified", ok, card=label, values=seen,
                   etag=bool(r.headers.get("etag")), cache_control=r.headers.get("cache-control"))
        hybrid = heads["headerless"].json()
        v10 = heads["v10"].json()

        bad = "{'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage'}"
        codes = {}
        for ct in ("text/plain", "application/json"):
            r = await http.post(base, content=bad.encode(),
                                headers={"Content-Type": ct, "A2A-Version": "1.0"})
            codes[ct] = r.json().get("error", {}).get("code")
        report("jsonrpc_content_type", True, codes=codes)

    parsed = MessageToDict(parse_agent_card(copy.deepcopy(hybrid)))
    schemes = {k: sorted(v.keys()) for k, v in (parsed.get("securitySchemes") or {}).items()}
    missing = sorted(k for k, v in (hybrid.get("securitySchemes") or {}).items()
                     if not any(m in v for m in V10_MEMBERS))
    report("hybrid_schemes", True, schemes=schemes, without_v10_member=missing,
           requirements=parsed.get("securityRequirements"),
           skill_requirements=[s.get("securityRequirements") for s in parsed.get("skills", [])])
    err = strict(v10_part(hybrid))
    report("hybrid_v10_members", err is None, error=err)
    err = strict(v10)
    report("v10_card_strict", err is None, error=err)

    async with grpc.aio.insecure_channel(grpc_addr) as ch:
        stub = a2a_pb2_grpc.A2AServiceStub(ch)
        req = a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
            message_id=str(uuid.uuid4()), role=a2a_pb2.ROLE_USER,
            parts=[a2a_pb2.Part(text="version status")]))
        try:
            await stub.SendMessage(req, metadata=[("a2a-version", "99.0")], timeout=TIMEOUT)
            report("grpc_version", False, error="no error")
        except grpc.aio.AioRpcError as e:
            report("grpc_version", True, code=e.code().name, reason=error_info(e))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1].rstrip("/"), os.environ["A2A_GRPC"]))
