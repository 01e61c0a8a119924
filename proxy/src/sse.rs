//! SSE framing apart from per-event translation: a synchronous bytes-in /
//! events-out state machine. [`SseFramer`] splits the stream into events at
//! blank lines (a line ending `\n`, `\r\n` or `\r` followed by another, even
//! when split across chunks); [`rewrite_event`] hands the joined `data:`
//! value of one event to a translator and renders the event again, keeping
//! comments, keep-alives and `event:`/`id:`/`retry:` lines. It knows
//! nothing of A2A.
//!
//! Framing is linear in the bytes fed: scanning resumes where it stopped,
//! and a finished event leaves the buffer without copying the rest. An
//! event larger than the limit is refused as soon as it is, and nothing of
//! it is held afterwards.

use std::borrow::Cow;

use bytes::{Bytes, BytesMut};

/// Events larger than this are translated on the blocking pool, so that a
/// big one does not hold an I/O worker (and every connection on it).
pub const OFFLOAD_EVENT_BYTES: usize = 64 * 1024;

/// Per-event translation: the event's `data` in, the new `data` written at
/// the end of the buffer given (what it holds before is the rendering so
/// far, to be left as it is), so that it needs no buffer of its own.
pub type EventFn<'a> = dyn FnMut(&str, &mut Vec<u8>) + 'a;

/// An event grew past the framer's limit: the stream cannot go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// The limit it went past, in bytes.
    pub limit: usize,
}

/// Where a framer puts the events it finds.
pub trait Events {
    /// An event (without the blank line that ends it); `one_line`: it is
    /// one line and its line end (`\n`, `\r` or `\r\n`), nothing else.
    fn add(&mut self, event: Bytes, one_line: bool);
}

impl Events for Vec<Bytes> {
    fn add(&mut self, event: Bytes, _: bool) {
        self.push(event);
    }
}

/// An event as the framer found it (see [`Events`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Framed {
    pub event: Bytes,
    pub one_line: bool,
}

impl Events for Vec<Framed> {
    fn add(&mut self, event: Bytes, one_line: bool) {
        self.push(Framed { event, one_line });
    }
}

/// Splits an SSE byte stream into events.
#[derive(Debug, Default)]
pub struct SseFramer {
    /// The current, unfinished event (events start at 0).
    buf: BytesMut,
    /// Where scanning resumes: no event ends before it.
    pos: usize,
    /// Where the line being scanned starts.
    line_start: usize,
    /// Lines of the current event ended so far.
    lines: u32,
    /// Largest event held.
    limit: usize,
    /// An event went past the limit: everything after is dropped.
    failed: bool,
    /// Bytes looked at, to show framing is linear.
    #[cfg(test)]
    scanned: usize,
}

impl SseFramer {
    pub fn new(limit: usize) -> SseFramer {
        SseFramer {
            limit,
            ..SseFramer::default()
        }
    }

    /// Feeds a chunk; the events it completes go to `events`, each without
    /// the blank line that ends it. An event over the limit ends framing:
    /// the events before it are in `events`, the buffer is freed, and every
    /// later call answers the same error.
    pub fn push(&mut self, chunk: &[u8], events: &mut Vec<Bytes>) -> Result<(), TooLarge> {
        if self.failed {
            return Err(self.too_large());
        }
        self.buf.extend_from_slice(chunk);
        self.scan(false, events)?;
        if self.buf.len() > self.limit {
            return Err(self.fail());
        }
        Ok(())
    }

    /// [`Self::push`] of a piece the framer may keep: the piece becomes its
    /// buffer (not copied) when it is the piece's only owner, and the
    /// events are parts of it. An event begun in an earlier piece takes
    /// this one's bytes a line at a time until it ends, so that only its
    /// end is copied, not the piece. Once every event of a piece has left,
    /// nothing of it is held.
    pub fn push_bytes(
        &mut self,
        mut piece: Bytes,
        events: &mut impl Events,
    ) -> Result<(), TooLarge> {
        if self.failed {
            return Err(self.too_large());
        }
        while !self.buf.is_empty() && !piece.is_empty() {
            let line = match line_end(&piece) {
                Some(i) if piece[i] == b'\r' && piece.get(i + 1) == Some(&b'\n') => i + 2,
                Some(i) => i + 1,
                None => piece.len(),
            };
            self.buf.extend_from_slice(&piece[..line]);
            bytes::Buf::advance(&mut piece, line);
            self.scan(false, events)?;
            if self.buf.len() > self.limit {
                return Err(self.fail());
            }
        }
        if !piece.is_empty() {
            match piece.try_into_mut() {
                Ok(b) => self.buf = b,
                Err(piece) => self.buf.extend_from_slice(&piece),
            }
            self.scan(false, events)?;
        }
        if self.buf.len() > self.limit {
            return Err(self.fail());
        }
        if self.buf.is_empty() {
            // The rest of the piece's memory goes with its events.
            self.buf = BytesMut::new();
        }
        Ok(())
    }

