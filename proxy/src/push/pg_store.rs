//! The PostgreSQL [`Store`], for several proxy instances sharing configs and
//! the outbox. Tables: `schema_version`, `push_configs`, `push_outbox`
//! (seq is a BIGSERIAL), `push_dead`, `push_tasks`, `push_snapshots`
//! (schema 3: one row per config whose fold snapshot was written), and what
//! the instances share besides the outbox (schema 7, `push::pg_shared`:
//! the task index's change feed, `relay_events`, `relay_subscriptions`,
//! `push_deployment`).
//!
//! Concurrency: `enqueue_many` and `claim` take one transaction-scoped
//! advisory lock ([`OUTBOX_LOCK`]), so seqs become visible in commit order
//! and a claim sees every callback's true head; one instance at a time
//! decides which heads are free, so two instances never lease the same item
//! nor a later item of a callback whose head the other holds.
//!
//! Leases (issue #25): a claim leases items to its owner until a time;
//! `renew` extends the leases an owner still holds (under the same lock,
//! so a claim sees a lease before or after its renewal), and `reschedule`
//! and `dead_letter` change an item only while it is leased to the caller:
//! an instance that lost a lease cannot undo the new owner's work.
//!
//! Outbox bounds (schema 6): `push_outbox_usage` counts the waiting items
//! and their body bytes per callback id, and in all (the row of id `''`),
//! written in the transactions that add and remove outbox rows. An
//! enqueue reads and checks the counts under [`OUTBOX_LOCK`], so
//! instances' accepts are checked one after the other against one
//! deployment-wide count; a completion or dead letter only lowers it.
//! Count rows are updated in id order (the total first) by every
//! transaction, so they never wait on each other in a cycle.
//!
//! Migrations: one transaction takes [`MIGRATE_LOCK`] first, then creates
//! the `schema_version` table if missing and migrates, so concurrent first
//! starts wait for each other instead of racing on the catalog.
//!
//! Fold snapshots across instances: a change is written in the enqueue
//! transaction only if the row's version is still the one its fold started
//! from (`UPDATE .. WHERE version = base`, or an insert when there was no
//! row); otherwise neither it nor its item is written and the caller folds
//! again from the stored snapshot. The advisory lock orders enqueues, so
//! the check and the write see no interleaving and take no row locks that
//! could deadlock.
//!
//! The sync `postgres` client runs its own runtime: call these methods off
//! async worker threads (callers use `spawn_blocking`). The connection
//! string (it may hold a password) is never logged nor put in errors.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use postgres::{Client, NoTls, Row, Transaction};

use super::{
    counted_bytes, DeadLetter, Enqueued, OutboxBounds, OutboxItem, PushConfig, Snapshot,
    SnapshotWrite, Store, StoreError, TaskRecord, Usage, SCHEMA_VERSION,
};

/// Advisory lock key serializing enqueue and claim.
pub const OUTBOX_LOCK: i64 = 0x0a2a_9005_0001;
/// Advisory lock key serializing migrations of concurrent starts.
const MIGRATE_LOCK: i64 = 0x0a2a_9005_0002;
/// Bound on establishing a connection unless the string sets one.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Idle connections kept for reuse.
const POOL_IDLE: usize = 8;
/// How long a start waits for a PostgreSQL that does not answer yet.
pub const START_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

fn e(x: impl std::fmt::Display) -> StoreError {
    StoreError(format!("postgres: {x}"))
}

