//! Relayed subscriptions (issue #22 item 6): a v1.0 client's
//! `SubscribeToTask` of an idle task of a v0.3 agent.
//!
//! a2a-sdk 0.3 answers `tasks/resubscribe` on a task with no running
//! execution (one waiting in `input-required`, say) with TaskNotFound, over
//! JSON-RPC as an error event, over REST by breaking the stream off before
//! its first event, over gRPC as NOT_FOUND. A v1.0 agent instead keeps the
//! subscription open and streams what the next message does to the task.
//! The proxy sees that next message pass through it, so it does the same:
//!
//! - Before its first-Task `GetTask` (the subscribe's prelude), the
//!   subscribe registers a [`Subscription`] for the task id on the
//!   [`Relay`]. It is kept only when the prelude found the task (the agent
//!   accepted the subscriber's credentials for it) in a state that is not
//!   terminal; so a caller never receives events of a task it could not read.
//! - The agent's own resubscribe answer is relayed as before while it
//!   streams; when it refuses with TaskNotFound (or ends or breaks off
//!   before its first event), the subscription stays open and receives,
//!   rendered in the subscriber's binding, the events the proxy translates
//!   for that task for any v1.0 caller: answers of SendMessage, GetTask and
//!   CancelTask (as a status update, plus the Task itself when it is
//!   final) and the events of streaming sends and subscribes. It ends with
//!   the first terminal or interrupted (`input-required`, `auth-required`)
//!   state, as a v1.0 agent's stream does; a status equal to or older than
//!   the last one sent is skipped.
//! - Bounded: `limits.relay_max_subscriptions` open at once (more are served
//!   as before, the agent's refusal passed on), `limits.relay_max_wait_secs`
//!   of waiting (then the stream ends with an error), and
//!   `limits.relay_max_buffer_bytes` of events held for one subscriber
//!   (beyond, its stream ends with an error: the client asks GetTask).
//!
//! Across instances (issue #36; [`link`]): with a shared PostgreSQL store,
//! a subscription is announced to the other instances before its
//! first-Task `GetTask`, and what any instance relays for its task reaches
//! it through the store, in the store's one order; an instance's own
//! subscribers get its own events at once.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use chrono::{DateTime, FixedOffset};
use serde_json::{json, Value};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::config::RelayLimits;
use crate::sse::SseFramer;

pub mod link;
pub use link::Link;

/// A task id longer than this is never relayed.
const MAX_ID_BYTES: usize = 1024;

/// A status as last seen: the v1.0 state and its timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Status {
    state: String,
    timestamp: Option<String>,
}

impl Status {
    fn of(status: &Value) -> Option<Status> {
        Some(Status {
            state: status.get("state")?.as_str()?.to_string(),
            timestamp: status
                .get("timestamp")
                .and_then(Value::as_str)
                .map(String::from),
        })
    }

    fn time(&self) -> Option<DateTime<FixedOffset>> {
        DateTime::parse_from_rfc3339(self.timestamp.as_deref()?).ok()
    }

    /// A terminal or interrupted state: a v1.0 stream ends after it.
    fn ends(&self) -> bool {
        crate::tasks::is_terminal(&self.state)
            || matches!(
                self.state.as_str(),
                "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED"
            )
    }
}

/// What one relayed answer says of one task: its events (v1.0
/// `StreamResponse` JSON), and the status they carry.
#[derive(Debug, Clone)]
struct Batch {
    status: Option<Status>,
    events: Arc<Vec<Bytes>>,
    bytes: usize,
}

impl Batch {
    fn new(status: Option<Status>, events: Vec<Value>) -> Batch {
        let events: Vec<Bytes> = events
            .iter()
            .filter_map(|e| serde_json::to_vec(e).ok().map(Bytes::from))
            .collect();
        let bytes = events.iter().map(Bytes::len).sum();
        Batch {
            status,
            events: Arc::new(events),
            bytes,
        }
    }
}