    /// End of stream: a trailing event without its blank line is completed.
    pub fn finish(&mut self, events: &mut Vec<Bytes>) -> Result<(), TooLarge> {
        self.finish_into(events)
    }

    /// [`Self::finish`] into any [`Events`].
    pub fn finish_into(&mut self, events: &mut impl Events) -> Result<(), TooLarge> {
        if self.failed {
            return Err(self.too_large());
        }
        self.scan(true, events)?;
        let rest = std::mem::take(&mut self.buf).freeze();
        self.pos = 0;
        self.line_start = 0;
        self.lines = 0;
        if !trim_newlines(&rest).is_empty() {
            events.add(rest, false);
        }
        Ok(())
    }

    fn too_large(&self) -> TooLarge {
        TooLarge { limit: self.limit }
    }

    fn fail(&mut self) -> TooLarge {
        self.failed = true;
        self.buf = BytesMut::new();
        self.pos = 0;
        self.line_start = 0;
        self.lines = 0;
        self.too_large()
    }

    /// Finds line ends from `pos` on; a blank line ends the event. A `\r`
    /// as the last byte may be the first half of `\r\n`: scanning stops
    /// there until more bytes come, unless `at_end`.
    fn scan(&mut self, at_end: bool, events: &mut impl Events) -> Result<(), TooLarge> {
        loop {
            let rest = &self.buf[self.pos..];
            let Some(rel) = line_end(rest) else {
                #[cfg(test)]
                {
                    self.scanned += rest.len();
                }
                self.pos = self.buf.len();
                return Ok(());
            };
            #[cfg(test)]
            {
                self.scanned += rel + 1;
            }
            let i = self.pos + rel;
            let len = match (self.buf[i], self.buf.get(i + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r', None) if !at_end => {
                    self.pos = i;
                    return Ok(());
                }
                _ => 1,
            };
            if i == self.line_start {
                // A blank line: the event is everything before it.
                let mut event = self.buf.split_to(i + len);
                event.truncate(i);
                self.pos = 0;
                self.line_start = 0;
                let one_line = self.lines == 1;
                self.lines = 0;
                if event.len() > self.limit {
                    return Err(self.fail());
                }
                events.add(event.freeze(), one_line);
            } else {
                self.pos = i + len;
                self.line_start = self.pos;
                self.lines += 1;
            }
        }
    }
}

/// Eight copies of byte `b`.
const fn splat(b: u8) -> u64 {
    (b as u64) * 0x0101_0101_0101_0101
}

/// The first of the eight bytes of `w` (the byte at the lowest address
/// first) equal to `x` or `y`; 8 when none is. The zero-byte test flags
/// its first hit exactly (a borrow only flags bytes after a true hit).
#[inline]
fn first_of(w: u64, x: u8, y: u8) -> usize {
    const LO: u64 = splat(0x01);
    const HI: u64 = splat(0x80);
    let a = w ^ splat(x);
    let b = w ^ splat(y);
    let za = a.wrapping_sub(LO) & !a;
    let zb = b.wrapping_sub(LO) & !b;
    ((za | zb) & HI).trailing_zeros() as usize / 8
}

/// Where in `b` the first byte `in_byte` takes is: eight bytes at a
/// time by `in_word` (the first such byte of a word, the byte at the
/// lowest address first; 8 when none is), then byte by byte in the last
/// few.
#[inline(always)]
fn scan(b: &[u8], in_word: impl Fn(u64) -> usize, in_byte: impl Fn(u8) -> bool) -> Option<usize> {
    let mut words = b.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        let i = in_word(u64::from_le_bytes(word));
        if i < 8 {
            return Some(at + i);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| in_byte(c))
        .map(|i| at + i)
}

