//! What several proxy instances on one PostgreSQL store share besides the
//! push outbox (issue #36): the ListTasks index as a change feed, the
//! relayed events and subscriptions of idle tasks, and the deployment's
//! credentials key check. The SQL lives here; `task_sync.rs`,
//! `relay_sync.rs` and `pg_listen.rs` run it.
//!
//! - **Task index** (`push_tasks`, schema 7): every write takes a new
//!   `change_seq` under [`TASKS_LOCK`], so change order is commit order
//!   and a reader that has seen change `n` has seen every change before
//!   it; the writer's start id (`origin`) tells an instance its own rows.
//!   A write notifies [`TASKS_CHANNEL`]; readers follow with
//!   [`PgShared::tasks_since`]. Entries are ordered (loaded, kept within
//!   the bound) by when they were seen, `updated_ms` (the seeing
//!   instance's clock), as every instance's index orders them.
//! - **Relay** (`relay_events`, `relay_subscriptions`): an event batch for
//!   a task some other instance subscribes to is a row, its id taken under
//!   [`RELAY_LOCK`] (ids in commit order); the notification on
//!   [`RELAY_CHANNEL`] carries only `id:key` pairs (a NOTIFY payload is at
//!   most 8000 bytes; `key` is a short hash of the task id, so an instance
//!   without a subscriber of that task reads nothing). Rows are kept
//!   [`RELAY_KEEP`] and at most [`RELAY_KEEP_BYTES`] / [`RELAY_KEEP_ROWS`].
//!   Open subscriptions are rows too, expiring with their longest wait,
//!   announced on [`SUBS_CHANNEL`].
//! - **Deployment** (`push_deployment`): the fingerprint of the credentials
//!   key the instances share, or, without a key file, the random secret
//!   their ListTasks scopes are keyed with.
//!
//! Sync client on threads of its own, like the rest of the store; the
//! connection string is never logged nor put in errors.

use std::path::Path;
use std::time::Duration;

use postgres::Client;

use super::pg_store::Pool;
use super::{StoreError, TaskRecord};

/// Notified after each write of the task index (payload: its last change).
pub const TASKS_CHANNEL: &str = "a2a_tasks";
/// Notified with the `id:key` pairs of relayed event rows, in commit order.
pub const RELAY_CHANNEL: &str = "a2a_relay";
/// Notified when relayed subscriptions open (`+<instance> <sub> <task>`)
/// or close (`-<instance> <sub>...`, `*` for all of an instance's).
pub const SUBS_CHANNEL: &str = "a2a_relay_subs";
/// Advisory lock serializing task-index writes (change order = commit order).
const TASKS_LOCK: i64 = 0x0a2a_9005_0003;
/// Advisory lock serializing relayed-event writes (id order = commit order).
const RELAY_LOCK: i64 = 0x0a2a_9005_0004;
/// Advisory lock of the deployment row's first write.
const DEPLOYMENT_LOCK: i64 = 0x0a2a_9005_0005;
/// Bytes of one NOTIFY payload (PostgreSQL refuses more than 8000).
pub const MAX_PAYLOAD: usize = 7900;
/// How long relayed event rows are kept (readers take them within
/// milliseconds; this covers a listener's reconnect).
pub const RELAY_KEEP: Duration = Duration::from_secs(60);
/// Most bytes of relayed events kept in the table.
pub const RELAY_KEEP_BYTES: i64 = 64 * 1024 * 1024;
/// Most relayed event rows kept in the table.
pub const RELAY_KEEP_ROWS: i64 = 100_000;
/// Idle connections kept for reuse.
const POOL_IDLE: usize = 4;
/// The label of the deployment's key fingerprint.
const FINGERPRINT_LABEL: &[u8] = b"a2a-compat-proxy/deployment-key-check/v1";

fn e(x: impl std::fmt::Display) -> StoreError {
    StoreError(format!("postgres: {x}"))
}

