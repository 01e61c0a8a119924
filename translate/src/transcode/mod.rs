//! Streaming one-pass transcoder for the hot JSON-RPC messages: the input
//! bytes are read once, token by token, and the other version's bytes are
//! written as they are read (member names, enum strings and part shapes
//! rewritten; metadata, data and unknown members copied as written). No
//! document tree, no typed values: a member is written where it is read,
//! and an object whose members come in another order than the output's is
//! put in order by one copy of its own output.
//!
//! The typed path ([`crate::onepass`], [`crate::jsonrpc`],
//! [`crate::document`]) is the reference: this pass answers only inputs it
//! renders exactly as the typed path does, and `None` for everything else
//! (repeated members, escapes other than the ones serde_json writes,
//! numbers serde_json would spell differently, `null` where a typed member
//! is, proto-style member names, error answers, anything invalid), so the
//! caller then takes the typed path. `translate/tests/onepass_same_bytes.rs`
//! and the `transcode` fuzz target check the equality.

mod lex;

use std::borrow::Cow;

use chrono::{DateTime, FixedOffset, Utc};
use lex::{canonical_base64, Lex, MAX_DEPTH};

use crate::method::Method;
use crate::Version;

/// Members an object may have before this pass gives up on it.
const MAX_PIECES: usize = 24;
/// Unknown members an object may have before this pass gives up on it.
const MAX_EXTRAS: usize = 16;

/// One member written to the output: its rank in the output order and its
/// bytes (`"name":value,`) in `out`.
#[derive(Clone, Copy, Default)]
struct Piece {
    rank: u16,
    start: u32,
    end: u32,
}

/// An output object being written.
struct Obj<'a> {
    start: usize,
    pieces: [Piece; MAX_PIECES],
    n: usize,
    sorted: bool,
    last: u16,
    /// Unknown members' names seen, for the repeat check.
    extras: [&'a [u8]; MAX_EXTRAS],
    en: usize,
    /// Known members seen.
    seen: u64,
}

/// Rank of unknown members: after every known one, in input order.
const EXTRA: u16 = 1000;

/// The transcoder: the input being read and the output being written.
struct Tx<'a> {
    lx: Lex<'a>,
    /// The input (`lx.b`) as the text it was checked to be.
    text: &'a str,
    out: Vec<u8>,
    tmp: Vec<u8>,
    /// What the v1.0 output says about its task, noted while it is written.
    seen: Seen,
}

/// The task members of a v1.0 output, noted as they are written: spans of
/// the input (string values with their quotes).
#[derive(Clone, Copy, Default)]
struct Seen {
    /// 0: neither, 1: a task, 2: a status update.
    what: u8,
    id: Option<(usize, usize)>,
    context: Option<(usize, usize)>,
    state: Option<&'static str>,
    timestamp: Option<DateTime<Utc>>,
}

/// What a v1.0 answer or stream event says about its task, as a reader of
/// the v1.0 bytes (the proxy's ListTasks index) finds it there: learnt
/// while the answer is translated, so it need not be read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskFacts<'a> {
    /// Neither a task nor a status update (a message, an artifact update).
    Nothing,
    /// A task (the result, or its `task` member).
    Task {
        id: Cow<'a, str>,
        /// `None`: no `contextId` member (an empty one is not written).
        context: Option<Cow<'a, str>>,
        status: StatusFacts,
    },
    /// A status update (the result's `statusUpdate` member).
    Status {
        task_id: Cow<'a, str>,
        status: StatusFacts,
    },
}

/// A v1.0 task status's state and timestamp, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusFacts {
    /// The v1.0 state name (`TASK_STATE_…`).
    pub state: &'static str,
    /// The timestamp as RFC 3339 reads it back (`None`: no timestamp, or
    /// one RFC 3339 cannot hold, a year outside 0000-9999).
    pub timestamp: Option<DateTime<FixedOffset>>,
}

enum Next {
    /// A member: name span (without quotes) and value start.
    Member(usize, usize, usize),
    /// The object closed; the position after `}`.
    End(usize),
}

impl<'a> Tx<'a> {
    fn new(input: &'a str) -> Self {
        Tx::new_into(
            input,
            Vec::with_capacity(input.len() + input.len() / 8 + 64),
        )
    }

