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
    db: Database,
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
        Ok(RedbStore { db })
    }

    fn write<R>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let tx = self.db.begin_write().map_err(e)?;
        let r = f(&tx)?;
        tx.commit().map_err(e)?;
        Ok(r)
    }
}

impl Store for RedbStore {
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
        let tx = self.db.begin_read().map_err(e)?;
        let t = tx.open_table(CONFIGS).map_err(e)?;
        match t.get(callback_id).map_err(e)? {
            Some(g) => Ok(Some(dec(g.value())?)),
            None => Ok(None),
        }
    }

    fn configs_for_task(&self, task_id: &str) -> Result<Vec<PushConfig>, StoreError> {
        let tx = self.db.begin_read().map_err(e)?;
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

    fn enqueue(&self, mut item: OutboxItem) -> Result<u64, StoreError> {
        self.write(|tx| {
            let mut meta = tx.open_table(META).map_err(e)?;
            let seq = meta
                .get("next_seq")
                .map_err(e)?
                .map(|g| g.value())
                .unwrap_or(1);
            meta.insert("next_seq", seq + 1).map_err(e)?;
            item.seq = seq;
            let v = enc(&item)?;
            tx.open_table(OUTBOX)
                .map_err(e)?
                .insert(seq, v.as_slice())
                .map_err(e)?;
            Ok(seq)
        })
    }

    fn pending(&self, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        let tx = self.db.begin_read().map_err(e)?;
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

    fn complete(&self, seq: u64) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.open_table(OUTBOX).map_err(e)?.remove(seq).map_err(e)?;
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
        let tx = self.db.begin_read().map_err(e)?;
        let t = tx.open_table(DEAD).map_err(e)?;
        let mut out = Vec::new();
        for r in t.iter().map_err(e)? {
            let (_, v) = r.map_err(e)?;
            out.push(dec(v.value())?);
        }
        Ok(out)
    }

    fn outbox_len(&self) -> Result<u64, StoreError> {
        let tx = self.db.begin_read().map_err(e)?;
        let t = tx.open_table(OUTBOX).map_err(e)?;
        t.len().map_err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;

    fn cfg(cb: &str, task: &str, id: &str) -> PushConfig {
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
        }
    }

    fn item(task: &str) -> OutboxItem {
        OutboxItem {
            seq: 0,
            callback_id: "cb".into(),
            task_id: task.into(),
            body: "{}".into(),
            attempts: 0,
            next_attempt_ms: 0,
            accepted_ms: 0,
        }
    }

    #[test]
    fn configs_outbox_dead_letters_survive_reopen() {
        let dir =
            std::env::temp_dir().join(format!("a2a-push-store-{}", super::super::random_id()));
        {
            let s = RedbStore::open(&dir).unwrap();
            s.put_config(&cfg("a", "t1", "c1")).unwrap();
            s.put_config(&cfg("b", "t1", "c2")).unwrap();
            s.put_config(&cfg("c", "t2", "c1")).unwrap();
            assert_eq!(s.enqueue(item("t1")).unwrap(), 1);
            assert_eq!(s.enqueue(item("t1")).unwrap(), 2);
            assert_eq!(s.enqueue(item("t2")).unwrap(), 3);
            s.complete(1).unwrap();
            let p = s.pending(10).unwrap();
            s.dead_letter(&p[1], "gone").unwrap();
        }
        let s = RedbStore::open(&dir).unwrap();
        assert_eq!(s.configs_for_task("t1").unwrap().len(), 2);
        assert_eq!(s.config_by_callback("c").unwrap().unwrap().task_id, "t2");
        assert_eq!(s.delete_config("t1", "c2").unwrap(), 1);
        assert!(s.config_by_callback("b").unwrap().is_none());
        let p = s.pending(10).unwrap();
        assert_eq!(p.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![2]);
        assert_eq!(s.outbox_len().unwrap(), 1);
        assert_eq!(s.dead_letters().unwrap()[0].reason, "gone");
        assert_eq!(
            s.enqueue(item("t3")).unwrap(),
            4,
            "seq continues after reopen"
        );
        let dbg = format!("{:?}", s.config_by_callback("a").unwrap().unwrap());
        assert!(!dbg.contains("tok") && !dbg.contains("\"s\""), "{dbg}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