/// The short key of a task id in relay notifications: 16 hex digits of its
/// SHA-256.
pub fn task_key(task: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, task.as_bytes());
    d.as_ref()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// A change of the task index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskChange {
    pub change: i64,
    /// The entry's store key (`<scope>/<task id>`).
    pub id: String,
    /// When the entry was seen (Unix ms): its place in the order.
    pub updated_ms: i64,
    /// The stored summary; `None` for a row this instance wrote itself.
    pub summary: Option<String>,
}

/// One relayed event batch to write: what one answer said of one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayWrite {
    pub task_id: String,
    pub state: Option<String>,
    pub timestamp: Option<String>,
    /// The batch was lost on its way (over a bound, or the store was
    /// down): the task's subscribers elsewhere are told so.
    pub lost: bool,
    /// The events (v1.0 `StreamResponse` JSON), one per line.
    pub events: String,
}

/// One relayed event batch as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayRow {
    pub id: i64,
    pub origin: String,
    pub batch: RelayWrite,
}

/// The instance-sharing side of a PostgreSQL store: its own small pool of
/// clients, and this start's id.
pub struct PgShared {
    pool: Pool,
    instance: String,
}

impl std::fmt::Debug for PgShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgShared")
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

impl PgShared {
    /// `config`: the store's (already checked) connection settings.
    pub(super) fn new(config: postgres::Config) -> PgShared {
        PgShared {
            pool: Pool::new(config, POOL_IDLE),
            instance: format!("i-{}", crate::ids::random_id()),
        }
    }

