//! Streaming calls the proxy makes itself: the upstream SSE stream handed
//! to the client piece by piece, translated event by event when needed,
//! bounded in duration, watching for the client leaving.

use bytes::{Bytes, BytesMut};
use pingora::http::ResponseHeader;
use pingora::proxy::Session;
use pingora::{Error, ErrorType, Result};

use super::*;
use crate::error::Failure;

impl ProxyService {
    /// A streaming call (SSE) made by the proxy itself: the answer goes to
    /// the client piece by piece as it arrives, through the same head and
    /// body work as on the proxied path ([`super::answer`]). Pingora's proxy
    /// loop would keep an upstream session, its 64 KiB body buffer and two
    /// task pipes for each open stream; this keeps the socket.
    ///
    /// A failure before the answer's head is answered as an error in the
    /// client's version; after it, it ends the stream through
    /// `fail_to_proxy` (a last error frame where the binding has one), and
    /// the connection closes without a clean end of body.
    pub(crate) async fn stream_call(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        let app = &self.app;
        let (mut up, client_spoke) = match self.open_stream(session, ctx).await? {
            Ok(opened) => opened,
            Err(answered) => return Ok(answered),
        };
        let headers = std::mem::take(&mut up.headers);
        // A relayed same-version answer of no known or of a large length
        // goes on piece by piece, as pingora's proxy loop would pass it.
        let relay = ctx.own().is_some_and(|o| o.mode == Mode::Relay);
        let piecewise = relay && up.length().is_none_or(|n| n > WHOLE_MAX);
        if !is_event_stream(&headers) && !piecewise {
            // Not a stream (an error, or a single result): answered whole,
            // so an untranslatable one still gets its own status.
            let limit = app.config.limits.max_event_bytes;
            // Whole within the answer's bound, however steadily it trickles.
            let until =
                tokio::time::Instant::from_std(ctx.started + app.config.limits.answer_timeout);
            let read = tokio::time::timeout_at(until, read_rest(&mut up, limit)).await;
            let body = match read.unwrap_or(Err(Failure::UpstreamTimeout)) {
                Ok(b) => b,
                Err(f) => {
                    tracing::warn!(failure = f.label(), error = ?f, "proxying failed");
                    session.set_keepalive(None);
                    return Box::pin(self.respond_failure(session, ctx, f)).await;
                }
            };
            let status = up.status;
            up.finish(&app.upstream_pool);
            if let Some(sub) = ctx
                .relay_mut()
                .and_then(|w| w.refused_answer(status, &body))
            {
                // The agent refused to resubscribe an idle task: relayed.
                return Box::pin(self.relay_events(session, ctx, sub, false)).await;
            }
            let answer = crate::upstream::Answer {
                status,
                headers,
                body,
            };
            return Box::pin(self.answer_whole(session, ctx, answer)).await;
        }
        let mut resp = ResponseHeader::build(up.status, Some(headers.len() + 3))?;
        for (k, v) in headers {
            resp.append_header(k, v)?;
        }
        self.answer_head(&session.req_header().headers, &mut resp, ctx)?;
        // The client's framing: the head asked for chunks when the body is
        // rewritten; otherwise the upstream's length, or chunks.
        if !resp.headers.contains_key(http::header::TRANSFER_ENCODING)
            && !matches!(up.status, 204 | 304)
        {
            match up.length() {
                Some(n) => resp.insert_header(http::header::CONTENT_LENGTH, n)?,
                None => resp.insert_header(http::header::TRANSFER_ENCODING, "chunked")?,
            }
        }
        let empty = up.length() == Some(0);
        session.write_response_header(Box::new(resp), empty).await?;
        if empty {
            up.finish(&app.upstream_pool);
            return Ok(true);
        }
        self.pump(session, ctx, up, client_spoke).await
    }

    /// The upstream stream opened, watching the client meanwhile: a client
    /// leaving while the agent has not answered yet closes the call too,
    /// instead of holding it until the read timeout. `Err(answered)` when
    /// the call failed and the client was answered; else the stream and
    /// whether the client sent bytes after its request (it is not watched
    /// for leaving any more then: the next write tells).
    async fn open_stream(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
    ) -> Result<std::result::Result<(crate::upstream::Streaming, bool), bool>> {
        let app = &self.app;
        let wire = match self.upstream_wire(session, ctx).await? {
            Ok(w) => w,
            Err(f) => {
                return Box::pin(self.respond_failure(session, ctx, f))
                    .await
                    .map(Err)
            }
        };
        let call = self.call_limits(ctx);
        let dest = ctx.dest.clone();
        let open = async move {
            let r = match app.dest_addr(dest.as_ref()).await {
                Ok(addr) => app.upstream_pool.open(addr, &wire, call).await,
                Err(f) => Err(f),
            };
            // The request is gone: an open stream does not keep it.
            drop(wire);
            r
        };
        tokio::pin!(open);
        let mut client_spoke = false;
        let opened = loop {
            tokio::select! {
                r = &mut open => break r,
                r = session.read_body_or_idle(true), if !client_spoke => match r {
                    Err(_) => return Err(client_left()),
                    Ok(_) => client_spoke = true,
                },
            }
        };
        match opened {
            Ok(up) => Ok(Ok((up, client_spoke))),
            Err(f) => {
                tracing::warn!(failure = f.label(), error = ?f, "proxying failed");
                session.set_keepalive(None);
                Box::pin(self.respond_failure(session, ctx, f))
                    .await
                    .map(Err)
            }
        }
    }

