//! The behaviour every push [`Store`] backend must show, as functions the
//! backends' tests run on a fresh, empty store: the redb and sealed-store
//! unit tests (the library includes this file under `cfg(test)`) and the
//! PostgreSQL integration test (`push_store_pg.rs`). Panics on a violation.
//! Test code only: it is never compiled into the proxy.

#![allow(dead_code)]

use proxy::push::{
    Enqueued, Full, OutboxBounds, OutboxItem, PushConfig, Snapshot, SnapshotWrite, Store,
    TaskRecord, Usage,
};
use proxy::version::Version;

pub fn cfg(cb: &str, task: &str, id: &str) -> PushConfig {
    PushConfig {
        callback_id: cb.into(),
        task_id: task.into(),
        config_id: id.into(),
        original_url: "http://127.0.0.1:1/hook".into(),
        token: Some("tok".into()),
        auth: None,
        subscriber_version: Version::V10,
        upstream_version: Version::V03,
        callback_secret: "s".into(),
        created: 1,
        seed: None,
    }
}

pub fn item(task: &str) -> OutboxItem {
    OutboxItem {
        seq: 0,
        callback_id: "cb".into(),
        task_id: task.into(),
        body: "{}".into(),
        attempts: 0,
        next_attempt_ms: 0,
        accepted_ms: 0,
        lease_owner: String::new(),
        lease_until_ms: 0,
        traceparent: String::new(),
        tracestate: String::new(),
    }
}

/// A W3C trace context's parent, as an agent sends it.
pub const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// `it` with a trace context, as accepted from an agent that sent one.
pub fn traced(mut it: OutboxItem) -> OutboxItem {
    it.traceparent = TRACEPARENT.into();
    it.tracestate = "k=v".into();
    it
}

/// Runs every check below on `fresh`, a new empty store.
pub fn run(fresh: &dyn Fn() -> Box<dyn Store>) {
    configs_outbox_dead_letters(&*fresh());
    claim_runs_per_callback_in_order_with_leases(&*fresh());
    reschedule_rewrites_and_releases(&*fresh());
    runs_are_capped_and_leases_renewed_by_their_owner_only(&*fresh());
    tasks_upsert_trim_and_load_newest(&*fresh());
    snapshots_change_with_their_items_or_not_at_all(&*fresh());
    snapshots_go_with_their_config(&*fresh());
    bounds_refuse_what_does_not_fit(&*fresh());
    refused_items_leave_their_snapshot_alone(&*fresh());
    claims_are_bounded_in_bytes(&*fresh());
    bounds_before(&*fresh());
}

pub fn change(cb: &str, base: u64, task: Option<&str>) -> SnapshotWrite {
    SnapshotWrite {
        callback_id: cb.into(),
        base,
        task: task.map(str::to_string),
    }
}

fn snap(version: u64, task: Option<&str>) -> Snapshot {
    Snapshot {
        version,
        task: task.map(str::to_string),
    }
}

fn folded(cb: &str, body: &str) -> OutboxItem {
    OutboxItem {
        callback_id: cb.into(),
        body: body.into(),
        ..item("t")
    }
}