    /// Writing at the end of `out`.
    fn new_into(input: &'a str, out: Vec<u8>) -> Self {
        Tx {
            lx: Lex::new(input.as_bytes()),
            text: input,
            out,
            tmp: Vec::new(),
            seen: Seen::default(),
        }
    }

    fn b(&self) -> &'a [u8] {
        self.lx.b
    }

    // ------------------------------------------------------------ objects --

    /// Opens the object at `i`: `{` written, position after `{`.
    fn open(&mut self, i: usize, depth: u32) -> Option<(Obj<'a>, usize)> {
        if depth >= MAX_DEPTH || self.lx.at(i)? != b'{' {
            return None;
        }
        self.out.push(b'{');
        let o = Obj {
            start: self.out.len(),
            pieces: [Piece::default(); MAX_PIECES],
            n: 0,
            sorted: true,
            last: 0,
            extras: [&[]; MAX_EXTRAS],
            en: 0,
            seen: 0,
        };
        Some((o, i + 1))
    }

    /// The next member of an object (`first`: right after `{`).
    #[inline(always)]
    fn next(&mut self, i: usize, first: bool) -> Option<Next> {
        let mut i = self.lx.skip_ws(i);
        match self.lx.at(i)? {
            b'}' => return Some(Next::End(i + 1)),
            b',' if !first => i = self.lx.skip_ws(i + 1),
            b'"' if first => {}
            _ => return None,
        }
        let ke = self.lx.string_end(i)?;
        let j = self.lx.skip_ws(ke);
        if self.lx.at(j)? != b':' {
            return None;
        }
        Some(Next::Member(i + 1, ke - 1, self.lx.skip_ws(j + 1)))
    }

    /// Marks known member `bit` seen; a repeat fails.
    fn mark(o: &mut Obj<'_>, bit: u32) -> Option<()> {
        if o.seen & (1 << bit) != 0 {
            return None;
        }
        o.seen |= 1 << bit;
        Some(())
    }

    /// Writes `"name":` and returns where the piece starts.
    #[inline(always)]
    fn begin(&mut self, name: &[u8]) -> usize {
        let s = self.out.len();
        self.out.push(b'"');
        self.out.extend_from_slice(name);
        self.out.extend_from_slice(b"\":");
        s
    }

    /// Ends the piece that started at `s`.
    #[inline(always)]
    fn end(&mut self, o: &mut Obj<'_>, rank: u16, s: usize) -> Option<()> {
        self.out.push(b',');
        if o.n == MAX_PIECES {
            return None;
        }
        o.pieces[o.n] = Piece {
            rank,
            start: (s - o.start) as u32,
            end: (self.out.len() - o.start) as u32,
        };
        if rank < o.last {
            o.sorted = false;
        }
        o.last = rank;
        o.n += 1;
        Some(())
    }

    /// A whole literal piece (`"name":value,`).
    #[inline(always)]
    fn lit(&mut self, o: &mut Obj<'_>, rank: u16, bytes: &[u8]) -> Option<()> {
        let s = self.out.len();
        self.out
            .extend_from_slice(bytes.strip_suffix(b",").unwrap_or(bytes));
        self.end(o, rank, s)
    }

    /// Closes the object: puts its pieces in rank order.
    #[inline(always)]
    fn close(&mut self, o: &Obj<'_>) {
        if o.n == 0 {
            self.out.push(b'}');
            return;
        }
        if !o.sorted {
            let mut order: Vec<Piece> = o.pieces[..o.n].to_vec();
            order.sort_by_key(|p| p.rank);
            self.tmp.clear();
            self.tmp.extend_from_slice(&self.out[o.start..]);
            self.out.truncate(o.start);
            for p in order {
                self.out
                    .extend_from_slice(&self.tmp[p.start as usize..p.end as usize]);
            }
        }
        if let Some(last) = self.out.last_mut() {
            *last = b'}';
        }
    }

    /// An unknown member `name` with its value at `v`: checked, and copied
    /// unless its name is in `drop`.
    fn extra(
        &mut self,
        o: &mut Obj<'a>,
        name: &'a [u8],
        v: usize,
        drop: &[&[u8]],
        depth: u32,
    ) -> Option<usize> {
        if o.extras[..o.en].contains(&name) || o.en == MAX_EXTRAS {
            return None;
        }
        o.extras[o.en] = name;
        o.en += 1;
        if drop.contains(&name) {
            return self.lx.skip(v, depth + 1);
        }
        let s = self.begin(name);
        let e = self.lx.copy_value(&mut self.out, v, depth + 1)?;
        self.end(o, EXTRA + o.en as u16, s)?;
        Some(e)
    }

    // ------------------------------------------------------------- values --

    /// A string member copied as written.
    #[inline(always)]
    fn str_piece(&mut self, o: &mut Obj<'_>, rank: u16, name: &[u8], v: usize) -> Option<usize> {
        let e = self.lx.string_end(v)?;
        let s = self.begin(name);
        self.out.extend_from_slice(&self.b()[v..e]);
        self.end(o, rank, s)?;
        Some(e)
    }

    /// A member whose value must start with `first` (`{`, `[`, `t`/`f` for
    /// booleans), checked and copied.
    fn copy_piece(
        &mut self,
        o: &mut Obj<'_>,
        rank: u16,
        name: &[u8],
        v: usize,
        kind: Want,
        depth: u32,
    ) -> Option<usize> {
        let c = self.lx.at(v)?;
        let ok = match kind {
            Want::Object => c == b'{',
            Want::Bool => c == b't' || c == b'f',
            Want::Strings => c == b'[',
        };
        if !ok {
            return None;
        }
        if let Want::Strings = kind {
            return self.strings_piece(o, rank, name, v);
        }
        let s = self.begin(name);
        let e = self.lx.copy_value(&mut self.out, v, depth + 1)?;
        self.end(o, rank, s)?;
        Some(e)
    }

    /// An array of strings, copied.
    fn strings_piece(
        &mut self,
        o: &mut Obj<'_>,
        rank: u16,
        name: &[u8],
        v: usize,
    ) -> Option<usize> {
        let s = self.begin(name);
        self.out.push(b'[');
        let mut j = self.lx.skip_ws(v + 1);
        if self.lx.at(j)? == b']' {
            self.out.push(b']');
            self.end(o, rank, s)?;
            return Some(j + 1);
        }
        loop {
            let e = self.lx.string_end(j)?;
            self.out.extend_from_slice(&self.b()[j..e]);
            j = self.lx.skip_ws(e);
            match self.lx.at(j)? {
                b',' => {
                    self.out.push(b',');
                    j = self.lx.skip_ws(j + 1);
                }
                b']' => {
                    self.out.push(b']');
                    self.end(o, rank, s)?;
                    return Some(j + 1);
                }
                _ => return None,
            }
        }
    }

    /// A `kind` member of v0.3 input: must be the string `want`.
    #[inline(always)]
    fn kind_is(&mut self, v: usize, want: &[u8]) -> Option<usize> {
        let e = self.lx.string_end(v)?;
        (&self.b()[v + 1..e - 1] == want).then_some(e)
    }

    /// An array whose elements `f` translates.
    fn array(
        &mut self,
        v: usize,
        depth: u32,
        f: fn(&mut Self, usize, u32) -> Option<usize>,
    ) -> Option<usize> {
        if depth >= MAX_DEPTH || self.lx.at(v)? != b'[' {
            return None;
        }
        self.out.push(b'[');
        let mut j = self.lx.skip_ws(v + 1);
        if self.lx.at(j)? == b']' {
            self.out.push(b']');
            return Some(j + 1);
        }
        loop {
            j = f(self, j, depth + 1)?;
            j = self.lx.skip_ws(j);
            match self.lx.at(j)? {
                b',' => {
                    self.out.push(b',');
                    j = self.lx.skip_ws(j + 1);
                }
                b']' => {
                    self.out.push(b']');
                    return Some(j + 1);
                }
                _ => return None,
            }
        }
    }

    /// A member whose value `f` translates.
    #[inline(always)]
    fn sub_piece(
        &mut self,
        o: &mut Obj<'_>,
        rank: u16,
        name: &[u8],
        v: usize,
        depth: u32,
        f: fn(&mut Self, usize, u32) -> Option<usize>,
    ) -> Option<usize> {
        let s = self.begin(name);
        let e = f(self, v, depth + 1)?;
        self.end(o, rank, s)?;
        Some(e)
    }

    /// An array member whose elements `f` translates.
    #[inline(always)]
    fn array_piece(
        &mut self,
        o: &mut Obj<'_>,
        rank: u16,
        name: &[u8],
        v: usize,
        depth: u32,
        f: fn(&mut Self, usize, u32) -> Option<usize>,
    ) -> Option<usize> {
        let s = self.begin(name);
        let e = self.array(v, depth + 1, f)?;
        self.end(o, rank, s)?;
        Some(e)
    }

    /// The string content (no escapes) of the string at `v`, and its end.
    #[inline(always)]
    fn plain_str(&self, v: usize) -> Option<(&'a str, usize)> {
        let e = self.lx.plain_string_end(v)?;
        // Between two quotes: on character boundaries.
        Some((self.text.get(v + 1..e - 1)?, e))
    }
}