/// Where the first `\n` or `\r` of `b` is: each word tested once for any
/// byte below 0x0E (the two are; JSON text has few others: escaped control
/// bytes and tabs), and looked at exactly only when one is.
fn line_end(b: &[u8]) -> Option<usize> {
    const LO: u64 = splat(0x0E);
    const HI: u64 = splat(0x80);
    scan(
        b,
        // No flag without a byte below 0x0E: a borrow only starts at one.
        |w| {
            if w.wrapping_sub(LO) & !w & HI != 0 {
                first_of(w, b'\n', b'\r')
            } else {
                8
            }
        },
        |c| c == b'\n' || c == b'\r',
    )
}

/// Where the first `\n` of `b` is: a translated event's data has none but
/// is scanned whole.
fn newline(b: &[u8]) -> Option<usize> {
    scan(b, |w| first_of(w, b'\n', b'\n'), |c| c == b'\n')
}

fn trim_newlines(b: &[u8]) -> &[u8] {
    let mut end = b.len();
    while end > 0 && (b[end - 1] == b'\n' || b[end - 1] == b'\r') {
        end -= 1;
    }
    &b[..end]
}

/// The lines of an event (ends `\n`, `\r\n` or `\r`), without their ends.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    // The hot loop: a `\n` is looked for with the library's word-wise search
    // (once per `\n`, so that `\r`-only lines stay linear), then a `\r`
    // before it (rare) the same way.
    let mut pos = Some(0);
    let mut nl: Option<Option<usize>> = None;
    std::iter::from_fn(move || {
        let start = pos?;
        let next_nl = match nl {
            Some(Some(n)) if n >= start => Some(n),
            Some(None) => None,
            _ => {
                let found = text[start..].find('\n').map(|i| start + i);
                nl = Some(found);
                found
            }
        };
        let end = next_nl.unwrap_or(text.len());
        match text[start..end].find('\r').map(|i| start + i).or(next_nl) {
            None => {
                pos = None;
                let t = &text[start..];
                (!t.is_empty()).then_some(t)
            }
            Some(i) => {
                let skip = if text[i..].starts_with("\r\n") { 2 } else { 1 };
                pos = Some(i + skip);
                Some(&text[start..i])
            }
        }
    })
}

/// The value of a `data` line (`data`, `data:` or `data: ` prefix), if the
/// line is one.
fn data_value(line: &str) -> Option<&str> {
    let v = line.strip_prefix("data")?;
    if v.is_empty() {
        return Some(v);
    }
    let v = v.strip_prefix(':')?;
    Some(v.strip_prefix(' ').unwrap_or(v))
}

/// The joined `data` of an event (lines joined with `\n`), if it has any;
/// borrowed from the event when it is one `data` line of valid UTF-8.
pub fn event_data(event: &[u8]) -> Option<Cow<'_, str>> {
    match std::str::from_utf8(event) {
        Ok(text) => data_of(text),
        Err(_) => data_of(&String::from_utf8_lossy(event)).map(|d| Cow::Owned(d.into_owned())),
    }
}

fn data_of(text: &str) -> Option<Cow<'_, str>> {
    split_event(text, |_| ())
}

