//! What `/ready` last found for one agent, so its log says when readiness
//! changes (ready -> not ready, another reason, back to ready), not on
//! every poll: a load balancer asking each second does not flood the log.

use std::sync::Mutex;

use crate::error::Failure;

/// The last readiness seen: `None` before the first poll, then
/// `Some(None)` when ready, `Some(Some(reason))` when not (the failure's
/// label).
#[derive(Debug, Default)]
pub struct ReadyLog(Mutex<Option<Option<&'static str>>>);

impl ReadyLog {
    /// Notes one poll's outcome for `agent`: logs a change (a warn with
    /// the reason and its detail when not ready, an info when ready), and
    /// nothing when it is as before.
    pub fn note(&self, agent: &str, outcome: Result<(), &Failure>) {
        let now = outcome.err().map(Failure::label);
        let before = match self.0.lock() {
            Ok(mut last) => last.replace(now),
            Err(_) => None,
        };
        if before == Some(now) {
            return;
        }
        match outcome {
            Err(f) => {
                let (detail, truncated) = f.logged_detail().unwrap_or_default();
                tracing::warn!(
                    agent,
                    reason = f.label(),
                    detail = %detail.escape_debug(),
                    truncated,
                    "agent not ready"
                );
            }
            Ok(()) => tracing::info!(agent, "agent ready"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_only() {
        let log = ReadyLog::default();
        let down = Failure::UpstreamUnavailable { detail: "x".into() };
        let state = |l: &ReadyLog| *l.0.lock().unwrap();
        assert_eq!(state(&log), None);
        log.note("a", Err(&down));
        assert_eq!(state(&log), Some(Some("upstream_unavailable")));
        log.note("a", Ok(()));
        assert_eq!(state(&log), Some(None));
    }
}
