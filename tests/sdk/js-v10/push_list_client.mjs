// The push-config calls of one task on the real @a2a-js/sdk 1.x REST
// client (issue #37 item 2), as tests/sdk/push_list_client_v10.py does:
// send, create `c1` (token, Bearer authentication) and `c2`, list, get
// `c2`, delete `c1`, list again, over the SDK's client on its v1.0 REST transport
// (the card's 1.0 HTTP+JSON interface).
// Prints one JSON line per step (`{"step": ..., "ok": ..., ...}`).
//
//     node push_list_client.mjs BASE_URL

import { randomUUID } from "node:crypto";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  RestTransportFactory,
} from "@a2a-js/sdk/client";

const report = (step, data) => console.log(JSON.stringify({ step, ...data }));
const HOOK = "https://hooks.example.com/a2a/";

const summary = (c) => {
  const out = { id: c.id, task_id: c.taskId, url: c.url };
  if (c.token) out.token = c.token;
  if (c.authentication) out.auth = [c.authentication.scheme, c.authentication.credentials];
  return out;
};

async function step(name, call) {
  try {
    return { ok: true, value: await call() };
  } catch (e) {
    report(name, { ok: false, error: String(e) });
    return { ok: false };
  }
}

async function main(base) {
  const card = await new DefaultAgentCardResolver().resolve(base);
  const rest = (card.supportedInterfaces ?? []).filter(
    (i) => i.protocolBinding === "HTTP+JSON" && (i.protocolVersion ?? "").startsWith("1.0"),
  );
  report("card", { ok: rest.length > 0, rest_urls: rest.map((i) => i.url) });
  // The SDK's client (it sends `A2A-Version`) over its v1.0 REST transport.
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new RestTransportFactory()],
    preferredTransports: ["HTTP+JSON"],
  });
  const t = await new ClientFactory(options).createFromAgentCard(card);
  const sent = await t.sendMessage({
    tenant: "",
    message: {
      messageId: randomUUID(),
      contextId: "",
      taskId: "",
      role: 1,
      parts: [{ content: { $case: "text", value: "hi" } }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  });
  const taskId = sent.id ?? sent.task?.id ?? sent.payload?.value?.id;
  report("send", { ok: !!taskId, task_id: taskId });
  for (const [cid, token, auth] of [
    ["c1", "tok-1", { scheme: "Bearer", credentials: "hook-secret" }],
    ["c2", "", undefined],
  ]) {
    const cfg = { tenant: "", id: cid, taskId, url: HOOK + cid, token, authentication: auth };
    const r = await step(`create ${cid}`, () => t.createTaskPushNotificationConfig(cfg));
    if (r.ok) report(`create ${cid}`, { ok: r.value.id === cid, config: summary(r.value) });
  }
  const listed = async (name) => {
    const req = { tenant: "", taskId, pageSize: 0, pageToken: "" };
    const r = await step(name, () => t.listTaskPushNotificationConfig(req));
    if (r.ok) {
      const configs = r.value.configs.map(summary).sort((a, b) => a.id.localeCompare(b.id));
      report(name, { ok: true, configs });
    }
  };
  await listed("list");
  const got = await step("get c2", () =>
    t.getTaskPushNotificationConfig({ tenant: "", taskId, id: "c2" }),
  );
  if (got.ok) report("get c2", { ok: got.value.id === "c2", config: summary(got.value) });
  const del = await step("delete c1", () =>
    t.deleteTaskPushNotificationConfig({ tenant: "", taskId, id: "c1" }),
  );
  if (del.ok) report("delete c1", { ok: true });
  await listed("list after delete");
}

const timer = setTimeout(() => {
  report("error", { ok: false, error: "timed out" });
  process.exit(1);
}, 60000);
main(process.argv[2])
  .then(() => clearTimeout(timer))
  .catch((e) => {
    report("error", { ok: false, error: String(e?.stack ?? e) });
    process.exit(1);
  });