    /// This start's id: the origin of what it writes.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The settings of a long-lived listening connection: TCP keepalives
    /// on, so a server that vanished without a word is noticed.
    pub fn listen_config(&self) -> postgres::Config {
        let mut c = self.pool.config().clone();
        c.keepalives(true)
            .keepalives_idle(Duration::from_secs(5))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3);
        c
    }

    // ---- The ListTasks index ----

    /// Writes index entries as this instance's changes (see [`put_tasks_on`]).
    pub fn put_tasks(&self, tasks: &[TaskRecord], keep: usize) -> Result<(), StoreError> {
        self.pool
            .with(|c| put_tasks_on(c, &self.instance, tasks, keep))
    }

    /// The `limit` most recently seen entries, oldest first, and the
    /// change they reach (where [`Self::tasks_since`] goes on).
    pub fn load_tasks(&self, limit: usize) -> Result<(i64, Vec<TaskRecord>), StoreError> {
        self.pool.with(|c| {
            let rows = load_rows(c, limit)?;
            let last = rows.iter().map(|r| r.0).max().unwrap_or(0);
            Ok((last, rows.into_iter().map(|r| r.1).collect()))
        })
    }

    /// Changes after `after`, in change order, at most `limit`; a change
    /// this instance made comes without its summary (it has it).
    pub fn tasks_since(&self, after: i64, limit: usize) -> Result<Vec<TaskChange>, StoreError> {
        let limit = i64::try_from(limit).map_err(e)?;
        self.pool.with(|c| {
            let rows = c
                .query(
                    "SELECT change_seq, id, updated_ms, CASE WHEN origin = $2 THEN NULL ELSE data END \
                     FROM push_tasks WHERE change_seq > $1 ORDER BY change_seq LIMIT $3",
                    &[&after, &self.instance, &limit],
                )
                .map_err(e)?;
            rows.iter()
                .map(|r| {
                    Ok(TaskChange {
                        change: r.try_get(0).map_err(e)?,
                        id: r.try_get(1).map_err(e)?,
                        updated_ms: r.try_get(2).map_err(e)?,
                        summary: r.try_get(3).map_err(e)?,
                    })
                })
                .collect()
        })
    }

    // ---- Relayed subscriptions and events ----

    /// Records subscription `sub` of this instance to `task`, expiring
    /// after `ttl`, and tells the other instances.
    pub fn subscribe(&self, sub: u64, task: &str, ttl: Duration) -> Result<(), StoreError> {
        let sub = i64::try_from(sub).map_err(e)?;
        let ttl = ttl.as_secs_f64();
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            tx.execute(
                "INSERT INTO relay_subscriptions (instance, sub, task_id, expires) \
                 VALUES ($1, $2, $3, now() + make_interval(secs => $4)) \
                 ON CONFLICT (instance, sub) DO NOTHING",
                &[&self.instance, &sub, &task, &ttl],
            )
            .map_err(e)?;
            let said = format!("+{} {sub} {task}", self.instance);
            tx.execute("SELECT pg_notify($1, $2)", &[&SUBS_CHANNEL, &said])
                .map_err(e)?;
            tx.commit().map_err(e)
        })
    }

    /// Removes subscriptions of this instance (`None`: all of them).
    pub fn unsubscribe(&self, subs: Option<&[u64]>) -> Result<(), StoreError> {
        let subs: Option<Vec<i64>> = subs
            .map(|s| s.iter().map(|x| i64::try_from(*x).map_err(e)).collect())
            .transpose()?;
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            match &subs {
                Some(s) => tx.execute(
                    "DELETE FROM relay_subscriptions WHERE instance = $1 AND sub = ANY($2)",
                    &[&self.instance, s],
                ),
                None => tx.execute(
                    "DELETE FROM relay_subscriptions WHERE instance = $1",
                    &[&self.instance],
                ),
            }
            .map_err(e)?;
            // `-<instance> <sub> <sub>...` (`*`: all), within a payload.
            let mut said = format!("-{}", self.instance);
            let mut notify = |said: &str| {
                tx.execute("SELECT pg_notify($1, $2)", &[&SUBS_CHANNEL, &said])
                    .map(|_| ())
                    .map_err(e)
            };
            match &subs {
                None => said.push_str(" *"),
                Some(s) => {
                    for sub in s {
                        if said.len() + 21 > MAX_PAYLOAD {
                            notify(&said)?;
                            said = format!("-{}", self.instance);
                        }
                        said.push_str(&format!(" {sub}"));
                    }
                }
            }
            notify(&said)?;
            tx.commit().map_err(e)
        })
    }

    /// The subscriptions other instances have open, `(instance, sub,
    /// task)` (expired ones, of an instance that died, left out and
    /// removed).
    pub fn subscribed_elsewhere(&self) -> Result<Vec<(String, u64, String)>, StoreError> {
        self.pool.with(|c| {
            c.execute("DELETE FROM relay_subscriptions WHERE expires < now()", &[])
                .map_err(e)?;
            let rows = c
                .query(
                    "SELECT instance, sub, task_id FROM relay_subscriptions \
                     WHERE instance <> $1 AND expires >= now()",
                    &[&self.instance],
                )
                .map_err(e)?;
            rows.iter()
                .map(|r| {
                    let sub: i64 = r.try_get(1).map_err(e)?;
                    Ok((
                        r.try_get(0).map_err(e)?,
                        u64::try_from(sub).map_err(e)?,
                        r.try_get(2).map_err(e)?,
                    ))
                })
                .collect()
        })
    }

    /// Writes event batches in one transaction, in order, as this
    /// instance's, and notifies their ids; the ids.
    pub fn publish(&self, batches: &[RelayWrite]) -> Result<Vec<i64>, StoreError> {
        if batches.is_empty() {
            return Ok(Vec::new());
        }
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&RELAY_LOCK])
                .map_err(e)?;
            let put = tx
                .prepare(
                    "INSERT INTO relay_events (task_id, origin, state, ts, lost, events, bytes) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                )
                .map_err(e)?;
            let mut ids = Vec::with_capacity(batches.len());
            let mut payload = String::new();
            for b in batches {
                let bytes = i64::try_from(b.events.len()).map_err(e)?;
                let row = tx
                    .query_one(
                        &put,
                        &[
                            &b.task_id,
                            &self.instance,
                            &b.state,
                            &b.timestamp,
                            &b.lost,
                            &b.events,
                            &bytes,
                        ],
                    )
                    .map_err(e)?;
                let id: i64 = row.try_get(0).map_err(e)?;
                ids.push(id);
                let pair = format!("{id}:{}", task_key(&b.task_id));
                if !payload.is_empty() && payload.len() + 1 + pair.len() > MAX_PAYLOAD {
                    tx.execute("SELECT pg_notify($1, $2)", &[&RELAY_CHANNEL, &payload])
                        .map_err(e)?;
                    payload.clear();
                }
                if !payload.is_empty() {
                    payload.push(',');
                }
                payload.push_str(&pair);
            }
            tx.execute("SELECT pg_notify($1, $2)", &[&RELAY_CHANNEL, &payload])
                .map_err(e)?;
            tx.commit().map_err(e)?;
            Ok(ids)
        })
    }

    /// The event rows of `ids`, in id order.
    pub fn events(&self, ids: &[i64]) -> Result<Vec<RelayRow>, StoreError> {
        self.pool.with(|c| {
            let rows = c
                .query(
                    &format!(
                        "SELECT {RELAY_COLS} FROM relay_events WHERE id = ANY($1) ORDER BY id"
                    ),
                    &[&ids],
                )
                .map_err(e)?;
            rows.iter().map(relay_row).collect()
        })
    }

    /// Event rows of `tasks` after id `after`, in id order, at most `limit`.
    pub fn events_since(
        &self,
        after: i64,
        tasks: &[String],
        limit: usize,
    ) -> Result<Vec<RelayRow>, StoreError> {
        let limit = i64::try_from(limit).map_err(e)?;
        self.pool.with(|c| {
            let rows = c
                .query(
                    &format!(
                        "SELECT {RELAY_COLS} FROM relay_events WHERE id > $1 AND task_id = ANY($2) \
                         ORDER BY id LIMIT $3"
                    ),
                    &[&after, &tasks, &limit],
                )
                .map_err(e)?;
            rows.iter().map(relay_row).collect()
        })
    }

    /// The oldest and the newest event row id (0, 0: none).
    pub fn event_ids(&self) -> Result<(i64, i64), StoreError> {
        self.pool.with(|c| {
            let r = c
                .query_one(
                    "SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM relay_events",
                    &[],
                )
                .map_err(e)?;
            Ok((r.try_get(0).map_err(e)?, r.try_get(1).map_err(e)?))
        })
    }

    /// Drops event rows older than [`RELAY_KEEP`] and the oldest beyond
    /// [`RELAY_KEEP_BYTES`] or [`RELAY_KEEP_ROWS`].
    pub fn prune_events(&self) -> Result<u64, StoreError> {
        let keep = RELAY_KEEP.as_secs_f64();
        self.pool.with(|c| {
            let old = c
                .execute(
                    "DELETE FROM relay_events WHERE created < now() - make_interval(secs => $1)",
                    &[&keep],
                )
                .map_err(e)?;
            let over = c
                .execute(
                    "DELETE FROM relay_events WHERE id IN (SELECT id FROM (SELECT id, \
                     (SUM(bytes) OVER (ORDER BY id DESC))::BIGINT AS s, \
                     ROW_NUMBER() OVER (ORDER BY id DESC) AS n FROM relay_events) t \
                     WHERE s > $1 OR n > $2)",
                    &[&RELAY_KEEP_BYTES, &RELAY_KEEP_ROWS],
                )
                .map_err(e)?;
            Ok(old + over)
        })
    }

    // ---- The deployment ----

    /// Checks this instance's credentials key against the deployment's
    /// (the first instance records it) and gives the secret its ListTasks
    /// scopes are keyed with: the one derived from the key
    /// (`list_scope`), or without a key file the deployment's own random
    /// one. Another key, or none where the others have one, is refused
    /// naming `key_file` (`push.credentials_key_file`).
    pub fn deployment_secret(
        &self,
        list_scope: Option<[u8; 32]>,
        key_file: Option<&Path>,
    ) -> Result<[u8; 32], StoreError> {
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&DEPLOYMENT_LOCK])
                .map_err(e)?;
            let row = tx
                .query_opt("SELECT kind, value FROM push_deployment", &[])
                .map_err(e)?;
            let row: Option<(String, String)> = row
                .map(|r| Ok::<_, StoreError>((r.try_get(0).map_err(e)?, r.try_get(1).map_err(e)?)))
                .transpose()?;
            let put = |tx: &mut postgres::Transaction<'_>, kind: &str, value: &str| {
                tx.execute(
                    "INSERT INTO push_deployment (singleton, kind, value) VALUES (TRUE, $1, $2) \
                     ON CONFLICT (singleton) DO UPDATE SET kind = EXCLUDED.kind, value = EXCLUDED.value",
                    &[&kind, &value],
                )
                .map_err(e)
            };
            let secret = match (list_scope, row) {
                (Some(s), None) => {
                    put(&mut tx, "key", &fingerprint(&s))?;
                    s
                }
                (Some(s), Some((kind, value))) if kind == "key" => {
                    if value != fingerprint(&s) {
                        let file = key_file.map_or("(none)".into(), |p| p.display().to_string());
                        return Err(StoreError(format!(
                            "push.credentials_key_file {file}: another credentials key than the \
                             one the other instances on this PostgreSQL store use: every instance \
                             of a deployment needs the same key file"
                        )));
                    }
                    s
                }
                (Some(s), Some(_)) => {
                    tracing::warn!("this PostgreSQL store's instances ran without push.credentials_key_file: from now on its key seals credentials and keys ListTasks scopes; give every instance the same key file");
                    put(&mut tx, "key", &fingerprint(&s))?;
                    s
                }
                (None, Some((kind, _))) if kind == "key" => {
                    return Err(StoreError(
                        "push.credentials_key_file is not set, but the other instances on this \
                         PostgreSQL store seal credentials with a key: give this one the same key file"
                            .into(),
                    ));
                }
                (None, Some((_, value))) => parse_secret(&value)
                    .ok_or_else(|| StoreError("postgres: push_deployment holds a bad secret".into()))?,
                (None, None) => {
                    use rand::RngCore;
                    let mut s = [0u8; 32];
                    rand::rngs::OsRng.fill_bytes(&mut s);
                    put(&mut tx, "none", &hex(&s))?;
                    s
                }
            };
            tx.commit().map_err(e)?;
            Ok(secret)
        })
    }
}

