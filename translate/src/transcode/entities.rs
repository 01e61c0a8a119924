//! The entities, one reader-writer per entity and direction. Each takes the
//! position of the entity's value in the input, writes the other version to
//! the output and returns the position after the value. Output member order
//! and the unknown members dropped (`carry` lists) are those of the typed
//! translators (`crate::part`, `crate::message`, ...).

use std::cell::Cell;

use super::{Next, Obj, Tx, Want};
use crate::v10::part::{decode_base64, encode_base64};

type Fx<'a> = fn(&mut Tx<'a>, usize, u32) -> Option<usize>;

/// The typed path's `carry` lists: unknown members with these names do not
/// cross (the target's member names, proto spellings included).
const V10_PART: &[&[u8]] = &[
    b"text",
    b"raw",
    b"url",
    b"data",
    b"metadata",
    b"filename",
    b"mediaType",
    b"media_type",
];
const V03_PART: &[&[u8]] = &[b"kind", b"text", b"file", b"data", b"metadata"];
const V10_MESSAGE: &[&[u8]] = &[
    b"messageId",
    b"message_id",
    b"contextId",
    b"context_id",
    b"taskId",
    b"task_id",
    b"role",
    b"parts",
    b"metadata",
    b"extensions",
    b"referenceTaskIds",
    b"reference_task_ids",
];
const V03_MESSAGE: &[&[u8]] = &[
    b"kind",
    b"messageId",
    b"contextId",
    b"taskId",
    b"role",
    b"parts",
    b"metadata",
    b"extensions",
    b"referenceTaskIds",
];
const STATUS: &[&[u8]] = &[b"state", b"message", b"timestamp"];
const V10_TASK: &[&[u8]] = &[
    b"id",
    b"contextId",
    b"context_id",
    b"status",
    b"artifacts",
    b"history",
    b"metadata",
];
const V03_TASK: &[&[u8]] = &[
    b"kind",
    b"id",
    b"contextId",
    b"status",
    b"artifacts",
    b"history",
    b"metadata",
];
const V10_ARTIFACT: &[&[u8]] = &[
    b"artifactId",
    b"artifact_id",
    b"name",
    b"description",
    b"parts",
    b"metadata",
    b"extensions",
];
const V03_ARTIFACT: &[&[u8]] = &[
    b"artifactId",
    b"name",
    b"description",
    b"parts",
    b"metadata",
    b"extensions",
];
const V03_STATUS_UPDATE: &[&[u8]] = &[
    b"kind",
    b"taskId",
    b"contextId",
    b"status",
    b"final",
    b"metadata",
];
const V10_STATUS_UPDATE: &[&[u8]] = &[
    b"taskId",
    b"task_id",
    b"contextId",
    b"context_id",
    b"status",
    b"metadata",
];
const V03_ARTIFACT_UPDATE: &[&[u8]] = &[
    b"kind",
    b"taskId",
    b"contextId",
    b"artifact",
    b"append",
    b"lastChunk",
    b"metadata",
];
const V10_ARTIFACT_UPDATE: &[&[u8]] = &[
    b"taskId",
    b"task_id",
    b"contextId",
    b"context_id",
    b"artifact",
    b"append",
    b"lastChunk",
    b"last_chunk",
    b"metadata",
];
const V10_SEND: &[&[u8]] = &[b"tenant", b"message", b"configuration", b"metadata"];
const V03_SEND: &[&[u8]] = &[b"message", b"configuration", b"metadata"];
const V10_CONFIGURATION: &[&[u8]] = &[
    b"acceptedOutputModes",
    b"accepted_output_modes",
    b"taskPushNotificationConfig",
    b"task_push_notification_config",
    b"historyLength",
    b"history_length",
    b"returnImmediately",
    b"return_immediately",
];
const V03_CONFIGURATION: &[&[u8]] = &[
    b"acceptedOutputModes",
    b"pushNotificationConfig",
    b"historyLength",
    b"blocking",
];

/// v1.0 input members spelled with proto field names: the typed path reads
/// them as aliases; this pass leaves such inputs to it.
fn proto_alias(name: &[u8]) -> bool {
    name.contains(&b'_')
        && matches!(
            name,
            b"message_id"
                | b"context_id"
                | b"task_id"
                | b"reference_task_ids"
                | b"artifact_id"
                | b"last_chunk"
                | b"media_type"
                | b"status_update"
                | b"artifact_update"
                | b"accepted_output_modes"
                | b"task_push_notification_config"
                | b"history_length"
                | b"return_immediately"
        )
}

/// v0.3 task states and their v1.0 names.
fn state_to_v10(s: &[u8]) -> Option<&'static str> {
    Some(match s {
        b"submitted" => "TASK_STATE_SUBMITTED",
        b"working" => "TASK_STATE_WORKING",
        b"input-required" => "TASK_STATE_INPUT_REQUIRED",
        b"completed" => "TASK_STATE_COMPLETED",
        b"canceled" => "TASK_STATE_CANCELED",
        b"failed" => "TASK_STATE_FAILED",
        b"rejected" => "TASK_STATE_REJECTED",
        b"auth-required" => "TASK_STATE_AUTH_REQUIRED",
        b"unknown" => "TASK_STATE_UNSPECIFIED",
        _ => return None,
    })
}

