//! An upstream answer handed on as it arrives (SSE streams): the head
//! read like a whole answer's ([`super::send_and_read_head`]), then the
//! body piece by piece as hyper decodes it.

use std::time::Instant;

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::link::{self, Link};
use super::{end_to_end, send_and_read_head, Limits, Lost, Outgoing, UpstreamPool};
use crate::error::Failure;
use crate::upstream_tls::AgentAddr;

/// An upstream answer whose body is handed on as it arrives (SSE streams).
pub struct Streaming {
    pub status: u16,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    link: Link,
    body: Incoming,
    addr: AgentAddr,
    done: bool,
    limits: Limits,
}

impl Streaming {
    /// The body's length, when the upstream gave one.
    pub fn length(&self) -> Option<usize> {
        hyper::body::Body::size_hint(&self.body)
            .exact()
            .and_then(|n| usize::try_from(n).ok())
    }

    /// The next piece of the body as it arrived (`Ok(None)` at its end).
    /// Cancel-safe: bytes read stay in the stream for the next call.
    pub async fn next(&mut self) -> Result<Option<Bytes>, Failure> {
        while !self.done {
            let read = self.link.driving(self.body.frame());
            match tokio::time::timeout(self.limits.read_timeout, read).await {
                Err(_) => return Err(Failure::UpstreamTimeout),
                Ok(None) => self.done = true,
                Ok(Some(Err(e))) => return Err(link::in_body(&self.addr, &e)),
                Ok(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if !data.is_empty() => return Ok(Some(data)),
                    // Empty data or trailers: nothing to hand on.
                    _ => {}
                },
            }
        }
        Ok(None)
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
        let to = &addr;
        self.on_link(to, limits, |link| {
            Streaming::start(link, to.clone(), request, limits)
        })
        .await
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
        Ok(Streaming {
            status: parts.status.as_u16(),
            headers: end_to_end(&parts.headers),
            link,
            body,
            addr,
            done: false,
            limits,
        })
    }
}
