//! How the embedded store keeps outbox items: each item's small state
//! ([`Meta`]: schedule, lease, the length of its body) apart from its body,
//! in the tables (`outbox`, `outbox_bodies`) and in memory (a hot item is
//! its state and the place of its journal record, never its body); and the
//! counts the outbox bounds are checked against ([`Tally`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::super::wal::At;
use super::super::{counted_bytes, Full, OutboxBounds, OutboxItem, Usage};

/// An outbox item without its body: what claims, leases, reschedules and
/// completions read and rewrite (the `outbox` table's values, schema 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Meta {
    pub seq: u64,
    pub callback_id: String,
    pub task_id: String,
    pub attempts: u32,
    pub next_attempt_ms: i64,
    pub accepted_ms: i64,
    #[serde(default)]
    pub lease_owner: String,
    #[serde(default)]
    pub lease_until_ms: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub traceparent: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tracestate: String,
    /// The body's length (what it counts for in the bounds).
    pub bytes: u64,
}

impl Meta {
    pub fn of(i: &OutboxItem) -> Meta {
        Meta {
            seq: i.seq,
            callback_id: i.callback_id.clone(),
            task_id: i.task_id.clone(),
            attempts: i.attempts,
            next_attempt_ms: i.next_attempt_ms,
            accepted_ms: i.accepted_ms,
            lease_owner: i.lease_owner.clone(),
            lease_until_ms: i.lease_until_ms,
            traceparent: i.traceparent.clone(),
            tracestate: i.tracestate.clone(),
            bytes: counted_bytes(i),
        }
    }

    /// This state with `i`'s schedule and lease (what a reschedule
    /// changes), its own body length kept.
    pub fn rescheduled(&self, i: &OutboxItem) -> Meta {
        Meta {
            attempts: i.attempts,
            next_attempt_ms: i.next_attempt_ms,
            lease_owner: i.lease_owner.clone(),
            lease_until_ms: i.lease_until_ms,
            ..self.clone()
        }
    }

    pub fn item(self, body: String) -> OutboxItem {
        OutboxItem {
            seq: self.seq,
            callback_id: self.callback_id,
            task_id: self.task_id,
            body,
            attempts: self.attempts,
            next_attempt_ms: self.next_attempt_ms,
            accepted_ms: self.accepted_ms,
            lease_owner: self.lease_owner,
            lease_until_ms: self.lease_until_ms,
            traceparent: self.traceparent,
            tracestate: self.tracestate,
        }
    }
}

/// An item acknowledged since the last checkpoint: its state, and where
/// its journal record (with the body) is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HotItem {
    pub meta: Meta,
    pub at: At,
}

/// A snapshot change acknowledged since the last checkpoint: the version
/// it made, and the journal record that carries its task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct HotSnap {
    pub version: u64,
    pub at: At,
}

/// The outbox's waiting items, per callback id and in all.
#[derive(Debug, Default)]
pub(super) struct Tally {
    total: Usage,
    per: HashMap<String, Usage>,
}

impl Tally {
    pub fn total(&self) -> Usage {
        self.total
    }

    fn of(&self, callback_id: &str) -> Usage {
        self.per.get(callback_id).copied().unwrap_or_default()
    }

    pub fn add(&mut self, callback_id: &str, bytes: u64) {
        self.total.add(bytes);
        match self.per.get_mut(callback_id) {
            Some(u) => u.add(bytes),
            None => {
                let mut u = Usage::default();
                u.add(bytes);
                self.per.insert(callback_id.to_string(), u);
            }
        }
    }

    pub fn sub(&mut self, callback_id: &str, bytes: u64) {
        self.total.sub(bytes);
        if let Some(u) = self.per.get_mut(callback_id) {
            u.sub(bytes);
            if u.items == 0 {
                self.per.remove(callback_id);
            }
        }
    }

    /// Adds what `other` counted.
    pub fn merge(&mut self, other: Tally) {
        self.total.items += other.total.items;
        self.total.bytes = self.total.bytes.saturating_add(other.total.bytes);
        for (cb, u) in other.per {
            let mine = self.per.entry(cb).or_default();
            mine.items += u.items;
            mine.bytes = mine.bytes.saturating_add(u.bytes);
        }
    }

    /// Whether one more body of `bytes` for `callback_id` fits beside
    /// these counts and `adding` (items accepted in the same append).
    pub fn refuses(
        &self,
        bounds: &OutboxBounds,
        callback_id: &str,
        bytes: u64,
        adding: &Tally,
    ) -> Option<Full> {
        let sum = |a: Usage, b: Usage| Usage {
            items: a.items + b.items,
            bytes: a.bytes.saturating_add(b.bytes),
        };
        bounds.refuses(
            sum(self.of(callback_id), adding.of(callback_id)),
            sum(self.total, adding.total),
            bytes,
        )
    }
}
