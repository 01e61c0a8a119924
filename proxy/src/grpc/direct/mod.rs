//! The direct path toward a gRPC upstream of the other version, for the hot
//! RPCs (SendMessage, GetTask, CancelTask, SendStreamingMessage,
//! SubscribeToTask): the caller's prost request -> its model -> the typed
//! translators of `translate` (`params`, `task`, `event`) -> the upstream's
//! prost request, and the answer the same way back, with no JSON in between.
//!
//! What the JSON route ([`super::bridge`] + [`super::upstream`]) gives is
//! kept: metrics, the connection limit, deadlines, cancellation, the task
//! index (v1.0 callers of a v0.3 agent), v1.0 `historyLength: 0` toward v0.3
//! (the answer loses its history), and errors: the upstream's statuses and
//! failed translations of its answers take the JSON route's own rendering
//! (rare, so the cost does not matter). The push layer: a request with an
//! inline push config takes the JSON route whole; an answer that names one
//! of the proxy's callback URLs is restored as JSON. Each RPC is one table
//! ([`Unary`], [`Streaming`]) of plain conversion functions;
//! `proxy/tests/grpc_direct.rs` checks on the fixtures that the tables give
//! the same prost messages and statuses as the JSON route.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};
use translate::method::Method;
use translate::TranslateError;

use super::bridge::{
    call_meta, envelope_result, forward, with_deadline, Bridge, CallMeta, EventSource,
};
use super::rpc;
use super::status::from_failure;
use super::upstream::{self, GrpcUpstream};
use crate::codec::{Codec, JsonRpcCodec};
use crate::error::Failure;
use crate::push::layer::Push;
use crate::version::Version;

type TE = TranslateError;

/// The upstream's server stream, opened.
pub type Opened<UR> = Result<tonic::Response<tonic::Streaming<UR>>, Status>;
/// Opening the upstream's server stream on a channel.
pub type Open<UQ, UR> =
    fn(Channel, tonic::Request<UQ>) -> Pin<Box<dyn Future<Output = Opened<UR>> + Send>>;

/// One unary hot RPC from a caller of one version to an upstream of the
/// other. `CM`: the caller's request model; `UQ` / `UR`: the upstream's
/// prost request / answer; `UM`: the answer's model; `CR`: the answer's
/// model in the caller's version; `CP`: the caller's prost reply.
pub struct Unary<CM, UQ, UR, UM, CR, CP> {
    pub method: Method,
    /// The upstream's RPC path.
    pub path: &'static str,
    pub request: fn(CM) -> Result<UQ, TE>,
    pub decode: fn(UR) -> Result<UM, TE>,
    pub translate: fn(UM) -> Result<CR, TE>,
    pub encode: fn(CR) -> Result<CP, TE>,
    /// A v1.0 `historyLength: 0` toward a v0.3 agent (which reads 0 as
    /// unlimited): [`Self::strip_history`] is applied to the answer.
    pub no_history: fn(&CM) -> bool,
    pub strip_history: fn(&mut CR),
    /// The request carries an inline push config.
    pub inline_push: fn(&CM) -> bool,
}

/// One server-streaming hot RPC (types as in [`Unary`], per message).
pub struct Streaming<CM, UQ, UR, UM, CR, CP> {
    pub method: Method,
    pub request: fn(CM) -> Result<UQ, TE>,
    pub open: Open<UQ, UR>,
    pub decode: fn(UR) -> Result<UM, TE>,
    /// A v0.3 upstream's `final: true` status update (the stream ends).
    pub is_final: fn(&UM) -> bool,
    pub translate: fn(UM) -> Result<CR, TE>,
    pub encode: fn(CR) -> Result<CP, TE>,
    pub inline_push: fn(&CM) -> bool,
}

fn never<T>(_: &T) -> bool {
    false
}

fn keep<T>(_: &mut T) {}