/// One pass over an event's lines: the joined `data`, and every other line
/// handed to `other`.
fn split_event<'a>(text: &'a str, mut other: impl FnMut(&'a str)) -> Option<Cow<'a, str>> {
    let mut data: Option<Cow<'a, str>> = None;
    for line in lines(text) {
        let Some(v) = data_value(line) else {
            other(line);
            continue;
        };
        match &mut data {
            Some(d) => {
                let d = d.to_mut();
                d.push('\n');
                d.push_str(v);
            }
            None => data = Some(Cow::Borrowed(v)),
        }
    }
    data
}

/// Renders one event (as [`SseFramer`] returns it) with its `data` passed
/// through `f`, and the blank line that ends it. An event without `data`
/// keeps its other lines; an empty one (a bare blank line, a keep-alive to
/// some agents) stays a blank line.
pub fn rewrite_event(event: &[u8], f: &mut EventFn<'_>, out: &mut Vec<u8>) {
    // The usual event, one `data` line of valid UTF-8: its value found with
    // one search for a line end and checked once, no line iterator.
    if let Some(d) = single_data(event).and_then(|d| std::str::from_utf8(d).ok()) {
        translate_data(d, f, out);
        out.push(b'\n');
        return;
    }
    rewrite_lines(event, f, out);
}

/// [`rewrite_event`] of an event as the framer found it: one that is one
/// `data` line is taken as it is, without looking for its line end again.
pub fn rewrite_framed(framed: &Framed, f: &mut EventFn<'_>, out: &mut Vec<u8>) {
    let event = &framed.event[..];
    if framed.one_line {
        if let Some(v) = event.strip_prefix(b"data:") {
            let v = v.strip_prefix(b" ").unwrap_or(v);
            // The line's end, the event's last bytes.
            let v = v.strip_suffix(b"\n").unwrap_or(v);
            let v = v.strip_suffix(b"\r").unwrap_or(v);
            if let Ok(d) = std::str::from_utf8(v) {
                translate_data(d, f, out);
                out.push(b'\n');
                return;
            }
        }
    }
    rewrite_event(event, f, out);
}

/// [`rewrite_event`] line by line, for every event.
fn rewrite_lines(event: &[u8], f: &mut EventFn<'_>, out: &mut Vec<u8>) {
    // Checked the quick way first: the lossy copy is for invalid bytes only.
    let text = match std::str::from_utf8(event) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(event),
    };
    let data = split_event(&text, |line| {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    });
    if let Some(d) = data {
        translate_data(&d, f, out);
    }
    out.push(b'\n');
}

/// Writes `f`'s translation of `data` as [`write_data`] does, with `f`
/// writing straight after the first `data: `: one line (a translated
/// event has no newline) is done then; other values are rewritten line by
/// line.
fn translate_data(data: &str, f: &mut EventFn<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"data: ");
    let at = out.len();
    f(data, out);
    if newline(&out[at..]).is_none() {
        out.push(b'\n');
        return;
    }
    let written = out.split_off(at);
    out.truncate(at - b"data: ".len());
    write_data(&written, out);
}

/// The value of an event that is one `data:` line and nothing else (its
/// line end, if any, the last bytes): what [`split_event`] finds in it.
fn single_data(event: &[u8]) -> Option<&[u8]> {
    let v = event.strip_prefix(b"data:")?;
    let v = v.strip_prefix(b" ").unwrap_or(v);
    let Some(i) = line_end(v) else {
        return Some(v);
    };
    matches!(&v[i..], b"\n" | b"\r" | b"\r\n").then_some(&v[..i])
}

/// Writes `data` as `data:` lines, one per line of it.
fn write_data(data: &[u8], out: &mut Vec<u8>) {
    out.reserve(data.len() + 8);
    let mut rest = data;
    loop {
        out.extend_from_slice(b"data: ");
        match newline(rest) {
            Some(i) => {
                out.extend_from_slice(&rest[..=i]);
                rest = &rest[i + 1..];
            }
            None => {
                out.extend_from_slice(rest);
                out.push(b'\n');
                break;
            }
        }
    }
}

