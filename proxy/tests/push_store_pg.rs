//! The PostgreSQL push store against a real PostgreSQL on 127.0.0.1 (a
//! private throwaway cluster, or `A2A_PROXY_TEST_PG_URL`): the backend
//! contract, two instances claiming concurrently, migrations, and errors
//! when the database is away. Plain threads: the sync client must not run
//! inside a tokio runtime.

#[path = "support/store_contract.rs"]
mod contract;
#[path = "support/pg.rs"]
mod pg;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use proxy::push::pg_store::PgStore;
use proxy::push::{OutboxItem, Snapshot, Store};

#[test]
fn contract_holds_on_postgres_and_survives_reconnect() {
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    contract::run(&|| Box::new(PgStore::connect(&cluster.fresh_db()).unwrap()));
    // Durable across a new connection (another instance, or a restart).
    let url = cluster.fresh_db();
    contract::configs_outbox_dead_letters_before(&PgStore::connect(&url).unwrap());
    contract::configs_outbox_dead_letters_after(&PgStore::connect(&url).unwrap());
    let url = cluster.fresh_db();
    contract::snapshots_before(&PgStore::connect(&url).unwrap());
    contract::snapshots_after(&PgStore::connect(&url).unwrap());
    // The outbox's counts are the database's, not a connection's.
    let url = cluster.fresh_db();
    contract::bounds_before(&PgStore::connect(&url).unwrap());
    contract::bounds_after(&PgStore::connect(&url).unwrap());
}

/// Back to what schema 2 had: schema 3 added push_snapshots, schema 5 the
/// outbox's trace-context columns, schema 6 its counts.
const SCHEMA_2: &str = "DROP TABLE push_snapshots; DROP TABLE push_outbox_usage; \
    ALTER TABLE push_outbox DROP COLUMN traceparent, DROP COLUMN tracestate; \
    ALTER TABLE push_dead DROP COLUMN traceparent, DROP COLUMN tracestate; \
    UPDATE schema_version SET version = 2";

/// A fresh database of `cluster` with data in it (a push config of
/// callback `a`, one pending delivery), then set back to schema 2: its
/// URL and a client on it.
fn schema_2_with_data(cluster: &pg::Cluster) -> (String, postgres::Client) {
    let url = cluster.fresh_db();
    let s = PgStore::connect(&url).unwrap();
    s.put_config(&contract::cfg("a", "t1", "c1")).unwrap();
    s.enqueue(contract::item("t1")).unwrap();
    drop(s);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(SCHEMA_2).unwrap();
    (url, c)
}

