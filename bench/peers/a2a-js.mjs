// @a2a-js/sdk's v0.3 compat converters on the payloads written by
// `peers-bench write`, bytes in -> bytes out, called the way the SDK's own
// compat code calls them:
//   v0.3 -> v1.0: JSON.parse, toCore* (the compat client reading a v0.3
//     agent's answer; the compat server reading a v0.3 request), the
//     ProtoJSON codec's toJSON (the only way the SDK writes v1.0 JSON),
//     JSON.stringify;
//   v1.0 -> v0.3: JSON.parse, the codec's fromJSON, toCompat* (the compat
//     server answering a v0.3 client; the compat client sending a v0.3
//     request), JSON.stringify.
// The converters are internal to the compat bundles; this script writes a
// copy of each bundle, next to it in node_modules, with one extra export
// line, and imports that copy (the converters' code is the package's).
//
// usage: node a2a-js.mjs PAYLOAD_DIR MS   -> `op a2a-js ns_per_op` lines
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "node_modules/@a2a-js/sdk/dist");

function exposed(rel, names) {
  const src = path.join(dist, rel);
  const dst = src.replace(/\.js$/, ".bench-export.js");
  const text = fs.readFileSync(src, "utf8");
  const extra = `\nexport { ${names.map((n) => `${n} as __${n}`).join(", ")} };\n`;
  if (!fs.existsSync(dst) || fs.readFileSync(dst, "utf8") !== text + extra) {
    fs.writeFileSync(dst, text + extra);
  }
  return import(pathToFileURL(dst).href);
}

const client = await exposed("compat/v0_3/client/index.js", [
  "toCoreTask",
  "toCoreAgentCard",
  "toCoreStreamResponse",
  "toCompatSendMessageRequest",
]);
const server = await exposed("compat/v0_3/server/index.js", [
  "toCompatTask",
  "toCompatAgentCard",
  "toCoreSendMessageRequest",
  "toCompatStreamResponse",
]);
const core = await import(pathToFileURL(path.join(dist, "index.js")).href);
const { Task, AgentCard, SendMessageRequest, StreamResponse } = core;

const ops = {
  "task.v03": (s) => {
    const env = JSON.parse(s);
    const t = client.__toCoreTask(env.result);
    return JSON.stringify({ jsonrpc: "2.0", id: env.id, result: Task.toJSON(t) });
  },
  "task.v10": (s) => {
    const env = JSON.parse(s);
    const t = Task.fromJSON(env.result);
    return JSON.stringify({ jsonrpc: "2.0", id: env.id, result: server.__toCompatTask(t) });
  },
  "card.v03": (s) => JSON.stringify(AgentCard.toJSON(client.__toCoreAgentCard(JSON.parse(s)))),
  "card.v10": (s) => JSON.stringify(server.__toCompatAgentCard(AgentCard.fromJSON(JSON.parse(s)))),
  "send.v03": (s) => {
    const env = JSON.parse(s);
    const r = server.__toCoreSendMessageRequest(env);
    return JSON.stringify({
      jsonrpc: "2.0",
      id: env.id,
      method: "SendMessage",
      params: SendMessageRequest.toJSON(r),
    });
  },
  "send.v10": (s) => {
    const env = JSON.parse(s);
    return JSON.stringify(
      client.__toCompatSendMessageRequest(SendMessageRequest.fromJSON(env.params), env.id),
    );
  },
  "status.v03": (s) => {
    const env = JSON.parse(s);
    const r = client.__toCoreStreamResponse(env);
    return JSON.stringify({ jsonrpc: "2.0", id: env.id, result: StreamResponse.toJSON(r) });
  },
  "status.v10": (s) => {
    const env = JSON.parse(s);
    return JSON.stringify(server.__toCompatStreamResponse(StreamResponse.fromJSON(env.result), env.id));
  },
};

// The v0.3 -> v1.0 converters without the codec step: JSON.stringify of the
// SDK's in-memory v1.0 object (not v1.0 wire JSON: enums are numbers, raw
// bytes a Buffer), a lower bound of what a2a-js spends.
const bare = {
  "task.v03": (s) => {
    const env = JSON.parse(s);
    return JSON.stringify({ jsonrpc: "2.0", id: env.id, result: client.__toCoreTask(env.result) });
  },
  "card.v03": (s) => JSON.stringify(client.__toCoreAgentCard(JSON.parse(s))),
  "send.v03": (s) => {
    const env = JSON.parse(s);
    return JSON.stringify({
      jsonrpc: "2.0",
      id: env.id,
      method: "SendMessage",
      params: server.__toCoreSendMessageRequest(env),
    });
  },
  "status.v03": (s) => {
    const env = JSON.parse(s);
    return JSON.stringify({ jsonrpc: "2.0", id: env.id, result: client.__toCoreStreamResponse(env) });
  },
};

function time(ms, f) {
  const warm = process.hrtime.bigint() + BigInt(ms) * 100000n;
  let sink = 0;
  while (process.hrtime.bigint() < warm) sink += f().length;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1000000n;
  let n = 0;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 16; i++) sink += f().length;
    n += 16;
    now = process.hrtime.bigint();
  }
  if (sink === -1) console.log(sink);
  return Number(now - start) / n;
}

const [dir, msArg] = process.argv.slice(2);
const ms = Number(msArg ?? 300);
for (const [name, f] of Object.entries(ops)) {
  // Input as bytes (a Buffer), as a server gets it; the output as bytes too.
  const input = fs.readFileSync(path.join(dir, `${name}.json`));
  const g = (b) => Buffer.from(f(b.toString("utf8")), "utf8");
  g(input);
  const ns = time(ms, () => g(input));
  console.log(`${name} a2a-js ${ns.toFixed(0)} ${input.length}`);
  if (bare[name]) {
    const h = (b) => Buffer.from(bare[name](b.toString("utf8")), "utf8");
    const ns2 = time(ms, () => h(input));
    console.log(`${name} a2a-js-bare ${ns2.toFixed(0)} ${input.length}`);
  }
}