pub fn snapshots_change_with_their_items_or_not_at_all(s: &dyn Store) {
    s.put_config(&cfg("a", "t", "a")).unwrap();
    assert_eq!(s.snapshot("a").unwrap(), Snapshot::default());
    let got = s
        .enqueue_folded(vec![(folded("a", "1"), Some(change("a", 0, Some("A1"))))])
        .unwrap();
    assert_eq!(got, [Some(1)]);
    assert_eq!(s.snapshot("a").unwrap(), snap(1, Some("A1")));
    // Folded from a stale version (another instance wrote first): neither
    // the change nor its item is written.
    let got = s
        .enqueue_folded(vec![(
            folded("a", "stale"),
            Some(change("a", 0, Some("X"))),
        )])
        .unwrap();
    assert_eq!(got, [None]);
    assert_eq!(s.snapshot("a").unwrap(), snap(1, Some("A1")));
    assert_eq!(s.outbox_len().unwrap(), 1);
    // In one call: a change building on the one before it is written, a
    // second change from the same base is not; others are independent.
    let got = s
        .enqueue_folded(vec![
            (folded("a", "2"), Some(change("a", 1, Some("A2")))),
            (folded("a", "dup"), Some(change("a", 1, Some("Y")))),
            (folded("b", "b1"), Some(change("b", 0, Some("B1")))),
            (item("t"), None),
            (folded("a", "3"), Some(change("a", 2, Some("A3")))),
        ])
        .unwrap();
    assert_eq!(got, [Some(2), None, Some(3), Some(4), Some(5)]);
    assert_eq!(s.snapshot("a").unwrap(), snap(3, Some("A3")));
    assert_eq!(s.snapshot("b").unwrap(), snap(1, Some("B1")));
    let bodies: Vec<String> = s.pending(10).unwrap().into_iter().map(|i| i.body).collect();
    assert_eq!(bodies, ["1", "2", "b1", "{}", "3"]);
    // A removal (terminal state) keeps the version: a fold from before it
    // is still stale.
    let got = s
        .enqueue_folded(vec![(folded("a", "4"), Some(change("a", 3, None)))])
        .unwrap();
    assert_eq!(got, [Some(6)]);
    assert_eq!(s.snapshot("a").unwrap(), snap(4, None));
    let got = s
        .enqueue_folded(vec![(folded("a", "x"), Some(change("a", 3, Some("Z"))))])
        .unwrap();
    assert_eq!(got, [None]);
    assert_eq!(s.snapshot("a").unwrap(), snap(4, None));
    assert_eq!(s.outbox_len().unwrap(), 6);
    // Seqs spent on refused items (if any) never go backwards.
    assert!(s.enqueue(item("t")).unwrap() > 6);
}

pub fn snapshots_go_with_their_config(s: &dyn Store) {
    s.put_config(&cfg("a", "t1", "c1")).unwrap();
    s.put_config(&cfg("b", "t1", "c2")).unwrap();
    let got = s
        .enqueue_folded(vec![
            (folded("a", "1"), Some(change("a", 0, Some("A1")))),
            (folded("b", "1"), Some(change("b", 0, Some("B1")))),
        ])
        .unwrap();
    assert_eq!(got, [Some(1), Some(2)]);
    assert_eq!(s.delete_config("t1", "c1").unwrap(), 1);
    assert_eq!(s.snapshot("a").unwrap(), Snapshot::default());
    assert_eq!(s.snapshot("b").unwrap(), snap(1, Some("B1")));
}

/// Writes snapshot changes; [`snapshots_after`] checks them (after
/// reopening the store: they are as durable as their items).
pub fn snapshots_before(s: &dyn Store) {
    // Snapshots belong to configs (a deleted config's go with it).
    s.put_config(&cfg("a", "t", "a")).unwrap();
    s.put_config(&cfg("b", "t", "b")).unwrap();
    let got = s
        .enqueue_folded(vec![
            (folded("a", "1"), Some(change("a", 0, Some("A1")))),
            (folded("a", "2"), Some(change("a", 1, Some("A2")))),
            (folded("b", "1"), Some(change("b", 0, Some("B1")))),
            (folded("b", "2"), Some(change("b", 1, None))),
        ])
        .unwrap();
    assert_eq!(got, [Some(1), Some(2), Some(3), Some(4)]);
}

pub fn snapshots_after(s: &dyn Store) {
    assert_eq!(s.snapshot("a").unwrap(), snap(2, Some("A2")));
    assert_eq!(s.snapshot("b").unwrap(), snap(2, None));
    assert_eq!(s.outbox_len().unwrap(), 4);
    let got = s
        .enqueue_folded(vec![
            (folded("a", "stale"), Some(change("a", 1, Some("X")))),
            (folded("a", "3"), Some(change("a", 2, Some("A3")))),
        ])
        .unwrap();
    assert_eq!(got, [None, Some(5)]);
    assert_eq!(s.snapshot("a").unwrap(), snap(3, Some("A3")));
}

