//! The agent's answer events (JSON-RPC over SSE, or a gRPC agent's
//! stream) pumped to the caller one by one, in the caller's version, within
//! the call's deadline and the event size bound; and [`forward`], the one
//! loop of every translated gRPC server stream, which the direct prost path
//! (`grpc/direct`) runs too, over its own [`EventSource`].

use std::collections::VecDeque;

use super::*;
use crate::codec::{Codec, JsonRpcCodec, OverHttp};

/// The upstream's stream events as JSON-RPC response bodies: SSE `data`
/// of the JSON-RPC binding, or the gRPC binding's messages.
pub(super) enum UpstreamEvents {
    /// Read through the app's pool (crate::upstream::Streaming); the
    /// connection goes back to it at the stream's clean end.
    Sse {
        body: Box<crate::upstream::Streaming>,
        framer: SseFramer,
        app: Arc<App>,
    },
    Grpc(Events),
    /// The events before a failure went out; the failure comes next.
    Failed(Failure),
    Ended,
}

impl UpstreamEvents {
    /// Reads once: the bodies that completes go to `out` (maybe none);
    /// `None` when the stream ended.
    async fn next(&mut self, out: &mut VecDeque<Vec<u8>>) -> Option<Result<(), Failure>> {
        match self {
            UpstreamEvents::Ended => None,
            UpstreamEvents::Grpc(s) => match s.next().await {
                None => None,
                Some(Ok(b)) => {
                    out.push_back(b);
                    Some(Ok(()))
                }
                Some(Err(f)) => Some(Err(f)),
            },
            UpstreamEvents::Failed(_) => match std::mem::replace(self, UpstreamEvents::Ended) {
                UpstreamEvents::Failed(f) => Some(Err(f)),
                _ => None,
            },
            UpstreamEvents::Sse { body, framer, .. } => {
                let mut events = Vec::new();
                let framed = match body.next().await {
                    Ok(None) => {
                        let r = framer.finish(&mut events);
                        if let UpstreamEvents::Sse { body, app, .. } =
                            std::mem::replace(self, UpstreamEvents::Ended)
                        {
                            (*body).finish(&app.upstream_pool);
                        }
                        r
                    }
                    Err(f) => return Some(Err(f)),
                    Ok(Some(d)) => framer.push(&d, &mut events),
                };
                out.extend(
                    events
                        .iter()
                        .filter_map(|e| crate::sse::event_data(e))
                        .filter(|d| !d.trim().is_empty())
                        .map(|d| d.into_owned().into_bytes()),
                );
                if let Err(crate::sse::TooLarge { limit }) = framed {
                    // The stream ends with an error status, never a
                    // partial event.
                    *self = UpstreamEvents::Failed(Failure::BadUpstreamResponse {
                        detail: format!("a stream event over the limit of {limit} bytes"),
                    });
                }
                Some(Ok(()))
            }
        }
    }
}

/// An upstream stream as a gRPC stream's pump sees it ([`forward`]): its
/// messages, and each as the caller's item. The JSON-RPC bridge's
/// ([`BridgeEvents`]: SSE `data` or a gRPC agent's messages as JSON-RPC
/// bodies, translated by [`JsonRpcCodec`]) and the direct path's
/// (`grpc/direct`: prost messages through the call's gRPC codec) are the
/// two.
pub(in crate::grpc) trait EventSource: Send {
    type Message: Send;
    type Item: Send;
    /// The next message: `Ok(None)` when a read completed none (a piece
    /// of an SSE event; the gap between reads is bounded, not the one
    /// between messages); `None` at the stream's end; `Err` ends the
    /// stream with that status.
    fn next_message(
        &mut self,
    ) -> impl std::future::Future<Output = Option<Result<Option<Self::Message>, Status>>> + Send;
    /// One message as the caller's item, and whether it is the stream's
    /// last (a v0.3 upstream's `final: true` status update).
    fn item(
        &mut self,
        m: Self::Message,
    ) -> impl std::future::Future<Output = (Result<Self::Item, Status>, bool)> + Send;
}

