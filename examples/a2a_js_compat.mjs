// The @a2a-js/sdk 1.3 v0.3 compat converters as a `roundtrip --against`
// command: JSON Lines in, JSON Lines out, one line out per line in (the
// converted document, or {"error": {"message": ...}}).
//
// What to convert comes from the environment `roundtrip` sets: A2A_KIND
// (task, message, card, push-config, push-body, request, response, event),
// A2A_TO (0.3 / 1.0), A2A_METHOD_V10 (responses and events).
//
// Called the way the SDK's own compat code calls them: v0.3 -> v1.0 is
// JSON.parse, toCore* (the compat client reading a v0.3 agent's answer; the
// compat server reading a v0.3 request), the SDK's ProtoJSON codec
// (`X.toJSON`), JSON.stringify; v1.0 -> v0.3 is JSON.parse, the codec's
// `X.fromJSON`, toCompat*, JSON.stringify. The converters are internal to
// the compat bundles: this script writes a copy of each bundle next to it
// in node_modules with one extra export line, and imports that copy (the
// converters' code is the package's).
//
//   (cd examples && npm install)
//   a2a-compat-proxy gen --kind task --version 1.0 --count 1000 \
//     | a2a-compat-proxy roundtrip --kind task --from 1.0 \
//         --against 'node examples/a2a_js_compat.mjs'
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "node_modules/@a2a-js/sdk/dist");