const RELAY_COLS: &str = "id, origin, task_id, state, ts, lost, events";

fn relay_row(r: &postgres::Row) -> Result<RelayRow, StoreError> {
    Ok(RelayRow {
        id: r.try_get(0).map_err(e)?,
        origin: r.try_get(1).map_err(e)?,
        batch: RelayWrite {
            task_id: r.try_get(2).map_err(e)?,
            state: r.try_get(3).map_err(e)?,
            timestamp: r.try_get(4).map_err(e)?,
            lost: r.try_get(5).map_err(e)?,
            events: r.try_get(6).map_err(e)?,
        },
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn parse_secret(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, x) in out.iter_mut().enumerate() {
        *x = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// What the deployment row keeps of a key: a labelled HMAC of its scope
/// secret (never the key, nor anything it seals with).
fn fingerprint(list_scope: &[u8; 32]) -> String {
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, list_scope);
    hex(&ring::hmac::sign(&k, FINGERPRINT_LABEL).as_ref()[..16])
}

/// Writes (inserts or replaces by id) entries of the ListTasks index as
/// changes of `origin`, in order, then drops the least recently seen
/// (`updated_ms`) beyond `keep` (when over by an eighth). Under [`TASKS_LOCK`], so change
/// order is commit order; notifies [`TASKS_CHANNEL`].
pub(super) fn put_tasks_on(
    c: &mut Client,
    origin: &str,
    tasks: &[TaskRecord],
    keep: usize,
) -> Result<(), StoreError> {
    let keep = i64::try_from(keep).map_err(e)?;
    let mut tx = c.transaction().map_err(e)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&TASKS_LOCK])
        .map_err(e)?;
    let put = tx
        .prepare(
            "INSERT INTO push_tasks (id, updated_ms, data, change_seq, origin) \
             VALUES ($1, $2, $3, nextval('push_tasks_change'), $4) \
             ON CONFLICT (id) DO UPDATE SET updated_ms = EXCLUDED.updated_ms, \
             data = EXCLUDED.data, change_seq = EXCLUDED.change_seq, origin = EXCLUDED.origin",
        )
        .map_err(e)?;
    for r in tasks {
        tx.execute(&put, &[&r.id, &r.updated_ms, &r.task, &origin])
            .map_err(e)?;
    }
    let n: i64 = tx
        .query_one("SELECT COUNT(*) FROM push_tasks", &[])
        .map_err(e)?
        .try_get(0)
        .map_err(e)?;
    if n > keep + keep / 8 + 1 {
        tx.execute(
            "DELETE FROM push_tasks WHERE id IN (SELECT id FROM push_tasks \
             ORDER BY updated_ms DESC, change_seq DESC OFFSET $1)",
            &[&keep],
        )
        .map_err(e)?;
    }
    tx.execute("SELECT pg_notify($1, '')", &[&TASKS_CHANNEL])
        .map_err(e)?;
    tx.commit().map_err(e)
}

/// The `limit` most recently seen entries, oldest first, with their
/// change.
pub(super) fn load_rows(
    c: &mut Client,
    limit: usize,
) -> Result<Vec<(i64, TaskRecord)>, StoreError> {
    let limit = i64::try_from(limit).map_err(e)?;
    let rows = c
        .query(
            "SELECT change_seq, id, updated_ms, data FROM (SELECT change_seq, id, updated_ms, data \
             FROM push_tasks ORDER BY updated_ms DESC, change_seq DESC LIMIT $1) t \
             ORDER BY updated_ms, change_seq",
            &[&limit],
        )
        .map_err(e)?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get(0).map_err(e)?,
                TaskRecord {
                    id: r.try_get(1).map_err(e)?,
                    updated_ms: r.try_get(2).map_err(e)?,
                    task: r.try_get(3).map_err(e)?,
                },
            ))
        })
        .collect()
}

