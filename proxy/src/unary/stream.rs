//! An upstream answer handed on as it arrives (SSE streams): the head
//! read like a whole answer's ([`super::send_and_read_head`]), then the
//! body piece by piece, a chunked one decoded in place in the read buffer.

use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http::{HeaderName, HeaderValue};
use tokio::io::AsyncReadExt;

use super::chunked::Chunked;
use super::{send_and_read_head, unavailable, Framing, Limits, Lost, UpstreamPool};
use crate::error::Failure;
use crate::upstream_tls::{AgentAddr, Conn};

/// Read granularity of a stream at its start: one SSE event or a few.
const STREAM_CHUNK: usize = 4 * 1024;
/// Largest read of a stream: the read size doubles while reads fill the
/// buffer (an agent writing faster than the stream is read, or big
/// events), up to this, and halves back when they bring less than a
/// quarter of it.
const STREAM_CHUNK_MAX: usize = 16 * 1024;

/// The read size after a read of `n` bytes into `room` bytes of buffer.
fn next_read_size(size: usize, n: usize, room: usize) -> usize {
    if n == room && size < STREAM_CHUNK_MAX {
        (size * 2).min(STREAM_CHUNK_MAX)
    } else if n < size / 4 && size > STREAM_CHUNK {
        (size / 2).max(STREAM_CHUNK)
    } else {
        size
    }
}

/// Room in `buf` for the next read, taken when it has less than a quarter
/// of the read size left: the room it has.
fn room(buf: &mut BytesMut, read_size: usize) -> usize {
    if buf.capacity() - buf.len() < read_size / 4 {
        buf.reserve(read_size);
    }
    buf.capacity() - buf.len()
}

/// `span` of the first `read` bytes of `buf` as a piece of its own; the
/// bytes after `read` stay in `buf`. When nothing stays, the piece takes
/// the whole buffer (no copy, no count of shared owners) and `buf` holds
/// no memory; else the few bytes left (part of a chunk's framing) are
/// copied to a buffer of their own, so that the piece owns its memory
/// alone (a reader may take it over, see [`crate::sse::SseFramer`]).
fn take_front(buf: &mut BytesMut, span: std::ops::Range<usize>, read: usize) -> Bytes {
    let mut piece = if read == buf.len() {
        std::mem::take(buf)
    } else {
        let rest = BytesMut::from(&buf[read..]);
        let mut whole = std::mem::replace(buf, rest);
        whole.truncate(read);
        whole
    };
    piece.truncate(span.end);
    bytes::Buf::advance(&mut piece, span.start);
    piece.freeze()
}

/// An upstream answer whose body is handed on as it arrives (SSE streams).
/// Between reads it holds no buffer: a thousand idle streams cost their
/// sockets and little else.
pub struct Streaming {
    pub status: u16,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    sock: Option<Conn>,
    addr: AgentAddr,
    buf: BytesMut,
    framing: Framing,
    chunks: Chunked,
    /// Body bytes still to come under a `Content-Length`.
    left: usize,
    /// The size of the next read (see [`next_read_size`]).
    read_size: usize,
    reusable: bool,
    done: bool,
    limits: Limits,
}

impl Streaming {
    /// The body's length, when the upstream gave one.
    pub fn length(&self) -> Option<usize> {
        match self.framing {
            Framing::Length(n) => Some(n),
            Framing::Empty => Some(0),
            Framing::Chunked | Framing::UntilClose => None,
        }
    }

    /// The next piece of the body as it arrived (`Ok(None)` at its end).
    /// Cancel-safe: bytes read stay in the stream for the next call.
    pub async fn next(&mut self) -> Result<Option<Bytes>, Failure> {
        loop {
            if self.done {
                return Ok(None);
            }
            if let Some(piece) = self.decode()? {
                if self.buf.is_empty() {
                    // Nothing held between events.
                    self.buf = BytesMut::new();
                }
                return Ok(Some(piece));
            }
            if self.done {
                return Ok(None);
            }
            if self.fill().await? == 0 {
                if self.framing == Framing::UntilClose {
                    self.done = true;
                    self.reusable = false;
                    return Ok(None);
                }
                return Err(unavailable(
                    "reading the stream",
                    "connection closed inside the body",
                ));
            }
        }
    }

