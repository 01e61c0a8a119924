//! The embedded default [`Store`]: one redb file, `push.redb`, in the data
//! directory. Tables: `meta` (schema version), `configs` (callback id ->
//! JSON), `outbox` (seq -> JSON), `dead` (seq -> JSON).

use std::path::Path;

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::{DeadLetter, OutboxItem, PushConfig, Store, StoreError, SCHEMA_VERSION};

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const CONFIGS: TableDefinition<&str, &[u8]> = TableDefinition::new("configs");
const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
const DEAD: TableDefinition<u64, &[u8]> = TableDefinition::new("dead");

/// How many outbox items one claim looks at (bounds its cost with a deep
/// backlog; the rest is reached once the head is delivered).
const MAX_CLAIM_SCAN: usize = 20_000;

fn e(x: impl std::fmt::Display) -> StoreError {
    StoreError(x.to_string())
}

fn enc<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(v).map_err(e)
}

fn dec<T: serde::de::DeserializeOwned>(b: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(b).map_err(e)
}

/// Migrations from schema version `n` to `n + 1`, index `n`. Version 0 is
/// an empty file; 0 -> 1 creates the tables.
type Migration = fn(&redb::WriteTransaction) -> Result<(), StoreError>;
const MIGRATIONS: &[Migration] = &[|tx| {
    tx.open_table(CONFIGS).map_err(e)?;
    tx.open_table(OUTBOX).map_err(e)?;
    tx.open_table(DEAD).map_err(e)?;
    Ok(())
}];

/// The redb backend.
pub struct RedbStore {
    /// `None` once closed.
    db: std::sync::RwLock<Option<Database>>,
}

impl RedbStore {
    /// Opens (creating) `dir/push.redb` and migrates it to [`SCHEMA_VERSION`].
    pub fn open(dir: &Path) -> Result<RedbStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|x| e(format!("{}: {x}", dir.display())))?;
        let db = Database::create(dir.join("push.redb")).map_err(e)?;
        let tx = db.begin_write().map_err(e)?;
        {
            let mut meta = tx.open_table(META).map_err(e)?;
            let mut v = meta
                .get("schema_version")
                .map_err(e)?
                .map(|g| g.value())
                .unwrap_or(0);
            if v > SCHEMA_VERSION {
                return Err(e(format!(
                    "data was written by a newer proxy (schema {v} > {SCHEMA_VERSION})"
                )));
            }
            while v < SCHEMA_VERSION {
                MIGRATIONS[v as usize](&tx)?;
                v += 1;
            }
            meta.insert("schema_version", v).map_err(e)?;
        }
        tx.commit().map_err(e)?;
        let store = RedbStore {
            db: std::sync::RwLock::new(Some(db)),
        };
        store.release_leases()?;
        Ok(store)
    }

    fn begin_write(&self) -> Result<redb::WriteTransaction, StoreError> {
        let g = self.db.read().map_err(|_| e("store lock poisoned"))?;
        g.as_ref()
            .ok_or_else(|| e("store closed"))?
            .begin_write()
            .map_err(e)
    }

    fn begin_read(&self) -> Result<redb::ReadTransaction, StoreError> {
        let g = self.db.read().map_err(|_| e("store lock poisoned"))?;
        g.as_ref()
            .ok_or_else(|| e("store closed"))?
            .begin_read()
            .map_err(e)
    }

    /// Only one process can hold the file: leases left by an earlier run
    /// (killed mid-delivery) are void.
    fn release_leases(&self) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            let mut held = Vec::new();
            for r in t.iter().map_err(e)? {
                let (k, v) = r.map_err(e)?;
                let item: OutboxItem = dec(v.value())?;
                if !item.lease_owner.is_empty() {
                    held.push((k.value(), item));
                }
            }
            for (k, mut item) in held {
                item.lease_owner.clear();
                item.lease_until_ms = 0;
                t.insert(k, enc(&item)?.as_slice()).map_err(e)?;
            }
            Ok(())
        })
    }

    fn write<R>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let tx = self.begin_write().map_err(e)?;
        let r = f(&tx)?;
        tx.commit().map_err(e)?;
        Ok(r)
    }
}

impl Store for RedbStore {
    fn close(&self) {
        if let Ok(mut g) = self.db.write() {
            *g = None;
        }
    }

    fn put_config(&self, c: &PushConfig) -> Result<(), StoreError> {
        let v = enc(c)?;
        self.write(|tx| {
            tx.open_table(CONFIGS)
                .map_err(e)?
                .insert(c.callback_id.as_str(), v.as_slice())
                .map_err(e)?;
            Ok(())
        })
    }

    fn config_by_callback(&self, callback_id: &str) -> Result<Option<PushConfig>, StoreError> {
        let tx = self.begin_read().map_err(e)?;
        let t = tx.open_table(CONFIGS).map_err(e)?;
        match t.get(callback_id).map_err(e)? {
            Some(g) => Ok(Some(dec(g.value())?)),
            None => Ok(None),
        }
    }

