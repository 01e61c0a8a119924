//! Translated SSE streams and whole answers held for translation: framing,
//! per-event rewriting (large events off the I/O workers), the v1.0 first
//! Task ahead of a stream, and the error that replaces an answer over limits.

use bytes::{Bytes, BytesMut};
use pingora::{Error, ErrorType, Result};
use serde_json::Value;

use super::*;
use crate::app::App;
use crate::codec::{HttpCodec, OverHttp, Shape};
use crate::error::Failure;
use crate::push::layer::Pending;
use crate::sse::{Framed, SseFramer, TooLarge, OFFLOAD_EVENT_BYTES};

/// How each event of a translated stream is rewritten: the call's codec
/// (without the request it sent), and the caller's ListTasks scope when
/// the call's plan records its tasks ([`crate::call::Plan::record_tasks`]).
/// Owned, so a large event can be translated away from the I/O workers.
#[derive(Debug)]
pub(crate) struct EventTranslation {
    codec: HttpCodec,
    scope: Option<crate::tasks::Scope>,
}

impl EventTranslation {
    /// `scope`: the caller's, asked for only when the plan records tasks.
    pub(crate) fn of(
        ctx: &Ctx,
        scope: impl FnOnce() -> crate::tasks::Scope,
    ) -> Option<EventTranslation> {
        let codec = ctx.codec()?.for_answer();
        let scope = ctx.records_tasks().then(scope);
        Some(EventTranslation { codec, scope })
    }

    /// Where the Task sits in one of its events (see [`with_first_frame`]).
    pub(crate) fn task_pointer(&self) -> &'static str {
        self.codec.shape().task_pointer()
    }

    /// The inline push config the stream's first event settles.
    pub(crate) fn take_created(&self, push: &mut Option<Pending>) -> Option<Pending> {
        push.take().filter(|p| p.created.is_some())
    }

    /// Renders one framed event with its data in the client's version; its
    /// tasks are recorded when the plan says so, and a config registered inline
    /// learns its task from the stream's first event (the event unchanged).
    pub(crate) fn rewrite(
        &self,
        app: &App,
        event: &Framed,
        created: &mut Option<Pending>,
        out: &mut Vec<u8>,
    ) {
        let (codec, scope) = (&self.codec, self.scope);
        // The translation is written into the piece's output; what the
        // index and the push layer read is the part it wrote.
        let mut f = |data: &str, buf: &mut Vec<u8>| {
            let start = buf.len();
            let facts = codec.event_into(data, scope.is_some(), buf);
            let out = &buf[start..];
            if let Some(scope) = scope {
                record_answer(app, scope, codec, facts.as_ref(), out);
            }
            if let (Some(push), Some(p)) = (app.push.as_deref(), created.take()) {
                let _ = restore_push(push, codec, out, &p);
            }
        };
        crate::sse::rewrite_framed(event, &mut f, out);
    }
}

/// Records the tasks of an answer or event `out` (client's shape) for the
/// caller's ListTasks, and hands it to relayed subscriptions; `facts`:
/// what the fast path already read of it.
pub(crate) fn record_answer(
    app: &App,
    scope: crate::tasks::Scope,
    codec: &impl OverHttp,
    facts: Option<&translate::transcode::TaskFacts<'_>>,
    out: &[u8],
) {
    let method = codec.method_name();
    match (codec.shape(), facts) {
        (Shape::Envelope, Some(facts)) => app.tasks.record_facts(scope, method, facts),
        (Shape::Envelope, None) => app.tasks.record(scope, method, out),
        (Shape::Bare, _) => app.tasks.record_result(scope, method, out),
    }
    match codec.shape() {
        Shape::Envelope => app.relay.publish_envelope(method, out),
        Shape::Bare => app.relay.publish_result(method, out),
    }
}

/// The subscriber's own push values restored in `out` (client's shape);
/// `None` when there is nothing to restore.
pub(crate) fn restore_push(
    push: &crate::push::layer::Push,
    codec: &impl OverHttp,
    out: &[u8],
    p: &Pending,
) -> Option<Vec<u8>> {
    let client = codec.made_for().client;
    match codec.shape() {
        Shape::Envelope => push.restore(client, out, p),
        Shape::Bare => push.restore_rest(client, out, p),
    }
}

/// Feeds one piece of an upstream stream (and its end) to the framer.
pub(crate) fn frame(
    framer: &mut SseFramer,
    piece: Option<Bytes>,
    end: bool,
    events: &mut Vec<Framed>,
) -> std::result::Result<(), TooLarge> {
    if let Some(p) = piece {
        framer.push_bytes(p, events)?;
    }
    if end {
        framer.finish_into(events)?;
    }
    Ok(())
}

/// Holds a piece of a whole answer to translate, unless the answer went
/// past `limit`: then nothing more is held (`over` is set).
pub(crate) fn hold(buf: &mut BytesMut, piece: Option<Bytes>, limit: usize, over: &mut bool) {
    let Some(b) = piece else { return };
    if *over || buf.len() + b.len() > limit {
        *over = true;
        *buf = BytesMut::new();
        return;
    }
    buf.extend_from_slice(&b);
}