#[derive(Clone, Copy)]
enum Want {
    Object,
    Bool,
    Strings,
}

mod card;
mod documents;
mod entities;

pub use card::card;
pub use documents::document;

/// Translates the JSON-RPC request envelope `input`, whose method is `name`
/// (in the other version), to `to`. `None`: not taken here.
pub fn request(to: Version, name: &str, input: &[u8]) -> Option<Vec<u8>> {
    let m = Method::resolve(name, to.other()).ok()?;
    let to_name = m.name(to)?;
    if !matches!(m, Method::SendMessage | Method::SendStreamingMessage) {
        return None;
    }
    let mut tx = Tx::new(std::str::from_utf8(input).ok()?);
    let params = match to {
        Version::V10 => Tx::send_to_v10,
        Version::V03 => Tx::send_to_v03,
    };
    let e = tx.envelope(0, Some(&[(name, to_name)]), params)?;
    tx.finish(e)
}

/// Translates a JSON-RPC response envelope (or one stream event envelope)
/// answering `method` to `to`. `None`: not taken here.
pub fn response(to: Version, method: Method, input: &[u8]) -> Option<Vec<u8>> {
    response_str(to, method, std::str::from_utf8(input).ok()?)
}

/// [`response`] of input already known to be UTF-8.
pub fn response_str(to: Version, method: Method, input: &str) -> Option<Vec<u8>> {
    translate_response(to, method, input).map(|(out, _)| out)
}