pub fn tasks_upsert_trim_and_load_newest(s: &dyn Store) {
    let rec = |id: &str, at: i64| TaskRecord {
        id: id.into(),
        updated_ms: at,
        task: format!("{{\"id\":\"{id}\",\"at\":{at}}}"),
    };
    assert!(s.load_tasks(10).unwrap().is_empty());
    s.put_tasks(&[rec("a", 1), rec("b", 2), rec("c", 3)], 100)
        .unwrap();
    // An update replaces the entry and makes it the newest.
    s.put_tasks(&[rec("a", 4)], 100).unwrap();
    let ids = |v: Vec<TaskRecord>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(s.load_tasks(10).unwrap()), ["b", "c", "a"]);
    assert_eq!(ids(s.load_tasks(2).unwrap()), ["c", "a"]);
    assert_eq!(s.load_tasks(1).unwrap()[0], rec("a", 4));
    // Well past `keep`, the least recently updated go.
    let many: Vec<TaskRecord> = (0..20).map(|i| rec(&format!("n{i:02}"), 100 + i)).collect();
    s.put_tasks(&many, 8).unwrap();
    let left = ids(s.load_tasks(100).unwrap());
    assert_eq!(left.len(), 8, "{left:?}");
    assert_eq!(left.last().map(String::as_str), Some("n19"));
}

/// Writes configs, items, a completion and a dead letter; then
/// [`configs_outbox_dead_letters_after`] checks them (on the same store or
/// after reopening it).
pub fn configs_outbox_dead_letters_before(s: &dyn Store) {
    s.put_config(&cfg("a", "t1", "c1")).unwrap();
    s.put_config(&cfg("b", "t1", "c2")).unwrap();
    s.put_config(&cfg("c", "t2", "c1")).unwrap();
    assert_eq!(s.enqueue(item("t1")).unwrap(), 1);
    assert_eq!(s.enqueue(item("t1")).unwrap(), 2);
    assert_eq!(s.enqueue(traced(item("t2"))).unwrap(), 3);
    s.complete(1).unwrap();
    let p = s.pending(10).unwrap();
    assert_eq!(
        (p[1].traceparent.as_str(), p[1].tracestate.as_str()),
        (TRACEPARENT, "k=v")
    );
    assert_eq!(p[0].traceparent, "", "no context: none made up");
    s.dead_letter(&p[1], "gone").unwrap();
}

pub fn configs_outbox_dead_letters_after(s: &dyn Store) {
    assert_eq!(s.configs_for_task("t1").unwrap().len(), 2);
    assert_eq!(s.config_by_callback("c").unwrap().unwrap().task_id, "t2");
    assert_eq!(
        s.config_by_callback("c").unwrap().unwrap(),
        cfg("c", "t2", "c1")
    );
    assert_eq!(s.delete_config("t1", "c2").unwrap(), 1);
    assert_eq!(s.delete_config("t1", "c2").unwrap(), 0);
    assert!(s.config_by_callback("b").unwrap().is_none());
    assert!(s.configs_for_task("nope").unwrap().is_empty());
    let p = s.pending(10).unwrap();
    assert_eq!(p.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![2]);
    assert_eq!(s.outbox_len().unwrap(), 1);
    let dead = s.dead_letters().unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].reason, "gone");
    assert_eq!(dead[0].item.seq, 3);
    assert_eq!(dead[0].item.task_id, "t2");
    assert_eq!(dead[0].item.traceparent, TRACEPARENT);
    assert_eq!(dead[0].item.tracestate, "k=v");
    assert_eq!(s.enqueue(item("t3")).unwrap(), 4, "seq keeps increasing");
    let dbg = format!("{:?}", s.config_by_callback("a").unwrap().unwrap());
    assert!(!dbg.contains("tok") && !dbg.contains("\"s\""), "{dbg}");
}

pub fn configs_outbox_dead_letters(s: &dyn Store) {
    configs_outbox_dead_letters_before(s);
    configs_outbox_dead_letters_after(s);
}

