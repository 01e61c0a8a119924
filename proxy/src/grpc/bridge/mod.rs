//! Binding bridge: one gRPC call of either version, sent as a JSON-RPC call
//! over HTTP/1.1 to the upstream in the upstream's version (translated with
//! the same [`JsonRpcCodec`] the JSON-RPC path uses), and the answer (a
//! JSON-RPC response, or an SSE stream of them) turned back into the
//! caller's version. The per-RPC prost <-> model conversions live in
//! `svc_v03` / `svc_v10`; this module only moves JSON values.
//!
//! The JSON-RPC calls go through the app's [`crate::upstream::UpstreamPool`],
//! as every other call the proxy makes to the agent: pooled keep-alive
//! connections, TLS toward an `https://` agent, and the one retry table
//! (`upstream/retry.rs`) by each RPC's operation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::StreamExt;
use tonic::metadata::MetadataMap;
use tonic::Status;
use translate::method::Method;

use super::status::{from_failure, from_rpc_error};
use super::upstream::{Events, GrpcUpstream, NoAnswer};
use crate::app::App;
use crate::call::{Local, Plan, Prelude, PushStep, TaskLookup};
use crate::codec::{ClientRequest, Codec, JsonRpcCodec, OverHttp};
use crate::error::Failure;
use crate::sse::SseFramer;
use crate::version::Version;

mod events;
mod meta;

pub(in crate::grpc) use events::*;
pub use meta::*;

/// The upstream's version: a configured one at once, else from its card,
/// the card fetch boxed (its future is large, and the callers' futures are
/// moved whole on every call).
pub(super) async fn upstream_version_of(app: &App) -> Result<Version, Failure> {
    match app.config.upstream_version {
        crate::config::UpstreamVersion::Fixed(v) => Ok(v),
        crate::config::UpstreamVersion::Auto => Box::pin(app.upstream_version()).await,
    }
}

/// One call counted against `limits.max_connections` (left on drop).
pub(super) struct InFlight(Arc<App>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// The bridge shared by both services.
pub struct Bridge {
    pub app: Arc<App>,
    next_id: AtomicU64,
    /// `upstream.grpc_url`: RPCs go to the upstream's gRPC binding.
    pub(super) grpc: Option<GrpcUpstream>,
}

/// Where a streaming call's answer comes from.
enum Source {
    /// The upstream's JSON-RPC binding (an SSE stream, or a JSON error),
    /// its connection back to the app's pool once read to its end (boxed:
    /// the stream's state is large beside the other source).
    Http(Box<crate::upstream::Streaming>, Arc<App>),
    /// The upstream's gRPC binding, as JSON-RPC response bodies.
    Grpc(Events),
}

/// A prepared upstream call.
struct Prepared {
    /// The JSON side of the call: its request and answer across versions.
    codec: JsonRpcCodec,
    body: Vec<u8>,
    /// What the push layer left for the answer (push-related RPCs only).
    push: Option<PushCall>,
}

/// A push-related call the push layer intercepted: what the answer may
/// restore, and for a delete the (task id, config id) to forget once the
/// agent confirmed it (as the JSON-RPC path does in `server.rs`).
struct PushCall {
    layer: Arc<crate::push::layer::Push>,
    pending: crate::push::layer::Pending,
    delete: Option<(String, String)>,
}

impl PushCall {
    /// The answer (a JSON-RPC envelope in the `client`'s version) with the
    /// subscriber's own push values restored; a confirmed delete forgotten
    /// before it is answered.
    async fn finish(&self, client: Version, out: Vec<u8>) -> Vec<u8> {
        let out = self.restore(client, out);
        if let Some((t, c)) = &self.delete {
            if !answer_is_error(&out) {
                self.layer.forget(t.clone(), c.clone()).await;
            }
        }
        out
    }

    fn restore(&self, client: Version, out: Vec<u8>) -> Vec<u8> {
        self.layer
            .restore(client, &out, &self.pending)
            .unwrap_or(out)
    }
}

/// The bridge's JSON-RPC request in the agent's version, as the codec
/// encodes a JSON-RPC client's (no path, no query).
fn encode(codec: &mut JsonRpcCodec, body: &[u8]) -> Result<Vec<u8>, Failure> {
    let params = crate::route::PathParams::default();
    codec.encode_request(ClientRequest {
        body,
        params: &params,
        query: None,
    })
}

/// An HTTP 401 / 403 of the agent as the caller's status (`code`): the
/// message of the JSON-RPC error it came with, else a fixed one (the
/// agent's other bytes are not shown).
fn refusal_of(code: tonic::Code, body: &[u8]) -> Status {
    let message = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message")?.as_str().map(String::from))
        .unwrap_or_else(|| "the agent refused the caller's credentials".to_string());
    Status::new(code, message)
}

/// Whether a JSON-RPC envelope carries an `error`.
fn answer_is_error(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body).map_or(true, |v| v.get("error").is_some())
}