/// [`response_str`] to v1.0, with what the v1.0 answer says about its task
/// (the same as reading the answer's `result` back, see [`TaskFacts`]).
pub fn response_to_v10_with_facts(method: Method, input: &str) -> Option<(Vec<u8>, TaskFacts<'_>)> {
    let (out, seen) = translate_response(Version::V10, method, input)?;
    let facts = seen.facts(input)?;
    Some((out, facts))
}

/// [`response_str`] written at the end of `out` (what it holds is kept):
/// no buffer of its own. `None`: not taken here, and `out` as it was.
pub fn response_str_into(
    to: Version,
    method: Method,
    input: &str,
    out: &mut Vec<u8>,
) -> Option<()> {
    translate_response_into(to, method, input, out).map(|_| ())
}

/// [`response_to_v10_with_facts`] written at the end of `out` (what it
/// holds is kept). `None`: not taken here, and `out` as it was.
pub fn response_to_v10_with_facts_into<'i>(
    method: Method,
    input: &'i str,
    out: &mut Vec<u8>,
) -> Option<TaskFacts<'i>> {
    let start = out.len();
    let seen = translate_response_into(Version::V10, method, input, out)?;
    let facts = seen.facts(input);
    if facts.is_none() {
        out.truncate(start);
    }
    facts
}

fn translate_response(to: Version, method: Method, input: &str) -> Option<(Vec<u8>, Seen)> {
    let mut out = Vec::new();
    let seen = translate_response_into(to, method, input, &mut out)?;
    Some((out, seen))
}

/// The transcoder writing at the end of `out`: its objects' pieces are
/// counted from where each starts, so what `out` already holds is left
/// alone; on `None`, what was written is cut off again.
fn translate_response_into(
    to: Version,
    method: Method,
    input: &str,
    out: &mut Vec<u8>,
) -> Option<Seen> {
    let start = out.len();
    out.reserve(input.len() + input.len() / 8 + 64);
    let mut tx = Tx::new_into(input, std::mem::take(out));
    let done = tx.response(to, method);
    *out = std::mem::take(&mut tx.out);
    if done.is_none() {
        out.truncate(start);
    }
    done
}

