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

/// What the bytes at a decoder's position give (see [`Chunked::step`]).
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// More bytes are needed.
    More,
    /// `len` bytes of chunk data at `at` of the input (passed: the
    /// decoder's position is after them). A chunk whose data has not all
    /// come yet is handed on in parts, as it comes.
    Data { at: usize, len: usize },
    /// The last chunk and the trailers have passed.
    Done,
}

/// A size line of one to fifteen hex digits ended by CRLF at the start
/// of `b`: the size and the line's length with its end. `None` for every
/// other line (read by [`chunk_size`]) or a line not all there.
#[inline]
fn plain_size_line(b: &[u8]) -> Option<(usize, usize)> {
    let mut n = 0usize;
    for (i, &c) in b.iter().enumerate().take(16) {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            b'\r' if i > 0 => {
                return (b.get(i + 1) == Some(&b'\n')).then_some((n, i + 2));
            }
            _ => return None,
        };
        n = n << 4 | usize::from(d);
    }
    None
}

impl Chunked {
    /// Reads `b` from the decoder's position up to the next chunk data,
    /// the body's end, or the end of what `b` holds. `held`: the data
    /// bytes the caller holds already (decoded, not yet handed on), which
    /// with a new chunk's size may not exceed `max_body`.
    #[inline]
    pub(super) fn step(&mut self, b: &[u8], held: usize, max_body: usize) -> Result<Step, String> {
        loop {
            let rest = b.get(self.pos..).unwrap_or_default();
            match self.state {
                ChunkState::Done => return Ok(Step::Done),
                ChunkState::Size => {
                    if !self.size_line(rest, held, max_body)? {
                        return Ok(Step::More);
                    }
                }
                ChunkState::Data(n) => {
                    let len = n.min(rest.len());
                    if len == 0 {
                        return Ok(Step::More);
                    }
                    let at = self.pos;
                    self.pos += len;
                    self.state = if len == n {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(n - len)
                    };
                    return Ok(Step::Data { at, len });
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
                    [] | [b'\r'] => return Ok(Step::More),
                    _ => return Err("chunk data not followed by CRLF".into()),
                },
                ChunkState::Trailer => {
                    let Some((end, sep)) = line_end(rest) else {
                        if rest.len() > MAX_HEAD {
                            return Err("trailers too long".into());
                        }
                        return Ok(Step::More);
                    };
                    self.pos += end + sep;
                    if end == 0 {
                        self.state = ChunkState::Done;
                    }
                }
            }
        }
    }

    /// Reads the chunk size line at the start of `rest` (the decoder's
    /// position): `Ok(false)` while it is not all there.
    #[inline(always)]
    fn size_line(&mut self, rest: &[u8], held: usize, max_body: usize) -> Result<bool, String> {
        // The usual size line, hex digits and CRLF, read in one pass;
        // anything else the general way.
        let (size, len) = match plain_size_line(rest) {
            Some(found) => found,
            None => {
                let Some((end, sep)) = line_end(rest) else {
                    if rest.len() > 1024 {
                        return Err("chunk size line too long".into());
                    }
                    return Ok(false);
                };
                let line = &rest[..end];
                let hex = match line.iter().position(|&c| c == b';') {
                    Some(i) => &line[..i],
                    None => line,
                };
                let size = chunk_size(hex).ok_or_else(|| {
                    let shown = &hex[..hex.len().min(32)];
                    format!("bad chunk size {:?}", String::from_utf8_lossy(shown))
                })?;
                (size, end + sep)
            }
        };
        if held.saturating_add(size) > max_body {
            return Err(format!("answer larger than {max_body} bytes"));
        }
        self.pos += len;
        self.state = if size == 0 {
            ChunkState::Trailer
        } else {
            ChunkState::Data(size)
        };
        Ok(true)
    }