    /// Whole pieces of body in what is buffered.
    fn decode(&mut self) -> Result<Option<Bytes>, Failure> {
        let too_bad = |m: String| Failure::BadUpstreamResponse { detail: m };
        match self.framing {
            Framing::Empty => {
                self.done = true;
                Ok(None)
            }
            Framing::Length(_) => {
                let n = self.buf.len().min(self.left);
                self.left -= n;
                if self.left == 0 {
                    self.done = true;
                    self.reusable &= n == self.buf.len();
                }
                Ok((n > 0).then(|| take_front(&mut self.buf, 0..n, n)))
            }
            Framing::Chunked => {
                let (data, read, end) = self
                    .chunks
                    .decode_in_place(&mut self.buf, self.limits.max_body)
                    .map_err(too_bad)?;
                if end {
                    self.done = true;
                    self.reusable &= read == self.buf.len();
                }
                if data.is_empty() {
                    // Framing only: what is left (a part of the next
                    // chunk's framing) kept in a buffer of its own.
                    self.buf = BytesMut::from(&self.buf[read..]);
                    return Ok(None);
                }
                Ok(Some(take_front(&mut self.buf, data, read)))
            }
            Framing::UntilClose => {
                let n = self.buf.len();
                Ok((n > 0).then(|| take_front(&mut self.buf, 0..n, n)))
            }
        }
    }

    /// Waits for bytes (within the read timeout) and reads what is there.
    async fn fill(&mut self) -> Result<usize, Failure> {
        let Some(sock) = self.sock.as_mut() else {
            return Ok(0);
        };
        let tls = match sock {
            Conn::Plain(sock) => loop {
                // No buffer held while waiting (see [`Streaming`]).
                match tokio::time::timeout(self.limits.read_timeout, sock.readable()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => return Err(unavailable("reading the stream", e)),
                    Err(_) => return Err(Failure::UpstreamTimeout),
                }
                let room = room(&mut self.buf, self.read_size);
                match sock.try_read_buf(&mut self.buf) {
                    Ok(n) => {
                        self.read_size = next_read_size(self.read_size, n, room);
                        return Ok(n);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(unavailable("reading the stream", e)),
                }
            },
            Conn::Tls(tls) => tls,
        };
        // TLS: rustls holds its records; the read goes through it.
        let room = room(&mut self.buf, self.read_size);
        match tokio::time::timeout(self.limits.read_timeout, tls.read_buf(&mut self.buf)).await {
            Ok(Ok(n)) => {
                self.read_size = next_read_size(self.read_size, n, room);
                Ok(n)
            }
            Ok(Err(e)) => Err(crate::upstream_tls::io_failure(&self.addr, &e)
                .unwrap_or_else(|| unavailable("reading the stream", e))),
            Err(_) => Err(Failure::UpstreamTimeout),
        }
    }

    /// A stream read to its end gives its connection back to `pool`.
    pub fn finish(mut self, pool: &UpstreamPool) {
        if self.done && self.reusable {
            pool.put(self.addr.clone(), self.sock.take());
        }
    }
}

impl UpstreamPool {
    /// Sends `request` to `addr` and returns once the answer's head is in;
    /// its body is read with [`Streaming::next`].
    pub async fn open(
        &self,
        addr: AgentAddr,
        request: &[u8],
        limits: Limits,
    ) -> Result<Streaming, Failure> {
        let to = &addr;
        self.on_connection(to, limits, |sock| {
            Streaming::start(sock, to.clone(), request, limits)
        })
        .await
    }
}

impl Streaming {
    async fn start(
        mut sock: Conn,
        addr: AgentAddr,
        request: &[u8],
        limits: Limits,
    ) -> Result<Streaming, Lost> {
        let mut buf = BytesMut::with_capacity(STREAM_CHUNK);
        // Each read of the head within the read timeout, the whole head
        // within the answer timeout too (its body has no deadline but the
        // stream's own).
        let deadline = Instant::now() + limits.read_timeout.max(limits.answer_timeout);
        let head =
            send_and_read_head(&mut sock, &addr, request, &mut buf, &limits, deadline).await?;
        let left = match head.framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        Ok(Streaming {
            status: head.status,
            headers: head.headers,
            sock: Some(sock),
            addr,
            buf,
            framing: head.framing,
            chunks: Chunked::default(),
            left,
            read_size: STREAM_CHUNK,
            reusable: head.reusable,
            done: false,
            limits,
        })
    }
}
