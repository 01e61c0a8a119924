//! SSE framing apart from per-event translation: a synchronous bytes-in /
//! bytes-out state machine. It splits the stream into events at blank lines
//! (`\n\n` or `\r\n\r\n`, even when split across chunks), hands the joined
//! `data:` value of each event to a translator, and emits complete events
//! only. Comments, keep-alives and `event:`/`id:`/`retry:` lines are kept.
//! It knows nothing of A2A.

/// Per-event translation: the event's `data` in, the new `data` out.
pub type EventFn<'a> = dyn FnMut(&str) -> String + 'a;

/// Buffer of a partial event between chunks.
#[derive(Debug, Default)]
pub struct SseRewriter {
    buf: Vec<u8>,
    /// Largest partial event held; beyond it the event is passed through raw.
    limit: usize,
}

impl SseRewriter {
    pub fn new(limit: usize) -> SseRewriter {
        SseRewriter {
            buf: Vec::new(),
            limit,
        }
    }

    /// Feeds a chunk; returns the rewritten complete events in it.
    pub fn push(&mut self, chunk: &[u8], f: &mut EventFn<'_>) -> Vec<u8> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some((end, sep)) = boundary(&self.buf) {
            let block: Vec<u8> = self.buf.drain(..end + sep).collect();
            rewrite_event(&block[..end], f, &mut out);
        }
        if self.buf.len() > self.limit {
            // An oversized event cannot be parsed: pass it on as it is.
            out.append(&mut self.buf);
        }
        out
    }

    /// End of stream: a trailing event without its blank line is completed.
    pub fn finish(&mut self, f: &mut EventFn<'_>) -> Vec<u8> {
        let rest = std::mem::take(&mut self.buf);
        let trimmed = trim_newlines(&rest);
        let mut out = Vec::new();
        if !trimmed.is_empty() {
            rewrite_event(trimmed, f, &mut out);
        }
        out
    }
}

fn trim_newlines(b: &[u8]) -> &[u8] {
    let mut end = b.len();
    while end > 0 && (b[end - 1] == b'\n' || b[end - 1] == b'\r') {
        end -= 1;
    }
    &b[..end]
}

/// The first event end: (index where the blank line starts, its length).
fn boundary(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i + 1 < buf.len() {
        if buf[i] == b'\n' && buf[i + 1] == b'\n' {
            return Some((i, 2));
        }
        if buf[i] == b'\n' && buf[i + 1] == b'\r' && buf.get(i + 2) == Some(&b'\n') {
            // `\r\n\r\n`: the event ends before the first `\r`.
            let start = if i > 0 && buf[i - 1] == b'\r' {
                i - 1
            } else {
                i
            };
            return Some((start, i + 3 - start));
        }
        i += 1;
    }
    None
}

fn rewrite_event(block: &[u8], f: &mut EventFn<'_>, out: &mut Vec<u8>) {
    let text = String::from_utf8_lossy(block);
    let mut data: Option<String> = None;
    let mut others = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(v) = line.strip_prefix("data") {
            if v.is_empty() || v.starts_with(':') {
                let v = v.strip_prefix(':').unwrap_or(v);
                let v = v.strip_prefix(' ').unwrap_or(v);
                match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(v);
                    }
                    None => data = Some(v.to_string()),
                }
                continue;
            }
        }
        others.push(line);
    }
    for l in others {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    if let Some(d) = data {
        let new = f(&d);
        for l in new.split('\n') {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(l.as_bytes());
            out.push(b'\n');
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upper(s: &str) -> String {
        s.to_uppercase()
    }

    fn run(chunks: &[&str]) -> (Vec<String>, String) {
        let mut r = SseRewriter::new(1 << 20);
        let mut f = upper;
        let mut per_chunk = Vec::new();
        for c in chunks {
            per_chunk.push(String::from_utf8(r.push(c.as_bytes(), &mut f)).unwrap());
        }
        let tail = String::from_utf8(r.finish(&mut f)).unwrap();
        (per_chunk, tail)
    }

    #[test]
    fn events_split_across_chunks() {
        let (out, tail) = run(&["data: {\"a\"", ":1}\n", "\ndata: b\n\n"]);
        assert_eq!(out, vec!["", "", "data: {\"A\":1}\n\ndata: B\n\n"]);
        assert_eq!(tail, "");
    }

    #[test]
    fn crlf_multiline_comments_and_fields() {
        let (out, _) = run(&[": keep-alive\r\n\r\nevent: x\r\nid: 7\r\ndata: a\r\ndata:b\r\n\r\n"]);
        assert_eq!(
            out[0],
            ": keep-alive\n\nevent: x\nid: 7\ndata: A\ndata: B\n\n"
        );
    }

    #[test]
    fn trailing_event_is_flushed() {
        let (out, tail) = run(&["data: x\n"]);
        assert_eq!(out[0], "");
        assert_eq!(tail, "data: X\n\n");
    }

    #[test]
    fn oversized_partial_passes_raw() {
        let mut r = SseRewriter::new(4);
        let mut f = upper;
        assert_eq!(r.push(b"data: abcdef", &mut f), b"data: abcdef");
    }
}