/// The one loop of every gRPC server stream the proxy translates: forwards
/// the source's items until it ends, the caller goes away (send fails: the
/// upstream call is dropped with the caller's task), the deadline or the
/// longest gap between reads passes, an item fails or is the last.
/// Returns the status code the call ended with (`None`: ok) and the last
/// item, not yet sent.
pub(in crate::grpc) async fn forward<S: EventSource>(
    client: Version,
    source: &mut S,
    tx: &mpsc::Sender<Result<S::Item, Status>>,
    end: Instant,
    gap: Duration,
) -> (Option<tonic::Code>, Option<Result<S::Item, Status>>) {
    loop {
        let m = match next_within(client, tx, end, gap, source.next_message()).await {
            Err(None) => return (Some(tonic::Code::Cancelled), None),
            Err(Some(s)) => return (Some(s.code()), Some(Err(s))),
            Ok(None) => return (None, None),
            Ok(Some(Err(s))) => return (Some(s.code()), Some(Err(s))),
            Ok(Some(Ok(None))) => continue,
            Ok(Some(Ok(Some(m)))) => m,
        };
        let (item, last) = source.item(m).await;
        let failed = item.as_ref().err().map(Status::code);
        if failed.is_some() || last {
            return (failed, Some(item));
        }
        if tx.send(item).await.is_err() {
            tracing::debug!("gRPC stream caller went away; upstream stream dropped");
            return (Some(tonic::Code::Cancelled), None);
        }
    }
}

/// The JSON-RPC bridge's stream: JSON-RPC response bodies read from the
/// upstream, translated by the call's codec, the subscriber's push values
/// restored in the first, converted to the caller's prost message.
struct BridgeEvents<T> {
    events: UpstreamEvents,
    /// Bodies read, not yet handed on.
    ready: VecDeque<Vec<u8>>,
    client: Version,
    upstream: Version,
    codec: Arc<JsonRpcCodec>,
    push: Option<PushCall>,
    conv: fn(Value) -> Result<T, String>,
    relay: Option<Arc<crate::tasks::relay::Relay>>,
}

impl<T: Send + 'static> EventSource for BridgeEvents<T> {
    type Message = Vec<u8>;
    type Item = T;

    async fn next_message(&mut self) -> Option<Result<Option<Vec<u8>>, Status>> {
        if let Some(d) = self.ready.pop_front() {
            return Some(Ok(Some(d)));
        }
        match self.events.next(&mut self.ready).await? {
            Ok(()) => Some(Ok(self.ready.pop_front())),
            Err(f) => Some(Err(from_failure(self.client, &f))),
        }
    }

    async fn item(&mut self, data: Vec<u8>) -> (Result<T, Status>, bool) {
        let (client, upstream) = (self.client, self.upstream);
        // Only the first event can name a config created with the call.
        let push = self.push.take();
        event_item_offloaded(
            client,
            upstream,
            &self.codec,
            push,
            self.conv,
            data,
            &self.relay,
        )
        .await
    }
}

/// One upstream event as the caller's item: translated, the subscriber's
/// push values restored (`push`: the first event's), converted; and whether
/// it is a v0.3 `final: true` status update (the stream ends after it).
pub(super) fn event_item<T>(
    client: Version,
    upstream: Version,
    codec: &JsonRpcCodec,
    push: Option<PushCall>,
    conv: fn(Value) -> Result<T, String>,
    data: &[u8],
    relay: Option<&crate::tasks::relay::Relay>,
) -> (Result<T, Status>, bool) {
    let last = upstream == Version::V03 && is_final_v03(data);
    let out = if client == upstream {
        data.to_vec()
    } else {
        match std::str::from_utf8(data) {
            Ok(d) => codec.event((d, false)).0,
            Err(_) => codec.answer((200, data)).body,
        }
    };
    // The first event (the Task, or the Message) records the task an
    // inline config was created for; later ones carry no configs.
    let out = match push {
        Some(p) => p.restore(client, out),
        None => out,
    };
    if let Some(r) = relay {
        r.publish_envelope(codec.method_name(), &out);
    }
    let item = envelope_result(client, &out).and_then(|v| convert(client, conv, v));
    (item, last)
}

