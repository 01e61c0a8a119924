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

/// The size a chunk's size line gives (its extensions already cut off):
/// hex digits, spaces or tabs around them, leading zeros allowed; `None`
/// for anything else or a size past 2^60. Read byte by byte, as it runs
/// once per SSE event.
fn chunk_size(hex: &[u8]) -> Option<usize> {
    let hex = hex.trim_ascii();
    let first = hex.iter().position(|&c| c != b'0').unwrap_or(hex.len());
    if hex.is_empty() || hex.len() - first > 15 {
        return None;
    }
    hex[first..].iter().try_fold(0usize, |n, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        Some(n << 4 | usize::from(d))
    })
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
                    let size = chunk_size(hex).ok_or_else(|| {
                        let shown = &hex[..hex.len().min(32)];
                        format!("bad chunk size {:?}", String::from_utf8_lossy(shown))
                    })?;
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
                    if self.out.is_empty() {
                        // Room for every chunk this read holds, taken at
                        // once rather than grown (and copied) chunk by
                        // chunk; only once a chunk is whole, so a waiting
                        // stream keeps no buffer.
                        self.out.reserve(rest.len());
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

#[cfg(test)]
mod tests {
    use super::chunk_size;

    #[test]
    fn chunk_sizes_read_as_the_standard_parser_reads_them() {
        for (line, want) in [
            (&b"0"[..], Some(0)),
            (b"1a", Some(26)),
            (b"1A", Some(26)),
            (b" ff\t", Some(255)),
            (b"00000000000000000000010", Some(16)),
            (b"fffffffffffffff", Some(0x0fff_ffff_ffff_ffff)),
            (b"1000000000000000", None),
            (b"", None),
            (b"  ", None),
            (b"+1", None),
            (b"-1", None),
            (b"1 2", None),
            (b"g", None),
            (b"\xff", None),
        ] {
            assert_eq!(
                chunk_size(line),
                want,
                "{:?}",
                String::from_utf8_lossy(line)
            );
            // Where both accept, the standard parser agrees.
            if let (Some(n), Ok(s)) = (want, std::str::from_utf8(line)) {
                assert_eq!(usize::from_str_radix(s.trim(), 16), Ok(n));
            }
        }
    }
}