    /// Hands the stream's pieces to the client as they arrive (translated
    /// event by event when the head said so), until its end, a failure,
    /// the client leaving or `limits.stream_max_duration`.
    async fn pump(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        mut up: crate::upstream::Streaming,
        mut client_spoke: bool,
    ) -> Result<bool> {
        let limits = &self.app.config.limits;
        // An SSE stream lives up to its own bound; any other answer is
        // whole within the answer's.
        let life = if ctx.stream_open {
            limits.stream_max_duration
        } else {
            limits.answer_timeout
        };
        let deadline = tokio::time::Instant::from_std(ctx.started + life);
        loop {
            let step = tokio::select! {
                r = up.next() => match r {
                    Ok(p) => Step::Piece(p),
                    Err(f) => Step::Failed(f),
                },
                r = session.read_body_or_idle(true), if !client_spoke => match r {
                    Err(_) => Step::ClientGone,
                    Ok(_) => Step::ClientSpoke,
                },
                _ = tokio::time::sleep_until(deadline) => Step::Expired,
            };
            let mut body = match step {
                Step::Piece(p) => p,
                Step::ClientSpoke => {
                    client_spoke = true;
                    continue;
                }
                Step::ClientGone => return Err(client_left()),
                Step::Expired if !ctx.stream_open => {
                    ctx.failure = Some(Failure::UpstreamTimeout);
                    return Error::e_explain(
                        ErrorType::ReadTimedout,
                        "the agent's answer took longer than limits.answer_timeout",
                    );
                }
                Step::Expired => {
                    ctx.failure = Some(Failure::StreamExpired {
                        limit_secs: limits.stream_max_duration.as_secs(),
                    });
                    return Error::e_explain(
                        ErrorType::Custom("stream max duration"),
                        "closing an SSE stream at its maximum duration",
                    );
                }
                Step::Failed(f) => {
                    if let Some(sub) = ctx.relay_mut().and_then(|w| w.failed()) {
                        return Box::pin(self.relay_events(session, ctx, sub, true)).await;
                    }
                    tracing::warn!(failure = f.label(), error = ?f, "upstream stream failed");
                    ctx.failure = Some(f);
                    let e = Error::explain(ErrorType::ReadError, "reading the upstream stream");
                    return Err(e.into_up());
                }
            };
            let end = body.is_none();
            if let Some(w) = ctx.relay_mut() {
                use crate::tasks::relay::Watched;
                match w.piece(body.take(), end) {
                    Watched::Hold => continue,
                    Watched::Live(held) => {
                        body = held;
                        ctx.end_relay();
                    }
                    Watched::Refused(sub) => {
                        up.finish(&self.app.upstream_pool);
                        return Box::pin(self.relay_events(session, ctx, sub, true)).await;
                    }
                }
            }
            if matches!(ctx.resp(), Some(RespRewrite::Sse { .. })) {
                body = Some(self.rewrite_piece(ctx, body, end).await?);
            } else {
                self.answer_body(&session.req_header().headers, &mut body, end, ctx)?;
            }
            if let Err(e) = session.write_response_body(body, end).await {
                return Err(e.into_down());
            }
            if end {
                up.finish(&self.app.upstream_pool);
                return Ok(true);
            }
        }
    }
}

/// What woke a stream's pump.
enum Step {
    Piece(Option<Bytes>),
    Failed(Failure),
    ClientGone,
    ClientSpoke,
    Expired,
}

/// The rest of an answer's body, at most `limit` bytes.
pub(crate) async fn read_rest(
    up: &mut crate::upstream::Streaming,
    limit: usize,
) -> std::result::Result<Bytes, Failure> {
    let mut body = BytesMut::new();
    while let Some(piece) = up.next().await? {
        body.extend_from_slice(&piece);
        if body.len() > limit {
            return Err(Failure::BadUpstreamResponse {
                detail: format!("answer over {limit} bytes"),
            });
        }
    }
    Ok(body.freeze())
}

/// The error that ends a stream whose client went away.
pub(crate) fn client_left() -> Box<Error> {
    Error::explain(ErrorType::ConnectionClosed, "the client left the stream").into_down()
}