/// A database of schema 2 (before fold snapshots) with data in it: the
/// next start migrates it, keeps the data, and snapshots work.
#[test]
fn a_schema_2_database_is_migrated_and_works() {
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    let (url, mut c) = schema_2_with_data(&cluster);
    let s = PgStore::connect(&url).unwrap();
    let v: i64 = c
        .query_one("SELECT version FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(v as u64, proxy::push::SCHEMA_VERSION);
    assert_eq!(
        s.config_by_callback("a").unwrap(),
        Some(contract::cfg("a", "t1", "c1"))
    );
    assert_eq!(s.outbox_len().unwrap(), 1);
    // The item from before the counts is counted.
    assert_eq!(s.outbox_usage().unwrap().items, 1);
    assert_eq!(s.snapshot("a").unwrap(), Snapshot::default());
    let first = (
        contract::item("t1"),
        Some(contract::change("a", 0, Some("A1"))),
    );
    assert_eq!(s.enqueue_folded(vec![first]).unwrap(), [Some(2)]);
    assert_eq!(
        PgStore::connect(&url)
            .unwrap()
            .snapshot("a")
            .unwrap()
            .task
            .as_deref(),
        Some("A1")
    );
}

/// Two instances accepting pushes for one config at once: each folds from
/// the snapshot it read and writes only if nobody wrote since, folding
/// again otherwise. No contribution is lost and every item carries the
/// fold it was written with.
#[test]
fn two_instances_folding_one_config_lose_no_contribution() {
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    let url = cluster.fresh_db();
    const PER_INSTANCE: usize = 25;
    let conflicts = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = ["x", "y"]
        .into_iter()
        .map(|tag| {
            let (s, conflicts) = (PgStore::connect(&url).unwrap(), conflicts.clone());
            std::thread::spawn(move || {
                for n in 0..PER_INSTANCE {
                    let mut tries = 0;
                    loop {
                        tries += 1;
                        assert!(tries < 1000, "no progress");
                        let now = s.snapshot("cb").unwrap();
                        let folded = format!("{}{tag}{n};", now.task.unwrap_or_default());
                        let item = OutboxItem {
                            body: folded.clone(),
                            ..contract::item("t")
                        };
                        let change = contract::change("cb", now.version, Some(&folded));
                        match s.enqueue_folded(vec![(item, Some(change))]).unwrap()[0] {
                            Some(_) => break,
                            None => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = PgStore::connect(&url).unwrap();
    let snap = s.snapshot("cb").unwrap();
    assert_eq!(snap.version as usize, 2 * PER_INSTANCE);
    let task = snap.task.unwrap();
    let parts: Vec<&str> = task.split_terminator(';').collect();
    assert_eq!(parts.len(), 2 * PER_INSTANCE, "{task}");
    for tag in ["x", "y"] {
        let mine: Vec<String> = parts
            .iter()
            .filter(|p| p.starts_with(tag))
            .map(|p| p.to_string())
            .collect();
        let want: Vec<String> = (0..PER_INSTANCE).map(|n| format!("{tag}{n}")).collect();
        assert_eq!(mine, want, "each instance's pushes in order");
    }
    // Each item carries the fold it was written with: every body extends
    // the one before it.
    let bodies: Vec<String> = s
        .pending(1000)
        .unwrap()
        .into_iter()
        .map(|i| i.body)
        .collect();
    assert_eq!(bodies.len(), 2 * PER_INSTANCE);
    assert!(bodies.windows(2).all(|w| w[1].starts_with(&w[0])));
    assert_eq!(bodies.last(), Some(&task));
    eprintln!("stale folds retried: {}", conflicts.load(Ordering::Relaxed));
}

#[test]
fn schema_is_versioned_and_a_newer_one_refused() {
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    let url = cluster.fresh_db();
    let s = PgStore::connect(&url).unwrap();
    s.enqueue(contract::item("t")).unwrap();
    drop(s);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let v: i64 = c
        .query_one("SELECT version FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(v as u64, proxy::push::SCHEMA_VERSION);
    // Reconnecting does not migrate again (the data stays).
    assert_eq!(PgStore::connect(&url).unwrap().outbox_len().unwrap(), 1);
    c.execute("UPDATE schema_version SET version = version + 1", &[])
        .unwrap();
    let err = PgStore::connect(&url).err().expect("newer schema refused");
    assert!(err.0.contains("newer"), "{err}");
}

#[test]
fn database_away_gives_store_errors_without_the_password() {
    let err = PgStore::connect("postgresql://u:sekrit-pw@127.0.0.1:1/db")
        .err()
        .expect("nothing listens on port 1");
    assert!(!err.to_string().contains("sekrit-pw"), "{err}");
    let err = PgStore::connect("host=127.0.0.1 port=notaport password=sekrit-pw")
        .err()
        .expect("bad string");
    assert!(!err.to_string().contains("sekrit-pw"), "{err}");

    if pg::skipped() {
        return;
    }
    let mut cluster = pg::Cluster::start();
    if std::env::var("A2A_PROXY_TEST_PG_URL").is_ok() {
        return; // cannot stop a server we did not start
    }
    let s = PgStore::connect(&cluster.fresh_db()).unwrap();
    s.enqueue(contract::item("t")).unwrap();
    cluster.stop();
    assert!(s.outbox_len().is_err());
    assert!(s.claim("one", 0, 10, 10, 10).is_err());
    assert!(s.enqueue(contract::item("t")).is_err());
}

#[test]
fn two_instances_deliver_each_item_once_in_per_callback_order() {
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    let url = cluster.fresh_db();
    let producer = PgStore::connect(&url).unwrap();
    let instances = [
        Arc::new(PgStore::connect(&url).unwrap()),
        Arc::new(PgStore::connect(&url).unwrap()),
    ];
    const CALLBACKS: usize = 5;
    const BATCHES: usize = 40;
    const PER_BATCH: usize = 6;
    let done_producing = Arc::new(AtomicBool::new(false));
    // (instance, callback, seq) in completion order.
    let log: Arc<Mutex<Vec<(usize, String, u64)>>> = Arc::default();
    let mut handles = Vec::new();
    for (n, s) in instances.iter().enumerate() {
        let (s, log, done) = (s.clone(), log.clone(), done_producing.clone());
        handles.push(std::thread::spawn(move || {
            let owner = format!("instance-{n}");
            for _ in 0..20_000 {
                let got = s
                    .claim(&owner, proxy::push::now_ms(), 600_000, 4, 4)
                    .unwrap();
                if got.is_empty() {
                    if done.load(Ordering::SeqCst) && s.outbox_len().unwrap() == 0 {
                        return;
                    }
                    std::thread::yield_now();
                    continue;
                }
                // "Deliver" (record) before completing: a later item of the
                // callback can only be claimed once this commit is done.
                {
                    let mut l = log.lock().unwrap();
                    for i in &got {
                        assert_eq!(i.lease_owner, owner);
                        l.push((n, i.callback_id.clone(), i.seq));
                    }
                }
                let seqs: Vec<u64> = got.iter().map(|i| i.seq).collect();
                s.complete_many(&seqs).unwrap();
            }
            panic!("{owner}: outbox not drained within the bound");
        }));
    }
    let mut expected: HashMap<String, Vec<u64>> = HashMap::new();
    for b in 0..BATCHES {
        let items: Vec<OutboxItem> = (0..PER_BATCH)
            .map(|k| OutboxItem {
                callback_id: format!("cb{}", (b * PER_BATCH + k) % CALLBACKS),
                ..contract::item("t")
            })
            .collect();
        let cbs: Vec<String> = items.iter().map(|i| i.callback_id.clone()).collect();
        let seqs = producer.enqueue_many(items).unwrap();
        for (cb, seq) in cbs.into_iter().zip(seqs) {
            expected.entry(cb).or_default().push(seq);
        }
    }
    done_producing.store(true, Ordering::SeqCst);
    for h in handles {
        h.join().unwrap();
    }
    let log = log.lock().unwrap();
    assert_eq!(log.len(), BATCHES * PER_BATCH, "every item exactly once");
    let mut got: HashMap<String, Vec<u64>> = HashMap::new();
    for (_, cb, seq) in log.iter() {
        got.entry(cb.clone()).or_default().push(*seq);
    }
    for v in expected.values() {
        assert!(v.windows(2).all(|w| w[0] < w[1]), "seqs increase: {v:?}");
    }
    assert_eq!(got, expected, "per callback, completion order is seq order");
    assert_eq!(producer.outbox_len().unwrap(), 0);
    // Both instances took part (not a proof, a sanity check of the setup).
    let by: Vec<usize> = (0..2)
        .map(|n| log.iter().filter(|(i, _, _)| *i == n).count())
        .collect();
    eprintln!("items delivered per instance: {by:?}");
}

/// Issue #25: instances started at once on one database all start: on an
/// empty database (the migration's bookkeeping table is created under the
/// migration lock, not before it) and on one of an older schema.
#[test]
fn ten_concurrent_starts_on_an_empty_or_old_database_all_succeed() {
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    let start_ten = |url: &str| -> Vec<Result<(), String>> {
        let gate = Arc::new(std::sync::Barrier::new(10));
        let handles: Vec<_> = (0..10)
            .map(|_| {
                let (url, gate) = (url.to_string(), gate.clone());
                std::thread::spawn(move || {
                    gate.wait();
                    PgStore::connect(&url).map(drop).map_err(|e| e.to_string())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    };
    // Several empty databases: the race was lost about once in five starts.
    for round in 0..12 {
        let url = cluster.fresh_db();
        let got = start_ten(&url);
        assert!(got.iter().all(Result::is_ok), "round {round}: {got:?}");
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let rows = c.query("SELECT version FROM schema_version", &[]).unwrap();
        assert_eq!(rows.len(), 1, "one bookkeeping row");
        assert_eq!(rows[0].get::<_, i64>(0) as u64, proxy::push::SCHEMA_VERSION);
    }
    // A schema-2 database with data: migrated once, the data kept.
    let (url, mut c) = schema_2_with_data(&cluster);
    let got = start_ten(&url);
    assert!(got.iter().all(Result::is_ok), "{got:?}");
    let v: i64 = c
        .query_one("SELECT version FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(v as u64, proxy::push::SCHEMA_VERSION);
    let s = PgStore::connect(&url).unwrap();
    assert_eq!(s.outbox_len().unwrap(), 1);
    assert!(s.config_by_callback("a").unwrap().is_some());
}

/// Issue #25: a lease is kept only by renewing it. Two stores (two
/// instances) on one database: one renews its claim past the lease's first
/// end and the other claims nothing of it; once it stops renewing (a
/// crash), the other takes the run over, and the first learns it lost it.
#[test]
fn renewed_leases_hold_and_lapsed_ones_are_taken_over() {
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    let url = cluster.fresh_db();
    let (a, b) = (
        PgStore::connect(&url).unwrap(),
        PgStore::connect(&url).unwrap(),
    );
    let items: Vec<OutboxItem> = (0..6).map(|_| contract::item("t")).collect();
    a.enqueue_many(items).unwrap();
    // Runs are capped: 4 of the 6.
    let got = a.claim("a", 1_000, 500, 100, 4).unwrap();
    let seqs: Vec<u64> = got.iter().map(|i| i.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    for t in [1_300, 1_600, 1_900] {
        assert_eq!(a.renew("a", &seqs, t + 500).unwrap(), seqs);
        assert!(b.claim("b", t + 100, 500, 100, 100).unwrap().is_empty());
    }
    // a crashed at 1900: its lease ends at 2400.
    assert!(b.claim("b", 2_399, 500, 100, 100).unwrap().is_empty());
    let got = b.claim("b", 2_400, 500, 100, 100).unwrap();
    assert_eq!(
        got.iter().map(|i| i.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    assert!(a.renew("a", &seqs, 3_000).unwrap().is_empty());
    // a's late give-up changes nothing of b's items.
    let mut late = got[0].clone();
    late.lease_owner = "a".into();
    a.dead_letter(&late, "late").unwrap();
    late.lease_owner.clear();
    a.reschedule(&late, "a").unwrap();
    assert!(a.dead_letters().unwrap().is_empty());
    assert!(a.pending(10).unwrap().iter().all(|i| i.lease_owner == "b"));
}

/// Issue #41: the outbox bounds hold for the deployment. Two instances on
/// one database accept pushes for two configs at once, one per call: no
/// more than the bound is ever accepted in all, nor per config; what a
/// delivery frees is taken again, and again no more.
#[test]
fn two_instances_accept_within_one_bound() {
    use proxy::push::{Enqueued, OutboxBounds};
    if pg::skipped() {
        return;
    }
    let cluster = pg::Cluster::start();
    let url = cluster.fresh_db();
    const BOUNDS: OutboxBounds = OutboxBounds {
        config_items: 25,
        config_bytes: 1 << 30,
        total_items: 40,
        total_bytes: 1 << 30,
    };
    let race = |tries: usize| -> HashMap<String, usize> {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let s = PgStore::connect(&url).unwrap();
                std::thread::spawn(move || {
                    let mut got: HashMap<String, usize> = HashMap::new();
                    for n in 0..tries {
                        let cb = if n % 2 == 0 { "a" } else { "b" };
                        let item = contract::sized(cb, 10);
                        let e = s.enqueue_bounded(vec![(item, None)], &BOUNDS).unwrap();
                        if matches!(e[0], Enqueued::Seq(_)) {
                            *got.entry(cb.to_string()).or_default() += 1;
                        }
                    }
                    got
                })
            })
            .collect();
        let mut all: HashMap<String, usize> = HashMap::new();
        for h in handles {
            for (cb, n) in h.join().unwrap() {
                *all.entry(cb).or_default() += n;
            }
        }
        all
    };
    let got = race(50);
    assert_eq!(got.values().sum::<usize>(), 40, "{got:?}");
    assert!(got.values().all(|n| *n <= 25), "{got:?}");
    let s = PgStore::connect(&url).unwrap();
    assert_eq!(s.outbox_len().unwrap(), 40);
    assert_eq!(s.outbox_usage().unwrap().items, 40);
    assert_eq!(s.outbox_usage().unwrap().bytes, 400);
    // Ten delivered (by a third instance): ten more, and no more.
    let seqs: Vec<u64> = s
        .claim("c", proxy::push::now_ms(), 60_000, 10, 10)
        .unwrap()
        .iter()
        .map(|i| i.seq)
        .collect();
    assert_eq!(seqs.len(), 10);
    s.complete_many(&seqs).unwrap();
    let more = race(30);
    assert_eq!(more.values().sum::<usize>(), 10, "{more:?}");
    assert_eq!(s.outbox_len().unwrap(), 40);
    assert_eq!(s.outbox_usage().unwrap().items, 40);
}