async function exposed(rel) {
  const src = path.join(dist, rel);
  const dst = src.replace(/\.js$/, ".roundtrip-export.js");
  const text = fs.readFileSync(src, "utf8");
  const names = [...new Set([...text.matchAll(/^function (to(?:Core|Compat)[A-Za-z]*)\(/gm)].map((m) => m[1]))];
  const extra = `\nexport { ${names.map((n) => `${n} as __${n}`).join(", ")} };\n`;
  if (!fs.existsSync(dst) || fs.readFileSync(dst, "utf8") !== text + extra) {
    fs.writeFileSync(dst, text + extra);
  }
  const m = await import(pathToFileURL(dst).href);
  return Object.fromEntries(names.map((n) => [n, m[`__${n}`]]));
}

const client = await exposed("compat/v0_3/client/index.js");
const server = await exposed("compat/v0_3/server/index.js");
const core = await import(pathToFileURL(path.join(dist, "index.js")).href);

const env = (id, result) => ({ jsonrpc: "2.0", id, result });

// v0.3 -> v1.0 and v1.0 -> v0.3 of each bare kind: [codec, toCore, toCompat].
const ENTITIES = {
  task: [core.Task, client.toCoreTask, server.toCompatTask],
  message: [core.Message, client.toCoreMessage, server.toCompatMessage],
  card: [core.AgentCard, client.toCoreAgentCard, server.toCompatAgentCard],
  "push-config": [
    core.TaskPushNotificationConfig,
    client.toCoreTaskPushNotificationConfig,
    server.toCompatTaskPushNotificationConfig,
  ],
};

// v1.0 method -> [v0.3 name, v1.0 request codec, toCore (v0.3 envelope), toCompat (core, id)].
const REQUESTS = {
  SendMessage: ["message/send", core.SendMessageRequest, server.toCoreSendMessageRequest, client.toCompatSendMessageRequest],
  SendStreamingMessage: ["message/stream", core.SendMessageRequest, server.toCoreSendMessageRequest, client.toCompatSendStreamingMessageRequest],
  GetTask: ["tasks/get", core.GetTaskRequest, server.toCoreGetTaskRequest, client.toCompatGetTaskRequest],
  CancelTask: ["tasks/cancel", core.CancelTaskRequest, server.toCoreCancelTaskRequest, client.toCompatCancelTaskRequest],
  SubscribeToTask: ["tasks/resubscribe", core.SubscribeToTaskRequest, server.toCoreSubscribeToTaskRequest, client.toCompatTaskResubscriptionRequest],
  CreateTaskPushNotificationConfig: ["tasks/pushNotificationConfig/set", core.TaskPushNotificationConfig,
    server.toCoreCreateTaskPushNotificationConfigRequest, client.toCompatSetTaskPushNotificationConfigRequest],
  GetTaskPushNotificationConfig: ["tasks/pushNotificationConfig/get", core.GetTaskPushNotificationConfigRequest,
    server.toCoreGetTaskPushNotificationConfigRequest, client.toCompatGetTaskPushNotificationConfigRequest],
  ListTaskPushNotificationConfigs: ["tasks/pushNotificationConfig/list", core.ListTaskPushNotificationConfigsRequest,
    server.toCoreListTaskPushNotificationConfigsRequest, client.toCompatListTaskPushNotificationConfigRequest],
  DeleteTaskPushNotificationConfig: ["tasks/pushNotificationConfig/delete", core.DeleteTaskPushNotificationConfigRequest,
    server.toCoreDeleteTaskPushNotificationConfigRequest, client.toCompatDeleteTaskPushNotificationConfigRequest],
  GetExtendedAgentCard: ["agent/getAuthenticatedExtendedCard", core.GetExtendedAgentCardRequest,
    server.toCoreGetExtendedAgentCardRequest, client.toCompatGetAuthenticatedExtendedCardRequest],
};
const V10_NAME = Object.fromEntries(Object.entries(REQUESTS).map(([k, v]) => [v[0], k]));

function entity(kind, to, doc) {
  const [codec, toCore, toCompat] = ENTITIES[kind];
  return to === "1.0" ? codec.toJSON(toCore(doc)) : toCompat(codec.fromJSON(doc));
}

/** A stream result (also a push body). */
function stream(to, result) {
  if (to === "1.0") return core.StreamResponse.toJSON(client.toCoreStreamResponse(env(1, result)));
  return server.toCompatStreamResponse(core.StreamResponse.fromJSON(result), 1).result;
}

function request(to, doc) {
  if (to === "1.0") {
    const name = V10_NAME[doc.method];
    if (!name) throw new Error(`no converter for ${doc.method}`);
    const [, codec, toCore] = REQUESTS[name];
    return { jsonrpc: "2.0", id: doc.id, method: name, params: codec.toJSON(toCore(doc)) };
  }
  const entry = REQUESTS[doc.method];
  if (!entry) throw new Error(`no converter for ${doc.method}`);
  const [, codec, , toCompat] = entry;
  return toCompat(codec.fromJSON(doc.params ?? {}), doc.id);
}

/** The success `result` answering the v1.0-named `method`. */
function result(method, to, value) {
  switch (method) {
    case "SendMessage": {
      if (to === "1.0") {
        // As the compat client reads a message/send answer: a Task or a Message.
        const payload = value.kind === "message"
          ? { $case: "message", value: client.toCoreMessage(value) }
          : { $case: "task", value: client.toCoreTask(value) };
        return core.SendMessageResponse.toJSON({ payload });
      }
      const p = core.SendMessageResponse.fromJSON(value).payload;
      if (!p) throw new Error("SendMessageResponse without payload");
      return p.$case === "message" ? server.toCompatMessage(p.value) : server.toCompatTask(p.value);
    }
    case "SendStreamingMessage":
    case "SubscribeToTask":
      return stream(to, value);
    case "GetTask":
    case "CancelTask":
      return entity("task", to, value);
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
      return entity("push-config", to, value);
    case "ListTaskPushNotificationConfigs":
      if (to === "1.0") {
        return core.ListTaskPushNotificationConfigsResponse.toJSON(
          client.toCoreListTaskPushNotificationConfigsResponse(env(1, value)),
        );
      }
      return server.toCompatListTaskPushNotificationConfigSuccessResponse(
        core.ListTaskPushNotificationConfigsResponse.fromJSON(value), 1,
      ).result;
    case "DeleteTaskPushNotificationConfig":
      return null;
    case "GetExtendedAgentCard":
      return entity("card", to, value);
    default:
      throw new Error(`no converter for results of ${method}`);
  }
}

function convert(kind, to, method, doc) {
  if (ENTITIES[kind]) return entity(kind, to, doc);
  if (kind === "push-body") return stream(to, doc);
  if (kind === "request") return request(to, doc);
  if (kind === "response" || kind === "event") {
    if (!("result" in doc)) throw new Error("error envelopes have no converter");
    return env(doc.id, result(method || "SendStreamingMessage", to, doc.result));
  }
  throw new Error(`no converter for kind ${kind}`);
}

const kind = process.env.A2A_KIND;
const to = process.env.A2A_TO;
const method = process.env.A2A_METHOD_V10 || null;
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
for await (const line of lines) {
  let text;
  try {
    const answer = convert(kind, to, method, JSON.parse(line));
    text = JSON.stringify(answer === undefined ? null : answer);
  } catch (e) {
    text = JSON.stringify({ error: { message: `${e?.name ?? "Error"}: ${e?.message ?? e}` } });
  }
  out.push(text);
  if (out.length >= 256) {
    process.stdout.write(out.join("\n") + "\n");
    out.length = 0;
  }
}
if (out.length) process.stdout.write(out.join("\n") + "\n");
