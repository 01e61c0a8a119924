//! The direct path toward a gRPC upstream of the other version, for the hot
//! RPCs (SendMessage, GetTask, CancelTask, SendStreamingMessage,
//! SubscribeToTask): the call's transport around the gRPC codec
//! ([`GrpcCodec`], made per call from the RPC's table of
//! [`crate::codec::grpc`]), which alone translates the request, each
//! answer and stream event, and each error, on prost messages, with no
//! JSON in between.
//!
//! What the JSON route ([`super::bridge`] + [`super::upstream`]) gives is
//! kept: metrics, the connection limit, deadlines, cancellation, the task
//! index (v1.0 callers of a v0.3 agent), v1.0 `historyLength: 0` toward v0.3
//! (the answer loses its history), and errors: the upstream's statuses
//! (read here as [`AgentError`]s) and failed translations of its answers
//! take the JSON route's own rendering (rare, so the cost does not
//! matter). The push layer: a request with an inline push config takes the
//! JSON route whole; an answer that names one of the proxy's callback URLs
//! is restored as JSON, a step of the call the codec runs between
//! translating and encoding ([`AgentMessage::then`]).
//! `proxy/tests/grpc_direct.rs` checks on the fixtures that the tables give
//! the same prost messages and statuses as the JSON route.

use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status};
use translate::method::Method;
use translate::TranslateError;

use super::bridge::{
    call_meta, envelope_result, forward, with_deadline, Bridge, CallMeta, EventSource,
};
use super::rpc;
use super::status::from_failure;
use super::upstream::{self, GrpcUpstream};
use crate::codec::grpc::{AgentError, AgentMessage};
use crate::codec::{Codec, GrpcCodec};
use crate::error::Failure;
use crate::push::layer::Push;
use crate::version::Version;

pub use crate::codec::grpc::{from_v03, from_v10, Open, Opened, Streaming, Unary};

type TE = TranslateError;

/// A caller's request its own version's model does not take (the
/// binding's decoder), as the JSON route reports it.
pub fn request_failure(client: Version, e: TE) -> Status {
    from_failure(
        client,
        &Failure::Translate {
            code: i64::from(e.jsonrpc_code()),
            message: e.to_string(),
        },
    )
}

/// The upstream's status as the gRPC codec reads it: a refusal of the
/// caller, a transport condition (the proxy's failure), or an A2A error as
/// a JSON-RPC error response in the upstream's version.
fn read_status(upstream: Version, s: Status) -> AgentError {
    if let Some(refused) = upstream::refusal(&s) {
        return AgentError::Refused(refused);
    }
    if let Err(f) = upstream::transport_failure(&s) {
        return AgentError::Failed(f);
    }
    AgentError::Answered(upstream::envelope(upstream, &Value::from(1), Err(s)))
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
    let mut codec = GrpcCodec::unary(t, Version::V10, Version::V03);
    let ask = translate::v10::params::GetTaskRequest {
        tenant: None,
        id,
        history_length: history
            .filter(|h| *h > 0)
            .and_then(|h| i32::try_from(h).ok()),
        extra: Default::default(),
    };
    let uq = codec.encode_request(ask).ok()?;
    let mut extra = headers(Version::V03, &CallMeta::default());
    for (k, v) in credentials {
        extra.append(k.clone(), v.clone());
    }
    let repeat = crate::upstream::Repeat::of(Some(t.method));
    let (ur, _raw) = grpc
        .call_with::<_, proto::v03::Task>(t.path, &uq, &extra, repeat)
        .await
        .ok()?;
    let task = codec.decode(Ok(ur)).0.ok()?;
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
    !needle.is_empty() && crate::push::layer::contains(hay, needle)
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
        let mut codec = GrpcCodec::unary(t, client, up);
        let uq = codec.encode_request(cm).map_err(|f| codec.error(&f))?;
        let extra = headers(up, &meta);
        let repeat = crate::upstream::Repeat::of(Some(t.method));
        let got = route
            .grpc
            .call_with::<UQ, UR>(t.path, &uq, &extra, repeat)
            .await;
        drop(uq);
        let (got, push) = match got {
            Ok((ur, raw)) => {
                // Only an answer that names one of the proxy's callback
                // URLs has anything to restore.
                let named = |_: &&Push| mentions(&raw, crate::ids::CALLBACK_PREFIX.as_bytes());
                (Ok(ur), route.push.as_deref().filter(named))
            }
            Err(s) => (Err(read_status(up, s)), None),
        };
        let mut then = |cr| answered(bridge, (client, up), t.method, &meta, push, cr);
        let then = Some(&mut then as _);
        codec.answer(AgentMessage { got, then })
    });
    let started = std::time::Instant::now();
    let r = with_deadline(client, meta.timeout, work).await;
    bridge
        .count(client, t.method, r.as_ref().err(), started.elapsed())
        .await;
    r.map(Response::new)
}