/// Migrations from schema version `n` to `n + 1`, index `n`.
const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE push_configs (
        callback_id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        config_id TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX push_configs_task ON push_configs (task_id);
    CREATE TABLE push_outbox (
        seq BIGSERIAL PRIMARY KEY,
        callback_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts BIGINT NOT NULL,
        next_attempt_ms BIGINT NOT NULL,
        accepted_ms BIGINT NOT NULL,
        lease_owner TEXT NOT NULL,
        lease_until_ms BIGINT NOT NULL
    );
    CREATE INDEX push_outbox_cb ON push_outbox (callback_id, seq);
    CREATE TABLE push_dead (
        seq BIGINT PRIMARY KEY,
        callback_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts BIGINT NOT NULL,
        next_attempt_ms BIGINT NOT NULL,
        accepted_ms BIGINT NOT NULL,
        lease_owner TEXT NOT NULL,
        lease_until_ms BIGINT NOT NULL,
        reason TEXT NOT NULL,
        dead_ms BIGINT NOT NULL
    );
",
    "
    CREATE TABLE push_tasks (
        id TEXT PRIMARY KEY,
        updated_ms BIGINT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX push_tasks_updated ON push_tasks (updated_ms);
",
    "
    CREATE TABLE push_snapshots (
        callback_id TEXT PRIMARY KEY,
        version BIGINT NOT NULL,
        task TEXT
    );
",
    // The task index held whole tasks of no known caller: dropped.
    "
    DELETE FROM push_tasks;
",
    // The agent's trace context, sent on with each delivery.
    "
    ALTER TABLE push_outbox ADD COLUMN IF NOT EXISTS traceparent TEXT NOT NULL DEFAULT '';
    ALTER TABLE push_outbox ADD COLUMN IF NOT EXISTS tracestate TEXT NOT NULL DEFAULT '';
    ALTER TABLE push_dead ADD COLUMN IF NOT EXISTS traceparent TEXT NOT NULL DEFAULT '';
    ALTER TABLE push_dead ADD COLUMN IF NOT EXISTS tracestate TEXT NOT NULL DEFAULT '';
",
    // The outbox's waiting items counted per callback id and in all (id
    // ''), for its bounds.
    "
    CREATE TABLE push_outbox_usage (
        callback_id TEXT PRIMARY KEY,
        items BIGINT NOT NULL,
        bytes BIGINT NOT NULL
    );
    INSERT INTO push_outbox_usage (callback_id, items, bytes)
        SELECT callback_id, COUNT(*), COALESCE(SUM(octet_length(body)), 0)
        FROM push_outbox GROUP BY callback_id;
    INSERT INTO push_outbox_usage (callback_id, items, bytes)
        SELECT '', COUNT(*), COALESCE(SUM(octet_length(body)), 0) FROM push_outbox;
",
    // Several instances as one proxy (issue #36): the task index's change
    // feed, the relay tables, the deployment row (push::pg_shared).
    super::pg_shared::MIGRATION_7,
];

/// The id of the count row of the whole outbox (callback ids are never
/// empty).
const TOTAL: &str = "";

/// Lowers the outbox counts by the rows `gone` (callback id, body bytes)
/// a transaction deleted, in id order; drops a callback's row at zero.
fn uncount(tx: &mut Transaction<'_>, gone: &[(String, i64)]) -> Result<(), StoreError> {
    if gone.is_empty() {
        return Ok(());
    }
    let mut less: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for (cb, bytes) in gone {
        for id in [TOTAL, cb.as_str()] {
            let d = less.entry(id).or_default();
            d.0 += 1;
            d.1 += bytes;
        }
    }
    let st = tx
        .prepare(
            "UPDATE push_outbox_usage SET items = GREATEST(items - $2, 0), \
             bytes = GREATEST(bytes - $3, 0) WHERE callback_id = $1",
        )
        .map_err(e)?;
    for (id, (items, bytes)) in &less {
        tx.execute(&st, &[id, items, bytes]).map_err(e)?;
    }
    let ids: Vec<&str> = less.keys().copied().filter(|id| *id != TOTAL).collect();
    tx.execute(
        "DELETE FROM push_outbox_usage WHERE callback_id = ANY($1) AND items = 0",
        &[&ids],
    )
    .map_err(e)?;
    Ok(())
}

/// The (callback id, body bytes) of deleted outbox rows.
fn deleted(rows: &[Row]) -> Result<Vec<(String, i64)>, StoreError> {
    rows.iter()
        .map(|r| Ok((r.try_get(0).map_err(e)?, r.try_get(1).map_err(e)?)))
        .collect()
}

fn usage_of(items: i64, bytes: i64) -> Usage {
    Usage {
        items: u64::try_from(items).unwrap_or(0),
        bytes: u64::try_from(bytes).unwrap_or(0),
    }
}

const ITEM_COLS: &str = "seq, callback_id, task_id, body, attempts, next_attempt_ms, \
                         accepted_ms, lease_owner, lease_until_ms, traceparent, tracestate";

fn item_of(r: &Row) -> Result<OutboxItem, StoreError> {
    let seq: i64 = r.try_get(0).map_err(e)?;
    let attempts: i64 = r.try_get(4).map_err(e)?;
    Ok(OutboxItem {
        seq: u64::try_from(seq).map_err(e)?,
        callback_id: r.try_get(1).map_err(e)?,
        task_id: r.try_get(2).map_err(e)?,
        body: r.try_get(3).map_err(e)?,
        attempts: u32::try_from(attempts).map_err(e)?,
        next_attempt_ms: r.try_get(5).map_err(e)?,
        accepted_ms: r.try_get(6).map_err(e)?,
        lease_owner: r.try_get(7).map_err(e)?,
        lease_until_ms: r.try_get(8).map_err(e)?,
        traceparent: r.try_get(9).map_err(e)?,
        tracestate: r.try_get(10).map_err(e)?,
    })
}

fn seq_i64(s: u64) -> Result<i64, StoreError> {
    i64::try_from(s).map_err(e)
}

fn config_of(r: &Row) -> Result<PushConfig, StoreError> {
    let data: String = r.try_get(0).map_err(e)?;
    serde_json::from_str(&data).map_err(e)
}

/// A small pool of clients of one database (the store's, and its shared
/// side's own).
pub(super) struct Pool {
    config: postgres::Config,
    idle: Mutex<Vec<Client>>,
    max_idle: usize,
}

impl Pool {
    pub(super) fn new(config: postgres::Config, max_idle: usize) -> Pool {
        Pool {
            config,
            idle: Mutex::new(Vec::new()),
            max_idle,
        }
    }

    /// The (already checked) connection settings.
    pub(super) fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// Runs `f` on a pooled client (connecting when none is idle); the
    /// client goes back to the pool unless it is closed.
    pub(super) fn with<R>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let pooled = self.idle.lock().map_err(e)?.pop();
        let mut c = match pooled {
            Some(c) if !c.is_closed() => c,
            _ => self.config.connect(NoTls).map_err(e)?,
        };
        let r = f(&mut c);
        if !c.is_closed() {
            let mut idle = self.idle.lock().map_err(e)?;
            if idle.len() < self.max_idle {
                idle.push(c);
            }
        }
        r
    }
}