impl Bridge {
    /// `grpc`: the upstream's gRPC endpoint when `upstream.grpc_url` is set.
    pub fn new(app: Arc<App>, grpc: Option<GrpcUpstream>) -> Bridge {
        Bridge {
            app,
            next_id: AtomicU64::new(1),
            grpc,
        }
    }

    /// Counts the call in, or Overloaded (UNAVAILABLE) beyond the limit.
    pub(super) fn enter(&self, client: Version) -> Result<InFlight, Status> {
        if self.app.enter() {
            Ok(InFlight(self.app.clone()))
        } else {
            let limit = self.app.config.limits.max_connections;
            Err(from_failure(client, &Failure::Overloaded { limit }))
        }
    }

    /// The upstream's version (a failure already rendered for `client`).
    pub async fn upstream_version(&self, client: Version) -> Result<Version, Status> {
        self.version().await.map_err(|f| from_failure(client, &f))
    }

    /// VersionNotSupported for a 1.N client newer than what is served for
    /// the agent, as on the HTTP bindings ([`crate::route::refused_minor`]);
    /// 0.3 and 1.0 calls pass at once.
    pub(super) async fn check_minor(&self, client: Version, meta: &CallMeta) -> Result<(), Status> {
        use crate::config::NewerMinor;
        use crate::route::served_v1;
        use crate::version::ProtocolVersion;
        let Some(requested) = meta.protocol.filter(|p| *p > ProtocolVersion::V1_0) else {
            return Ok(());
        };
        let app = &self.app;
        // Boxed, and only here: a 0.3 or 1.0 call's future stays small and
        // allocates nothing for this check.
        let up = Box::pin(app.upstream_protocol())
            .await
            .map_err(|f| from_failure(client, &f))?;
        let served = served_v1(up);
        if requested > served && app.config.newer_minor == NewerMinor::Refuse {
            let f = Failure::VersionNotServed { requested, served };
            return Err(from_failure(client, &f));
        }
        Ok(())
    }

    /// The upstream's version ([`upstream_version_of`]).
    pub(super) async fn version(&self) -> Result<Version, Failure> {
        upstream_version_of(&self.app).await
    }