/// Forwards the upstream's events ([`forward`]), or its one plain JSON
/// answer. Returns the status code the call ended with (`None`: ok) and
/// the last item, not yet sent.
#[allow(clippy::too_many_arguments)]
pub(super) async fn pump<T: Send + 'static>(
    client: Version,
    upstream: Version,
    codec: JsonRpcCodec,
    push: Option<PushCall>,
    source: Source,
    tx: &mpsc::Sender<Result<T, Status>>,
    conv: fn(Value) -> Result<T, String>,
    end: Instant,
    gap: Duration,
    limit: usize,
    relay: Option<Arc<crate::tasks::relay::Relay>>,
) -> (Option<tonic::Code>, Option<Result<T, Status>>) {
    let events = match source {
        Source::Grpc(s) => UpstreamEvents::Grpc(s),
        Source::Http(mut up, app) if !is_sse(&up.headers) => {
            // A plain JSON answer to a streaming call: typically an error.
            let item = match read_plain(&mut up, end, limit).await {
                Err(f) => Err(from_failure(client, &f)),
                Ok(b) => {
                    (*up).finish(&app.upstream_pool);
                    answer_item(client, upstream, &codec, push.as_ref(), conv, &b)
                }
            };
            return (item.as_ref().err().map(Status::code), Some(item));
        }
        Source::Http(body, app) => UpstreamEvents::Sse {
            body,
            framer: SseFramer::new(limit),
            app,
        },
    };
    let mut source = BridgeEvents {
        events,
        ready: VecDeque::new(),
        client,
        upstream,
        codec: Arc::new(codec),
        push,
        conv,
        relay,
    };
    forward(client, &mut source, tx, end, gap).await
}