/// v1.0 state name to v0.3 (unrecognised names are `unknown`), and whether
/// it is terminal.
fn state_to_v03(s: &[u8]) -> (&'static [u8], bool) {
    match s {
        b"TASK_STATE_SUBMITTED" => (b"submitted", false),
        b"TASK_STATE_WORKING" => (b"working", false),
        b"TASK_STATE_COMPLETED" => (b"completed", true),
        b"TASK_STATE_FAILED" => (b"failed", true),
        b"TASK_STATE_CANCELED" | b"TASK_STATE_CANCELLED" => (b"canceled", true),
        b"TASK_STATE_INPUT_REQUIRED" => (b"input-required", false),
        b"TASK_STATE_REJECTED" => (b"rejected", true),
        b"TASK_STATE_AUTH_REQUIRED" => (b"auth-required", false),
        _ => (b"unknown", false),
    }
}

impl<'a> Tx<'a> {
    /// Walks the members of the object at `i`, calling `member` for each
    /// (name span, value start; returns the value's end), then `done`.
    fn object(
        &mut self,
        i: usize,
        depth: u32,
        mut member: impl FnMut(&mut Self, &mut Obj<'a>, &'a [u8], usize) -> Option<usize>,
        done: impl FnOnce(&mut Self, &mut Obj<'a>) -> Option<()>,
    ) -> Option<usize> {
        let (mut o, mut j) = self.open(i, depth)?;
        let b = self.b();
        let mut first = true;
        loop {
            match self.next(j, first)? {
                Next::End(e) => {
                    done(self, &mut o)?;
                    self.close(&o);
                    return Some(e);
                }
                Next::Member(ks, ke, v) => {
                    first = false;
                    let name = &b[ks..ke];
                    j = member(self, &mut o, name, v)?;
                }
            }
        }
    }

    // ---------------------------------------------------------------- parts

    /// A v0.3 part to v1.0.
    pub(super) fn part_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        let depth = depth + 1;
        // The variant: the one content member present (a `kind`, when
        // given, must name it).
        let mut content: u8 = 0;
        self.object(
            i,
            depth - 1,
            |tx, o, name, v| match name {
                b"kind" => {
                    Tx::mark(o, 0)?;
                    let e = tx.lx.string_end(v)?;
                    let k = match &tx.b()[v + 1..e - 1] {
                        b"text" => 1,
                        b"file" => 2,
                        b"data" => 3,
                        _ => return None,
                    };
                    if content != 0 && content != k {
                        return None;
                    }
                    content = k;
                    Some(e)
                }
                b"text" => {
                    Tx::mark(o, 1)?;
                    if content != 0 && content != 1 {
                        return None;
                    }
                    content = 1;
                    tx.str_piece(o, 0, b"text", v)
                }
                b"file" => {
                    Tx::mark(o, 1)?;
                    if content != 0 && content != 2 {
                        return None;
                    }
                    content = 2;
                    tx.file_to_v10(o, v, depth)
                }
                b"data" => {
                    Tx::mark(o, 1)?;
                    if content != 0 && content != 3 {
                        return None;
                    }
                    content = 3;
                    if tx.lx.at(v)? != b'{' {
                        return None;
                    }
                    let s = tx.begin(b"data");
                    let e = tx.lx.copy_value(&mut tx.out, v, depth + 1)?;
                    // The SDK wrapping of a non-object value: left to the
                    // typed path.
                    let d = &tx.out[s + 7..];
                    if d.starts_with(b"{\"value\":")
                        && !d[9..].starts_with(b"{")
                        && single_member(d)
                    {
                        return None;
                    }
                    tx.end(o, 3, s)?;
                    Some(e)
                }
                b"metadata" => {
                    Tx::mark(o, 2)?;
                    tx.copy_piece(o, 4, b"metadata", v, Want::Object, depth)
                }
                _ => tx.extra(o, name, v, V10_PART, depth),
            },
            |_, o| (o.seen & 0b10 != 0).then_some(()),
        )
    }

    /// The `file` member of a v0.3 file part: `raw` / `url`, `filename`,
    /// `mediaType` pieces.
    fn file_to_v10(&mut self, o: &mut Obj<'a>, v: usize, depth: u32) -> Option<usize> {
        if depth + 1 >= super::MAX_DEPTH || self.lx.at(v)? != b'{' {
            return None;
        }
        let b = self.b();
        let (mut bytes, mut uri, mut fname, mut mime) = (None, None, None, None);
        let mut j = v + 1;
        let mut first = true;
        let mut seen_extra: Vec<&[u8]> = Vec::new();
        let end = loop {
            match self.next(j, first)? {
                Next::End(e) => break e,
                Next::Member(ks, ke, val) => {
                    first = false;
                    let name = &b[ks..ke];
                    let slot = match name {
                        b"bytes" => &mut bytes,
                        b"uri" => &mut uri,
                        b"name" => &mut fname,
                        b"mimeType" => &mut mime,
                        _ => {
                            if seen_extra.contains(&name) {
                                return None;
                            }
                            seen_extra.push(name);
                            j = self.lx.skip(val, depth + 2)?;
                            continue;
                        }
                    };
                    if slot.is_some() {
                        return None;
                    }
                    let e = self.lx.string_end(val)?;
                    *slot = Some((val, e));
                    j = e;
                }
            }
        };
        match (bytes, uri) {
            (Some((s, e)), None) => {
                let p = self.begin(b"raw");
                self.base64(s, e)?;
                self.end(o, 1, p)?;
            }
            (None, Some((s, e))) => {
                let p = self.begin(b"url");
                self.out.extend_from_slice(&b[s..e]);
                self.end(o, 2, p)?;
            }
            _ => return None,
        }
        if let Some((s, e)) = fname {
            let p = self.begin(b"filename");
            self.out.extend_from_slice(&b[s..e]);
            self.end(o, 5, p)?;
        }
        if let Some((s, e)) = mime {
            let p = self.begin(b"mediaType");
            self.out.extend_from_slice(&b[s..e]);
            self.end(o, 6, p)?;
        }
        Some(end)
    }