/// The error that replaces a whole answer over `limit`, in the client's
/// version and binding: never the agent's bytes untranslated.
pub(crate) fn over_limit(ctx: &mut Ctx, limit: usize) -> Bytes {
    let f = Failure::BadUpstreamResponse {
        detail: format!("answer over the limit of {limit} bytes"),
    };
    tracing::warn!(failure = f.label(), error = ?f, "agent answer too large to translate");
    let r = ctx.failure_response(&f);
    if let Some(own) = ctx.own_mut() {
        own.answer_status = Some(r.status);
    }
    ctx.failure = Some(f);
    r.body
}

/// What one translated piece of a stream leaves: an inline config not yet
/// settled waits for the next event, the v1.0 first Task goes ahead of the
/// first bytes, and an event over the limit ends the stream, the events
/// before it going out ahead of the error frame (see `fail_to_proxy`).
pub(crate) fn settle_piece(
    ctx: &mut Ctx,
    tr: &EventTranslation,
    created: Option<crate::push::layer::Pending>,
    mut out: Vec<u8>,
    framed: std::result::Result<(), TooLarge>,
) -> Result<Bytes> {
    if let Some(own) = ctx.own_mut() {
        if created.is_some() {
            // No whole event yet.
            own.push = created;
        }
        out = with_first_frame(&mut own.first_frame, out, tr.task_pointer());
    }
    if let Err(TooLarge { limit }) = framed {
        if let Some(own) = ctx.own_mut() {
            own.unsent = Some(Bytes::from(out));
        }
        ctx.failure = Some(Failure::BadUpstreamResponse {
            detail: format!("a stream event over the limit of {limit} bytes"),
        });
        return Error::e_explain(
            ErrorType::Custom("stream event too large"),
            "an upstream SSE event over limits.max_event_bytes",
        );
    }
    Ok(Bytes::from(out))
}

/// Puts `first` (a Task event) ahead of the first translated SSE bytes of a
/// v1.0 stream, unless their first event is a Task already: at `task` (a
/// JSON pointer: `/result/task` in a JSON-RPC envelope, `/task` over REST).
pub(crate) fn with_first_frame(first: &mut Option<Bytes>, out: Vec<u8>, task: &str) -> Vec<u8> {
    if out.is_empty() {
        return out;
    }
    let Some(first) = first.take() else {
        return out;
    };
    let text = String::from_utf8_lossy(&out);
    let is_task = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .and_then(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .is_some_and(|v| v.pointer(task).is_some_and(Value::is_object));
    if is_task {
        return out;
    }
    let mut both = first.to_vec();
    both.extend_from_slice(&out);
    both
}

impl ProxyService {
    /// One piece of a translated stream of our own: framed, its events
    /// translated in order, the large ones on the blocking pool so that the
    /// I/O worker goes on serving its other connections meanwhile. An event
    /// over `limits.max_event_bytes` ends the stream (see [`settle_piece`]).
    pub(crate) async fn rewrite_piece(
        &self,
        ctx: &mut Ctx,
        piece: Option<Bytes>,
        end: bool,
    ) -> Result<Bytes> {
        let Some(RespRewrite::Sse { framer, tr }) = ctx.resp_mut() else {
            return Ok(piece.unwrap_or_default());
        };
        let tr = tr.clone();
        let mut events = Vec::new();
        let framed = frame(framer, piece, end, &mut events);
        let mut created = ctx.take_created(&tr);
        // Room for the piece's translated events at once (the transcoder's
        // own estimate for each, and its `data: ` line), so that writing
        // them in place does not grow and copy the buffer event by event;
        // big events come back in buffers of their own.
        let room: usize = events
            .iter()
            .map(|e| e.event.len())
            .filter(|&n| n <= OFFLOAD_EVENT_BYTES)
            .map(|n| n + n / 8 + 72)
            .sum();
        let mut out = Vec::with_capacity(room);
        for event in events {
            if event.event.len() <= OFFLOAD_EVENT_BYTES {
                tr.rewrite(&self.app, &event, &mut created, &mut out);
                continue;
            }
            let (app, job_tr) = (self.app.clone(), tr.clone());
            let job = tokio::task::spawn_blocking(move || {
                let mut out = Vec::new();
                job_tr.rewrite(&app, &event, &mut created, &mut out);
                (out, created)
            });
            match job.await {
                Ok((translated, c)) => {
                    created = c;
                    if out.is_empty() {
                        out = translated;
                    } else {
                        out.extend_from_slice(&translated);
                    }
                }
                Err(e) => {
                    if let Some(own) = ctx.own_mut() {
                        own.unsent = Some(Bytes::from(out));
                    }
                    ctx.failure = Some(Failure::Internal {
                        detail: "an event's translation failed".into(),
                    });
                    return Error::e_explain(
                        ErrorType::InternalError,
                        format!("translating an event: {e}"),
                    );
                }
            }
        }
        settle_piece(ctx, &tr, created, out, framed)
    }
}

/// Whether an answer's headers say it is an SSE stream.
pub(crate) fn is_event_stream(headers: &[(http::HeaderName, http::HeaderValue)]) -> bool {
    headers
        .iter()
        .any(|(k, v)| k == http::header::CONTENT_TYPE && is_event_stream_type(v))
}

/// Whether a `Content-Type` value is `text/event-stream`.
pub(crate) fn is_event_stream_type(v: &http::HeaderValue) -> bool {
    v.to_str().is_ok_and(|v| {
        v.trim_start()
            .to_ascii_lowercase()
            .starts_with("text/event-stream")
    })
}
