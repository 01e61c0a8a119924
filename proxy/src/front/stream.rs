//! Streaming calls the proxy makes itself: the upstream SSE stream handed
//! to the client piece by piece, translated event by event when needed,
//! bounded in duration, watching for the client leaving.

use bytes::{Bytes, BytesMut};
use pingora::http::ResponseHeader;
use pingora::proxy::{ProxyHttp, Session};
use pingora::{Error, ErrorType, Result};

use super::*;
use crate::error::Failure;

impl ProxyService {
    /// A streaming call (SSE) made by the proxy itself: the answer goes to
    /// the client piece by piece as it arrives, through `response_filter`
    /// and `response_body_filter` as on the proxied path. Pingora's proxy
    /// loop would keep an upstream session, its 64 KiB body buffer and two
    /// task pipes for each open stream; this keeps the socket.
    ///
    /// A failure before the answer's head is answered as an error in the
    /// client's version; after it, it ends the stream through
    /// `fail_to_proxy` (a last error frame where the binding has one), and
    /// the connection closes without a clean end of body.
    pub(crate) async fn stream_call(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        let app = &self.app;
        let wire = match self.upstream_wire(session, ctx).await? {
            Ok(w) => w,
            Err(f) => return Box::pin(self.respond_failure(session, ctx, f)).await,
        };
        let call = self.call_limits(ctx);
        let open = async move {
            let r = match app.upstream_addr().await {
                Ok(addr) => app.upstream_pool.open(addr, &wire, call).await,
                Err(f) => Err(f),
            };
            // The request is gone: an open stream does not keep it.
            drop(wire);
            r
        };
        tokio::pin!(open);
        // Set once the client sent bytes after its request: it is not
        // watched for leaving any more (the next write tells).
        let mut client_spoke = false;
        // A client leaving while the agent has not answered yet closes the
        // call too, instead of holding it until the read timeout.
        let opened = loop {
            tokio::select! {
                r = &mut open => break r,
                r = session.read_body_or_idle(true), if !client_spoke => match r {
                    Err(_) => return Err(client_left()),
                    Ok(_) => client_spoke = true,
                },
            }
        };
        let mut up = match opened {
            Ok(s) => s,
            Err(f) => {
                tracing::warn!(failure = f.label(), error = ?f, "proxying failed");
                session.set_keepalive(None);
                return Box::pin(self.respond_failure(session, ctx, f)).await;
            }
        };
        let headers = std::mem::take(&mut up.headers);
        if !is_event_stream(&headers) {
            // Not a stream (an error, or a single result): answered whole,
            // so an untranslatable one still gets its own status.
            let limit = app.config.limits.max_event_bytes;
            let body = match read_rest(&mut up, limit).await {
                Ok(b) => b,
                Err(f) => {
                    tracing::warn!(failure = f.label(), error = ?f, "proxying failed");
                    session.set_keepalive(None);
                    return Box::pin(self.respond_failure(session, ctx, f)).await;
                }
            };
            let status = up.status;
            up.finish(&app.upstream_pool);
            let answer = crate::unary::Answer {
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
        ProxyHttp::response_filter(self, session, &mut resp, ctx).await?;
        // The client's framing: the filter asked for chunks when it rewrites
        // the body; otherwise the upstream's length, or chunks.
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
        let limits = &app.config.limits;
        let deadline = tokio::time::Instant::from_std(ctx.started + limits.stream_max_duration);
        loop {
            enum Step {
                Piece(Option<Bytes>),
                Failed(Failure),
                ClientGone,
                ClientSpoke,
                Expired,
            }
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
            let (mut body, end) = match step {
                Step::Piece(p) => {
                    let end = p.is_none();
                    (p, end)
                }
                Step::ClientSpoke => {
                    client_spoke = true;
                    continue;
                }
                Step::ClientGone => return Err(client_left()),
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
                    tracing::warn!(failure = f.label(), error = ?f, "upstream stream failed");
                    ctx.failure = Some(f);
                    return Err(Error::explain(
                        ErrorType::ReadError,
                        "reading the upstream stream",
                    )
                    .into_up());
                }
            };
            if matches!(ctx.resp, RespRewrite::Sse { .. }) {
                body = Some(self.rewrite_piece(ctx, body, end).await?);
            } else {
                ProxyHttp::response_body_filter(self, session, &mut body, end, ctx)?;
            }
            if let Err(e) = session.write_response_body(body, end).await {
                return Err(e.into_down());
            }
            if end {
                up.finish(&app.upstream_pool);
                return Ok(true);
            }
        }
    }
}

/// The rest of an answer's body, at most `limit` bytes.
pub(crate) async fn read_rest(
    up: &mut crate::unary::Streaming,
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