/// Tables for v1.0 callers of a v0.3 gRPC agent.
pub mod from_v10;

/// Tables for v0.3 callers of a v1.0 gRPC agent.
pub mod from_v03;

/// A failed request translation, as the JSON route reports it.
pub fn request_failure(client: Version, e: TE) -> Status {
    from_failure(
        client,
        &Failure::Translate {
            code: i64::from(e.jsonrpc_code()),
            message: e.to_string(),
        },
    )
}

/// An upstream answer its own version's model does not take (the JSON
/// route: `BadUpstreamResponse` from the upstream client).
pub fn decode_failure(client: Version, e: TE) -> Status {
    from_failure(
        client,
        &Failure::BadUpstreamResponse {
            detail: e.to_string(),
        },
    )
}

/// An upstream answer that does not translate to the caller's version: the
/// JSON route renders it as an InvalidAgentResponse error envelope in the
/// caller's version, read back as a status.
pub fn translate_failure(client: Version, e: TE) -> Status {
    let f = Failure::BadUpstreamResponse {
        detail: e.to_string(),
    };
    let body = crate::error::jsonrpc_envelope(&f, client, Some(Value::from(1)));
    match body.get("error") {
        Some(err) => super::status::from_rpc_error(client, err, None),
        None => from_failure(client, &f),
    }
}

/// The upstream's status as the caller's, exactly as the JSON route does
/// it: transport conditions are the proxy's failures, A2A errors go to a
/// JSON-RPC error in the upstream's version, translated, read back.
pub fn upstream_status(client: Version, upstream: Version, method: Method, s: Status) -> Status {
    if let Some(refused) = upstream::refusal(&s) {
        return refused;
    }
    if let Err(f) = upstream::transport_failure(&s) {
        return from_failure(client, &f);
    }
    let body = upstream::envelope(upstream, &Value::from(1), Err(s));
    let out = if client == upstream {
        body
    } else {
        let name = method.name(client).unwrap_or_default().to_string();
        let codec = JsonRpcCodec::new(client, upstream, name, Some(Value::from(1)));
        codec.answer(200, &body).body
    };
    match envelope_result(client, &out) {
        Err(s) => s,
        Ok(_) => from_failure(
            client,
            &Failure::Internal {
                detail: "an upstream error read back as a result".into(),
            },
        ),
    }
}

/// The `grpc-timeout` value for `d` (the finest unit within 8 digits).
pub fn grpc_timeout(d: Duration) -> String {
    let n = d.as_nanos();
    let units: [(u128, char); 6] = [
        (1, 'n'),
        (1_000, 'u'),
        (1_000_000, 'm'),
        (1_000_000_000, 'S'),
        (60_000_000_000, 'M'),
        (3_600_000_000_000, 'H'),
    ];
    for (per, unit) in units {
        let v = n.div_ceil(per);
        if v < 100_000_000 {
            return format!("{v}{unit}");
        }
    }
    "99999999H".to_string()
}

/// The upstream request's headers: the caller's end-to-end metadata
/// (crate::forward), its `a2a-version`, the extensions and the caller's
/// deadline (what `upstream::request` puts in the metadata).
fn headers(upstream: Version, meta: &CallMeta) -> http::HeaderMap {
    let mut h = http::HeaderMap::with_capacity(8);
    crate::forward::append_caller_headers(&meta.presented.0, &mut h);
    if let Ok(v) = http::HeaderValue::try_from(meta.upstream_header(upstream)) {
        h.insert("a2a-version", v);
    }
    // In the agent's spelling, merged as every binding merges them.
    if let Some((key, ext)) = crate::codec::extensions_for(upstream, &meta.presented.0) {
        if let Ok(v) = http::HeaderValue::try_from(ext) {
            h.insert(key, v);
        }
    }
    if let Some(t) = meta.timeout {
        if let Ok(v) = http::HeaderValue::try_from(grpc_timeout(t)) {
            h.insert("grpc-timeout", v);
        }
    }
    h
}