/// A relayed event as one SSE frame of a v1.0 HTTP client: in a JSON-RPC
/// envelope with the request's `id` (`Some`), or bare (REST, `None`).
pub fn sse_frame(event: &[u8], jsonrpc_id: Option<&serde_json::Value>) -> Bytes {
    let mut out = BytesMut::with_capacity(event.len() + 64);
    out.extend_from_slice(b"data: ");
    match jsonrpc_id {
        Some(id) => {
            let id = serde_json::to_string(id).unwrap_or_else(|_| "null".into());
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            out.extend_from_slice(id.as_bytes());
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(event);
            out.extend_from_slice(b"}");
        }
        None => out.extend_from_slice(event),
    }
    out.extend_from_slice(b"\n\n");
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upper(s: &str, out: &mut Vec<u8>) {
        out.extend_from_slice(s.to_uppercase().as_bytes());
    }

    /// Every chunk's rendered output, and the tail at the end.
    fn run(limit: usize, chunks: &[&[u8]]) -> (Vec<String>, Result<String, TooLarge>) {
        let mut framer = SseFramer::new(limit);
        let mut f = upper;
        let mut per_chunk = Vec::new();
        let render = |events: &[Bytes], f: &mut EventFn<'_>| {
            let mut out = Vec::new();
            for e in events {
                rewrite_event(e, f, &mut out);
            }
            String::from_utf8(out).unwrap()
        };
        for c in chunks {
            let mut events = Vec::new();
            let r = framer.push(c, &mut events);
            per_chunk.push(render(&events, &mut f));
            if let Err(e) = r {
                return (per_chunk, Err(e));
            }
        }
        let mut events = Vec::new();
        let tail = framer.finish(&mut events).map(|()| render(&events, &mut f));
        (per_chunk, tail)
    }

    #[test]
    fn events_split_across_chunks() {
        let (out, tail) = run(1 << 20, &[b"data: {\"a\"", b":1}\n", b"\ndata: b\n\n"]);
        assert_eq!(out, vec!["", "", "data: {\"A\":1}\n\ndata: B\n\n"]);
        assert_eq!(tail.unwrap(), "");
    }

    #[test]
    fn long_data_splits_at_every_newline() {
        let data = format!(
            "{}\n{}\n{}\n",
            "a".repeat(20),
            "b".repeat(16),
            "c".repeat(3)
        );
        let event = format!("data: {}", data.replace('\n', "\ndata: "));
        let mut out = Vec::new();
        rewrite_event(
            event.trim_end_matches("data: ").trim_end().as_bytes(),
            &mut upper,
            &mut out,
        );
        let want = format!(
            "data: {}\ndata: {}\ndata: {}\n\n",
            "A".repeat(20),
            "B".repeat(16),
            "C".repeat(3)
        );
        assert_eq!(String::from_utf8(out).unwrap(), want);
        assert_eq!(newline(b"0123456789abcdef0123\n"), Some(20));
        assert_eq!(newline(&[b'x'; 40]), None);
    }

    #[test]
    fn crlf_multiline_comments_and_fields() {
        let (out, _) = run(
            1 << 20,
            &[b": keep-alive\r\n\r\nevent: x\r\nid: 7\r\ndata: a\r\ndata:b\r\n\r\n"],
        );
        assert_eq!(
            out[0],
            ": keep-alive\n\nevent: x\nid: 7\ndata: A\ndata: B\n\n"
        );
    }

    #[test]
    fn blank_lines_stay() {
        let (out, tail) = run(1 << 20, &[b"\n\r\ndata: a\n\n\r"]);
        assert_eq!(out[0], "\n\ndata: A\n\n");
        // The last `\r` may start a `\r\n`: a blank line once the stream ends.
        assert_eq!(tail.unwrap(), "\n");
    }

    #[test]
    fn trailing_event_is_flushed() {
        let (out, tail) = run(1 << 20, &[b"data: x\n"]);
        assert_eq!(out[0], "");
        assert_eq!(tail.unwrap(), "data: X\n\n");
    }

    /// Two events ended by each kind of blank line, the stream cut in two
    /// at every position: the same events come out, in one piece each.
    #[test]
    fn boundaries_split_at_every_position() {
        let ends = [
            ("\n", "\n"),
            ("\r\n", "\r\n"),
            ("\r", "\r"),
            ("\r\n", "\n"),
            ("\n", "\r\n"),
            ("\r", "\r\n"),
        ];
        for (nl, blank) in ends {
            let sep = format!("{nl}{blank}");
            let stream = format!("data: a{nl}id: 1{sep}data: b{sep}: c{sep}");
            let expected = "id: 1\ndata: A\n\ndata: B\n\n: c\n\n";
            let (out, tail) = run(1 << 20, &[stream.as_bytes()]);
            assert_eq!(out.concat() + &tail.unwrap(), expected, "{sep:?}");
            for cut in 0..=stream.len() {
                let (a, b) = stream.as_bytes().split_at(cut);
                let (out, tail) = run(1 << 20, &[a, b]);
                assert_eq!(out.concat() + &tail.unwrap(), expected, "{sep:?} at {cut}");
            }
            // One byte at a time.
            let bytes: Vec<&[u8]> = stream.as_bytes().chunks(1).collect();
            let (out, tail) = run(1 << 20, &bytes);
            assert_eq!(out.concat() + &tail.unwrap(), expected, "{sep:?} bytewise");
        }
    }

    /// A 12 MiB event fed 4 KiB at a time: every byte is looked at a
    /// bounded number of times (the old framer looked at the whole buffer
    /// again on every chunk: about 18 000 times as many).
    #[test]
    fn framing_is_linear() {
        let mut framer = SseFramer::new(16 << 20);
        let mut stream = b"data: {\"text\":\"".to_vec();
        stream.resize(stream.len() + (12 << 20), b'x');
        stream.extend_from_slice(b"\"}\n\ndata: 2\n\n");
        let mut events = Vec::new();
        for c in stream.chunks(4096) {
            framer.push(c, &mut events).unwrap();
        }
        framer.finish(&mut events).unwrap();
        assert_eq!(events.len(), 2);
        // The event keeps its last line's end, not the blank line.
        assert_eq!(events[0].len(), (12 << 20) + 18);
        assert!(framer.scanned <= 2 * stream.len(), "{}", framer.scanned);
        let data = event_data(&events[0]).unwrap();
        assert!(matches!(data, Cow::Borrowed(_)), "the data was copied");
    }

    /// An event the framer marks as one line is rendered from what it
    /// marked as every event is, and only one-line events are marked; the
    /// stream cut at every position.
    #[test]
    fn one_line_events_render_as_every_event() {
        let values: [&str; 6] = ["", "a", "{\"x\":1}", "é", "a\u{0}b", " b"];
        let starts = [
            "data: ",
            "data:",
            "data",
            "datax: ",
            ": c\ndata: ",
            "id: 1\ndata: ",
        ];
        let ends = ["\n", "\r", "\r\n"];
        let mut stream = String::new();
        for start in starts {
            for value in values {
                // A bare blank line: an empty event, no line.
                stream += "\n";
                for end in ends {
                    for blank in ends {
                        stream += &format!("{start}{value}{end}{blank}");
                    }
                }
            }
        }
        // One line: a line end as its last bytes, and none before.
        let one_line = |e: &[u8]| {
            let t = e
                .strip_suffix(b"\r\n")
                .or_else(|| e.strip_suffix(b"\n"))
                .or_else(|| e.strip_suffix(b"\r"));
            t.is_some_and(|t| !t.iter().any(|&c| c == b'\n' || c == b'\r'))
        };
        let stream = stream.as_bytes();
        for cut in (0..=stream.len()).step_by(7) {
            let (a, b) = stream.split_at(cut);
            let mut framer = SseFramer::new(1 << 20);
            let mut events: Vec<Framed> = Vec::new();
            framer
                .push_bytes(Bytes::copy_from_slice(a), &mut events)
                .unwrap();
            framer
                .push_bytes(Bytes::copy_from_slice(b), &mut events)
                .unwrap();
            framer.finish_into(&mut events).unwrap();
            let marked = events.iter().filter(|e| e.one_line).count();
            assert!(marked > 100, "{marked}");
            for e in &events {
                assert_eq!(e.one_line, one_line(&e.event), "{:?}", e.event);
            }
            for e in &events {
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                rewrite_framed(e, &mut upper, &mut fast);
                rewrite_lines(&e.event, &mut upper, &mut slow);
                assert_eq!(
                    String::from_utf8_lossy(&fast),
                    String::from_utf8_lossy(&slow),
                    "{:?}",
                    String::from_utf8_lossy(&e.event)
                );
            }
        }
    }

    /// Pieces handed over whole frame the same events as pieces copied in,
    /// cut anywhere; a piece the framer owns alone is not copied, and once
    /// its events are out the framer holds none of its memory.
    #[test]
    fn owned_pieces_frame_alike_and_are_not_held() {
        let stream: &[u8] = b"data: a\r\nid: 1\n\ndata: bb\r\r: c\n\ndata: d\n\n";
        for cut in 0..=stream.len() {
            let (a, b) = stream.split_at(cut);
            let (mut copied, mut owned) = (SseFramer::new(1 << 20), SseFramer::new(1 << 20));
            let (mut want, mut got): (Vec<Bytes>, Vec<Bytes>) = (Vec::new(), Vec::new());
            for piece in [a, b] {
                copied.push(piece, &mut want).unwrap();
                owned
                    .push_bytes(Bytes::copy_from_slice(piece), &mut got)
                    .unwrap();
                if owned.buf.is_empty() {
                    assert_eq!(owned.buf.capacity(), 0, "held at {cut}");
                }
            }
            copied.finish(&mut want).unwrap();
            owned.finish(&mut got).unwrap();
            assert_eq!(got, want, "cut at {cut}");
        }
        let piece = Bytes::from(b"data: 1\n\ndata: 2\n\n".to_vec());
        let range = piece.as_ptr_range();
        let mut framer = SseFramer::new(1 << 20);
        let mut events: Vec<Bytes> = Vec::new();
        framer.push_bytes(piece, &mut events).unwrap();
        assert_eq!(events, [&b"data: 1\n"[..], b"data: 2\n"]);
        assert!(events.iter().all(|e| range.contains(&e.as_ptr())), "copied");
        assert_eq!(framer.buf.capacity(), 0);
        // An event begun in the piece before takes this one's bytes up to
        // its end; the events after are parts of this piece, not copies.
        let mut framer = SseFramer::new(1 << 20);
        let mut events: Vec<Bytes> = Vec::new();
        framer
            .push_bytes(Bytes::from(b"data: 1\n\nda".to_vec()), &mut events)
            .unwrap();
        let second = Bytes::from(b"ta: 2\r\n\r\ndata: 3\n\ndata: 4\n\n".to_vec());
        let range = second.as_ptr_range();
        framer.push_bytes(second, &mut events).unwrap();
        assert_eq!(
            events,
            [
                &b"data: 1\n"[..],
                b"data: 2\r\n",
                b"data: 3\n",
                b"data: 4\n"
            ]
        );
        assert!(!range.contains(&events[1].as_ptr()));
        assert!(
            events[2..].iter().all(|e| range.contains(&e.as_ptr())),
            "copied"
        );
        assert_eq!(framer.buf.capacity(), 0);
        // A piece shared with another owner is copied, not taken.
        let shared = Bytes::from(b"data: 3\n\n".to_vec());
        let other = shared.clone();
        framer.push_bytes(shared, &mut events).unwrap();
        assert!(!other.as_ptr_range().contains(&events[2].as_ptr()));
    }

    #[test]
    fn oversized_event_is_refused_and_dropped() {
        // A complete event before it still comes out.
        let (out, tail) = run(8, &[b"data: a\n\ndata: abcdef", b"more"]);
        assert_eq!(out, vec!["data: A\n\n"]);
        assert_eq!(tail, Err(TooLarge { limit: 8 }));
        // Complete in one chunk, still too large.
        let (out, tail) = run(8, &[b"data: abcdef\n\ndata: b\n\n"]);
        assert_eq!(out, vec![""]);
        assert_eq!(tail, Err(TooLarge { limit: 8 }));
        // Nothing is held after, and later chunks are refused.
        let mut framer = SseFramer::new(8);
        let mut events = Vec::new();
        assert!(framer.push(b"data: abcdef", &mut events).is_err());
        assert_eq!(framer.buf.capacity(), 0);
        assert!(framer.push(b"\n\n", &mut events).is_err());
        assert!(framer.finish(&mut events).is_err());
        assert!(events.is_empty());
    }

    /// The one-line shortcut renders every event as the line-by-line path
    /// does: `data` spellings, values with line ends, other lines, invalid
    /// UTF-8, every kind of last line end.
    #[test]
    fn single_data_line_as_every_line() {
        let starts: [&[u8]; 8] = [
            b"data: ",
            b"data:",
            b"data:  ",
            b"data",
            b"datax: ",
            b"Data: ",
            b": c\ndata: ",
            b"id: 1\ndata:",
        ];
        let values: [&[u8]; 9] = [
            b"",
            b"a",
            b"{\"x\":1}",
            "é".as_bytes(),
            b"\xff",
            b"a\rb",
            b"a\nb",
            b"a\r\nb",
            b"a\ndata: b",
        ];
        let ends: [&[u8]; 7] = [b"", b"\n", b"\r", b"\r\n", b"\n\r", b"\n: c", b"\r\n\r"];
        let mut taken = 0;
        for start in starts {
            for value in values {
                for end in ends {
                    let event = [start, value, end].concat();
                    let (mut fast, mut slow) = (Vec::new(), Vec::new());
                    rewrite_event(&event, &mut upper, &mut fast);
                    rewrite_lines(&event, &mut upper, &mut slow);
                    assert_eq!(
                        String::from_utf8_lossy(&fast),
                        String::from_utf8_lossy(&slow),
                        "{:?}",
                        String::from_utf8_lossy(&event)
                    );
                    taken += usize::from(single_data(&event).is_some());
                }
            }
        }
        assert!(taken > 50, "{taken}");
    }

    /// The translation written into the output: what was there before
    /// stays, one line or many come out as `write_data` writes them.
    #[test]
    fn data_written_in_place_as_written_apart() {
        for value in ["", "a", "{\"x\":1}", "a\nb", "\n", "a\n", "\nb\n\n", "é\né"] {
            let translated = value.repeat(3);
            let mut want = b"earlier\n\n".to_vec();
            write_data(translated.as_bytes(), &mut want);
            want.push(b'\n');
            let mut out = b"earlier\n\n".to_vec();
            let mut f = |d: &str, out: &mut Vec<u8>| {
                assert_eq!(d, "x");
                out.extend_from_slice(translated.as_bytes());
            };
            rewrite_event(b"data: x", &mut f, &mut out);
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&want)
            );
            let mut out = b"earlier\n\n".to_vec();
            rewrite_event(b"id: 1\ndata: x", &mut f, &mut out);
            want.splice(9..9, b"id: 1\n".iter().copied());
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&want)
            );
        }
    }

    #[test]
    fn data_lines_without_space_or_value() {
        let mut out = Vec::new();
        rewrite_event(b"data\ndata:x\r\ndata: y", &mut upper, &mut out);
        assert_eq!(out, b"data: \ndata: X\ndata: Y\n\n");
        assert_eq!(event_data(b"event: x").as_deref(), None);
        assert_eq!(event_data(b"datax: 1").as_deref(), None);
    }

    /// The lines of every mix of `\n`, `\r\n` and `\r` ends, as a plain
    /// byte-by-byte split finds them.
    #[test]
    fn lines_split_at_every_kind_of_end() {
        fn reference(text: &str) -> Vec<&str> {
            let (mut out, mut rest) = (Vec::new(), text);
            loop {
                match rest.bytes().position(|b| b == b'\n' || b == b'\r') {
                    None => {
                        if !rest.is_empty() {
                            out.push(rest);
                        }
                        return out;
                    }
                    Some(i) => {
                        out.push(&rest[..i]);
                        let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                        rest = &rest[i + skip..];
                    }
                }
            }
        }
        let parts = ["a", "\n", "\r", "\r\n", "bé", ""];
        for x in parts {
            for y in parts {
                for z in parts {
                    for w in parts {
                        let text = format!("{x}{y}{z}{w}{x}");
                        let got: Vec<&str> = lines(&text).collect();
                        assert_eq!(got, reference(&text), "{text:?}");
                    }
                }
            }
        }
        let long = "x\r".repeat(1000) + "y\n\nz";
        assert_eq!(lines(&long).collect::<Vec<_>>(), reference(&long));
    }

    #[test]
    fn line_end_finds_the_first_end_in_every_block_position() {
        // Fillers next to the two ends in value (a borrow or a flipped
        // bit must not pass for one).
        for fill in [b'x', 0x09, 0x0b, 0x0c, 0x0e, 0x00, 0x8a, 0x8d, 0xff] {
            for len in 0..40 {
                for at in 0..=len {
                    for end in [b'\n', b'\r'] {
                        let mut b = vec![fill; len];
                        if at < len {
                            b[at] = end;
                            if at + 1 < len {
                                b[at + 1] = b'\n';
                            }
                        }
                        let want = b.iter().position(|&c| c == b'\n' || c == b'\r');
                        assert_eq!(line_end(&b), want, "{len} {at}");
                        let want = b.iter().position(|&c| c == b'\n');
                        assert_eq!(newline(&b), want, "{len} {at}");
                    }
                }
            }
        }
    }
}