pub fn claim_runs_per_callback_in_order_with_leases(s: &dyn Store) {
    let mk = |cb: &str, due: i64| OutboxItem {
        callback_id: cb.into(),
        next_attempt_ms: due,
        ..item("t")
    };
    // a: 1, 3 due; b: 2 not due yet, 4 due (but behind 2).
    let seqs = s
        .enqueue_many(vec![mk("a", 0), mk("b", 500), mk("a", 0), mk("b", 0)])
        .unwrap();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
    let got = s.claim("one", 100, 1000, 10, 100).unwrap();
    assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![1, 3]);
    assert!(got
        .iter()
        .all(|i| i.lease_owner == "one" && i.lease_until_ms == 1100));
    // The lease is stored, not only returned.
    let p = s.pending(10).unwrap();
    assert_eq!(p[0].lease_owner, "one");
    assert_eq!(p[0].lease_until_ms, 1100);
    // Leased: another instance gets nothing of a; b is still not due.
    assert!(s.claim("two", 200, 1000, 10, 100).unwrap().is_empty());
    // b becomes due: its run 2, 4; a's lease has not run out.
    let got = s.claim("two", 600, 1000, 10, 100).unwrap();
    assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![2, 4]);
    // a's lease runs out (the first instance died): a is handed out again.
    let got = s.claim("two", 1200, 1000, 1, 100).unwrap();
    assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![1]);
    s.complete_many(&[1, 3]).unwrap();
    assert_eq!(s.outbox_len().unwrap(), 2);
}

pub fn reschedule_rewrites_and_releases(s: &dyn Store) {
    let seq = s.enqueue(item("t")).unwrap();
    s.enqueue(item("t")).unwrap();
    let mut got = s.claim("one", 10, 100, 10, 100).unwrap();
    assert_eq!(got.len(), 2);
    // A failed attempt: back off the head, release the lease.
    let mut head = got.remove(0);
    assert_eq!(head.seq, seq);
    head.attempts = 3;
    head.next_attempt_ms = 5000;
    head.lease_owner.clear();
    head.lease_until_ms = 0;
    s.reschedule(&head, "one").unwrap();
    let p = s.pending(10).unwrap();
    assert_eq!(p[0], head);
    // The head is not due: nothing of its callback is handed out, even
    // after the second item's lease runs out.
    assert!(s.claim("two", 200, 100, 10, 100).unwrap().is_empty());
    // Due again: a head that failed before is tried alone, not with the
    // run behind it.
    let got = s.claim("two", 5000, 100, 10, 100).unwrap();
    assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), [seq]);
    assert_eq!(got[0].attempts, 3);
    assert_eq!(s.claim("one", 5001, 100, 10, 100).unwrap().len(), 0);
    // Delivered: the run behind it goes out.
    s.complete(seq).unwrap();
    let got = s.claim("one", 5001, 100, 10, 100).unwrap();
    assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), [seq + 1]);
}

/// A notification for config `cb` with a body of `bytes` bytes.
pub fn sized(cb: &str, bytes: usize) -> OutboxItem {
    OutboxItem {
        callback_id: cb.into(),
        body: "x".repeat(bytes),
        ..item("t")
    }
}

/// Bounds of the bound checks below: 3 items or 100 bytes per config, 5
/// items or 1000 bytes in all.
pub const SMALL: OutboxBounds = OutboxBounds {
    config_items: 3,
    config_bytes: 100,
    total_items: 5,
    total_bytes: 1000,
};

fn plain(items: Vec<OutboxItem>) -> Vec<(OutboxItem, Option<SnapshotWrite>)> {
    items.into_iter().map(|i| (i, None)).collect()
}

fn seq_of(e: &Enqueued) -> u64 {
    match e {
        Enqueued::Seq(s) => *s,
        other => panic!("not written: {other:?}"),
    }
}