    /// The JSON-RPC request for the upstream; push configs in it are
    /// registered with the push layer (and pointed at the proxy) when the
    /// layer intercepts this pair of versions.
    async fn prepare(
        &self,
        client: Version,
        upstream: Version,
        method: Method,
        params: Option<Value>,
        meta: &CallMeta,
    ) -> Result<Prepared, Status> {
        let name = method.name(client).ok_or_else(|| {
            from_failure(
                client,
                &Failure::Internal {
                    detail: format!("{method:?} has no {client} name"),
                },
            )
        })?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut req = json!({"jsonrpc": "2.0", "id": id, "method": name});
        if let Some(p) = params {
            req["params"] = p;
        }
        let body = serde_json::to_vec(&req).unwrap_or_default();
        let mut codec = JsonRpcCodec::new(client, upstream, name.to_string(), Some(id.into()));
        let mut out = if client == upstream {
            body.clone()
        } else {
            encode(&mut codec, &body).map_err(|f| from_failure(client, &f))?
        };
        let mut push = None;
        let plan = Plan::new(method, client, upstream, self.app.push.as_deref());
        if plan.asks_push_config() {
            if let Some(f) = plan.refuse_push_config(self.app.agent_pushes().await) {
                return Err(from_failure(client, &f));
            }
        }
        if let Some(layer) = &self.app.push {
            let op = plan.op;
            if plan.intercepts_push() {
                let delete = match plan.push {
                    PushStep::InterceptDelete => crate::push::layer::delete_target(client, &body),
                    _ => None,
                };
                let (changed, mut pending) = layer
                    .register(op, client, upstream, &out)
                    .await
                    .map_err(|f| from_failure(client, &f))?;
                if let Some(task_id) = crate::push::layer::Push::seed_task(op, &pending) {
                    // The fold starts at the task as the agent has it now,
                    // asked before the agent learns the callback.
                    let ask = json!({ "id": task_id });
                    let ask = self.answer(Version::V10, Method::GetTask, Some(ask), meta);
                    match Box::pin(ask).await.map(serde_json::from_value) {
                        Ok(Ok(task)) => layer.seed_snapshot(&mut pending, task).await,
                        _ => tracing::debug!("no current task to start a v0.3 push snapshot from"),
                    }
                }
                if let Some(b) = changed {
                    out = b;
                }
                push = Some(PushCall {
                    layer: layer.clone(),
                    pending,
                    delete,
                });
            }
        }
        Ok(Prepared {
            codec,
            body: out,
            push,
        })
    }

    /// The agent's JSON-RPC interface, its whole URL (scheme, host, port,
    /// path): the one its card lists on a host the operator allows
    /// ([`crate::card::endpoints`], as the HTTP listener routes to it), else
    /// `upstream.url`.
    async fn rpc_target(&self) -> crate::config::HttpUrl {
        let app = &self.app;
        let ends = match app.upstream_addr().await {
            Ok(addr) => match app.cards.get(addr, true).await {
                Ok(card) => Some(app.endpoints_of(&card)),
                Err(_) => None,
            },
            Err(_) => None,
        };
        ends.and_then(|e| e.jsonrpc.as_ref().map(|j| j.url.clone()))
            .unwrap_or_else(|| app.config.upstream.clone())
    }

    /// The JSON-RPC call `body` toward the agent's JSON-RPC interface
    /// ([`Bridge::rpc_target`]): its address and the whole HTTP/1.1
    /// request (head and body) for the app's pool, with the limits of a
    /// call the proxy makes itself, `repeat` its row of the retry table.
    async fn request(
        &self,
        upstream: Version,
        body: &[u8],
        meta: &CallMeta,
        stream: bool,
        repeat: crate::upstream::Repeat,
    ) -> Result<AgentCall, Failure> {
        let to = self.rpc_target().await;
        let addr = self.app.resolve_addr(&to).await?;
        let wire = request_wire(&to, upstream, body, meta, stream)?;
        let limits = &self.app.config.limits;
        let call = crate::upstream::Limits {
            connect_timeout: limits.connect_timeout,
            read_timeout: limits.read_timeout,
            answer_timeout: limits.answer_timeout,
            max_body: limits.max_event_bytes,
            repeat,
        };
        Ok(AgentCall {
            addr,
            wire,
            limits: call,
        })
    }