/// Task `id` as a v0.3 gRPC agent gives it to a caller presenting
/// `credentials` (its GetTask, `history` as its `historyLength` when
/// positive), in v1.0 JSON; `None` when it gives none (an error status, an
/// answer that does not convert). For ListTasks pages (crate::tasks).
pub(super) async fn v03_task_as(
    grpc: &GrpcUpstream,
    id: String,
    history: Option<i64>,
    credentials: &[(http::HeaderName, http::HeaderValue)],
) -> Option<Value> {
    let t = &from_v10::GET_TASK;
    let ask = translate::v10::params::GetTaskRequest {
        tenant: None,
        id,
        history_length: history
            .filter(|h| *h > 0)
            .and_then(|h| i32::try_from(h).ok()),
        extra: Default::default(),
    };
    let uq = (t.request)(ask).ok()?;
    let mut extra = headers(Version::V03, &CallMeta::default());
    for (k, v) in credentials {
        extra.append(k.clone(), v.clone());
    }
    let repeat = crate::unary::Repeat::of(Some(t.method));
    let (ur, _raw) = grpc
        .call_with::<_, proto::v03::Task>(t.path, &uq, &extra, repeat)
        .await
        .ok()?;
    let task = (t.translate)((t.decode)(ur).ok()?).ok()?;
    serde_json::to_value(task).ok()
}

/// Where the direct path goes, when it may be taken.
struct Route<'a> {
    upstream: Version,
    grpc: &'a GrpcUpstream,
    /// The push layer, when it looks at this call's answers.
    push: Option<Arc<Push>>,
}

/// The direct route for `method` from `client`, or `None` for the JSON
/// route: no gRPC upstream, the same version (or no version known), or
/// an inline push config the push layer intercepts.
async fn route(
    bridge: &Bridge,
    client: Version,
    method: Method,
    inline: bool,
) -> Option<Route<'_>> {
    let grpc = bridge.grpc.as_ref()?;
    let upstream = bridge.version().await.ok()?;
    if upstream == client {
        return None;
    }
    let mut push = None;
    if let Some(layer) = &bridge.app.push {
        let op = method
            .name(client)
            .and_then(crate::route::jsonrpc_method)
            .map(|(_, op)| op);
        let concerns = op.is_some_and(crate::push::rewrite::concerns);
        if layer.intercepts(client, upstream) && concerns {
            if inline {
                return None;
            }
            push = Some(layer.clone());
        }
    }
    Some(Route {
        upstream,
        grpc,
        push,
    })
}