/// Issue #41: an item is written only if it fits beside the waiting ones
/// (those before it in the same call included), per config in items and
/// bytes and in all; delivered and dead ones no longer count.
pub fn bounds_refuse_what_does_not_fit(s: &dyn Store) {
    let got = s
        .enqueue_bounded(plain(vec![sized("a", 10); 4]), &SMALL)
        .unwrap();
    assert!(matches!(
        got[..3],
        [Enqueued::Seq(_), Enqueued::Seq(_), Enqueued::Seq(_)]
    ));
    assert_eq!(got[3], Enqueued::Full(Full::Config));
    let a: Vec<u64> = got[..3].iter().map(seq_of).collect();
    // Larger alone than a config may hold: never fits.
    let got = s
        .enqueue_bounded(plain(vec![sized("b", 101)]), &SMALL)
        .unwrap();
    assert_eq!(got, [Enqueued::Full(Full::TooLarge)]);
    // Bytes: 40 + 40 fit in 100, a third 40 does not.
    let got = s
        .enqueue_bounded(plain(vec![sized("b", 40); 3]), &SMALL)
        .unwrap();
    assert_eq!(got[2], Enqueued::Full(Full::Config), "{got:?}");
    let b: Vec<u64> = got[..2].iter().map(seq_of).collect();
    assert_eq!(s.outbox_len().unwrap(), 5);
    assert_eq!(
        s.outbox_usage().unwrap(),
        Usage {
            items: 5,
            bytes: 110
        }
    );
    // Five in all: a third config's first item is refused too.
    let got = s
        .enqueue_bounded(plain(vec![sized("c", 1)]), &SMALL)
        .unwrap();
    assert_eq!(got, [Enqueued::Full(Full::Total)]);
    // A delivered item leaves room (in all, and in its config).
    s.complete(a[0]).unwrap();
    let got = s
        .enqueue_bounded(plain(vec![sized("c", 1), sized("a", 10)]), &SMALL)
        .unwrap();
    assert!(matches!(got[0], Enqueued::Seq(_)), "{got:?}");
    assert_eq!(got[1], Enqueued::Full(Full::Total));
    // So does a dead letter.
    let held = s.claim("one", 0, 1000, 10, 100).unwrap();
    let dead = held.iter().find(|i| i.seq == b[0]).unwrap();
    s.dead_letter(dead, "gone").unwrap();
    assert_eq!(
        s.outbox_usage().unwrap(),
        Usage {
            items: 4,
            bytes: 10 + 10 + 40 + 1
        }
    );
    let got = s
        .enqueue_bounded(plain(vec![sized("b", 60)]), &SMALL)
        .unwrap();
    assert!(matches!(got[0], Enqueued::Seq(_)), "{got:?}");
    // Unbounded appends are not held to them.
    s.enqueue_many(vec![sized("a", 500); 3]).unwrap();
    assert_eq!(s.outbox_usage().unwrap().items, 8);
    assert_eq!(s.outbox_len().unwrap(), 8);
    // Completing the same item twice counts it off once.
    s.complete_many(&[a[1], a[1]]).unwrap();
    s.complete(a[1]).unwrap();
    assert_eq!(s.outbox_usage().unwrap().items, 7);
}

/// A refused item's snapshot change is not written either: the agent's
/// push, sent again, folds from the same snapshot.
pub fn refused_items_leave_their_snapshot_alone(s: &dyn Store) {
    s.put_config(&cfg("a", "t", "a")).unwrap();
    let big = (sized("a", 101), Some(change("a", 0, Some("A1"))));
    assert_eq!(
        s.enqueue_bounded(vec![big], &SMALL).unwrap(),
        [Enqueued::Full(Full::TooLarge)]
    );
    assert_eq!(s.snapshot("a").unwrap(), Snapshot::default());
    let fits = (sized("a", 10), Some(change("a", 0, Some("A1"))));
    let got = s.enqueue_bounded(vec![fits], &SMALL).unwrap();
    seq_of(&got[0]);
    assert_eq!(s.snapshot("a").unwrap(), snap(1, Some("A1")));
    // Full and stale both: nothing written.
    s.enqueue_bounded(plain(vec![sized("a", 10); 2]), &SMALL)
        .unwrap();
    let over = (sized("a", 10), Some(change("a", 1, Some("A2"))));
    assert_eq!(
        s.enqueue_bounded(vec![over], &SMALL).unwrap(),
        [Enqueued::Full(Full::Config)]
    );
    assert_eq!(s.snapshot("a").unwrap(), snap(1, Some("A1")));
    assert_eq!(s.outbox_len().unwrap(), 3);
}