/// Migration 6 -> 7 (schema 7): the task index's change feed, the relay
/// tables and the deployment row. Each statement may run on a database
/// that has it already.
pub(super) const MIGRATION_7: &str = "
    CREATE SEQUENCE IF NOT EXISTS push_tasks_change;
    ALTER TABLE push_tasks ADD COLUMN IF NOT EXISTS change_seq BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE push_tasks ADD COLUMN IF NOT EXISTS origin TEXT NOT NULL DEFAULT '';
    UPDATE push_tasks t SET change_seq = o.n FROM (SELECT id, ROW_NUMBER() OVER \
        (ORDER BY updated_ms, id) AS n FROM push_tasks) o WHERE t.id = o.id AND t.change_seq = 0;
    SELECT setval('push_tasks_change', (SELECT COALESCE(MAX(change_seq), 0) + 1 FROM push_tasks), false);
    CREATE INDEX IF NOT EXISTS push_tasks_by_change ON push_tasks (change_seq);
    CREATE TABLE IF NOT EXISTS relay_events (
        id BIGSERIAL PRIMARY KEY,
        task_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        state TEXT,
        ts TEXT,
        lost BOOLEAN NOT NULL DEFAULT FALSE,
        events TEXT NOT NULL,
        bytes BIGINT NOT NULL,
        created TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE INDEX IF NOT EXISTS relay_events_created ON relay_events (created);
    CREATE TABLE IF NOT EXISTS relay_subscriptions (
        instance TEXT NOT NULL,
        sub BIGINT NOT NULL,
        task_id TEXT NOT NULL,
        expires TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (instance, sub)
    );
    CREATE TABLE IF NOT EXISTS push_deployment (
        singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
        kind TEXT NOT NULL,
        value TEXT NOT NULL
    );
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_keys_are_short_and_stable_and_secrets_read_back() {
        assert_eq!(task_key("t1"), task_key("t1"));
        assert_ne!(task_key("t1"), task_key("t2"));
        assert_eq!(task_key(&"x".repeat(2000)).len(), 16);
        let s = [7u8; 32];
        assert_eq!(parse_secret(&hex(&s)), Some(s));
        assert_eq!(parse_secret("zz"), None);
        // The fingerprint is neither the secret nor the same for another.
        assert!(!fingerprint(&s).contains(&hex(&s)[..8]));
        assert_ne!(fingerprint(&s), fingerprint(&[8u8; 32]));
        // The most pairs a payload holds stay under PostgreSQL's limit.
        let pair = format!("{}:{}", i64::MAX, task_key("t"));
        assert!(pair.len() + 1 < MAX_PAYLOAD && MAX_PAYLOAD < 8000);
    }
}