impl Tx<'_> {
    /// The response envelope to `to`, all of the input read; what the
    /// v1.0 output said about its task.
    fn response(&mut self, to: Version, method: Method) -> Option<Seen> {
        let result = documents::result(to, method)?;
        if to == Version::V10 && matches!(method, Method::GetTask | Method::CancelTask) {
            self.seen.what = 1;
        }
        let e = self.envelope(0, None, result)?;
        let e = self.lx.skip_ws(e);
        (e == self.b().len()).then_some(self.seen)
    }
}

impl Seen {
    /// The facts of the input `input` these spans are in; `None` when a
    /// task member was not seen (the output would not have been written).
    fn facts(self, input: &str) -> Option<TaskFacts<'_>> {
        let text = |(s, e): (usize, usize)| -> Option<Cow<'_, str>> {
            let quoted = input.get(s..e)?;
            let raw = &quoted[1..quoted.len() - 1];
            if raw.contains('\\') {
                serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
            } else {
                Some(Cow::Borrowed(raw))
            }
        };
        let status = || -> Option<StatusFacts> {
            Some(StatusFacts {
                state: self.state?,
                timestamp: self
                    .timestamp
                    .filter(|t| (0..=9999).contains(&chrono::Datelike::year(t)))
                    .map(|t| t.fixed_offset()),
            })
        };
        Some(match self.what {
            1 => TaskFacts::Task {
                id: text(self.id?)?,
                context: match self.context {
                    Some(c) => Some(text(c)?),
                    None => None,
                },
                status: status()?,
            },
            2 => TaskFacts::Status {
                task_id: text(self.id?)?,
                status: status()?,
            },
            _ => TaskFacts::Nothing,
        })
    }
}

impl Tx<'_> {
    /// Only whitespace may follow the document.
    fn finish(mut self, e: usize) -> Option<Vec<u8>> {
        let e = self.lx.skip_ws(e);
        (e == self.b().len()).then_some(self.out)
    }

    /// A JSON-RPC envelope: a request (`method` is `Some` of the (from, to)
    /// method names it may have, the body is `params`) or a response (body
    /// `result`).
    fn envelope(
        &mut self,
        i: usize,
        method: Option<&[(&str, &str)]>,
        body: fn(&mut Self, usize, u32) -> Option<usize>,
    ) -> Option<usize> {
        let i = self.lx.skip_ws(i);
        let (mut o, mut j) = self.open(i, 0)?;
        let mut first = true;
        loop {
            let (ks, ke, v) = match self.next(j, first)? {
                Next::End(e) => {
                    // jsonrpc and the body are required.
                    let need = if method.is_some() { 0b1101 } else { 0b101 };
                    if o.seen & need != need {
                        return None;
                    }
                    self.close(&o);
                    return Some(e);
                }
                Next::Member(ks, ke, v) => (ks, ke, v),
            };
            first = false;
            let name = &self.b()[ks..ke];
            j = match (name, method) {
                (b"jsonrpc", _) => {
                    Self::mark(&mut o, 0)?;
                    let e = self.lx.string_end(v)?;
                    if &self.b()[v..e] != b"\"2.0\"" {
                        return None;
                    }
                    self.lit(&mut o, 0, b"\"jsonrpc\":\"2.0\",")?;
                    e
                }
                (b"id", _) => {
                    Self::mark(&mut o, 1)?;
                    match self.lx.at(v)? {
                        b'"' => self.str_piece(&mut o, 1, b"id", v)?,
                        b'-' | b'0'..=b'9' => {
                            let s = self.begin(b"id");
                            let e = self.lx.copy_value(&mut self.out, v, 1)?;
                            self.end(&mut o, 1, s)?;
                            e
                        }
                        _ => return None,
                    }
                }
                (b"method", Some(names)) => {
                    Self::mark(&mut o, 2)?;
                    let (m, e) = self.plain_str(v)?;
                    let (_, to) = names.iter().find(|(from, _)| *from == m)?;
                    let s = self.begin(b"method");
                    self.out.push(b'"');
                    self.out.extend_from_slice(to.as_bytes());
                    self.out.push(b'"');
                    self.end(&mut o, 2, s)?;
                    e
                }
                (b"params", Some(_)) => {
                    Self::mark(&mut o, 3)?;
                    self.sub_piece(&mut o, 3, b"params", v, 0, body)?
                }
                (b"result", None) => {
                    Self::mark(&mut o, 2)?;
                    self.sub_piece(&mut o, 2, b"result", v, 0, body)?
                }
                // Error answers and unknown envelope members: typed path.
                _ => return None,
            };
        }
    }
}