/// True when `hay` holds `needle`.
fn mentions(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The push layer's restore of an answer (as the JSON route does it, on
/// the caller's JSON-RPC envelope); the model unchanged when it has
/// nothing to restore.
fn restore<CR: Serialize + DeserializeOwned>(
    layer: &Push,
    client: Version,
    cr: CR,
) -> Result<CR, Status> {
    let internal = |detail: String| from_failure(client, &Failure::Internal { detail });
    let result = serde_json::to_value(&cr).map_err(|e| internal(e.to_string()))?;
    let mut env = serde_json::Map::new();
    env.insert("jsonrpc".into(), Value::from("2.0"));
    env.insert("id".into(), Value::from(1));
    env.insert("result".into(), result);
    let body = serde_json::to_vec(&env).map_err(|e| internal(e.to_string()))?;
    match layer.restore(client, &body, &crate::push::layer::Pending::default()) {
        None => Ok(cr),
        Some(b) => {
            let v = envelope_result(client, &b)?;
            rpc::model(v).map_err(|d| rpc::bad(client, d))
        }
    }
}

/// One unary hot RPC of `client`'s service: the direct path when it may be
/// taken, else the JSON route with the same conversions.
pub async fn unary<In, CM, UQ, UR, UM, CR, CP>(
    bridge: &Bridge,
    client: Version,
    req: Request<In>,
    from_pb: fn(In) -> Result<CM, TE>,
    t: &Unary<CM, UQ, UR, UM, CR, CP>,
) -> Result<Response<CP>, Status>
where
    CM: Serialize,
    UQ: prost::Message,
    UR: prost::Message + Default,
    CR: Serialize + DeserializeOwned,
{
    let meta = call_meta(client, req.metadata())?;
    bridge.check_minor(client, &meta).await?;
    let cm = from_pb(req.into_inner()).map_err(|e| request_failure(client, e))?;
    let Some(route) = route(bridge, client, t.method, (t.inline_push)(&cm)).await else {
        // Boxed, as the direct work below: the caller's future stays small
        // (it is moved and copied whole on every hop through tonic).
        return Box::pin(json_unary(bridge, client, cm, &meta, t.method, t.encode)).await;
    };
    let _slot = bridge.enter(client)?;
    let up = route.upstream;
    let work = Box::pin(async {
        let no_history = client == Version::V10 && (t.no_history)(&cm);
        let uq = (t.request)(cm).map_err(|e| request_failure(client, e))?;
        let extra = headers(up, &meta);
        let repeat = crate::unary::Repeat::of(Some(t.method));
        let (ur, raw) = route
            .grpc
            .call_with::<UQ, UR>(t.path, &uq, &extra, repeat)
            .await
            .map_err(|s| upstream_status(client, up, t.method, s))?;
        drop(uq);
        let mut cr = answer(client, t, ur, no_history)?;
        if let Some(layer) = &route.push {
            if mentions(&raw, crate::push::CALLBACK_PREFIX.as_bytes()) {
                cr = restore(layer, client, cr)?;
            }
        }
        if crate::call::Plan::new(t.method, client, up, None).record_tasks {
            // Tasks seen here are what ListTasks lists to this caller
            // (crate::tasks).
            let tasks = &bridge.app.tasks;
            let relay = &bridge.app.relay;
            if tasks.enabled() || relay.open() > 0 {
                if let (Some(name), Ok(body)) = (t.method.name(client), serde_json::to_vec(&cr)) {
                    let scope = tasks.scope_of(&meta.presented.0);
                    tasks.record_result(scope, name, &body);
                    // ... and feed relayed subscriptions (crate::tasks::relay).
                    relay.publish_result(name, &body);
                }
            }
        }
        (t.encode)(cr).map_err(|e| rpc::bad(client, e.to_string()))
    });
    let started = std::time::Instant::now();
    let r = with_deadline(client, meta.timeout, work).await;
    bridge
        .count(client, t.method, r.as_ref().err(), started.elapsed())
        .await;
    r.map(Response::new)
}

/// The JSON route of a unary RPC for a request already converted to the
/// caller's model.
async fn json_unary<CM: Serialize, CR: DeserializeOwned, CP>(
    bridge: &Bridge,
    client: Version,
    cm: CM,
    meta: &CallMeta,
    method: Method,
    encode: fn(CR) -> Result<CP, TE>,
) -> Result<Response<CP>, Status> {
    let p = rpc::params(client, Ok(cm))?;
    let v = bridge.unary(client, method, Some(p), meta).await?;
    rpc::reply(client, v, encode).map(Response::new)
}

/// A unary answer of the upstream as the caller's model (history removed
/// when `no_history`), failures rendered as the JSON route renders them.
pub fn answer<CM, UQ, UR, UM, CR, CP>(
    client: Version,
    t: &Unary<CM, UQ, UR, UM, CR, CP>,
    ur: UR,
    no_history: bool,
) -> Result<CR, Status> {
    let um = (t.decode)(ur).map_err(|e| decode_failure(client, e))?;
    let mut cr = (t.translate)(um).map_err(|e| translate_failure(client, e))?;
    if no_history {
        (t.strip_history)(&mut cr);
    }
    Ok(cr)
}

/// The caller's stream of replies.
pub type Replies<CP> = ReceiverStream<Result<CP, Status>>;

/// One server-streaming hot RPC of `client`'s service: the direct path when
/// it may be taken, else the JSON route (`old_item` converts its events).
pub async fn stream<In, CM, UQ, UR, UM, CR, CP>(
    bridge: &Arc<Bridge>,
    client: Version,
    req: Request<In>,
    from_pb: fn(In) -> Result<CM, TE>,
    t: &'static Streaming<CM, UQ, UR, UM, CR, CP>,
    old_item: fn(Value) -> Result<CP, String>,
) -> Result<Response<Replies<CP>>, Status>
where
    CM: Serialize,
    UQ: Clone + Send + 'static,
    UR: Send + 'static,
    UM: Send + 'static,
    CR: Serialize + DeserializeOwned + Send + 'static,
    CP: Send + 'static,
{
    let meta = call_meta(client, req.metadata())?;
    bridge.check_minor(client, &meta).await?;
    let cm = from_pb(req.into_inner()).map_err(|e| request_failure(client, e))?;
    let Some(route) = route(bridge, client, t.method, (t.inline_push)(&cm)).await else {
        let p = rpc::params(client, Ok(cm))?;
        let rx = Box::pin(bridge.stream(client, t.method, Some(p), meta, old_item)).await?;
        return Ok(Response::new(ReceiverStream::new(rx)));
    };
    let started = std::time::Instant::now();
    let up = route.upstream;
    let opened = Box::pin(async {
        let slot = bridge.enter(client)?;
        let uq = (t.request)(cm).map_err(|e| request_failure(client, e))?;
        let mut r = tonic::Request::new(uq);
        *r.metadata_mut() = tonic::metadata::MetadataMap::from_headers(headers(up, &meta));
        // Under the retry table, as every call to the agent.
        let repeat = crate::unary::Repeat::of(Some(t.method));
        let open = route.grpc.open_stream(repeat, r, t.open);
        let s = with_deadline(client, meta.timeout, async { Ok(open.await) }).await?;
        Ok::<_, Status>((slot, s))
    });
    let (slot, s) = match opened.await {
        Ok(o) => o,
        Err(s) => {
            bridge
                .count(client, t.method, Some(&s), started.elapsed())
                .await;
            return Err(s);
        }
    };
    let push = route.push;
    let deadline = meta.timeout.map(|d| Instant::now() + d);
    let (tx, rx) = mpsc::channel::<Result<CP, Status>>(16);
    let max = bridge.app.config.limits.stream_max_duration;
    let gap = bridge.app.config.limits.read_timeout;
    let this = Arc::clone(bridge);
    this.app.metrics.stream_opened();
    tokio::spawn(async move {
        let end = deadline.map_or(Instant::now() + max, |d| d.min(Instant::now() + max));
        let (code, last) = pump(client, up, push, s, &tx, t, end, gap).await;
        // Counted before the last item goes out and the channel closes.
        this.count_outcome(client, t.method, code, started.elapsed())
            .await;
        this.app.metrics.stream_closed();
        if let Some(item) = last {
            let _ = tx.send(item).await;
        }
        drop(tx);
        drop(slot);
    });
    Ok(Response::new(ReceiverStream::new(rx)))
}

/// One upstream message as the caller's reply; `Err` ends the stream.
/// Also says whether it is the v0.3 upstream's last.
pub fn event<CM, UQ, UR, UM, CR, CP>(
    client: Version,
    t: &Streaming<CM, UQ, UR, UM, CR, CP>,
    ur: UR,
    push: Option<&Push>,
) -> (Result<CP, Status>, bool)
where
    CR: Serialize + DeserializeOwned,
{
    let um = match (t.decode)(ur) {
        Ok(m) => m,
        Err(e) => return (Err(decode_failure(client, e)), false),
    };
    let last = (t.is_final)(&um);
    let item = (t.translate)(um)
        .map_err(|e| translate_failure(client, e))
        .and_then(|cr| match push {
            Some(layer) => restore(layer, client, cr),
            None => Ok(cr),
        })
        .and_then(|cr| (t.encode)(cr).map_err(|e| rpc::bad(client, e.to_string())));
    (item, last)
}

/// The direct path's stream: the upstream's prost messages through the
/// RPC's table ([`event`]), for the one loop of every translated gRPC
/// stream ([`super::bridge::forward`]).
struct DirectEvents<CM: 'static, UQ: 'static, UR: 'static, UM: 'static, CR: 'static, CP: 'static> {
    s: tonic::Streaming<UR>,
    t: &'static Streaming<CM, UQ, UR, UM, CR, CP>,
    client: Version,
    upstream: Version,
    /// Only the first event can name a config created with the call.
    push: Option<Arc<Push>>,
}

impl<CM, UQ, UR, UM, CR, CP> EventSource for DirectEvents<CM, UQ, UR, UM, CR, CP>
where
    UR: Send + 'static,
    CR: Serialize + DeserializeOwned,
    CP: Send,
{
    type Message = UR;
    type Item = CP;

    async fn next_message(&mut self) -> Option<Result<Option<UR>, Status>> {
        let (client, upstream, method) = (self.client, self.upstream, self.t.method);
        match self.s.next().await? {
            Ok(m) => Some(Ok(Some(m))),
            Err(st) => Some(Err(upstream_status(client, upstream, method, st))),
        }
    }

    async fn item(&mut self, ur: UR) -> (Result<CP, Status>, bool) {
        let layer = self.push.take();
        event(self.client, self.t, ur, layer.as_deref())
    }
}

/// Forwards the upstream's messages through the one stream loop
/// ([`super::bridge::forward`], as the bridge's stream does). Returns the
/// final status code (`None`: ok) and the last item, not yet sent.
#[allow(clippy::too_many_arguments)]
async fn pump<CM, UQ, UR, UM, CR, CP>(
    client: Version,
    upstream: Version,
    push: Option<Arc<Push>>,
    opened: Opened<UR>,
    tx: &mpsc::Sender<Result<CP, Status>>,
    t: &'static Streaming<CM, UQ, UR, UM, CR, CP>,
    end: Instant,
    gap: Duration,
) -> (Option<tonic::Code>, Option<Result<CP, Status>>)
where
    UR: Send + 'static,
    CR: Serialize + DeserializeOwned,
    CP: Send,
{
    let s = match opened {
        Ok(r) => r.into_inner(),
        Err(st) => {
            let st = upstream_status(client, upstream, t.method, st);
            return (Some(st.code()), Some(Err(st)));
        }
    };
    let mut source = DirectEvents {
        s,
        t,
        client,
        upstream,
        push,
    };
    forward(client, &mut source, tx, end, gap).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_render_within_eight_digits() {
        assert_eq!(grpc_timeout(Duration::from_millis(250)), "250000u");
        assert_eq!(grpc_timeout(Duration::from_secs(30)), "30000000u");
        assert_eq!(grpc_timeout(Duration::from_secs(3600)), "3600000m");
        assert_eq!(grpc_timeout(Duration::from_nanos(5)), "5n");
        for d in [1u64, 999, 1_000_000, 86_400_000] {
            let t = grpc_timeout(Duration::from_millis(d));
            let back = super::super::bridge::parse_grpc_timeout(&t).unwrap();
            assert!(back >= Duration::from_millis(d), "{t}");
        }
    }

    #[test]
    fn needle_search() {
        assert!(mentions(b"xx/a2a-proxy/push/1", b"/a2a-proxy/push/"));
        assert!(!mentions(b"/a2a-proxy/pus", b"/a2a-proxy/push/"));
    }
}