/// The PostgreSQL backend: a small pool of clients.
pub struct PgStore {
    pool: Pool,
    /// What the instances on this database share besides the outbox
    /// (push::pg_shared).
    shared: std::sync::Arc<super::pg_shared::PgShared>,
}

impl PgStore {
    /// Connects to `url` (a libpq-style connection string or URL) and
    /// migrates the schema to [`SCHEMA_VERSION`]; refuses a newer schema.
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        // The parse error does not echo the string (it may hold a password).
        let mut config: postgres::Config = url
            .parse()
            .map_err(|_| StoreError("postgres: invalid connection string".into()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let s = PgStore {
            shared: std::sync::Arc::new(super::pg_shared::PgShared::new(config.clone())),
            pool: Pool::new(config, POOL_IDLE),
        };
        s.pool.with(|c| {
            // The whole migration, its bookkeeping table included, runs
            // under the lock: concurrent first starts wait for each other
            // (creating a table races on the catalog otherwise).
            let mut tx = c.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])
                .map_err(e)?;
            tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")
                .map_err(e)?;
            let row = tx
                .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
                .map_err(e)?;
            let v: i64 = row.try_get(0).map_err(e)?;
            let have = u64::try_from(v).map_err(e)?;
            if have > SCHEMA_VERSION {
                return Err(StoreError(format!(
                    "postgres: data was written by a newer proxy (schema {have} > {SCHEMA_VERSION})"
                )));
            }
            for m in &MIGRATIONS[have as usize..SCHEMA_VERSION as usize] {
                tx.batch_execute(m).map_err(e)?;
            }
            if have < SCHEMA_VERSION {
                tx.execute("DELETE FROM schema_version", &[]).map_err(e)?;
                tx.execute(
                    "INSERT INTO schema_version (version) VALUES ($1)",
                    &[&seq_i64(SCHEMA_VERSION)?],
                )
                .map_err(e)?;
            }
            tx.commit().map_err(e)
        })?;
        Ok(s)
    }

    /// [`Self::connect`], waiting up to `wait` for a server that does not
    /// answer yet (a deployment's instances may start before its
    /// database): each failed attempt is logged with its reason, naming
    /// the key (`push.postgres_url`), never its value. A server that
    /// answers but refuses (a newer schema, say) is an error at once.
    pub fn connect_waiting(url: &str, wait: std::time::Duration) -> Result<PgStore, StoreError> {
        use std::time::{Duration, Instant};
        let mut config: postgres::Config = url
            .parse()
            .map_err(|_| StoreError("postgres: invalid connection string".into()))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let end = Instant::now() + wait;
        let mut pause = Duration::from_millis(250);
        loop {
            match config.connect(NoTls) {
                Ok(c) => {
                    drop(c);
                    return PgStore::connect(url);
                }
                Err(err) => {
                    let left = end.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(StoreError(format!(
                            "postgres (push.postgres_url): unreachable for {} s: {err}",
                            wait.as_secs()
                        )));
                    }
                    tracing::warn!(error = %err, retry_in_ms = pause.as_millis() as u64, "push.postgres_url: PostgreSQL does not answer yet; waiting for it");
                    std::thread::sleep(pause.min(left));
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

impl Store for PgStore {
    fn put_config(&self, cfg: &PushConfig) -> Result<(), StoreError> {
        let data = serde_json::to_string(cfg).map_err(e)?;
        self.pool.with(|c| {
            c.execute(
                "INSERT INTO push_configs (callback_id, task_id, config_id, data) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (callback_id) DO UPDATE SET \
                 task_id = EXCLUDED.task_id, config_id = EXCLUDED.config_id, data = EXCLUDED.data",
                &[&cfg.callback_id, &cfg.task_id, &cfg.config_id, &data],
            )
            .map_err(e)?;
            Ok(())
        })
    }

    fn config_by_callback(&self, callback_id: &str) -> Result<Option<PushConfig>, StoreError> {
        self.pool.with(|c| {
            c.query_opt(
                "SELECT data FROM push_configs WHERE callback_id = $1",
                &[&callback_id],
            )
            .map_err(e)?
            .map(|r| config_of(&r))
            .transpose()
        })
    }

    fn configs_for_task(&self, task_id: &str) -> Result<Vec<PushConfig>, StoreError> {
        self.pool.with(|c| {
            c.query(
                "SELECT data FROM push_configs WHERE task_id = $1 ORDER BY callback_id",
                &[&task_id],
            )
            .map_err(e)?
            .iter()
            .map(config_of)
            .collect()
        })
    }

    fn delete_config(&self, task_id: &str, config_id: &str) -> Result<usize, StoreError> {
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            tx.execute(
                "DELETE FROM push_snapshots WHERE callback_id IN (SELECT callback_id \
                 FROM push_configs WHERE task_id = $1 AND config_id = $2)",
                &[&task_id, &config_id],
            )
            .map_err(e)?;
            let n = tx
                .execute(
                    "DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2",
                    &[&task_id, &config_id],
                )
                .map_err(e)?;
            tx.commit().map_err(e)?;
            usize::try_from(n).map_err(e)
        })
    }

    fn snapshot(&self, callback_id: &str) -> Result<Snapshot, StoreError> {
        self.pool.with(|c| {
            let Some(r) = c
                .query_opt(
                    "SELECT version, task FROM push_snapshots WHERE callback_id = $1",
                    &[&callback_id],
                )
                .map_err(e)?
            else {
                return Ok(Snapshot::default());
            };
            let v: i64 = r.try_get(0).map_err(e)?;
            Ok(Snapshot {
                version: u64::try_from(v).map_err(e)?,
                task: r.try_get(1).map_err(e)?,
            })
        })
    }

    fn enqueue_bounded(
        &self,
        items: Vec<(OutboxItem, Option<SnapshotWrite>)>,
        bounds: &OutboxBounds,
    ) -> Result<Vec<Enqueued>, StoreError> {
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&OUTBOX_LOCK])
                .map_err(e)?;
            // The counts now (every instance's, under the lock), as the
            // items before each one leave them.
            let mut ids: Vec<&str> = items.iter().map(|(i, _)| i.callback_id.as_str()).collect();
            ids.push(TOTAL);
            let mut now: HashMap<String, Usage> = HashMap::new();
            for r in tx
                .query(
                    "SELECT callback_id, items, bytes FROM push_outbox_usage \
                     WHERE callback_id = ANY($1)",
                    &[&ids],
                )
                .map_err(e)?
            {
                let id: String = r.try_get(0).map_err(e)?;
                let u = usage_of(r.try_get(1).map_err(e)?, r.try_get(2).map_err(e)?);
                now.insert(id, u);
            }
            let mut added: BTreeMap<String, (i64, i64)> = BTreeMap::new();
            let first_write = tx
                .prepare(
                    "INSERT INTO push_snapshots (callback_id, version, task) VALUES ($1, 1, $2) \
                     ON CONFLICT (callback_id) DO NOTHING",
                )
                .map_err(e)?;
            let next_write = tx
                .prepare(
                    "UPDATE push_snapshots SET version = version + 1, task = $2 \
                     WHERE callback_id = $1 AND version = $3",
                )
                .map_err(e)?;
            let st = tx
                .prepare(
                    "INSERT INTO push_outbox (callback_id, task_id, body, attempts, \
                     next_attempt_ms, accepted_ms, lease_owner, lease_until_ms, \
                     traceparent, tracestate) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING seq",
                )
                .map_err(e)?;
            let mut seqs = Vec::with_capacity(items.len());
            for (i, change) in &items {
                let bytes = counted_bytes(i);
                let of = |id: &str| now.get(id).copied().unwrap_or_default();
                if let Some(full) = bounds.refuses(of(&i.callback_id), of(TOTAL), bytes) {
                    seqs.push(Enqueued::Full(full));
                    continue;
                }
                if let Some(w) = change {
                    let written = if w.base == 0 {
                        tx.execute(&first_write, &[&w.callback_id, &w.task])
                    } else {
                        tx.execute(&next_write, &[&w.callback_id, &w.task, &seq_i64(w.base)?])
                    }
                    .map_err(e)?;
                    if written == 0 {
                        // Another write came first: no item either.
                        seqs.push(Enqueued::Stale);
                        continue;
                    }
                }
                let row = tx
                    .query_one(
                        &st,
                        &[
                            &i.callback_id,
                            &i.task_id,
                            &i.body,
                            &i64::from(i.attempts),
                            &i.next_attempt_ms,
                            &i.accepted_ms,
                            &i.lease_owner,
                            &i.lease_until_ms,
                            &i.traceparent,
                            &i.tracestate,
                        ],
                    )
                    .map_err(e)?;
                let s: i64 = row.try_get(0).map_err(e)?;
                seqs.push(Enqueued::Seq(u64::try_from(s).map_err(e)?));
                for id in [TOTAL, i.callback_id.as_str()] {
                    now.entry(id.to_string()).or_default().add(bytes);
                    let a = added.entry(id.to_string()).or_default();
                    a.0 += 1;
                    a.1 += i64::try_from(bytes).map_err(e)?;
                }
            }
            let count = tx
                .prepare(
                    "INSERT INTO push_outbox_usage (callback_id, items, bytes) \
                     VALUES ($1, $2, $3) ON CONFLICT (callback_id) DO UPDATE SET \
                     items = push_outbox_usage.items + EXCLUDED.items, \
                     bytes = push_outbox_usage.bytes + EXCLUDED.bytes",
                )
                .map_err(e)?;
            // In id order, the total first (see the module docs).
            for (id, (n, bytes)) in &added {
                tx.execute(&count, &[id, n, bytes]).map_err(e)?;
            }
            tx.commit().map_err(e)?;
            Ok(seqs)
        })
    }

    fn pending(&self, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.pool.with(|c| {
            c.query(
                &format!("SELECT {ITEM_COLS} FROM push_outbox ORDER BY seq LIMIT $1"),
                &[&limit],
            )
            .map_err(e)?
            .iter()
            .map(item_of)
            .collect()
        })
    }

    fn claim_within(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
        run_limit: usize,
        max_bytes: u64,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let run_limit = i64::try_from(run_limit.max(1)).unwrap_or(i64::MAX);
        let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
        let until = now_ms.saturating_add(lease_ms);
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&OUTBOX_LOCK])
                .map_err(e)?;
            // Heads (oldest item per callback) that are due and unleased; the
            // runs behind them (at most `run_limit` each, only the head when
            // it failed before), in seq order, at most `limit`, and while
            // their bodies add up to `max_bytes` (the first one whatever
            // its size).
            let rows = tx
                .query(
                    &format!(
                        "WITH heads AS ( \
                           SELECT DISTINCT ON (callback_id) callback_id, next_attempt_ms, \
                                  lease_until_ms, attempts \
                           FROM push_outbox ORDER BY callback_id, seq), \
                         runs AS ( \
                           SELECT o.seq, octet_length(o.body)::BIGINT AS bytes, \
                                  h.attempts AS head_attempts, \
                                  ROW_NUMBER() OVER (PARTITION BY o.callback_id \
                                  ORDER BY o.seq) AS n \
                           FROM push_outbox o JOIN heads h USING (callback_id) \
                           WHERE h.next_attempt_ms <= $1 AND h.lease_until_ms <= $1), \
                         picked AS ( \
                           SELECT seq, bytes FROM runs \
                           WHERE n <= CASE WHEN head_attempts > 0 THEN 1 ELSE $5::BIGINT END \
                           ORDER BY seq LIMIT $2), \
                         summed AS ( \
                           SELECT seq, (SUM(bytes) OVER (ORDER BY seq))::BIGINT AS upto, \
                                  ROW_NUMBER() OVER (ORDER BY seq) AS k FROM picked) \
                         UPDATE push_outbox SET lease_owner = $3, lease_until_ms = $4 \
                         WHERE seq IN (SELECT seq FROM summed WHERE k = 1 OR upto <= $6::BIGINT) \
                         RETURNING {ITEM_COLS}"
                    ),
                    &[&now_ms, &limit, &owner, &until, &run_limit, &max_bytes],
                )
                .map_err(e)?;
            let mut got = rows.iter().map(item_of).collect::<Result<Vec<_>, _>>()?;
            tx.commit().map_err(e)?;
            got.sort_by_key(|i| i.seq);
            Ok(got)
        })
    }

    fn renew(&self, owner: &str, seqs: &[u64], until_ms: i64) -> Result<Vec<u64>, StoreError> {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let seqs = seqs
            .iter()
            .map(|s| seq_i64(*s))
            .collect::<Result<Vec<_>, _>>()?;
        self.pool.with(|c| {
            // Under the claim lock: a claim sees a lease either before or
            // after its renewal, never in between.
            let mut tx = c.transaction().map_err(e)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&OUTBOX_LOCK])
                .map_err(e)?;
            let rows = tx
                .query(
                    "UPDATE push_outbox SET lease_until_ms = $3 \
                     WHERE seq = ANY($1) AND lease_owner = $2 RETURNING seq",
                    &[&seqs, &owner, &until_ms],
                )
                .map_err(e)?;
            tx.commit().map_err(e)?;
            rows.iter()
                .map(|r| {
                    let s: i64 = r.try_get(0).map_err(e)?;
                    u64::try_from(s).map_err(e)
                })
                .collect()
        })
    }

    fn reschedule(&self, i: &OutboxItem, held_by: &str) -> Result<(), StoreError> {
        let seq = seq_i64(i.seq)?;
        self.pool.with(|c| {
            c.execute(
                "UPDATE push_outbox SET attempts = $2, next_attempt_ms = $3, \
                 lease_owner = $4, lease_until_ms = $5 WHERE seq = $1 AND lease_owner = $6",
                &[
                    &seq,
                    &i64::from(i.attempts),
                    &i.next_attempt_ms,
                    &i.lease_owner,
                    &i.lease_until_ms,
                    &held_by,
                ],
            )
            .map_err(e)?;
            Ok(())
        })
    }

    fn complete_many(&self, seqs: &[u64]) -> Result<(), StoreError> {
        let seqs = seqs
            .iter()
            .map(|s| seq_i64(*s))
            .collect::<Result<Vec<_>, _>>()?;
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            let rows = tx
                .query(
                    "DELETE FROM push_outbox WHERE seq = ANY($1) \
                     RETURNING callback_id, octet_length(body)::BIGINT",
                    &[&seqs],
                )
                .map_err(e)?;
            uncount(&mut tx, &deleted(&rows)?)?;
            tx.commit().map_err(e)
        })
    }

    fn dead_letter(&self, i: &OutboxItem, reason: &str) -> Result<(), StoreError> {
        let seq = seq_i64(i.seq)?;
        let dead_ms = super::now_ms();
        self.pool.with(|c| {
            let mut tx = c.transaction().map_err(e)?;
            // Only while still leased as the caller saw it: an item
            // another instance took over is its to deliver.
            let rows = tx
                .query(
                    "DELETE FROM push_outbox WHERE seq = $1 AND lease_owner = $2 \
                     RETURNING callback_id, octet_length(body)::BIGINT",
                    &[&seq, &i.lease_owner],
                )
                .map_err(e)?;
            if rows.is_empty() {
                return Ok(());
            }
            uncount(&mut tx, &deleted(&rows)?)?;
            tx.execute(
                &format!(
                    "INSERT INTO push_dead ({ITEM_COLS}, reason, dead_ms) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
                     ON CONFLICT (seq) DO UPDATE SET reason = EXCLUDED.reason, \
                     dead_ms = EXCLUDED.dead_ms"
                ),
                &[
                    &seq,
                    &i.callback_id,
                    &i.task_id,
                    &i.body,
                    &i64::from(i.attempts),
                    &i.next_attempt_ms,
                    &i.accepted_ms,
                    &i.lease_owner,
                    &i.lease_until_ms,
                    &i.traceparent,
                    &i.tracestate,
                    &reason,
                    &dead_ms,
                ],
            )
            .map_err(e)?;
            tx.commit().map_err(e)
        })
    }

    fn dead_letters(&self) -> Result<Vec<DeadLetter>, StoreError> {
        self.pool.with(|c| {
            c.query(
                &format!("SELECT {ITEM_COLS}, reason, dead_ms FROM push_dead ORDER BY seq"),
                &[],
            )
            .map_err(e)?
            .iter()
            .map(|r| {
                Ok(DeadLetter {
                    item: item_of(r)?,
                    reason: r.try_get(11).map_err(e)?,
                    dead_ms: r.try_get(12).map_err(e)?,
                })
            })
            .collect()
        })
    }

    fn outbox_len(&self) -> Result<u64, StoreError> {
        self.pool.with(|c| {
            let n: i64 = c
                .query_one("SELECT COUNT(*) FROM push_outbox", &[])
                .map_err(e)?
                .try_get(0)
                .map_err(e)?;
            u64::try_from(n).map_err(e)
        })
    }

    fn outbox_usage(&self) -> Result<Usage, StoreError> {
        self.pool.with(|c| {
            let row = c
                .query_opt(
                    "SELECT items, bytes FROM push_outbox_usage WHERE callback_id = $1",
                    &[&TOTAL],
                )
                .map_err(e)?;
            match row {
                Some(r) => Ok(usage_of(r.try_get(0).map_err(e)?, r.try_get(1).map_err(e)?)),
                None => Ok(Usage::default()),
            }
        })
    }

    fn put_tasks(&self, tasks: &[TaskRecord], keep: usize) -> Result<(), StoreError> {
        self.pool
            .with(|c| super::pg_shared::put_tasks_on(c, "", tasks, keep))
    }

    fn load_tasks(&self, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        let rows = self.pool.with(|c| super::pg_shared::load_rows(c, limit))?;
        Ok(rows.into_iter().map(|(_, r)| r).collect())
    }

    fn shared(&self) -> Option<std::sync::Arc<super::pg_shared::PgShared>> {
        Some(self.shared.clone())
    }
}
