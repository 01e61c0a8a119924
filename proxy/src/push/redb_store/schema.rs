//! The store's schema versions: the migration from each to the next.

use super::*;

/// Migrations from schema version `n` to `n + 1`, index `n`. Version 0 is
/// an empty file; 0 -> 1 creates the tables.
pub(super) type Migration = fn(&redb::WriteTransaction) -> Result<(), StoreError>;
pub(super) const MIGRATIONS: &[Migration] = &[
    |tx| {
        tx.open_table(CONFIGS).map_err(e)?;
        tx.open_table(OUTBOX).map_err(e)?;
        tx.open_table(DEAD).map_err(e)?;
        Ok(())
    },
    |tx| {
        tx.open_table(TASKS).map_err(e)?;
        Ok(())
    },
    |tx| {
        tx.open_table(SNAPSHOTS).map_err(e)?;
        Ok(())
    },
    // The task index held whole tasks of no known caller: dropped.
    |tx| {
        tx.delete_table(TASKS).map_err(e)?;
        tx.open_table(TASKS).map_err(e)?;
        Ok(())
    },
    // Outbox items gained optional trace-context members (absent in older
    // records, which read as none): nothing to rewrite.
    |_| Ok(()),
    // Each outbox item's body apart from its state (claims and leases
    // rewrite the state only), which says the body's length.
    |tx| {
        let mut out = tx.open_table(OUTBOX).map_err(e)?;
        let mut bodies = tx.open_table(BODIES).map_err(e)?;
        let mut seqs = Vec::new();
        for r in out.iter().map_err(e)? {
            seqs.push(r.map_err(e)?.0.value());
        }
        for seq in seqs {
            let item: OutboxItem = match out.get(seq).map_err(e)? {
                Some(g) => dec(g.value())?,
                None => continue,
            };
            bodies.insert(seq, item.body.as_bytes()).map_err(e)?;
            out.insert(seq, enc(&Meta::of(&item))?.as_slice())
                .map_err(e)?;
        }
        Ok(())
    },
    // 6 -> 7: what PostgreSQL instances share (push::pg_shared); nothing
    // for the embedded store.
    |_| Ok(()),
];
