//! An incremental decoder of HTTP/1.1 chunked bodies, bounded in size.

use bytes::BytesMut;

use super::MAX_HEAD;

/// An incremental chunked-body decoder over the bytes after the head.
#[derive(Default)]
pub(super) struct Chunked {
    pub(super) pos: usize,
    pub(super) state: ChunkState,
    pub(super) out: BytesMut,
}

#[derive(Default, Clone, Copy, PartialEq, Debug)]
pub(super) enum ChunkState {
    #[default]
    Size,
    Data(usize),
    DataEnd,
    Trailer,
    Done,
}

fn line_end(b: &[u8]) -> Option<(usize, usize)> {
    let i = b.iter().position(|&c| c == b'\n')?;
    if i > 0 && b[i - 1] == b'\r' {
        Some((i - 1, 2))
    } else {
        Some((i, 1))
    }
}

impl Chunked {
    /// Decodes what `b` holds; `Ok(true)` once the last chunk and the
    /// trailers have passed.
    pub(super) fn advance(&mut self, b: &[u8], max_body: usize) -> Result<bool, String> {
        loop {
            let rest = &b[self.pos.min(b.len())..];
            match self.state {
                ChunkState::Done => return Ok(true),
                ChunkState::Size => {
                    let Some((end, sep)) = line_end(rest) else {
                        if rest.len() > 1024 {
                            return Err("chunk size line too long".into());
                        }
                        return Ok(false);
                    };
                    let line = &rest[..end];
                    let hex = line.split(|&c| c == b';').next().unwrap_or(line);
                    let hex = std::str::from_utf8(hex).map_err(|_| "bad chunk size")?;
                    let size = usize::from_str_radix(hex.trim(), 16)
                        .map_err(|_| format!("bad chunk size {hex:?}"))?;
                    if self.out.len().saturating_add(size) > max_body {
                        return Err(format!("answer larger than {max_body} bytes"));
                    }
                    self.pos += end + sep;
                    self.state = if size == 0 {
                        ChunkState::Trailer
                    } else {
                        ChunkState::Data(size)
                    };
                }
                ChunkState::Data(n) => {
                    if rest.len() < n {
                        return Ok(false);
                    }
                    self.out.extend_from_slice(&rest[..n]);
                    self.pos += n;
                    self.state = ChunkState::DataEnd;
                }
                ChunkState::DataEnd => match rest {
                    [b'\r', b'\n', ..] => {
                        self.pos += 2;
                        self.state = ChunkState::Size;
                    }
                    [b'\n', ..] => {
                        self.pos += 1;
                        self.state = ChunkState::Size;
                    }
                    [] | [b'\r'] => return Ok(false),
                    _ => return Err("chunk data not followed by CRLF".into()),
                },
                ChunkState::Trailer => {
                    let Some((end, sep)) = line_end(rest) else {
                        if rest.len() > MAX_HEAD {
                            return Err("trailers too long".into());
                        }
                        return Ok(false);
                    };
                    self.pos += end + sep;
                    if end == 0 {
                        self.state = ChunkState::Done;
                    }
                }
            }
        }
    }
}