    fn configs_for_task(&self, task_id: &str) -> Result<Vec<PushConfig>, StoreError> {
        let tx = self.begin_read().map_err(e)?;
        let t = tx.open_table(CONFIGS).map_err(e)?;
        let mut out = Vec::new();
        for r in t.iter().map_err(e)? {
            let (_, v) = r.map_err(e)?;
            let c: PushConfig = dec(v.value())?;
            if c.task_id == task_id {
                out.push(c);
            }
        }
        out.sort_by_key(|c| c.created);
        Ok(out)
    }

    fn delete_config(&self, task_id: &str, config_id: &str) -> Result<usize, StoreError> {
        let gone = self
            .configs_for_task(task_id)?
            .into_iter()
            .filter(|c| c.config_id == config_id)
            .collect::<Vec<_>>();
        self.write(|tx| {
            let mut t = tx.open_table(CONFIGS).map_err(e)?;
            for c in &gone {
                t.remove(c.callback_id.as_str()).map_err(e)?;
            }
            Ok(gone.len())
        })
    }

    fn enqueue_many(&self, items: Vec<OutboxItem>) -> Result<Vec<u64>, StoreError> {
        self.write(|tx| {
            let mut meta = tx.open_table(META).map_err(e)?;
            let mut seq = meta
                .get("next_seq")
                .map_err(e)?
                .map(|g| g.value())
                .unwrap_or(1);
            let mut out = tx.open_table(OUTBOX).map_err(e)?;
            let mut seqs = Vec::with_capacity(items.len());
            for mut item in items {
                item.seq = seq;
                out.insert(seq, enc(&item)?.as_slice()).map_err(e)?;
                seqs.push(seq);
                seq += 1;
            }
            meta.insert("next_seq", seq).map_err(e)?;
            Ok(seqs)
        })
    }

    fn pending(&self, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        let tx = self.begin_read().map_err(e)?;
        let t = tx.open_table(OUTBOX).map_err(e)?;
        let mut out = Vec::new();
        for r in t.iter().map_err(e)?.take(limit) {
            let (_, v) = r.map_err(e)?;
            out.push(dec(v.value())?);
        }
        Ok(out)
    }

    fn reschedule(&self, item: &OutboxItem) -> Result<(), StoreError> {
        let v = enc(item)?;
        self.write(|tx| {
            tx.open_table(OUTBOX)
                .map_err(e)?
                .insert(item.seq, v.as_slice())
                .map_err(e)?;
            Ok(())
        })
    }

    fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        self.write(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            // Per callback id, decided at its oldest item: true = its run is
            // being claimed, false = skip all of it.
            let mut seen: std::collections::HashMap<String, bool> = Default::default();
            let mut got = Vec::new();
            for r in t.iter().map_err(e)?.take(MAX_CLAIM_SCAN) {
                if got.len() >= limit {
                    break;
                }
                let (_, v) = r.map_err(e)?;
                let item: OutboxItem = dec(v.value())?;
                let take = *seen.entry(item.callback_id.clone()).or_insert_with(|| {
                    item.next_attempt_ms <= now_ms && item.lease_until_ms <= now_ms
                });
                if take {
                    got.push(item);
                }
            }
            for item in &mut got {
                item.lease_owner = owner.to_string();
                item.lease_until_ms = now_ms + lease_ms;
                t.insert(item.seq, enc(&*item)?.as_slice()).map_err(e)?;
            }
            Ok(got)
        })
    }

    fn complete_many(&self, seqs: &[u64]) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            for s in seqs {
                t.remove(*s).map_err(e)?;
            }
            Ok(())
        })
    }

    fn dead_letter(&self, item: &OutboxItem, reason: &str) -> Result<(), StoreError> {
        let d = DeadLetter {
            item: item.clone(),
            reason: reason.to_string(),
            dead_ms: super::now_ms(),
        };
        let v = enc(&d)?;
        self.write(|tx| {
            tx.open_table(OUTBOX)
                .map_err(e)?
                .remove(item.seq)
                .map_err(e)?;
            tx.open_table(DEAD)
                .map_err(e)?
                .insert(item.seq, v.as_slice())
                .map_err(e)?;
            Ok(())
        })
    }

    fn dead_letters(&self) -> Result<Vec<DeadLetter>, StoreError> {
        let tx = self.begin_read().map_err(e)?;
        let t = tx.open_table(DEAD).map_err(e)?;
        let mut out = Vec::new();
        for r in t.iter().map_err(e)? {
            let (_, v) = r.map_err(e)?;
            out.push(dec(v.value())?);
        }
        Ok(out)
    }

    fn outbox_len(&self) -> Result<u64, StoreError> {
        let tx = self.begin_read().map_err(e)?;
        let t = tx.open_table(OUTBOX).map_err(e)?;
        t.len().map_err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::contract;

    fn dir(tag: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("a2a-push-{tag}-{}", super::super::random_id()))
    }

    #[test]
    fn contract_holds() {
        let dirs = std::sync::Mutex::new(Vec::new());
        contract::run(&|| {
            let d = dir("contract");
            dirs.lock().unwrap().push(d.clone());
            Box::new(RedbStore::open(&d).unwrap())
        });
        for d in dirs.into_inner().unwrap() {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    #[test]
    fn configs_outbox_dead_letters_survive_reopen() {
        let dir = dir("store");
        contract::configs_outbox_dead_letters_before(&RedbStore::open(&dir).unwrap());
        contract::configs_outbox_dead_letters_after(&RedbStore::open(&dir).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