    /// Decodes what `b` holds, its data appended to `out`; `Ok(true)` once
    /// the last chunk and the trailers have passed.
    pub(super) fn advance(&mut self, b: &[u8], max_body: usize) -> Result<bool, String> {
        loop {
            match self.step(b, self.out.len(), max_body)? {
                Step::More => return Ok(false),
                Step::Done => return Ok(true),
                Step::Data { at, len } => {
                    if self.out.is_empty() {
                        // Room for every chunk this read holds, taken at
                        // once rather than grown (and copied) chunk by
                        // chunk.
                        self.out.reserve(b.len() - at);
                    }
                    self.out.extend_from_slice(&b[at..at + len]);
                }
            }
        }
    }

    /// Decodes what `b` holds in place: the data of its chunks is joined
    /// where the first one's is (the first chunk's data is not moved, each
    /// later one's moves back over the framing before it). Returns the
    /// data's span in `b`, how many bytes of `b` were read (those after
    /// are still to decode, from their start: the position is reset), and
    /// whether the body ended. `max_body` bounds the data of one call.
    pub(super) fn decode_in_place(
        &mut self,
        b: &mut [u8],
        max_body: usize,
    ) -> Result<(std::ops::Range<usize>, usize, bool), String> {
        let mut data: Option<std::ops::Range<usize>> = None;
        let done = loop {
            let held = data.as_ref().map_or(0, ExactSizeIterator::len);
            match self.step(b, held, max_body)? {
                Step::More => break false,
                Step::Done => break true,
                Step::Data { at, len } => match &mut data {
                    None => data = Some(at..at + len),
                    Some(d) => {
                        // Reading stays ahead of writing: `at >= d.end`.
                        b.copy_within(at..at + len, d.end);
                        d.end += len;
                    }
                },
            }
        };
        let read = std::mem::take(&mut self.pos);
        Ok((data.unwrap_or(0..0), read, done))
    }
}

#[cfg(test)]
mod tests {
    use super::{chunk_size, Chunked};

    /// `stream` fed in the pieces `cuts` makes, decoded in place as a
    /// stream's reader does (the bytes read dropped, the rest kept for
    /// the next piece): the data, whether the body ended, and the bytes
    /// left after it; or the error.
    fn in_place(
        stream: &[u8],
        cuts: &[usize],
        max: usize,
    ) -> Result<(Vec<u8>, bool, Vec<u8>), String> {
        let mut d = Chunked::default();
        let (mut buf, mut data, mut done) = (Vec::new(), Vec::new(), false);
        let mut from = 0;
        for &to in cuts.iter().chain([&stream.len()]) {
            buf.extend_from_slice(&stream[from..to]);
            from = to;
            let (span, read, end) = d.decode_in_place(&mut buf, max)?;
            assert!(span.end <= read && read <= buf.len(), "{span:?} {read}");
            data.extend_from_slice(&buf[span]);
            buf.drain(..read);
            if end {
                done = true;
                buf.extend_from_slice(&stream[from..]);
                break;
            }
        }
        Ok((data, done, buf))
    }

    /// The same stream through [`Chunked::advance`] (the data appended).
    fn appended(stream: &[u8], cuts: &[usize], max: usize) -> Result<(Vec<u8>, bool), String> {
        let mut d = Chunked::default();
        for &to in cuts.iter().chain([&stream.len()]) {
            if d.advance(&stream[..to], max)? {
                return Ok((d.out.to_vec(), true));
            }
        }
        Ok((d.out.to_vec(), false))
    }

    const BODY: &[u8] = b"4\r\nwiki\r\n5;name=v;x=\"q\"\r\npedia\r\nA \r\n0123456789\r\n00001\nx\n0\r\nTrailer-A: 1\r\nTrailer-B: 2\r\n\r\n";
    const DATA: &[u8] = b"wikipedia0123456789x";