    /// A v1.0 ListTasks toward a v0.3 agent (which has no list): answered
    /// per caller (its metadata's `authorization` and identity headers)
    /// from the tasks it saw through this proxy (crate::tasks), each asked
    /// of the agent with those credentials: over its gRPC binding when
    /// configured, else its JSON-RPC binding, as the bridge calls it.
    pub async fn list_tasks_locally(
        &self,
        params: &Value,
        meta: &CallMeta,
    ) -> Result<Option<Value>, Status> {
        let up = self.upstream_version(Version::V10).await?;
        let plan = Plan::new(Method::ListTasks, Version::V10, up, None);
        if plan.local != Some(Local::ListTasks) {
            return Ok(None);
        }
        let started = std::time::Instant::now();
        let caller = self.app.tasks.caller(&meta.presented.0);
        let r = match &self.grpc {
            None => {
                let via = crate::app::TaskFetch::JsonRpc(self.rpc_target().await);
                self.app.list_tasks_via(&caller, Some(params), via).await
            }
            Some(g) => {
                let (g, headers) = (g.clone(), Arc::new(caller.headers.clone()));
                let fetch: crate::app::FetchListed = Arc::new(move |id, history| {
                    let (g, headers) = (g.clone(), headers.clone());
                    Box::pin(
                        async move { super::direct::v03_task_as(&g, id, history, &headers).await },
                    )
                });
                self.app.list_tasks(&caller, Some(params), fetch).await
            }
        };
        let r = r.map(Some).map_err(|f| from_failure(Version::V10, &f));
        self.count(
            Version::V10,
            Method::ListTasks,
            r.as_ref().err(),
            started.elapsed(),
        )
        .await;
        r
    }

    pub async fn unary(
        &self,
        client: Version,
        method: Method,
        params: Option<Value>,
        meta: &CallMeta,
    ) -> Result<Value, Status> {
        self.check_minor(client, meta).await?;
        let _slot = self.enter(client)?;
        let started = std::time::Instant::now();
        let r = with_deadline(
            client,
            meta.timeout,
            self.answer(client, method, params, meta),
        )
        .await;
        self.count(client, method, r.as_ref().err(), started.elapsed())
            .await;
        r
    }

    /// What [`Bridge::unary`] does, without its connection slot, deadline
    /// and count: also how the proxy asks the agent itself.
    async fn answer(
        &self,
        client: Version,
        method: Method,
        params: Option<Value>,
        meta: &CallMeta,
    ) -> Result<Value, Status> {
        let upstream = self.upstream_version(client).await?;
        let p = self.prepare(client, upstream, method, params, meta).await?;
        let repeat = crate::upstream::Repeat::of(Some(method));
        let body = self
            .unary_answer(upstream, p.body, meta, repeat)
            .await
            .map_err(|e| e.status(client))?;
        let codec = &p.codec;
        let mut out = if client == upstream {
            body.to_vec()
        } else {
            codec.answer((200, &body)).body
        };
        if let Some(push) = &p.push {
            out = push.finish(client, out).await;
        }
        let pending = p.push.as_ref().map(|c| &c.pending);
        let mut known = Some(crate::push::layer::Push::known_config(pending));
        let mut known = |t: &str, c: &str| known.take().and_then(|k| k(t, c));
        out = codec.settle_config(out, &mut known).body;
        if Plan::new(method, client, upstream, None).record_tasks {
            // Tasks seen here are what ListTasks lists to this caller
            // (crate::tasks).
            let scope = self.app.tasks.scope_of(&meta.presented.0);
            self.app.tasks.record(scope, codec.method_name(), &out);
            self.app.relay.publish_envelope(codec.method_name(), &out);
        }
        method_result(client, Some(method), &out)
    }

    /// The Task a v1.0 SubscribeToTask of task `id` starts with when the
    /// agent is v0.3 (v1.0 sends the task first, a v0.3 resubscribe does
    /// not), asked of the agent with a GetTask within the call's deadline.
    /// A finished task is refused with UnsupportedOperation and an unknown
    /// one with NOT_FOUND, as a v1.0 server does; `Ok(None)` toward a v1.0
    /// agent, or when the agent gave no usable answer (its own answer to the
    /// subscribe then tells the client).
    pub(super) async fn first_task(
        &self,
        id: &str,
        meta: &CallMeta,
    ) -> Result<Option<Value>, Status> {
        let v10 = Version::V10;
        let up = self.upstream_version(v10).await?;
        let plan = Plan::new(Method::SubscribeToTask, v10, up, None);
        if plan.prelude != Some(Prelude::FirstTask) {
            return Ok(None);
        }
        let ask = self.answer(v10, Method::GetTask, Some(json!({ "id": id })), meta);
        let lookup = match with_deadline(v10, meta.timeout, ask).await {
            Ok(task) => TaskLookup::Found(task),
            Err(s) if s.code() == tonic::Code::NotFound => TaskLookup::NotFound,
            Err(s) => {
                tracing::debug!(code = ?s.code(), "no task for the first SubscribeToTask event");
                TaskLookup::Unknown
            }
        };
        crate::call::first_task_verdict(id, lookup).map_err(|f| from_failure(v10, &f))
    }