/// Whether the agent answered a streaming call with an event stream.
fn is_sse(headers: &[(http::HeaderName, http::HeaderValue)]) -> bool {
    headers
        .iter()
        .find(|(k, _)| *k == http::header::CONTENT_TYPE)
        .and_then(|(_, v)| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The whole body of a plain (not SSE) answer, of at most `limit` bytes,
/// read before `end`.
async fn read_plain(
    up: &mut crate::upstream::Streaming,
    end: Instant,
    limit: usize,
) -> Result<bytes::Bytes, Failure> {
    let read = async {
        let mut body = bytes::BytesMut::new();
        while let Some(piece) = up.next().await? {
            body.extend_from_slice(&piece);
            if body.len() > limit {
                return Err(Failure::BadUpstreamResponse {
                    detail: format!("answer over the limit of {limit} bytes"),
                });
            }
        }
        Ok(body.freeze())
    };
    match tokio::time::timeout_at(end, read).await {
        Err(_) => Err(Failure::UpstreamTimeout),
        Ok(r) => r,
    }
}

/// A plain JSON-RPC answer `b` to a streaming call as the call's one item:
/// translated, the subscriber's push values restored, converted.
fn answer_item<T>(
    client: Version,
    upstream: Version,
    codec: &JsonRpcCodec,
    push: Option<&PushCall>,
    conv: fn(Value) -> Result<T, String>,
    b: &[u8],
) -> Result<T, Status> {
    let out = if client == upstream {
        b.to_vec()
    } else {
        codec.answer((200, b)).body
    };
    let out = match push {
        Some(push) => push.restore(client, out),
        None => out,
    };
    envelope_result(client, &out).and_then(|v| convert(client, conv, v))
}

/// [`event_item`], off the runtime's workers for an event over
/// [`crate::sse::OFFLOAD_EVENT_BYTES`]: a big event does not hold up the
/// other calls meanwhile.
async fn event_item_offloaded<T: Send + 'static>(
    client: Version,
    upstream: Version,
    codec: &Arc<JsonRpcCodec>,
    push: Option<PushCall>,
    conv: fn(Value) -> Result<T, String>,
    data: Vec<u8>,
    relay: &Option<Arc<crate::tasks::relay::Relay>>,
) -> (Result<T, Status>, bool) {
    if data.len() <= crate::sse::OFFLOAD_EVENT_BYTES {
        return event_item(client, upstream, codec, push, conv, &data, relay.as_deref());
    }
    let (codec, relay) = (codec.clone(), relay.clone());
    let job = tokio::task::spawn_blocking(move || {
        event_item(
            client,
            upstream,
            &codec,
            push,
            conv,
            &data,
            relay.as_deref(),
        )
    });
    job.await.unwrap_or_else(|e| {
        let detail = format!("translating an event: {e}");
        (
            Err(from_failure(client, &Failure::Internal { detail })),
            true,
        )
    })
}

/// A stream pump's next upstream item, within the stream's limits:
/// `Ok(None)` at the upstream's end; `Err(None)` when the caller went away
/// (dropping the upstream call then closes it); `Err(Some(status))` when
/// the stream's lifetime or the longest gap between items ran out.
pub(in crate::grpc) async fn next_within<T, S>(
    client: Version,
    tx: &mpsc::Sender<S>,
    end: Instant,
    gap: Duration,
    next: impl std::future::Future<Output = Option<T>>,
) -> Result<Option<T>, Option<Status>> {
    tokio::select! {
        _ = tx.closed() => {
            tracing::debug!("gRPC stream caller went away; upstream stream dropped");
            Err(None)
        }
        n = tokio::time::timeout_at(end.min(Instant::now() + gap), next) => n.map_err(|_| {
            let f = if Instant::now() >= end {
                Failure::StreamExpired { limit_secs: 0 }
            } else {
                Failure::UpstreamTimeout
            };
            Some(from_failure(client, &f))
        }),
    }
}

pub(super) fn convert<T>(
    client: Version,
    conv: fn(Value) -> Result<T, String>,
    v: Value,
) -> Result<T, Status> {
    conv(v).map_err(|detail| from_failure(client, &Failure::BadUpstreamResponse { detail }))
}

/// A v0.3 stream event with `final: true` (the stream ends after it).
pub(super) fn is_final_v03(data: &[u8]) -> bool {
    serde_json::from_slice::<Value>(data)
        .ok()
        .is_some_and(|v| v["result"]["final"] == Value::Bool(true))
}

/// `result` of a JSON-RPC response in the caller's version, or its error as
/// a status.
pub(in crate::grpc) fn envelope_result(client: Version, body: &[u8]) -> Result<Value, Status> {
    method_result(client, None, body)
}

/// [`envelope_result`] of a `method` call: a delete answered with neither
/// `result` nor `error` (a2a-python 0.3 leaves its null result out)
/// succeeded.
pub(super) fn method_result(
    client: Version,
    method: Option<Method>,
    body: &[u8],
) -> Result<Value, Status> {
    let bad = |detail: String| from_failure(client, &Failure::BadUpstreamResponse { detail });
    let mut v: Value =
        serde_json::from_slice(body).map_err(|e| bad(format!("not a JSON-RPC response: {e}")))?;
    if let Some(err) = v.get("error") {
        return Err(from_rpc_error(client, err, None));
    }
    let deleted = method == Some(Method::DeletePushConfig) && v.get("id").is_some();
    match v.get_mut("result") {
        Some(r) => Ok(r.take()),
        None if deleted => Ok(Value::Null),
        None => Err(bad("JSON-RPC response without result or error".into())),
    }
}

pub(in crate::grpc) async fn with_deadline<T>(
    client: Version,
    timeout: Option<Duration>,
    fut: impl std::future::Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    match timeout {
        None => fut.await,
        Some(t) => match tokio::time::timeout(t, fut).await {
            Ok(r) => r,
            Err(_) => Err(from_failure(client, &Failure::UpstreamTimeout)),
        },
    }
}
