// The v0.3 REST card on the real @a2a-js/sdk 0.3 REST client.
//
// Reads BASE_URL's header-less agent card (the SDK's card resolver), takes
// its HTTP+JSON interface, then:
// - `extended`: `RestTransport.getExtendedAgentCard()` (`GET /v1/card`,
//   read with `AgentCard.fromJSON` and `FromProto.agentCard`): its name,
//   security requirements, each scheme's `type` and the skills;
// - `send`: `RestTransport.sendMessage` with `blocking: true`.
// Prints one JSON line per step (`{"step": ..., "ok": ..., ...}`); exits 1
// on an exception.
//
//     node rest_card_client.mjs BASE_URL

import { randomUUID } from "node:crypto";
import { DefaultAgentCardResolver, RestTransport } from "@a2a-js/sdk/client";

const report = (step, data) => console.log(JSON.stringify({ step, ...data }));

async function main(base) {
  const card = await new DefaultAgentCardResolver().resolve(base);
  const rest = (card.additionalInterfaces ?? []).filter((i) => i.transport === "HTTP+JSON");
  report("card", { ok: rest.length > 0, rest_url: rest[0]?.url ?? null });
  const transport = new RestTransport({ endpoint: rest[0].url });
  try {
    const ext = await transport.getExtendedAgentCard();
    report("extended", {
      ok: true,
      name: ext.name,
      security: ext.security,
      schemes: Object.fromEntries(
        Object.entries(ext.securitySchemes ?? {}).map(([k, v]) => [k, v.type]),
      ),
      skills: ext.skills.map((s) => s.id),
    });
  } catch (e) {
    report("extended", { ok: false, error: String(e) });
  }
  const sent = await transport.sendMessage({
    message: {
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      parts: [{ kind: "text", text: "hello" }],
    },
    configuration: { blocking: true },
  });
  report("send", {
    ok: sent.kind === "task",
    state: sent.status?.state ?? null,
    artifact_texts: (sent.artifacts ?? []).flatMap((a) =>
      a.parts.filter((p) => p.kind === "text").map((p) => p.text),
    ),
  });
}

const timer = setTimeout(() => {
  report("error", { ok: false, error: "timed out" });
  process.exit(1);
}, 60000);
main(process.argv[2])
  .then(() => clearTimeout(timer))
  .catch((e) => {
    report("error", { ok: false, error: String(e) });
    process.exit(1);
  });
