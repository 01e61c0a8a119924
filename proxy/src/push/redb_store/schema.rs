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
    // 5 -> 6: issue #41's, laid in at the merge; nothing here.
    |_| Ok(()),
    // 6 -> 7: what PostgreSQL instances share (push::pg_shared); nothing
    // for the embedded store.
    |_| Ok(()),
];