    /// A base64 string (`b[s..e]`, quotes included) as the typed path
    /// writes it back: standard alphabet, padded.
    fn base64(&mut self, s: usize, e: usize) -> Option<()> {
        let raw = &self.b()[s + 1..e - 1];
        if canonical(raw) {
            self.out.extend_from_slice(&self.b()[s..e]);
            return Some(());
        }
        if raw.contains(&b'\\') {
            return None;
        }
        let bytes = decode_base64(std::str::from_utf8(raw).ok()?).ok()?;
        self.out.push(b'"');
        self.out.extend_from_slice(encode_base64(&bytes).as_bytes());
        self.out.push(b'"');
        Some(())
    }

    /// A v1.0 part to v0.3.
    pub(super) fn part_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        let depth = depth + 1;
        // `"kind":"text",` with the kind patched once the content is known
        // (the three kinds have the same length).
        let kind_at = Cell::new(None);
        let content = Cell::new(0u8);
        let (raw, url, fname, mime) = (
            Cell::new(None),
            Cell::new(None),
            Cell::new(None),
            Cell::new(None),
        );
        let b = self.b();
        let e = self.object(
            i,
            depth - 1,
            |tx, o, name, v| {
                if kind_at.get().is_none() {
                    kind_at.set(Some(tx.out.len() - o.start + 8));
                    tx.lit(o, 0, b"\"kind\":\"text\",")?;
                }
                match name {
                    b"text" => {
                        Tx::mark(o, 0)?;
                        content.set(content.get() + 1);
                        tx.str_piece(o, 1, b"text", v)
                    }
                    b"raw" | b"url" => {
                        let (bit, slot) = if name == b"raw" { (1, &raw) } else { (2, &url) };
                        Tx::mark(o, bit)?;
                        content.set(content.get() + 1);
                        let e = tx.lx.string_end(v)?;
                        slot.set(Some((v, e)));
                        Some(e)
                    }
                    b"data" => {
                        Tx::mark(o, 3)?;
                        content.set(content.get() + 1);
                        // A non-object value is wrapped by the typed path;
                        // left to it.
                        tx.copy_piece(o, 1, b"data", v, Want::Object, depth)
                    }
                    b"metadata" => {
                        Tx::mark(o, 4)?;
                        tx.copy_piece(o, 2, b"metadata", v, Want::Object, depth)
                    }
                    b"filename" | b"mediaType" => {
                        let (bit, slot) = if name == b"filename" {
                            (5, &fname)
                        } else {
                            (6, &mime)
                        };
                        Tx::mark(o, bit)?;
                        let e = tx.lx.string_end(v)?;
                        slot.set(Some((v, e)));
                        Some(e)
                    }
                    _ if proto_alias(name) => None,
                    _ => tx.extra(o, name, v, V03_PART, depth),
                }
            },
            |tx, o| {
                if content.get() != 1 {
                    return None;
                }
                let kind_at = o.start + kind_at.get()?;
                let (raw, url, fname, mime) = (raw.get(), url.get(), fname.get(), mime.get());
                let kind: &[u8] = if raw.is_some() || url.is_some() {
                    let p = tx.begin(b"file");
                    tx.out.push(b'{');
                    if let Some((s, e)) = raw {
                        tx.out.extend_from_slice(b"\"bytes\":");
                        tx.base64(s, e)?;
                    } else if let Some((s, e)) = url {
                        tx.out.extend_from_slice(b"\"uri\":");
                        tx.out.extend_from_slice(&b[s..e]);
                    }
                    if let Some((s, e)) = fname {
                        tx.out.extend_from_slice(b",\"name\":");
                        tx.out.extend_from_slice(&b[s..e]);
                    }
                    if let Some((s, e)) = mime {
                        tx.out.extend_from_slice(b",\"mimeType\":");
                        tx.out.extend_from_slice(&b[s..e]);
                    }
                    tx.out.push(b'}');
                    tx.end(o, 1, p)?;
                    b"file"
                } else if o.seen & (1 << 3) != 0 {
                    b"data"
                } else {
                    b"text"
                };
                tx.out[kind_at..kind_at + 4].copy_from_slice(kind);
                Some(())
            },
        )?;
        Some(e)
    }

    // ------------------------------------------------------------- messages

    /// A v0.3 message to v1.0.
    pub(super) fn message_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"kind" => {
                    Tx::mark(o, 0)?;
                    tx.kind_is(v, b"message")
                }
                b"messageId" => {
                    Tx::mark(o, 1)?;
                    tx.str_piece(o, 0, b"messageId", v)
                }
                b"contextId" => {
                    Tx::mark(o, 2)?;
                    tx.str_piece(o, 1, b"contextId", v)
                }
                b"taskId" => {
                    Tx::mark(o, 3)?;
                    tx.str_piece(o, 2, b"taskId", v)
                }
                b"role" => {
                    Tx::mark(o, 4)?;
                    let e = tx.lx.string_end(v)?;
                    let r: &[u8] = match &tx.b()[v..e] {
                        b"\"user\"" => b"\"role\":\"ROLE_USER\",",
                        b"\"agent\"" => b"\"role\":\"ROLE_AGENT\",",
                        _ => return None,
                    };
                    tx.lit(o, 3, r)?;
                    Some(e)
                }
                b"parts" => {
                    Tx::mark(o, 5)?;
                    tx.array_piece(o, 4, b"parts", v, depth, Tx::part_to_v10)
                }
                b"metadata" => {
                    Tx::mark(o, 6)?;
                    tx.copy_piece(o, 5, b"metadata", v, Want::Object, depth)
                }
                b"extensions" => {
                    Tx::mark(o, 7)?;
                    tx.copy_piece(o, 6, b"extensions", v, Want::Strings, depth)
                }
                b"referenceTaskIds" => {
                    Tx::mark(o, 8)?;
                    tx.copy_piece(o, 7, b"referenceTaskIds", v, Want::Strings, depth)
                }
                _ => tx.extra(o, name, v, V10_MESSAGE, depth),
            },
            |_, o| {
                let need = (1 << 1) | (1 << 4) | (1 << 5);
                (o.seen & need == need).then_some(())
            },
        )
    }

    /// A v1.0 message to v0.3.
    pub(super) fn message_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        let mut kind = false;
        self.object(
            i,
            depth,
            |tx, o, name, v| {
                if !kind {
                    kind = true;
                    tx.lit(o, 0, b"\"kind\":\"message\",")?;
                }
                match name {
                    b"messageId" => {
                        Tx::mark(o, 1)?;
                        tx.str_piece(o, 1, b"messageId", v)
                    }
                    b"contextId" => {
                        Tx::mark(o, 2)?;
                        tx.str_piece(o, 2, b"contextId", v)
                    }
                    b"taskId" => {
                        Tx::mark(o, 3)?;
                        tx.str_piece(o, 3, b"taskId", v)
                    }
                    b"role" => {
                        Tx::mark(o, 4)?;
                        let e = tx.lx.string_end(v)?;
                        let r: &[u8] = if &tx.b()[v..e] == b"\"ROLE_USER\"" {
                            b"\"role\":\"user\","
                        } else {
                            b"\"role\":\"agent\","
                        };
                        tx.lit(o, 4, r)?;
                        Some(e)
                    }
                    b"parts" => {
                        Tx::mark(o, 5)?;
                        tx.array_piece(o, 5, b"parts", v, depth, Tx::part_to_v03)
                    }
                    b"metadata" => {
                        Tx::mark(o, 6)?;
                        tx.copy_piece(o, 6, b"metadata", v, Want::Object, depth)
                    }
                    b"extensions" => {
                        Tx::mark(o, 7)?;
                        tx.copy_piece(o, 7, b"extensions", v, Want::Strings, depth)
                    }
                    b"referenceTaskIds" => {
                        Tx::mark(o, 8)?;
                        tx.copy_piece(o, 8, b"referenceTaskIds", v, Want::Strings, depth)
                    }
                    _ if proto_alias(name) => None,
                    _ => tx.extra(o, name, v, V03_MESSAGE, depth),
                }
            },
            |tx, o| {
                if o.seen & (1 << 1) == 0 {
                    return None;
                }
                if o.seen & (1 << 4) == 0 {
                    tx.lit(o, 4, b"\"role\":\"agent\",")?;
                }
                if o.seen & (1 << 5) == 0 {
                    tx.lit(o, 5, b"\"parts\":[],")?;
                }
                Some(())
            },
        )
    }

    // --------------------------------------------------------------- status

    /// A v0.3 task status to v1.0.
    pub(super) fn status_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"state" => {
                    Tx::mark(o, 0)?;
                    let e = tx.lx.string_end(v)?;
                    let s = state_to_v10(&tx.b()[v + 1..e - 1])?;
                    tx.seen.state = Some(s);
                    let p = tx.begin(b"state");
                    tx.out.push(b'"');
                    tx.out.extend_from_slice(s.as_bytes());
                    tx.out.push(b'"');
                    tx.end(o, 0, p)?;
                    Some(e)
                }
                b"message" => {
                    Tx::mark(o, 1)?;
                    tx.sub_piece(o, 1, b"message", v, depth, Tx::message_to_v10)
                }
                b"timestamp" => {
                    Tx::mark(o, 2)?;
                    let (raw, e) = tx.plain_str(v)?;
                    let p = tx.begin(b"timestamp");
                    if let Some(t) = crate::timestamp::parse_normal(raw) {
                        // Written back as it is (see `parse_normal`).
                        tx.seen.timestamp = Some(t);
                        tx.out.extend_from_slice(&tx.lx.b[v..e]);
                    } else {
                        let t = crate::timestamp::parse(raw)?;
                        tx.seen.timestamp = Some(t);
                        tx.out.push(b'"');
                        crate::timestamp::write_utc_z(&t, &mut tx.out);
                        tx.out.push(b'"');
                    }
                    tx.end(o, 2, p)?;
                    Some(e)
                }
                _ => tx.extra(o, name, v, STATUS, depth),
            },
            |_, o| (o.seen & 1 != 0).then_some(()),
        )
    }

    /// A v1.0 task status to v0.3; `terminal` says whether its state is.
    pub(super) fn status_to_v03(
        &mut self,
        i: usize,
        depth: u32,
        terminal: &mut bool,
    ) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"state" => {
                    Tx::mark(o, 0)?;
                    let e = tx.lx.string_end(v)?;
                    let (s, t) = state_to_v03(&tx.b()[v + 1..e - 1]);
                    *terminal = t;
                    let p = tx.begin(b"state");
                    tx.out.push(b'"');
                    tx.out.extend_from_slice(s);
                    tx.out.push(b'"');
                    tx.end(o, 0, p)?;
                    Some(e)
                }
                b"message" => {
                    Tx::mark(o, 1)?;
                    tx.sub_piece(o, 1, b"message", v, depth, Tx::message_to_v03)
                }
                b"timestamp" => {
                    Tx::mark(o, 2)?;
                    tx.str_piece(o, 2, b"timestamp", v)
                }
                _ => tx.extra(o, name, v, STATUS, depth),
            },
            |tx, o| {
                if o.seen & 1 == 0 {
                    tx.lit(o, 0, b"\"state\":\"unknown\",")?;
                }
                Some(())
            },
        )
    }

    fn status_to_v03_piece(
        &mut self,
        o: &mut Obj<'a>,
        rank: u16,
        v: usize,
        depth: u32,
    ) -> Option<(usize, bool)> {
        let s = self.begin(b"status");
        let mut terminal = false;
        let e = self.status_to_v03(v, depth + 1, &mut terminal)?;
        self.end(o, rank, s)?;
        Some((e, terminal))
    }

    // ------------------------------------------------------------ artifacts

    pub(super) fn artifact_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"artifactId" => {
                    Tx::mark(o, 0)?;
                    tx.str_piece(o, 0, b"artifactId", v)
                }
                b"name" => {
                    Tx::mark(o, 1)?;
                    tx.str_piece(o, 1, b"name", v)
                }
                b"description" => {
                    Tx::mark(o, 2)?;
                    tx.str_piece(o, 2, b"description", v)
                }
                b"parts" => {
                    Tx::mark(o, 3)?;
                    tx.array_piece(o, 3, b"parts", v, depth, Tx::part_to_v10)
                }
                b"metadata" => {
                    Tx::mark(o, 4)?;
                    tx.copy_piece(o, 4, b"metadata", v, Want::Object, depth)
                }
                b"extensions" => {
                    Tx::mark(o, 5)?;
                    tx.copy_piece(o, 5, b"extensions", v, Want::Strings, depth)
                }
                _ => tx.extra(o, name, v, V10_ARTIFACT, depth),
            },
            |_, o| (o.seen & 0b1001 == 0b1001).then_some(()),
        )
    }

    pub(super) fn artifact_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"artifactId" => {
                    Tx::mark(o, 0)?;
                    tx.str_piece(o, 0, b"artifactId", v)
                }
                b"name" => {
                    Tx::mark(o, 1)?;
                    tx.str_piece(o, 1, b"name", v)
                }
                b"description" => {
                    Tx::mark(o, 2)?;
                    tx.str_piece(o, 2, b"description", v)
                }
                b"parts" => {
                    Tx::mark(o, 3)?;
                    tx.array_piece(o, 3, b"parts", v, depth, Tx::part_to_v03)
                }
                b"metadata" => {
                    Tx::mark(o, 4)?;
                    tx.copy_piece(o, 4, b"metadata", v, Want::Object, depth)
                }
                b"extensions" => {
                    Tx::mark(o, 5)?;
                    tx.copy_piece(o, 5, b"extensions", v, Want::Strings, depth)
                }
                _ if proto_alias(name) => None,
                _ => tx.extra(o, name, v, V03_ARTIFACT, depth),
            },
            |tx, o| {
                if o.seen & 1 == 0 {
                    return None;
                }
                if o.seen & (1 << 3) == 0 {
                    tx.lit(o, 3, b"\"parts\":[],")?;
                }
                Some(())
            },
        )
    }

    // ---------------------------------------------------------------- tasks

    /// A v0.3 task to v1.0.
    pub(super) fn task_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"kind" => {
                    Tx::mark(o, 0)?;
                    tx.kind_is(v, b"task")
                }
                b"id" => {
                    Tx::mark(o, 1)?;
                    let e = tx.str_piece(o, 0, b"id", v)?;
                    tx.seen.id = Some((v, e));
                    Some(e)
                }
                b"contextId" => {
                    Tx::mark(o, 2)?;
                    let e = tx.lx.string_end(v)?;
                    if e - v > 2 {
                        tx.seen.context = Some((v, e));
                        let p = tx.begin(b"contextId");
                        tx.out.extend_from_slice(&tx.b()[v..e]);
                        tx.end(o, 1, p)?;
                    }
                    Some(e)
                }
                b"status" => {
                    Tx::mark(o, 3)?;
                    tx.sub_piece(o, 2, b"status", v, depth, Tx::status_to_v10)
                }
                b"artifacts" => {
                    Tx::mark(o, 4)?;
                    tx.array_piece(o, 3, b"artifacts", v, depth, Tx::artifact_to_v10)
                }
                b"history" => {
                    Tx::mark(o, 5)?;
                    tx.array_piece(o, 4, b"history", v, depth, Tx::message_to_v10)
                }
                b"metadata" => {
                    Tx::mark(o, 6)?;
                    tx.copy_piece(o, 5, b"metadata", v, Want::Object, depth)
                }
                _ => tx.extra(o, name, v, V10_TASK, depth),
            },
            |_, o| (o.seen & 0b1110 == 0b1110).then_some(()),
        )
    }

    /// A v1.0 task to v0.3.
    pub(super) fn task_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        let mut kind = false;
        self.object(
            i,
            depth,
            |tx, o, name, v| {
                if !kind {
                    kind = true;
                    tx.lit(o, 0, b"\"kind\":\"task\",")?;
                }
                match name {
                    b"id" => {
                        Tx::mark(o, 1)?;
                        tx.str_piece(o, 1, b"id", v)
                    }
                    b"contextId" => {
                        Tx::mark(o, 2)?;
                        tx.str_piece(o, 2, b"contextId", v)
                    }
                    b"status" => {
                        Tx::mark(o, 3)?;
                        tx.status_to_v03_piece(o, 3, v, depth).map(|(e, _)| e)
                    }
                    b"artifacts" => {
                        Tx::mark(o, 4)?;
                        tx.array_piece(o, 4, b"artifacts", v, depth, Tx::artifact_to_v03)
                    }
                    b"history" => {
                        Tx::mark(o, 5)?;
                        tx.array_piece(o, 5, b"history", v, depth, Tx::message_to_v03)
                    }
                    b"metadata" => {
                        Tx::mark(o, 6)?;
                        tx.copy_piece(o, 6, b"metadata", v, Want::Object, depth)
                    }
                    _ if proto_alias(name) => None,
                    _ => tx.extra(o, name, v, V03_TASK, depth),
                }
            },
            |tx, o| {
                if o.seen & 0b1010 != 0b1010 {
                    return None;
                }
                if o.seen & 0b100 == 0 {
                    tx.lit(o, 2, b"\"contextId\":\"\",")?;
                }
                Some(())
            },
        )
    }

    // --------------------------------------------------------------- events

    pub(super) fn status_update_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"kind" => {
                    Tx::mark(o, 0)?;
                    tx.kind_is(v, b"status-update")
                }
                b"taskId" => {
                    Tx::mark(o, 1)?;
                    let e = tx.str_piece(o, 0, b"taskId", v)?;
                    tx.seen.id = Some((v, e));
                    Some(e)
                }
                b"contextId" => {
                    Tx::mark(o, 2)?;
                    tx.str_piece(o, 1, b"contextId", v)
                }
                b"status" => {
                    Tx::mark(o, 3)?;
                    tx.sub_piece(o, 2, b"status", v, depth, Tx::status_to_v10)
                }
                b"final" => {
                    Tx::mark(o, 4)?;
                    match tx.lx.at(v)? {
                        b't' | b'f' => tx.lx.skip(v, depth + 1),
                        _ => None,
                    }
                }
                b"metadata" => {
                    Tx::mark(o, 5)?;
                    tx.copy_piece(o, 3, b"metadata", v, Want::Object, depth)
                }
                _ => tx.extra(o, name, v, V10_STATUS_UPDATE, depth),
            },
            |_, o| (o.seen & 0b1110 == 0b1110).then_some(()),
        )
    }

    pub(super) fn status_update_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        let mut kind = false;
        self.object(
            i,
            depth,
            |tx, o, name, v| {
                if !kind {
                    kind = true;
                    tx.lit(o, 0, b"\"kind\":\"status-update\",")?;
                }
                match name {
                    b"taskId" => {
                        Tx::mark(o, 1)?;
                        tx.str_piece(o, 1, b"taskId", v)
                    }
                    b"contextId" => {
                        Tx::mark(o, 2)?;
                        tx.str_piece(o, 2, b"contextId", v)
                    }
                    b"status" => {
                        Tx::mark(o, 3)?;
                        let (e, terminal) = tx.status_to_v03_piece(o, 3, v, depth)?;
                        let f: &[u8] = if terminal {
                            b"\"final\":true,"
                        } else {
                            b"\"final\":false,"
                        };
                        tx.lit(o, 4, f)?;
                        Some(e)
                    }
                    b"metadata" => {
                        Tx::mark(o, 5)?;
                        tx.copy_piece(o, 5, b"metadata", v, Want::Object, depth)
                    }
                    _ if proto_alias(name) => None,
                    _ => tx.extra(o, name, v, V03_STATUS_UPDATE, depth),
                }
            },
            |tx, o| {
                if o.seen & 0b1010 != 0b1010 {
                    return None;
                }
                if o.seen & 0b100 == 0 {
                    tx.lit(o, 2, b"\"contextId\":\"\",")?;
                }
                Some(())
            },
        )
    }

    pub(super) fn artifact_update_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"kind" => {
                    Tx::mark(o, 0)?;
                    tx.kind_is(v, b"artifact-update")
                }
                b"taskId" => {
                    Tx::mark(o, 1)?;
                    tx.str_piece(o, 0, b"taskId", v)
                }
                b"contextId" => {
                    Tx::mark(o, 2)?;
                    tx.str_piece(o, 1, b"contextId", v)
                }
                b"artifact" => {
                    Tx::mark(o, 3)?;
                    tx.sub_piece(o, 2, b"artifact", v, depth, Tx::artifact_to_v10)
                }
                b"append" => {
                    Tx::mark(o, 4)?;
                    tx.copy_piece(o, 3, b"append", v, Want::Bool, depth)
                }
                b"lastChunk" => {
                    Tx::mark(o, 5)?;
                    tx.copy_piece(o, 4, b"lastChunk", v, Want::Bool, depth)
                }
                b"metadata" => {
                    Tx::mark(o, 6)?;
                    tx.copy_piece(o, 5, b"metadata", v, Want::Object, depth)
                }
                _ => tx.extra(o, name, v, V10_ARTIFACT_UPDATE, depth),
            },
            |_, o| (o.seen & 0b1110 == 0b1110).then_some(()),
        )
    }

    pub(super) fn artifact_update_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        let mut kind = false;
        self.object(
            i,
            depth,
            |tx, o, name, v| {
                if !kind {
                    kind = true;
                    tx.lit(o, 0, b"\"kind\":\"artifact-update\",")?;
                }
                match name {
                    b"taskId" => {
                        Tx::mark(o, 1)?;
                        tx.str_piece(o, 1, b"taskId", v)
                    }
                    b"contextId" => {
                        Tx::mark(o, 2)?;
                        tx.str_piece(o, 2, b"contextId", v)
                    }
                    b"artifact" => {
                        Tx::mark(o, 3)?;
                        tx.sub_piece(o, 3, b"artifact", v, depth, Tx::artifact_to_v03)
                    }
                    b"append" => {
                        Tx::mark(o, 4)?;
                        tx.copy_piece(o, 4, b"append", v, Want::Bool, depth)
                    }
                    b"lastChunk" => {
                        Tx::mark(o, 5)?;
                        tx.copy_piece(o, 5, b"lastChunk", v, Want::Bool, depth)
                    }
                    b"metadata" => {
                        Tx::mark(o, 6)?;
                        tx.copy_piece(o, 6, b"metadata", v, Want::Object, depth)
                    }
                    _ if proto_alias(name) => None,
                    _ => tx.extra(o, name, v, V03_ARTIFACT_UPDATE, depth),
                }
            },
            |tx, o| {
                if o.seen & 0b1010 != 0b1010 {
                    return None;
                }
                if o.seen & 0b100 == 0 {
                    tx.lit(o, 2, b"\"contextId\":\"\",")?;
                }
                Some(())
            },
        )
    }

    // --------------------------------------------------------------- unions

    /// Which variant a v0.3 kind-tagged object is: its `kind`, else
    /// inferred from its members as the typed path does.
    fn v03_variant(&mut self, i: usize, depth: u32) -> Option<&'static [u8]> {
        // The object is read once more here (names only matter).
        let b = self.b();
        if self.lx.at(i)? != b'{' {
            return None;
        }
        let saved = self.lx.ws;
        let mut j = i + 1;
        let mut first = true;
        let (mut artifact, mut message_id, mut status, mut id) = (false, false, false, false);
        let mut kind = None;
        loop {
            match self.next(j, first)? {
                Next::End(_) => break,
                Next::Member(ks, ke, v) => {
                    first = false;
                    match &b[ks..ke] {
                        b"kind" => {
                            let e = self.lx.string_end(v)?;
                            kind = Some(&b[v + 1..e - 1]);
                        }
                        b"artifact" => artifact = true,
                        b"messageId" => message_id = true,
                        b"status" => status = true,
                        b"id" => id = true,
                        _ => {}
                    }
                    j = self.lx.skip(v, depth + 1)?;
                }
            }
        }
        self.lx.ws = saved || self.lx.ws;
        Some(match kind {
            Some(b"task") => b"task",
            Some(b"message") => b"message",
            Some(b"status-update") => b"status-update",
            Some(b"artifact-update") => b"artifact-update",
            Some(_) => return None,
            None if artifact => b"artifact-update",
            None if message_id => b"message",
            None if status && id => b"task",
            None if status => b"status-update",
            None => return None,
        })
    }

    /// The kind of a v0.3 object whose first member is `kind`, without
    /// reading the object twice; `None` when it is not first.
    fn first_kind(&mut self, i: usize) -> Option<&'static [u8]> {
        let b = self.b();
        let j = self.lx.skip_ws(i + 1);
        let v = j + 7;
        if b.get(j..v)? != b"\"kind\":" {
            return None;
        }
        let e = self.lx.string_end(v)?;
        Some(match &b[v + 1..e - 1] {
            b"task" => b"task",
            b"message" => b"message",
            b"status-update" => b"status-update",
            b"artifact-update" => b"artifact-update",
            _ => return None,
        })
    }

    /// A v0.3 stream result (`event`) or send result (task or message only)
    /// to the v1.0 oneof object.
    fn union_to_v10(&mut self, i: usize, depth: u32, events: bool) -> Option<usize> {
        let kind = match self.first_kind(i) {
            Some(k) => k,
            None => self.v03_variant(i, depth)?,
        };
        let (name, f): (&[u8], Fx<'a>) = match kind {
            b"task" => {
                self.seen.what = 1;
                (b"{\"task\":", Tx::task_to_v10)
            }
            b"message" => (b"{\"message\":", Tx::message_to_v10),
            b"status-update" if events => {
                self.seen.what = 2;
                (b"{\"statusUpdate\":", Tx::status_update_to_v10)
            }
            b"artifact-update" if events => (b"{\"artifactUpdate\":", Tx::artifact_update_to_v10),
            _ => return None,
        };
        if depth + 1 >= super::MAX_DEPTH {
            return None;
        }
        self.out.extend_from_slice(name);
        let e = f(self, i, depth + 1)?;
        self.out.push(b'}');
        Some(e)
    }

    pub(super) fn event_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.union_to_v10(i, depth, true)
    }

    pub(super) fn send_result_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.union_to_v10(i, depth, false)
    }

    /// A v1.0 oneof object (`StreamResponse`, or `SendMessageResponse` when
    /// not `events`) to the v0.3 kind-tagged object.
    fn union_to_v03(&mut self, i: usize, depth: u32, events: bool) -> Option<usize> {
        if depth + 1 >= super::MAX_DEPTH || self.lx.at(i)? != b'{' {
            return None;
        }
        let b = self.b();
        let (ks, ke, v) = match self.next(i + 1, true)? {
            Next::Member(ks, ke, v) => (ks, ke, v),
            Next::End(_) => return None,
        };
        let f: Fx<'a> = match &b[ks..ke] {
            b"task" => Tx::task_to_v03,
            b"message" => Tx::message_to_v03,
            b"statusUpdate" if events => Tx::status_update_to_v03,
            b"artifactUpdate" if events => Tx::artifact_update_to_v03,
            _ => return None,
        };
        let e = f(self, v, depth + 1)?;
        match self.next(e, false)? {
            Next::End(e) => Some(e),
            Next::Member(..) => None,
        }
    }

    pub(super) fn event_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.union_to_v03(i, depth, true)
    }

    pub(super) fn send_result_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.union_to_v03(i, depth, false)
    }

    // ------------------------------------------------------------- requests

    /// `historyLength`: a non-negative i32 (`Some(None)`: zero).
    fn history_length(&self, v: usize) -> Option<(Option<&'a [u8]>, usize)> {
        let b = self.b();
        let mut e = v;
        while b.get(e).is_some_and(u8::is_ascii_digit) {
            e += 1;
        }
        if e == v || matches!(b.get(e), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let tok = &b[v..e];
        if tok.len() > 1 && tok[0] == b'0' {
            return None;
        }
        let n: i32 = std::str::from_utf8(tok).ok()?.parse().ok()?;
        Some(((n != 0).then_some(tok), e))
    }

    /// v0.3 MessageSendParams to v1.0 SendMessageRequest.
    pub(super) fn send_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"message" => {
                    Tx::mark(o, 0)?;
                    tx.sub_piece(o, 1, b"message", v, depth, Tx::message_to_v10)
                }
                b"configuration" => {
                    Tx::mark(o, 1)?;
                    let s = tx.begin(b"configuration");
                    let e = tx.config_to_v10(v, depth + 1)?;
                    if tx.out.ends_with(b":{}") {
                        // An empty configuration is left out.
                        tx.out.truncate(s);
                    } else {
                        tx.end(o, 2, s)?;
                    }
                    Some(e)
                }
                b"metadata" => {
                    Tx::mark(o, 2)?;
                    tx.copy_piece(o, 3, b"metadata", v, Want::Object, depth)
                }
                _ => tx.extra(o, name, v, V10_SEND, depth),
            },
            |_, o| (o.seen & 1 != 0).then_some(()),
        )
    }

    fn config_to_v10(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"acceptedOutputModes" => {
                    Tx::mark(o, 0)?;
                    tx.copy_piece(o, 0, b"acceptedOutputModes", v, Want::Strings, depth)
                }
                b"historyLength" => {
                    Tx::mark(o, 2)?;
                    let (n, e) = tx.history_length(v)?;
                    if let Some(n) = n {
                        let s = tx.begin(b"historyLength");
                        tx.out.extend_from_slice(n);
                        tx.end(o, 2, s)?;
                    }
                    Some(e)
                }
                b"blocking" => {
                    Tx::mark(o, 3)?;
                    match tx.lx.at(v)? {
                        b't' => tx.lx.skip(v, depth + 1),
                        b'f' => {
                            let e = tx.lx.skip(v, depth + 1)?;
                            tx.lit(o, 3, b"\"returnImmediately\":true,")?;
                            Some(e)
                        }
                        _ => None,
                    }
                }
                // Push configs inside: typed path.
                b"pushNotificationConfig" => None,
                _ => tx.extra(o, name, v, V10_CONFIGURATION, depth),
            },
            |_, _| Some(()),
        )
    }

    /// v1.0 SendMessageRequest to v0.3 MessageSendParams.
    pub(super) fn send_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"tenant" => {
                    Tx::mark(o, 3)?;
                    tx.lx.string_end(v)
                }
                b"message" => {
                    Tx::mark(o, 0)?;
                    tx.sub_piece(o, 0, b"message", v, depth, Tx::message_to_v03)
                }
                b"configuration" => {
                    Tx::mark(o, 1)?;
                    tx.sub_piece(o, 1, b"configuration", v, depth, Tx::config_to_v03)
                }
                b"metadata" => {
                    Tx::mark(o, 2)?;
                    tx.copy_piece(o, 2, b"metadata", v, Want::Object, depth)
                }
                _ => tx.extra(o, name, v, V03_SEND, depth),
            },
            |tx, o| {
                if o.seen & 1 == 0 {
                    return None;
                }
                if o.seen & 0b10 == 0 {
                    tx.lit(o, 1, b"\"configuration\":{\"blocking\":true},")?;
                }
                Some(())
            },
        )
    }

    fn config_to_v03(&mut self, i: usize, depth: u32) -> Option<usize> {
        let immediately = Cell::new(false);
        self.object(
            i,
            depth,
            |tx, o, name, v| match name {
                b"acceptedOutputModes" => {
                    Tx::mark(o, 0)?;
                    tx.copy_piece(o, 0, b"acceptedOutputModes", v, Want::Strings, depth)
                }
                b"historyLength" => {
                    Tx::mark(o, 2)?;
                    let (n, e) = tx.history_length(v)?;
                    let s = tx.begin(b"historyLength");
                    tx.out.extend_from_slice(n.unwrap_or(b"0"));
                    tx.end(o, 2, s)?;
                    Some(e)
                }
                b"returnImmediately" => {
                    Tx::mark(o, 3)?;
                    match tx.lx.at(v)? {
                        b't' => {
                            immediately.set(true);
                            tx.lx.skip(v, depth + 1)
                        }
                        b'f' => tx.lx.skip(v, depth + 1),
                        _ => None,
                    }
                }
                b"taskPushNotificationConfig" => None,
                _ if proto_alias(name) => None,
                _ => tx.extra(o, name, v, V03_CONFIGURATION, depth),
            },
            |tx, o| {
                let l: &[u8] = if immediately.get() {
                    b"\"blocking\":false,"
                } else {
                    b"\"blocking\":true,"
                };
                tx.lit(o, 3, l)
            },
        )
    }
}

fn canonical(raw: &[u8]) -> bool {
    super::canonical_base64(raw)
}

/// Whether the copied object `d` (starting `{"value":`) has one member.
fn single_member(d: &[u8]) -> bool {
    // `d` is compact and checked: find the end of the first value.
    let mut lx = super::Lex::new(d);
    match lx.skip(9, 0) {
        Some(e) => d.get(e) == Some(&b'}'),
        None => false,
    }
}