/// A claim takes, in seq order, only while the bodies add up to its byte
/// bound; its first item whatever its size.
pub fn claims_are_bounded_in_bytes(s: &dyn Store) {
    let seqs = s
        .enqueue_many(vec![
            sized("a", 10),
            sized("b", 100),
            sized("a", 10),
            sized("a", 10),
        ])
        .unwrap();
    let got = |v: Vec<OutboxItem>| v.iter().map(|i| i.seq).collect::<Vec<_>>();
    // 10, then b's 100 would pass 25: the claim stops there.
    assert_eq!(
        got(s.claim_within("one", 0, 1000, 10, 100, 25).unwrap()),
        [seqs[0]]
    );
    // A first item larger than the bound is still taken (alone).
    let big = s.claim_within("one", 0, 1000, 10, 100, 5).unwrap();
    assert_eq!(got(big.clone()), [seqs[1]]);
    assert_eq!(big[0].body.len(), 100);
    s.complete_many(&seqs[..2]).unwrap();
    let rest = s.claim_within("one", 0, 1000, 10, 100, 25).unwrap();
    assert_eq!(got(rest.clone()), [seqs[2], seqs[3]]);
    assert!(rest.iter().all(|i| i.body == "x".repeat(10)));
}

/// Fills config `a` to [`SMALL`]'s bound; [`bounds_after`] checks it
/// holds (after reopening the store, or from another instance).
pub fn bounds_before(s: &dyn Store) {
    let got = s
        .enqueue_bounded(plain(vec![sized("a", 30); 3]), &SMALL)
        .unwrap();
    assert!(got.iter().all(|e| matches!(e, Enqueued::Seq(_))), "{got:?}");
}

pub fn bounds_after(s: &dyn Store) {
    assert_eq!(
        s.outbox_usage().unwrap(),
        Usage {
            items: 3,
            bytes: 90
        }
    );
    let got = s
        .enqueue_bounded(plain(vec![sized("a", 1)]), &SMALL)
        .unwrap();
    assert_eq!(got, [Enqueued::Full(Full::Config)]);
    let first = s.pending(1).unwrap()[0].seq;
    s.complete(first).unwrap();
    let got = s
        .enqueue_bounded(plain(vec![sized("a", 1)]), &SMALL)
        .unwrap();
    assert!(matches!(got[0], Enqueued::Seq(_)), "{got:?}");
}

/// Issue #25: a claim hands out at most `run_limit` items per callback; a
/// lease is renewed only by its owner, and an item taken over after its
/// lease ran out is no longer its first owner's to renew, reschedule or
/// give up.
pub fn runs_are_capped_and_leases_renewed_by_their_owner_only(s: &dyn Store) {
    let mk = |cb: &str| OutboxItem {
        callback_id: cb.into(),
        ..item("t")
    };
    s.enqueue_many(vec![mk("a"), mk("a"), mk("a"), mk("b"), mk("a")])
        .unwrap();
    let got = s.claim("one", 100, 1000, 10, 2).unwrap();
    assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![1, 2, 4]);
    // The rest of a's run waits behind its leased head.
    assert!(s.claim("two", 200, 1000, 10, 2).unwrap().is_empty());
    // Renewed before it runs out: still one's at 1500.
    assert_eq!(s.renew("one", &[1, 2, 4], 2000).unwrap(), vec![1, 2, 4]);
    assert_eq!(s.renew("two", &[1, 2, 4], 9000).unwrap(), Vec::<u64>::new());
    assert!(s.claim("two", 1500, 1000, 10, 2).unwrap().is_empty());
    // b is delivered; a's lease runs out and two takes a's run over.
    s.complete(4).unwrap();
    let got = s.claim("two", 2100, 1000, 10, 10).unwrap();
    assert_eq!(
        got.iter().map(|i| i.seq).collect::<Vec<_>>(),
        vec![1, 2, 3, 5]
    );
    // One, late, learns it lost them; its reschedule changes nothing.
    assert_eq!(s.renew("one", &[1, 2, 4], 5000).unwrap(), Vec::<u64>::new());
    let mut stale = got[0].clone();
    stale.lease_owner.clear();
    stale.lease_until_ms = 0;
    stale.attempts = 7;
    s.reschedule(&stale, "one").unwrap();
    let p = s.pending(10).unwrap();
    assert_eq!(p[0].lease_owner, "two");
    assert_eq!(p[0].attempts, 0);
    // Its owner's reschedule applies.
    s.reschedule(&stale, "two").unwrap();
    assert_eq!(s.pending(10).unwrap()[0].attempts, 7);
}