    /// The upstream's JSON-RPC answer body (in its version) to `body`, over
    /// its gRPC binding when configured, else its JSON-RPC binding; or its
    /// refusal of the caller ([`NoAnswer::Refused`]).
    async fn unary_answer(
        &self,
        upstream: Version,
        body: Vec<u8>,
        meta: &CallMeta,
        repeat: crate::upstream::Repeat,
    ) -> Result<Vec<u8>, NoAnswer> {
        if let Some(g) = &self.grpc {
            return g.unary(upstream, &body, meta).await;
        }
        // The whole answer within answer_timeout, each read within
        // read_timeout, and at most max_event_bytes of it (what the HTTP
        // listener holds of an answer to translate).
        let c = self.request(upstream, &body, meta, false, repeat).await?;
        drop(body);
        let answer = self
            .app
            .upstream_pool
            .call(c.addr, &c.wire, c.limits)
            .await?;
        let refused = match answer.status {
            401 => Some(tonic::Code::Unauthenticated),
            403 => Some(tonic::Code::PermissionDenied),
            _ => None,
        };
        match refused {
            None => Ok(answer.body.to_vec()),
            Some(code) => Err(NoAnswer::Refused(refusal_of(code, &answer.body))),
        }
    }

    /// Counts a finished call in the Prometheus metrics (binding `grpc`).
    pub(super) async fn count(
        &self,
        client: Version,
        method: Method,
        err: Option<&Status>,
        took: Duration,
    ) {
        self.count_outcome(client, method, err.map(Status::code), took)
            .await;
    }

    /// Counts a finished call by its final status code (`None`: ok).
    pub(super) async fn count_outcome(
        &self,
        client: Version,
        method: Method,
        code: Option<tonic::Code>,
        took: Duration,
    ) {
        let upstream = self.version().await.ok();
        let outcome = match code {
            None => "ok".to_string(),
            Some(c) => format!("grpc_{c:?}").to_ascii_lowercase(),
        };
        self.app.metrics.record(
            crate::metrics::RequestLabels {
                method: method.name(Version::V10).unwrap_or("unknown").to_string(),
                binding: "grpc",
                direction: crate::metrics::direction(Some(client), upstream),
                outcome,
            },
            took,
        );
    }