/// The task a v1.0 result of `method` is about, and its events.
fn batch_of(method: &str, result: &Value) -> Option<(String, Batch)> {
    let id_of = |v: &Value, key: &str| v.get(key)?.as_str().map(String::from);
    let of_task = |t: &Value| {
        let id = id_of(t, "id")?;
        let status = t.get("status")?;
        let s = Status::of(status)?;
        let mut update = json!({ "taskId": id, "status": status });
        if let Some(c) = t.get("contextId") {
            update["contextId"] = c.clone();
        }
        let mut events = vec![json!({ "statusUpdate": update })];
        if s.ends() {
            // The whole task last (its artifacts and history), as a v1.0
            // stream may end.
            events.push(json!({ "task": t }));
        }
        Some((id, Batch::new(Some(s), events)))
    };
    match method {
        "GetTask" | "CancelTask" => of_task(result),
        "SendMessage" | "SendStreamingMessage" | "SubscribeToTask" => {
            if let Some(t) = result.get("task") {
                of_task(t)
            } else if let Some(u) = result.get("statusUpdate") {
                let s = Status::of(u.get("status")?)?;
                let events = vec![json!({ "statusUpdate": u })];
                Some((id_of(u, "taskId")?, Batch::new(Some(s), events)))
            } else if let Some(a) = result.get("artifactUpdate") {
                let events = vec![json!({ "artifactUpdate": a })];
                Some((id_of(a, "taskId")?, Batch::new(None, events)))
            } else {
                None
            }
        }
        _ => None,
    }
}

#[derive(Default)]
struct Held {
    batches: VecDeque<Batch>,
    bytes: usize,
    /// More than `max_buffer_bytes` arrived before they could be sent.
    overflow: bool,
}

#[derive(Default)]
struct Queue {
    held: Mutex<Held>,
    notify: Notify,
    /// Announced to the other instances ([`link`]): its task's events,
    /// this instance's too, reach it through the store, in its order.
    shared: std::sync::atomic::AtomicBool,
}

/// Which of a task's subscriptions a batch is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Who {
    All,
    /// Those announced to the other instances.
    Shared,
    /// Those not announced (relayed here at once).
    Local,
}

type Subscribers = HashMap<Arc<str>, Vec<(u64, Arc<Queue>)>>;

/// The open relayed subscriptions of this process, by task id.
pub struct Relay {
    limits: RelayLimits,
    open: AtomicUsize,
    next_id: AtomicU64,
    subs: Mutex<Subscribers>,
    /// The other instances, through a shared store ([`link`]).
    link: std::sync::OnceLock<Arc<dyn Link>>,
}

impl Relay {
    pub fn new(limits: RelayLimits) -> Relay {
        Relay {
            limits,
            open: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            subs: Mutex::new(HashMap::new()),
            link: std::sync::OnceLock::new(),
        }
    }

    pub fn limits(&self) -> RelayLimits {
        self.limits
    }

    /// Subscriptions open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Opens a subscription to task `task_id`; `None` when relaying is off
    /// or `max_subscriptions` are open.
    pub fn subscribe(self: &Arc<Self>, task_id: &str) -> Option<Subscription> {
        if task_id.is_empty() || task_id.len() > MAX_ID_BYTES {
            return None;
        }
        let mut subs = self.subs.lock().unwrap_or_else(|e| e.into_inner());
        if self.open.load(Ordering::Relaxed) >= self.limits.max_subscriptions {
            tracing::debug!(
                limit = self.limits.max_subscriptions,
                "relayed subscriptions at their limit; this one is not relayed"
            );
            return None;
        }
        self.open.fetch_add(1, Ordering::Relaxed);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let task: Arc<str> = Arc::from(task_id);
        let queue = Arc::new(Queue::default());
        subs.entry(task.clone())
            .or_default()
            .push((id, queue.clone()));
        drop(subs);
        let registered = self.link.get().and_then(|l| l.opened(id, task_id));
        queue.shared.store(registered.is_some(), Ordering::Relaxed);
        Some(Subscription {
            relay: self.clone(),
            task,
            id,
            queue,
            last: None,
            ready: VecDeque::new(),
            ending: false,
            shared: registered.is_some(),
            registered,
        })
    }

