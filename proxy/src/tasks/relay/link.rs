//! The relay across instances (issue #36): what a shared store offers the
//! [`Relay`] ([`Link`], implemented by `push::relay_sync` on PostgreSQL),
//! and what it hands back (events relayed on other instances).
//!
//! - A subscription is announced when it opens ([`Link::opened`]); the
//!   subscribe waits for that ([`Subscription::shared`], at most
//!   [`REGISTER_WAIT`]) before its first-Task `GetTask`, so an event any
//!   instance relays after the subscriber's first Task reaches it.
//! - An event batch of a task another instance subscribes to goes to the
//!   store ([`Link::publish`]); batches the store hands back
//!   ([`Relay::deliver`]) meet the same bounds as local ones: a subscriber
//!   whose held events would pass `relay_max_buffer_bytes` is told
//!   [`Next::Lost`], as is one whose events the store could not carry
//!   ([`Relay::deliver_lost`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::{Batch, Relay, Status, Subscription, Who};

/// The longest a subscribe waits for its announcement before asking for
/// its first Task (the store down: it goes on, relayed on this instance
/// only).
pub const REGISTER_WAIT: Duration = Duration::from_secs(2);

/// The other instances, as the relay reaches them.
pub trait Link: Send + Sync {
    /// Whether another instance has any subscription open (cheap: asked
    /// for every translated answer).
    fn elsewhere_any(&self) -> bool;
    /// Whether another instance has a subscription to `task` open.
    fn elsewhere(&self, task: &str) -> bool;
    /// An event batch for the other instances' subscribers of `task`:
    /// its status (state, timestamp) and events (`StreamResponse` JSON),
    /// `bytes` in all. Over the link's bounds, the task's subscribers are
    /// told it was lost. `settle`: the caller's answer follows once the
    /// batch is in the store (a bounded wait), so a call made after it
    /// through another instance is ordered after it.
    fn publish(
        &self,
        task: &str,
        status: Option<(&str, Option<&str>)>,
        events: &[Bytes],
        bytes: usize,
        settle: bool,
    );
    /// Subscription `sub` of this instance to `task` opened; `None` when
    /// it is not announced (the receiver fires once it is, or drops when
    /// it cannot be).
    fn opened(&self, sub: u64, task: &str) -> Option<tokio::sync::oneshot::Receiver<()>>;
    /// Subscription `sub` closed.
    fn closed(&self, sub: u64);
}

impl Relay {
    /// Links this relay to the other instances (once; later calls do
    /// nothing).
    pub fn link(&self, link: Arc<dyn Link>) {
        let _ = self.link.set(link);
    }

    /// The task ids this instance has subscriptions to.
    pub fn tasks(&self) -> Vec<Arc<str>> {
        let subs = self.subs.lock().unwrap_or_else(|e| e.into_inner());
        subs.keys().cloned().collect()
    }

    /// An event batch relayed through the store for `task` (its status'
    /// state and timestamp, its events), handed to this instance's
    /// subscribers of it; how many got it. `own`: relayed by this
    /// instance, which gave it at once to its subscribers that are not
    /// announced (so only the announced ones get it now).
    pub fn deliver(
        &self,
        task: &str,
        own: bool,
        state: Option<String>,
        timestamp: Option<String>,
        events: Vec<Bytes>,
    ) -> usize {
        let status = state.map(|state| Status { state, timestamp });
        let bytes = events.iter().map(Bytes::len).sum();
        let batch = Batch {
            status,
            events: Arc::new(events),
            bytes,
        };
        self.feed(task, &batch, if own { Who::Shared } else { Who::All })
    }

    /// Events of `task` were lost on their way from another instance:
    /// its subscribers here end as when their own buffer overflows.
    pub fn deliver_lost(&self, task: &str) -> usize {
        let subs = self.subs.lock().unwrap_or_else(|e| e.into_inner());
        let Some(queues) = subs.get(task) else {
            return 0;
        };
        for (_, q) in queues {
            {
                let mut held = q.held.lock().unwrap_or_else(|e| e.into_inner());
                held.overflow = true;
                held.batches.clear();
                held.bytes = 0;
            }
            q.notify.notify_one();
        }
        queues.len()
    }
}