    #[test]
    fn split_at_every_byte_the_same_data_comes_out() {
        let whole = [BODY, b"HTTP/1.1 200 OK\r\n"].concat();
        let rest: &[u8] = b"HTTP/1.1 200 OK\r\n";
        assert_eq!(
            in_place(&whole, &[], 100),
            Ok((DATA.to_vec(), true, rest.to_vec()))
        );
        for cut in 0..=BODY.len() {
            let got = in_place(&whole, &[cut], 100);
            assert_eq!(
                got,
                Ok((DATA.to_vec(), true, rest.to_vec())),
                "cut at {cut}"
            );
            assert_eq!(
                appended(BODY, &[cut], 100),
                Ok((DATA.to_vec(), true)),
                "cut at {cut}"
            );
            for cut2 in cut..=BODY.len() {
                let got = in_place(&whole, &[cut, cut2], 100);
                assert_eq!(
                    got,
                    Ok((DATA.to_vec(), true, rest.to_vec())),
                    "cuts {cut} {cut2}"
                );
            }
        }
        let every: Vec<usize> = (1..BODY.len()).collect();
        assert_eq!(
            in_place(BODY, &every, 100),
            Ok((DATA.to_vec(), true, vec![]))
        );
        assert_eq!(appended(BODY, &every, 100), Ok((DATA.to_vec(), true)));
    }

    #[test]
    fn a_body_cut_short_has_not_ended() {
        for cut in 0..BODY.len() {
            let (data, done, _) = in_place(&BODY[..cut], &[], 100).unwrap();
            assert!(!done, "cut at {cut}");
            assert!(DATA.starts_with(&data), "cut at {cut}: {data:?}");
        }
    }

    /// The first chunk's data stays where it is; each later one's moves
    /// back to join it.
    #[test]
    fn data_joined_where_the_first_chunk_is() {
        let mut b = b"3\r\nabc\r\n2\r\nde\r\n1\r\n".to_vec();
        let mut d = Chunked::default();
        let (span, read, end) = d.decode_in_place(&mut b, 100).unwrap();
        assert_eq!((span.clone(), read, end), (3..8, b.len(), false));
        assert_eq!(&b[span], b"abcde");
        // The next call starts at the bytes after those read.
        let mut b = b"f\r\n0\r\n\r\n".to_vec();
        let (span, read, end) = d.decode_in_place(&mut b, 100).unwrap();
        assert_eq!((&b[span], read, end), (&b"f"[..], b.len(), true));
    }

    #[test]
    fn bad_and_huge_sizes_are_refused() {
        for bad in [
            &b"zz\r\n"[..],
            b"-1\r\n",
            b"+1\r\n",
            b"\r\n",
            b";ext\r\n",
            b"1 2\r\nab\r\n",
            b"0x10\r\n",
            b"10000000000000000\r\n",
            b"ffffffffffffffffff\r\n",
            b"3\r\nabcX\r\n",
            b"3\r\nabc\rX",
        ] {
            for cut in 0..=bad.len() {
                assert!(
                    in_place(bad, &[cut], usize::MAX).is_err(),
                    "{:?}",
                    String::from_utf8_lossy(bad)
                );
                assert!(
                    appended(bad, &[cut], usize::MAX).is_err(),
                    "{:?}",
                    String::from_utf8_lossy(bad)
                );
            }
        }
        // Sizes past the bound: refused at their size line, before any of
        // their data is held.
        for huge in [&b"fffffffffffffff\r\n"[..], b"65\r\n", b"64\r\n"] {
            assert!(in_place(huge, &[], 99).is_err());
            assert!(appended(huge, &[], 99).is_err());
        }
        assert_eq!(in_place(b"63\r\n", &[], 99), Ok((vec![], false, vec![])));
        // The bound counts the data of one call: two chunks together over it.
        let two = b"40\r\n"
            .iter()
            .chain(&[b'a'; 64])
            .chain(b"\r\n40\r\n")
            .copied()
            .collect::<Vec<u8>>();
        assert!(in_place(&two, &[], 100).is_err());
        assert!(in_place(&two, &[68], 100).is_ok());
        // A size line that never ends, and a trailer line that never does.
        let long = [b"1".repeat(1025), b"\r\n".to_vec()].concat();
        assert!(in_place(&long, &[], usize::MAX).is_err());
        let trailer = [b"0\r\nx: ".to_vec(), b"y".repeat(70_000)].concat();
        assert!(in_place(&trailer, &[], usize::MAX).is_err());
        assert_eq!(
            in_place(&trailer[..1000], &[], usize::MAX),
            Ok((vec![], false, trailer[3..1000].to_vec()))
        );
    }

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
