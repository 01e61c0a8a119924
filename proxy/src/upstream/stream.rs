//! An upstream answer handed on as it arrives (SSE streams): the head
//! read like a whole answer's ([`super::send_and_read_head`]), then the
//! body piece by piece as hyper decodes it.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http::{HeaderName, HeaderValue};
use hyper::body::{Body as _, Incoming};

use super::link::{self, Link};
use super::{end_to_end, send_and_read_head, Limits, Lost, Outgoing, UpstreamPool};
use crate::error::Failure;
use crate::upstream::tls::AgentAddr;

/// An upstream answer whose body is handed on as it arrives (SSE streams).
pub struct Streaming {
    pub status: u16,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    link: Link,
    body: Incoming,
    addr: AgentAddr,
    done: bool,
    /// A failure that came after the last piece's bytes: the next call's.
    failed: Option<Failure>,
    limits: Limits,
    /// The stream's client span, open as long as the stream
    /// (crate::telemetry; disabled when export is off).
    span: tracing::Span,
}

/// Largest piece handed on at once.
const PIECE: usize = 16 * 1024;

/// The frames of one piece: the first as it came; with more, all of
/// them copied into one buffer.
#[derive(Default)]
enum Piece {
    #[default]
    Empty,
    One(Bytes),
    Joined(BytesMut),
}

impl Piece {
    /// Adds `data`; the piece's length.
    fn add(&mut self, data: Bytes) -> usize {
        *self = match std::mem::take(self) {
            Piece::Empty => Piece::One(data),
            Piece::One(first) => {
                let mut all = BytesMut::with_capacity(first.len() + data.len().max(4096));
                all.extend_from_slice(&first);
                all.extend_from_slice(&data);
                Piece::Joined(all)
            }
            Piece::Joined(mut all) => {
                all.extend_from_slice(&data);
                Piece::Joined(all)
            }
        };
        match self {
            Piece::Empty => 0,
            Piece::One(b) => b.len(),
            Piece::Joined(all) => all.len(),
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Piece::Empty)
    }

    fn take(&mut self) -> Option<Bytes> {
        match std::mem::take(self) {
            Piece::Empty => None,
            Piece::One(b) => Some(b),
            Piece::Joined(all) => Some(all.freeze()),
        }
    }
}

impl Streaming {
    /// The body's length, when the upstream gave one.
    pub fn length(&self) -> Option<usize> {
        hyper::body::Body::size_hint(&self.body)
            .exact()
            .and_then(|n| usize::try_from(n).ok())
    }

    /// The next piece of the body as it arrived (`Ok(None)` at its end):
    /// what one frame brought, with those already decoded behind it (an
    /// agent writes an SSE event as a chunk of its own; a piece of many
    /// events is one translation pass and one write to the client), up to
    /// [`PIECE`] bytes. Cancel-safe: a piece is only taken whole.
    pub async fn next(&mut self) -> Result<Option<Bytes>, Failure> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.done {
            return Ok(None);
        }
        let wait = self.limits.read_timeout;
        let read = std::future::poll_fn(|cx| self.poll_piece(cx));
        match tokio::time::timeout(wait, read).await {
            Err(_) => Err(Failure::UpstreamTimeout),
            Ok(r) => r,
        }
    }

    fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Bytes>, Failure>> {
        let mut piece = Piece::default();
        loop {
            // The body first, then the connection (see `Link::driving`).
            let mut next = Pin::new(&mut self.body).poll_frame(cx);
            if next.is_pending() && self.link.drive(cx) {
                next = Pin::new(&mut self.body).poll_frame(cx);
            }
            match next {
                Poll::Ready(Some(Ok(frame))) => {
                    // Empty data or trailers: nothing to hand on.
                    if let Ok(data) = frame.into_data() {
                        if piece.add(data) >= PIECE {
                            return Poll::Ready(Ok(piece.take()));
                        }
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    let f = link::in_body(&self.addr, &e);
                    if piece.is_empty() {
                        return Poll::Ready(Err(f));
                    }
                    // What came before the failure first.
                    self.failed = Some(f);
                    return Poll::Ready(Ok(piece.take()));
                }
                Poll::Ready(None) => {
                    self.done = true;
                    return Poll::Ready(Ok(piece.take()));
                }
                Poll::Pending if piece.is_empty() => return Poll::Pending,
                Poll::Pending => return Poll::Ready(Ok(piece.take())),
            }
        }
    }

    /// A stream read to its end gives its connection back to `pool`.
    pub fn finish(self, pool: &UpstreamPool) {
        if self.done {
            pool.put(self.addr, self.link);
        }
    }
}

impl UpstreamPool {
    /// Sends `request` to `addr` and returns once the answer's head is in;
    /// its body is read with [`Streaming::next`].
    pub async fn open(
        &self,
        addr: AgentAddr,
        request: &Outgoing,
        limits: Limits,
    ) -> Result<Streaming, Failure> {
        use tracing::Instrument;
        let to = &addr;
        let span = super::call_span(request, to);
        let opened = self
            .on_link(to, limits, |link| {
                Streaming::start(link, to.clone(), request, limits)
            })
            .instrument(span.clone())
            .await;
        super::end_span(&span, opened.as_ref().map(|s| s.status));
        opened.map(|mut s| {
            s.span = span;
            s
        })
    }
}

impl Streaming {
    async fn start(
        mut link: Link,
        addr: AgentAddr,
        request: &Outgoing,
        limits: Limits,
    ) -> Result<Streaming, Lost> {
        // The head within the read timeout and the answer timeout (its
        // body has no deadline but the stream's own).
        let deadline = Instant::now() + limits.read_timeout.max(limits.answer_timeout);
        let head = send_and_read_head(&mut link, &addr, request, &limits, deadline).await?;
        let (parts, body) = head.into_parts();
        let mut headers = end_to_end(&parts.headers);
        detach(&mut headers);
        Ok(Streaming {
            status: parts.status.as_u16(),
            headers,
            link,
            body,
            addr,
            done: false,
            failed: None,
            limits,
            span: tracing::Span::none(),
        })
    }
}

/// Gives `headers` values of their own. hyper's values share the buffer
/// the head was read into (8 KiB), and a stream's head is kept as long as
/// the stream is open (the client's response head is made of it): copied,
/// that buffer is freed once the body is read past it.
fn detach(headers: &mut [(HeaderName, HeaderValue)]) {
    for (_, v) in headers {
        if let Ok(own) = HeaderValue::from_bytes(v.as_bytes()) {
            *v = own;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streams_head_values_do_not_keep_the_read_buffer() {
        let buffer = Bytes::from(b"text/event-stream; charset=utf-8 and more bytes after".to_vec());
        let shared = HeaderValue::from_maybe_shared(buffer.slice(0..32)).unwrap();
        assert_eq!(shared.as_bytes().as_ptr(), buffer.as_ptr());
        let mut got = vec![(http::header::CONTENT_TYPE, shared)];
        detach(&mut got);
        assert_eq!(got[0].1, "text/event-stream; charset=utf-8");
        let inside = buffer.as_ptr_range();
        assert!(!inside.contains(&got[0].1.as_bytes().as_ptr()));
    }
}