impl Subscription {
    /// Waits (at most [`REGISTER_WAIT`]) until the other instances can
    /// know of this subscription; at once when there are none.
    pub async fn shared(&mut self) {
        if let Some(rx) = self.registered.take() {
            let _ = tokio::time::timeout(REGISTER_WAIT, rx).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;
    use std::sync::Mutex as StdMutex;

    /// A link that records what it is given, with another instance
    /// subscribed to `t`.
    #[derive(Default)]
    struct Recording {
        published: StdMutex<Vec<(String, Option<String>, usize)>>,
        opened: StdMutex<Vec<(u64, String)>>,
        closed: StdMutex<Vec<u64>>,
    }

    impl Link for Recording {
        fn elsewhere_any(&self) -> bool {
            true
        }
        fn elsewhere(&self, task: &str) -> bool {
            task == "t"
        }
        fn publish(
            &self,
            task: &str,
            status: Option<(&str, Option<&str>)>,
            events: &[Bytes],
            _: usize,
            _: bool,
        ) {
            let state = status.map(|s| s.0.to_string());
            self.published
                .lock()
                .unwrap()
                .push((task.into(), state, events.len()));
        }
        fn opened(&self, sub: u64, task: &str) -> Option<tokio::sync::oneshot::Receiver<()>> {
            self.opened.lock().unwrap().push((sub, task.into()));
            let (tx, rx) = tokio::sync::oneshot::channel();
            let _ = tx.send(());
            Some(rx)
        }
        fn closed(&self, sub: u64) {
            self.closed.lock().unwrap().push(sub);
        }
    }

    fn relay() -> Arc<Relay> {
        Arc::new(Relay::new(RelayLimits {
            max_subscriptions: 4,
            max_wait: Duration::from_secs(5),
            max_buffer_bytes: 300,
        }))
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    /// With no subscriber here, what another instance waits for still goes
    /// to the link; a subscription is announced, waited for and closed.
    #[tokio::test]
    async fn events_of_tasks_subscribed_elsewhere_go_to_the_link() {
        let r = relay();
        let link = Arc::new(Recording::default());
        r.link(link.clone());
        let t = |id: &str| json!({"id": id, "status": {"state": "TASK_STATE_COMPLETED"}});
        r.publish_value("GetTask", &t("t"));
        r.publish_value("GetTask", &t("other"));
        let got = link.published.lock().unwrap().clone();
        assert_eq!(
            got,
            [("t".to_string(), Some("TASK_STATE_COMPLETED".into()), 2)]
        );
        let mut s = r.subscribe("u").unwrap();
        s.shared().await;
        assert_eq!(
            link.opened.lock().unwrap().clone(),
            [(s.id, "u".to_string())]
        );
        let id = s.id;
        drop(s);
        assert_eq!(link.closed.lock().unwrap().clone(), [id]);
    }

    /// What another instance relayed reaches the subscribers here in the
    /// order handed, skips what they have, ends at the task's end, and
    /// meets the buffer bound; a loss on the way ends them too.
    #[tokio::test]
    async fn delivered_batches_meet_the_local_rules() {
        let r = relay();
        let mut s = r.subscribe("t").unwrap();
        s.starts_at(&json!({"status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-01-01T00:00:01Z"}}));
        let ev = |state: &str, ts: &str| {
            Bytes::from(json!({"statusUpdate": {"taskId": "t", "status": {"state": state, "timestamp": ts}}}).to_string())
        };
        let same = ev("TASK_STATE_INPUT_REQUIRED", "2026-01-01T00:00:01Z");
        assert_eq!(
            r.deliver(
                "t",
                false,
                Some("TASK_STATE_INPUT_REQUIRED".into()),
                Some("2026-01-01T00:00:01Z".into()),
                vec![same]
            ),
            1
        );
        let done = ev("TASK_STATE_COMPLETED", "2026-01-01T00:00:02Z");
        let completed = || {
            (
                Some("TASK_STATE_COMPLETED".to_string()),
                Some("2026-01-01T00:00:02Z".to_string()),
            )
        };
        // This instance's own batch back from the store: only for the
        // announced subscriptions (this one is not: it had it at once).
        let (st, ts) = completed();
        assert_eq!(r.deliver("t", true, st, ts, vec![done.clone()]), 0);
        let (st, ts) = completed();
        r.deliver("t", false, st, ts, vec![done.clone()]);
        assert_eq!(
            r.deliver("nobody", false, None, None, vec![done.clone()]),
            0
        );
        match s.next(soon()).await {
            Next::Event(b) => assert_eq!(b, done),
            other => panic!("{other:?}"),
        }
        assert!(matches!(s.next(soon()).await, Next::End));
        drop(s);

        let mut s = r.subscribe("t").unwrap();
        let big = Bytes::from(vec![b'x'; 200]);
        r.deliver("t", false, None, None, vec![big.clone()]);
        r.deliver("t", false, None, None, vec![big]);
        assert!(matches!(s.next(soon()).await, Next::Lost));
        drop(s);
        let mut s = r.subscribe("t").unwrap();
        assert_eq!(r.deliver_lost("t"), 1);
        assert!(matches!(s.next(soon()).await, Next::Lost));
        assert_eq!(r.tasks(), [Arc::<str>::from("t")]);
    }
}