/// The call's own steps on a unary answer in the caller's version: the
/// push layer's restore (`push`: when the answer names one of the proxy's
/// callback URLs), and the tasks it saw recorded (the call's plan).
fn answered<CR: Serialize + DeserializeOwned>(
    bridge: &Bridge,
    (client, up): (Version, Version),
    method: Method,
    meta: &CallMeta,
    push: Option<&Push>,
    cr: CR,
) -> Result<CR, Status> {
    let cr = match push {
        Some(layer) => restore(layer, client, cr)?,
        None => cr,
    };
    if crate::call::Plan::new(method, client, up, None).record_tasks {
        // Tasks seen here are what ListTasks lists to this caller
        // (crate::tasks).
        let tasks = &bridge.app.tasks;
        let relay = &bridge.app.relay;
        if tasks.enabled() || relay.wanted() {
            if let (Some(name), Ok(body)) = (method.name(client), serde_json::to_vec(&cr)) {
                let scope = tasks.scope_of(&meta.presented.0);
                tasks.record_result(scope, name, &body);
                // ... and feed relayed subscriptions (crate::tasks::relay).
                relay.publish_result(name, &body);
            }
        }
    }
    Ok(cr)
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
/// when `no_history`), failures rendered as the JSON route renders them:
/// the gRPC codec's decoding, on its own.
pub fn answer<CM, UQ, UR, UM, CR, CP>(
    client: Version,
    t: &Unary<CM, UQ, UR, UM, CR, CP>,
    ur: UR,
    no_history: bool,
) -> Result<CR, Status> {
    let codec = GrpcCodec::unary(t, client, client.other()).noting_no_history(no_history);
    codec.decode(Ok(ur)).0
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
        let mut codec = GrpcCodec::stream(t, client, up);
        let uq = codec.encode_request(cm).map_err(|f| codec.error(&f))?;
        let mut r = tonic::Request::new(uq);
        *r.metadata_mut() = tonic::metadata::MetadataMap::from_headers(headers(up, &meta));
        // Under the retry table, as every call to the agent.
        let repeat = crate::upstream::Repeat::of(Some(t.method));
        let open = route.grpc.open_stream(repeat, r, t.open);
        let s = with_deadline(client, meta.timeout, async { Ok(open.await) }).await?;
        Ok::<_, Status>((slot, codec, s))
    });
    let (slot, codec, s) = match opened.await {
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
        let (code, last) = pump(codec, push, s, &tx, end, gap).await;
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
    let codec = GrpcCodec::stream(t, client, client.other());
    direct_event(&codec, Ok(ur), push)
}

/// One upstream message (or its status) through the stream's codec, the
/// push layer's restore (`push`: the first message's) as the call's step.
fn direct_event<CM, UQ, UR, UM, CR, CP>(
    codec: &GrpcCodec<CM, UQ, UR, UM, CR, CP>,
    got: Result<UR, AgentError>,
    push: Option<&Push>,
) -> (Result<CP, Status>, bool)
where
    CR: Serialize + DeserializeOwned,
{
    let Some(layer) = push else {
        return codec.event(AgentMessage::plain(got));
    };
    let client = codec.made_for().client;
    let mut then = |cr| restore(layer, client, cr);
    codec.event(AgentMessage {
        got,
        then: Some(&mut then),
    })
}

/// The direct path's stream: the upstream's prost messages through the
/// call's codec ([`direct_event`]), for the one loop of every translated
/// gRPC stream ([`super::bridge::forward`]).
struct DirectEvents<CM, UQ, UR, UM, CR, CP> {
    s: tonic::Streaming<UR>,
    codec: GrpcCodec<CM, UQ, UR, UM, CR, CP>,
    /// Only the first event can name a config created with the call.
    push: Option<Arc<Push>>,
}

impl<CM, UQ, UR, UM, CR, CP> EventSource for DirectEvents<CM, UQ, UR, UM, CR, CP>
where
    UR: Send + 'static,
    CR: Serialize + DeserializeOwned,
    CP: Send,
    GrpcCodec<CM, UQ, UR, UM, CR, CP>: Send,
{
    type Message = Result<UR, AgentError>;
    type Item = CP;

    async fn next_message(&mut self) -> Option<Result<Option<Self::Message>, Status>> {
        let up = self.codec.made_for().upstream;
        Some(Ok(Some(
            self.s.next().await?.map_err(|s| read_status(up, s)),
        )))
    }

    async fn item(&mut self, got: Self::Message) -> (Result<CP, Status>, bool) {
        let layer = self.push.take();
        direct_event(&self.codec, got, layer.as_deref())
    }
}

/// Forwards the upstream's messages through the one stream loop
/// ([`super::bridge::forward`], as the bridge's stream does). Returns the
/// final status code (`None`: ok) and the last item, not yet sent.
async fn pump<CM, UQ, UR, UM, CR, CP>(
    codec: GrpcCodec<CM, UQ, UR, UM, CR, CP>,
    push: Option<Arc<Push>>,
    opened: Opened<UR>,
    tx: &mpsc::Sender<Result<CP, Status>>,
    end: Instant,
    gap: Duration,
) -> (Option<tonic::Code>, Option<Result<CP, Status>>)
where
    UR: Send + 'static,
    CR: Serialize + DeserializeOwned,
    CP: Send,
    GrpcCodec<CM, UQ, UR, UM, CR, CP>: Send,
{
    let s = match opened {
        Ok(r) => r.into_inner(),
        Err(st) => {
            let st = codec.agent_error(read_status(codec.made_for().upstream, st));
            return (Some(st.code()), Some(Err(st)));
        }
    };
    let client = codec.made_for().client;
    let mut source = DirectEvents { s, codec, push };
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