    /// A server-streaming call: each SSE event of the upstream, translated,
    /// goes to `conv` and then to the returned channel as it arrives.
    pub async fn stream<T: Send + 'static>(
        self: &Arc<Self>,
        client: Version,
        method: Method,
        params: Option<Value>,
        meta: CallMeta,
        conv: fn(Value) -> Result<T, String>,
    ) -> Result<mpsc::Receiver<Result<T, Status>>, Status> {
        self.check_minor(client, &meta).await?;
        let started = std::time::Instant::now();
        let opened = self.open_stream(client, method, params, &meta).await;
        let (slot, upstream, codec, push, resp) = match opened {
            Ok(o) => o,
            Err(s) => {
                self.count(client, method, Some(&s), started.elapsed())
                    .await;
                return Err(s);
            }
        };
        let deadline = meta.timeout.map(|t| Instant::now() + t);
        let (tx, rx) = mpsc::channel::<Result<T, Status>>(16);
        let max = self.app.config.limits.stream_max_duration;
        let gap = self.app.config.limits.read_timeout;
        let limit = self.app.config.limits.max_event_bytes;
        let this = Arc::clone(self);
        this.app.metrics.stream_opened();
        tokio::spawn(async move {
            let end = deadline.map_or(Instant::now() + max, |d| d.min(Instant::now() + max));
            // A v1.0 caller's events feed relayed subscriptions.
            let relay = (client, upstream) == (Version::V10, Version::V03);
            let relay = relay.then(|| this.app.relay.clone());
            let (code, last) = pump(
                client, upstream, codec, push, resp, &tx, conv, end, gap, limit, relay,
            )
            .await;
            // Counted before the last item goes out and the channel closes,
            // so a caller that saw the stream end also sees it counted.
            this.count_outcome(client, method, code, started.elapsed())
                .await;
            this.app.metrics.stream_closed();
            if let Some(item) = last {
                let _ = tx.send(item).await;
            }
            drop(tx);
            drop(slot);
        });
        Ok(rx)
    }

    /// The upstream's answer to a streaming call, with the connection slot
    /// it holds.
    async fn open_stream(
        &self,
        client: Version,
        method: Method,
        params: Option<Value>,
        meta: &CallMeta,
    ) -> Result<(InFlight, Version, JsonRpcCodec, Option<PushCall>, Source), Status> {
        let slot = self.enter(client)?;
        let upstream = self.upstream_version(client).await?;
        let p = self.prepare(client, upstream, method, params, meta).await?;
        let repeat = crate::upstream::Repeat::of(Some(method));
        let resp = with_deadline(client, meta.timeout, async {
            match &self.grpc {
                Some(g) => g.stream(upstream, &p.body, meta).await.map(Source::Grpc),
                None => self.open_http(upstream, &p.body, meta, repeat).await,
            }
            .map_err(|f| from_failure(client, &f))
        })
        .await?;
        Ok((slot, upstream, p.codec, p.push, resp))
    }

    /// A streaming call opened on the agent's JSON-RPC interface through
    /// the app's pool: its answer's head is in, its body read as it comes.
    async fn open_http(
        &self,
        upstream: Version,
        body: &[u8],
        meta: &CallMeta,
        repeat: crate::upstream::Repeat,
    ) -> Result<Source, Failure> {
        let c = self.request(upstream, body, meta, true, repeat).await?;
        let up = self
            .app
            .upstream_pool
            .open(c.addr, &c.wire, c.limits)
            .await?;
        Ok(Source::Http(Box::new(up), self.app.clone()))
    }
}

/// One JSON-RPC call for the app's pool: where, the whole request, its
/// limits.
struct AgentCall {
    addr: crate::upstream::tls::AgentAddr,
    wire: crate::upstream::Outgoing,
    limits: crate::upstream::Limits,
}

/// The bridge's HTTP request to `to` (the agent's JSON-RPC interface,
/// its authority as the `Host`): the per-call headers in the agent's
/// version, the caller's end-to-end metadata (crate::forward), `body`.
fn request_wire(
    to: &crate::config::HttpUrl,
    upstream: Version,
    body: &[u8],
    meta: &CallMeta,
    stream: bool,
) -> Result<crate::upstream::Outgoing, Failure> {
    use http::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
    let unsendable = |what: &str| Failure::Internal {
        detail: format!("{what} not sendable"),
    };
    let path = if to.base_path.is_empty() {
        "/"
    } else {
        to.base_path.as_str()
    };
    let value = |v: String| HeaderValue::try_from(v).map_err(|_| unsendable("header"));
    let mut h = http::HeaderMap::new();
    h.insert(HOST, value(to.authority())?);
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let accept = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    h.insert(ACCEPT, HeaderValue::from_static(accept));
    h.insert(
        HeaderName::from_static("a2a-version"),
        value(meta.upstream_header(upstream))?,
    );
    // In the agent's spelling, as the HTTP bindings send them.
    if let Some((key, ext)) = crate::codec::extensions_for(upstream, &meta.presented.0) {
        let key = HeaderName::try_from(key).map_err(|_| unsendable("header"))?;
        h.insert(key, value(ext)?);
    }
    // The caller's credentials and other end-to-end metadata, as headers
    // (crate::forward).
    crate::forward::append_caller_headers(&meta.presented.0, &mut h);
    crate::upstream::request("POST", path, &h, Some(body))
}

#[cfg(test)]
mod tests;