    /// Whether anything may be listening: a subscription here, or one of
    /// another instance ([`link`]).
    pub fn wanted(&self) -> bool {
        self.open() > 0 || self.link.get().is_some_and(|l| l.elsewhere_any())
    }

    /// Feeds a translated v1.0 JSON-RPC answer or stream event envelope of
    /// `method` (v1.0 name) to the subscriptions of its task.
    pub fn publish_envelope(&self, method: &str, envelope: &[u8]) {
        if !self.wanted() {
            return;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(envelope) {
            if let Some(r) = v.get("result") {
                self.publish_value(method, r);
            }
        }
    }

    /// [`Self::publish_envelope`] for a bare v1.0 result (a REST answer
    /// body or stream event, a gRPC reply as ProtoJSON).
    pub fn publish_result(&self, method: &str, body: &[u8]) {
        if !self.wanted() {
            return;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(body) {
            self.publish_value(method, &v);
        }
    }

    /// [`Self::publish_result`] for a parsed result.
    pub fn publish_value(&self, method: &str, result: &Value) {
        if !self.wanted() {
            return;
        }
        let Some((task, batch)) = batch_of(method, result) else {
            return;
        };
        // A task subscribed to through the store (here or elsewhere): its
        // events go there, and come back to this instance's announced
        // subscriptions in the store's one order; the others get them now.
        let link = self.link.get();
        let through = link.filter(|l| self.has_shared(&task) || l.elsewhere(&task));
        match through {
            Some(l) => {
                self.feed(&task, &batch, Who::Local);
                let status = batch.status.as_ref();
                let status = status.map(|s| (s.state.as_str(), s.timestamp.as_deref()));
                // A unary answer, or the event ending a stream, waits for
                // the store: what the client does next is ordered after it.
                let unary = matches!(method, "SendMessage" | "GetTask" | "CancelTask");
                let settle = unary || batch.status.as_ref().is_some_and(Status::ends);
                l.publish(&task, status, &batch.events, batch.bytes, settle);
            }
            None => {
                self.feed(&task, &batch, Who::All);
            }
        }
    }

    /// Whether a subscription to `task` here is announced to the others.
    fn has_shared(&self, task: &str) -> bool {
        let subs = self.subs.lock().unwrap_or_else(|e| e.into_inner());
        subs.get(task)
            .is_some_and(|v| v.iter().any(|(_, q)| q.shared.load(Ordering::Relaxed)))
    }

    /// Hands `batch` to this instance's subscriptions of `task` (those
    /// `who` names); how many.
    fn feed(&self, task: &str, batch: &Batch, who: Who) -> usize {
        let subs = self.subs.lock().unwrap_or_else(|e| e.into_inner());
        let Some(queues) = subs.get(task) else {
            return 0;
        };
        let mut n = 0;
        for (_, q) in queues {
            let shared = q.shared.load(Ordering::Relaxed);
            if (who == Who::Shared && !shared) || (who == Who::Local && shared) {
                continue;
            }
            n += 1;
            {
                let mut held = q.held.lock().unwrap_or_else(|e| e.into_inner());
                if held.overflow {
                    continue;
                }
                if held.bytes + batch.bytes > self.limits.max_buffer_bytes {
                    held.overflow = true;
                    held.batches.clear();
                    held.bytes = 0;
                } else {
                    held.bytes += batch.bytes;
                    held.batches.push_back(batch.clone());
                }
            }
            q.notify.notify_one();
        }
        n
    }

    fn remove(&self, task: &Arc<str>, id: u64) {
        let mut subs = self.subs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = subs.get_mut(task) {
            v.retain(|(i, _)| *i != id);
            if v.is_empty() {
                subs.remove(task);
            }
        }
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a relayed subscription has next.
#[derive(Debug)]
pub enum Next {
    /// One v1.0 `StreamResponse` (JSON).
    Event(Bytes),
    /// The task reached a terminal or interrupted state: the stream ends.
    End,
    /// `max_wait` ran out first.
    Expired,
    /// More events came than `max_buffer_bytes` could hold.
    Lost,
}

/// One open relayed subscription (closed on drop).
pub struct Subscription {
    relay: Arc<Relay>,
    task: Arc<str>,
    id: u64,
    queue: Arc<Queue>,
    last: Option<Status>,
    ready: VecDeque<Bytes>,
    ending: bool,
    /// Announced to the other instances ([`link`]).
    shared: bool,
    /// Fires once the other instances can know of it.
    registered: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.relay.remove(&self.task, self.id);
        if self.shared {
            if let Some(l) = self.relay.link.get() {
                l.closed(self.id);
            }
        }
    }
}

impl Subscription {
    /// The status the subscriber already has (the first Task it was sent):
    /// later ones equal to or older than it are not sent again.
    pub fn starts_at(&mut self, task: &Value) {
        self.last = task.get("status").and_then(Status::of);
    }

    /// Whether `s` is news to the subscriber.
    fn is_new(&self, s: &Status) -> bool {
        let Some(last) = &self.last else {
            return true;
        };
        if let (Some(a), Some(b)) = (s.time(), last.time()) {
            if a < b {
                return false;
            }
        }
        s != last
    }

    /// The next event, waiting at most until `until`.
    pub async fn next(&mut self, until: Instant) -> Next {
        loop {
            if let Some(e) = self.ready.pop_front() {
                return Next::Event(e);
            }
            if self.ending {
                return Next::End;
            }
            let batch = {
                let mut held = self.queue.held.lock().unwrap_or_else(|e| e.into_inner());
                if held.overflow {
                    return Next::Lost;
                }
                let b = held.batches.pop_front();
                if let Some(b) = &b {
                    held.bytes -= b.bytes;
                }
                b
            };
            let Some(batch) = batch else {
                // A notify_one before this wait left its permit: no event
                // is missed between the look above and the wait.
                let wait = self.queue.notify.notified();
                if tokio::time::timeout_at(until, wait).await.is_err() {
                    return Next::Expired;
                }
                continue;
            };
            if let Some(s) = &batch.status {
                if !self.is_new(s) {
                    continue;
                }
                self.ending = s.ends();
                self.last = Some(s.clone());
            }
            self.ready.extend(batch.events.iter().cloned());
        }
    }
}

/// Whether a v0.3 agent's answer or first stream event (JSON) refuses a
/// resubscribe with TaskNotFound: a JSON-RPC error -32001, or a REST 404
/// with a `code` / `message` body (a2a-python 0.3), not a framework's
/// `{"detail": ...}` of a missing route.
pub fn refuses(status: u16, body: &[u8]) -> bool {
    let not_found = translate::code::ErrorCode::TaskNotFound.code();
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    if v.pointer("/error/code").and_then(Value::as_i64) == Some(not_found) {
        return true;
    }
    status == 404
        && (v.get("code").and_then(Value::as_i64) == Some(not_found)
            || (v.get("message").is_some_and(Value::is_string) && v.get("detail").is_none()))
}

/// What the upstream's resubscribe stream turned out to be.
pub enum Watched {
    /// Its first event is not complete yet: the piece is held.
    Hold,
    /// A live stream: relayed as before, starting with these bytes (the
    /// pieces held so far); the subscription is closed.
    Live(Option<Bytes>),
    /// Refused (TaskNotFound), or over before its first event: the
    /// subscriber is served from the relay.
    Refused(Subscription),
}

/// Watches a v0.3 agent's SSE answer to a resubscribe until its first
/// event tells whether it is live (HTTP bindings).
pub struct Watch {
    sub: Option<Subscription>,
    framer: SseFramer,
    held: BytesMut,
    limit: usize,
}

impl Watch {
    /// `limit`: the most bytes held before the first event (then it is
    /// taken as live).
    pub fn new(sub: Subscription, limit: usize) -> Watch {
        Watch {
            sub: Some(sub),
            framer: SseFramer::new(limit),
            held: BytesMut::new(),
            limit,
        }
    }

    /// The subscription, when the agent answered `status` / `body` (not a
    /// stream) with its refusal.
    pub fn refused_answer(&mut self, status: u16, body: &[u8]) -> Option<Subscription> {
        self.sub.take().filter(|_| refuses(status, body))
    }

    /// The subscription, when the stream failed before its first event
    /// (a2a-python 0.3's REST binding breaks it off).
    pub fn failed(&mut self) -> Option<Subscription> {
        self.sub.take().filter(|_| self.held.is_empty())
    }

    /// One piece of the stream (`None` with `end`: its end).
    pub fn piece(&mut self, piece: Option<Bytes>, end: bool) -> Watched {
        let mut events = Vec::new();
        let mut framed = Ok(());
        if let Some(p) = &piece {
            self.held.extend_from_slice(p);
            framed = self.framer.push(p, &mut events);
        }
        if end && framed.is_ok() {
            framed = self.framer.finish(&mut events);
        }
        let first = events.iter().find_map(|e| crate::sse::event_data(e));
        let live = |held: &mut BytesMut| Watched::Live(Some(std::mem::take(held).freeze()));
        if framed.is_err() || self.held.len() > self.limit {
            self.sub = None;
            return live(&mut self.held);
        }
        match first {
            Some(d) if refuses(200, d.as_bytes()) => match self.sub.take() {
                Some(s) => Watched::Refused(s),
                None => live(&mut self.held),
            },
            Some(_) => {
                self.sub = None;
                live(&mut self.held)
            }
            None if end => match self.sub.take() {
                Some(s) => Watched::Refused(s),
                None => live(&mut self.held),
            },
            None => Watched::Hold,
        }
    }
}

/// A v1.0 gRPC subscribe's replies: `task` (the first Task) at once, then
/// the agent's resubscribe replies; when the first one is NOT_FOUND (the
/// agent's refusal of an idle task) or they end before any, the subscriber
/// gets `sub`'s events instead, converted by `conv`, up to the task's end
/// or `until` (then `fail`'s status for the failure); otherwise the replies
/// go on (a first one that `is_task` is left out: the Task went first) and
/// `sub` closes.
pub fn follow<T: Send + 'static>(
    task: T,
    mut replies: tokio_stream::wrappers::ReceiverStream<Result<T, tonic::Status>>,
    mut sub: Subscription,
    conv: fn(Value) -> Result<T, String>,
    is_task: fn(&T) -> bool,
    until: Instant,
    fail: impl Fn(&crate::error::Failure) -> tonic::Status + Send + 'static,
) -> tokio_stream::wrappers::ReceiverStream<Result<T, tonic::Status>> {
    use crate::error::Failure;
    use tokio_stream::StreamExt;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let max_wait = sub.relay.limits.max_wait.as_secs();
    tokio::spawn(async move {
        if tx.send(Ok(task)).await.is_err() {
            return;
        }
        // A caller gone away ends this; dropping `replies` then ends the
        // agent's call.
        let first = tokio::select! {
            _ = tx.closed() => return,
            n = replies.next() => n,
        };
        let refused = match &first {
            None => true,
            Some(Err(s)) => s.code() == tonic::Code::NotFound,
            Some(Ok(_)) => false,
        };
        if !refused {
            drop(sub);
            let mut next = first.filter(|r| !r.as_ref().is_ok_and(is_task));
            if next.is_none() {
                next = tokio::select! {
                    _ = tx.closed() => return,
                    n = replies.next() => n,
                };
            }
            while let Some(item) = next {
                if tx.send(item).await.is_err() {
                    return;
                }
                next = tokio::select! {
                    _ = tx.closed() => return,
                    n = replies.next() => n,
                };
            }
            return;
        }
        drop(replies);
        loop {
            let next = tokio::select! {
                _ = tx.closed() => return,
                n = sub.next(until) => n,
            };
            let item = match next {
                Next::Event(b) => serde_json::from_slice(&b)
                    .map_err(|e| e.to_string())
                    .and_then(conv)
                    .map_err(|detail| fail(&Failure::BadUpstreamResponse { detail })),
                Next::End => return,
                Next::Expired => Err(fail(&Failure::StreamExpired {
                    limit_secs: max_wait,
                })),
                Next::Lost => Err(fail(&Failure::Internal {
                    detail: "more relayed events than limits.relay_max_buffer_bytes".into(),
                })),
            };
            let last = item.is_err();
            if tx.send(item).await.is_err() || last {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

#[cfg(test)]
mod tests;
