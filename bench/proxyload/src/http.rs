//! A minimal HTTP/1.1 reader shared by the fake agent and the load client:
//! header block, then a body by `Content-Length` or `chunked` coding.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

/// A connection's read side with its buffered, not yet consumed bytes.
pub struct Reader<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
}

/// One parsed header block.
pub struct Head {
    /// Status code of a response; 0 for a request.
    pub status: u16,
    /// The request line or status line.
    pub first_line: String,
    /// Lowercased names with their values.
    pub headers: Vec<(String, String)>,
}

impl Head {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    pub fn content_length(&self) -> Option<usize> {
        self.header("content-length")?.trim().parse().ok()
    }
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

impl<R: AsyncRead + Unpin> Reader<R> {
    pub fn new(inner: R) -> Reader<R> {
        Reader {
            inner,
            buf: Vec::with_capacity(16 * 1024),
            pos: 0,
        }
    }

    fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads more bytes; `false` at end of stream.
    async fn fill(&mut self) -> io::Result<bool> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 64 * 1024 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = self.inner.read(&mut chunk).await?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    /// The next `\r\n`-terminated line (without it).
    async fn line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(i) = self.pending().windows(2).position(|w| w == b"\r\n") {
                let line = self.pending()[..i].to_vec();
                self.pos += i + 2;
                return Ok(line);
            }
            if self.pending().len() > 64 * 1024 {
                return Err(invalid("line too long"));
            }
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    /// The next header block; `None` when the peer closed before one started.
    pub async fn head(&mut self) -> io::Result<Option<Head>> {
        if self.pending().is_empty() && !self.fill().await? {
            return Ok(None);
        }
        let first = String::from_utf8_lossy(&self.line().await?).into_owned();
        let status = if first.starts_with("HTTP/") {
            first
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| invalid("bad status line"))?
        } else {
            0
        };
        let mut headers = Vec::new();
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                break;
            }
            let line = String::from_utf8_lossy(&line);
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
            if headers.len() > 100 {
                return Err(invalid("too many headers"));
            }
        }
        Ok(Some(Head {
            status,
            first_line: first,
            headers,
        }))
    }

    /// Exactly `n` bytes.
    pub async fn exact(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.pending().len() < n {
            if !self.fill().await? {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        let out = self.pending()[..n].to_vec();
        self.pos += n;
        Ok(out)
    }

    /// The next chunk of a `chunked` body; empty at its end.
    pub async fn chunk(&mut self) -> io::Result<Vec<u8>> {
        let size_line = self.line().await?;
        let size_text = String::from_utf8_lossy(&size_line);
        let size_hex = size_text.split(';').next().unwrap_or("").trim();
        let size =
            usize::from_str_radix(size_hex, 16).map_err(|_| invalid("bad chunk size line"))?;
        if size == 0 {
            // Trailers, up to the empty line.
            while !self.line().await?.is_empty() {}
            return Ok(Vec::new());
        }
        let data = self.exact(size).await?;
        if !self.line().await?.is_empty() {
            return Err(invalid("chunk not followed by CRLF"));
        }
        Ok(data)
    }

    /// A whole body after `head`, calling `on_data` with each piece as it
    /// arrives; returns the total length.
    pub async fn body(&mut self, head: &Head, mut on_data: impl FnMut(&[u8])) -> io::Result<usize> {
        let mut total = 0;
        if head.chunked() {
            loop {
                let c = self.chunk().await?;
                if c.is_empty() {
                    return Ok(total);
                }
                total += c.len();
                on_data(&c);
            }
        }
        let n = head.content_length().unwrap_or(0);
        let data = self.exact(n).await?;
        on_data(&data);
        Ok(n)
    }
}
