//! How much of each callback's run one claim takes.

use std::collections::HashMap;

use super::items::Meta;

/// How many more items of each callback's run a claim may take, decided
/// at the callback's oldest item (0: skip all of it: it is not due, or
/// another instance holds it; 1: it failed before, and is tried alone).
pub(super) struct RunBudget {
    now_ms: i64,
    run_limit: usize,
    left: HashMap<String, usize>,
}

impl RunBudget {
    pub(super) fn new(now_ms: i64, run_limit: usize) -> RunBudget {
        RunBudget {
            now_ms,
            run_limit,
            left: HashMap::new(),
        }
    }

    /// Whether `item` (met in seq order) is claimed.
    pub(super) fn admits(&mut self, item: &Meta) -> bool {
        let (now, limit) = (self.now_ms, self.run_limit);
        let left = self
            .left
            .entry(item.callback_id.clone())
            .or_insert_with(|| {
                if item.next_attempt_ms > now || item.lease_until_ms > now {
                    0
                } else if item.attempts > 0 {
                    1
                } else {
                    limit.max(1)
                }
            });
        if *left == 0 {
            return false;
        }
        *left -= 1;
        true
    }
}

/// What one claim takes: runs as [`RunBudget`] allows them, in seq order,
/// until `limit` items or `max_bytes` of bodies (the first item whatever
/// its size); past that bound nothing more (a prefix, as every backend
/// takes it).
pub(super) struct Take {
    runs: RunBudget,
    limit: usize,
    max_bytes: u64,
    items: usize,
    bytes: u64,
    full: bool,
}

impl Take {
    pub(super) fn new(now_ms: i64, run_limit: usize, limit: usize, max_bytes: u64) -> Take {
        Take {
            runs: RunBudget::new(now_ms, run_limit),
            limit,
            max_bytes,
            items: 0,
            bytes: 0,
            full: false,
        }
    }

    /// Nothing more is taken.
    pub(super) fn done(&self) -> bool {
        self.full || self.items >= self.limit
    }

    /// Whether `item` (met in seq order) is claimed.
    pub(super) fn admits(&mut self, item: &Meta) -> bool {
        if self.done() || !self.runs.admits(item) {
            return false;
        }
        if self.items > 0 && self.bytes.saturating_add(item.bytes) > self.max_bytes {
            self.full = true;
            return false;
        }
        self.items += 1;
        self.bytes = self.bytes.saturating_add(item.bytes);
        true
    }
}
