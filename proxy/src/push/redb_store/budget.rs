//! How much of each callback's run one claim takes.

use std::collections::HashMap;

use super::OutboxItem;

/// How many more items of each callback's run a claim may take, decided
/// at the callback's oldest item (0: skip all of it: it is not due, or
/// another instance holds it).
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
    pub(super) fn admits(&mut self, item: &OutboxItem) -> bool {
        let (now, limit) = (self.now_ms, self.run_limit);
        let left = self
            .left
            .entry(item.callback_id.clone())
            .or_insert_with(|| {
                if item.next_attempt_ms <= now && item.lease_until_ms <= now {
                    limit.max(1)
                } else {
                    0
                }
            });
        if *left == 0 {
            return false;
        }
        *left -= 1;
        true
    }
}
