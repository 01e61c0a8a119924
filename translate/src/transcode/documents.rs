//! Whole documents of the kinds [`crate::document`] translates, where the
//! transcoder has the entity: a bare part, message, task, task status,
//! artifact, status or artifact update, stream result, push body; a request
//! envelope of the send methods or their bare params; a response or stream
//! event envelope of the methods [`super::response`] takes, or its bare
//! result; an agent card ([`super::card`]).
//!
//! As everywhere in the transcoder, `None` means "not taken here": the
//! caller then takes the typed path ([`crate::document::translate_typed`]),
//! whose output this pass matches byte for byte wherever it answers
//! (`translate/tests/document_same_bytes.rs`, the `transcode` fuzz target).

use super::{Next, Tx};
use crate::document::Kind;
use crate::method::Method;
use crate::Version;

type Fx<'a> = fn(&mut Tx<'a>, usize, u32) -> Option<usize>;

/// Translates the document `input` of `kind` into `to`, as
/// [`crate::document::translate`] does with the method `method` (already
/// resolved; `None`: none was given). `None`: not taken here.
pub fn document(kind: Kind, to: Version, method: Option<Method>, input: &[u8]) -> Option<Vec<u8>> {
    if kind == Kind::Card {
        return super::card(to, input);
    }
    let text = std::str::from_utf8(input).ok()?;
    match kind {
        Kind::Request => request(to, method, text),
        Kind::Response => answer(to, method?, text),
        Kind::Event => {
            let m = method.unwrap_or(Method::SendStreamingMessage);
            if !m.is_streaming() {
                return None;
            }
            answer(to, m, text)
        }
        _ => whole(text, entity(kind, to)?),
    }
}

/// The transcoder's reader-writer of a bare entity of `kind`.
fn entity<'a>(kind: Kind, to: Version) -> Option<Fx<'a>> {
    use Version::{V03, V10};
    Some(match (kind, to) {
        (Kind::Part, V10) => Tx::part_to_v10,
        (Kind::Part, V03) => Tx::part_to_v03,
        (Kind::Message, V10) => Tx::message_to_v10,
        (Kind::Message, V03) => Tx::message_to_v03,
        (Kind::Task, V10) => Tx::task_to_v10,
        (Kind::Task, V03) => Tx::task_to_v03,
        (Kind::TaskStatus, V10) => Tx::status_to_v10,
        (Kind::TaskStatus, V03) => status_alone_to_v03 as Fx<'a>,
        (Kind::Artifact, V10) => Tx::artifact_to_v10,
        (Kind::Artifact, V03) => Tx::artifact_to_v03,
        (Kind::StatusUpdate, V10) => Tx::status_update_to_v10,
        (Kind::StatusUpdate, V03) => Tx::status_update_to_v03,
        (Kind::ArtifactUpdate, V10) => Tx::artifact_update_to_v10,
        (Kind::ArtifactUpdate, V03) => Tx::artifact_update_to_v03,
        // A webhook body is a stream result in both versions (`push_body`).
        (Kind::StreamResponse | Kind::PushBody, V10) => Tx::event_to_v10,
        (Kind::StreamResponse | Kind::PushBody, V03) => Tx::event_to_v03,
        _ => return None,
    })
}

/// A v1.0 task status alone (whether its state is terminal matters only
/// to a status update around it).
fn status_alone_to_v03<'a>(tx: &mut Tx<'a>, i: usize, depth: u32) -> Option<usize> {
    let mut terminal = false;
    tx.status_to_v03(i, depth, &mut terminal)
}

/// `text` as one value that `f` translates, with nothing but whitespace
/// around it.
fn whole<'a>(text: &'a str, f: Fx<'a>) -> Option<Vec<u8>> {
    let mut tx = Tx::new(text);
    let i = tx.lx.skip_ws(0);
    let e = f(&mut tx, i, 0)?;
    tx.finish(e)
}

/// The send methods' names, (from, to), toward `to`.
fn send_names(to: Version) -> [(&'static str, &'static str); 2] {
    let pair = |m: Method| {
        (
            m.name(to.other()).unwrap_or_default(),
            m.name(to).unwrap_or_default(),
        )
    };
    [
        pair(Method::SendMessage),
        pair(Method::SendStreamingMessage),
    ]
}

/// A request envelope of a send method, or (the method given) bare send
/// params.
fn request<'a>(to: Version, method: Option<Method>, text: &'a str) -> Option<Vec<u8>> {
    let params: Fx<'a> = match to {
        Version::V10 => Tx::send_to_v10,
        Version::V03 => Tx::send_to_v03,
    };
    let names = send_names(to);
    let mut tx = Tx::new(text);
    if let Some(e) = tx.envelope(0, Some(&names), params) {
        return tx.finish(e);
    }
    match method? {
        Method::SendMessage | Method::SendStreamingMessage if !enveloped(text)? => {
            whole(text, params)
        }
        _ => None,
    }
}

/// A response (or stream event) envelope answering `m`, or its bare result.
fn answer(to: Version, m: Method, text: &str) -> Option<Vec<u8>> {
    if let Some(out) = super::response_str(to, m, text) {
        return Some(out);
    }
    if enveloped(text)? {
        return None;
    }
    whole(text, result(to, m)?)
}

/// The reader-writer of the `result` answering `m`, toward `to`.
pub(super) fn result<'a>(to: Version, m: Method) -> Option<Fx<'a>> {
    use Version::{V03, V10};
    Some(match (to, m) {
        (V10, Method::SendMessage) => Tx::send_result_to_v10,
        (V10, Method::SendStreamingMessage | Method::SubscribeToTask) => Tx::event_to_v10,
        (V10, Method::GetTask | Method::CancelTask) => Tx::task_to_v10,
        (V03, Method::SendMessage) => Tx::send_result_to_v03,
        (V03, Method::SendStreamingMessage | Method::SubscribeToTask) => Tx::event_to_v03,
        (V03, Method::GetTask | Method::CancelTask) => Tx::task_to_v03,
        _ => return None,
    })
}

/// Whether the object `text` has a top-level `jsonrpc` member: the typed
/// path then reads it as an envelope, not as bare params or a result.
/// `None`: not an object this pass reads.
fn enveloped(text: &str) -> Option<bool> {
    let mut tx = Tx::new(text);
    let i = tx.lx.skip_ws(0);
    if tx.lx.at(i)? != b'{' {
        return Some(false);
    }
    let b = tx.b();
    let mut j = i + 1;
    let mut first = true;
    loop {
        match tx.next(j, first)? {
            Next::End(_) => return Some(false),
            Next::Member(ks, ke, v) => {
                if &b[ks..ke] == b"jsonrpc" {
                    return Some(true);
                }
                first = false;
                j = tx.lx.skip(v, 1)?;
            }
        }
    }
}
