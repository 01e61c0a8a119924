//! Credentials sealed at rest: a [`Store`] wrapper that encrypts a push
//! config's subscriber token, authentication credentials and callback
//! secret (ChaCha20-Poly1305, a random nonce per value) before the backend
//! sees them, and opens them on the way back. The key is 32 bytes, kept as
//! 64 hex digits in a file (`push.credentials_key_file`; the embedded store
//! makes `<data_dir>/credentials.key`, mode 0600, on first use).
//!
//! A sealed value is `sealed:v1:<base64 of nonce ‖ ciphertext>`. Values
//! without that prefix (written before sealing existed) are read as they
//! are and sealed on their next write. A value that does not open (another
//! key) is an error: the config is unusable, never silently wrong.

use std::path::Path;
use std::sync::Arc;

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use translate::v10::part::{decode_base64, encode_base64};

use super::{
    DeadLetter, Enqueued, OutboxBounds, OutboxItem, PushConfig, Snapshot, SnapshotWrite, Store,
    StoreError, TaskRecord, Usage,
};

const PREFIX: &str = "sealed:v1:";

/// The sealing key.
pub struct Sealer {
    cipher: ChaCha20Poly1305,
    /// The ListTasks scope secret derived from the key
    /// (`crate::tasks::scope::derive_secret`).
    list_scope: [u8; 32],
}

impl Sealer {
    /// Reads the key file (64 hex digits, surrounding whitespace allowed).
    pub fn from_file(path: &Path) -> Result<Sealer, StoreError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| StoreError(format!("credentials key {}: {e}", path.display())))?;
        let key = parse_hex_key(text.trim()).ok_or_else(|| {
            StoreError(format!(
                "credentials key {}: must hold 64 hex digits",
                path.display()
            ))
        })?;
        Ok(Sealer::new(&key))
    }

    /// Reads `path`, or creates it (mode 0600) with a random key.
    pub fn from_file_or_new(path: &Path) -> Result<Sealer, StoreError> {
        if path.exists() {
            return Sealer::from_file(path);
        }
        use rand::RngCore;
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        write_private(path, &format!("{hex}\n"))
            .map_err(|e| StoreError(format!("credentials key {}: {e}", path.display())))?;
        tracing::info!(path = %path.display(), "push: made a credentials key");
        Ok(Sealer::new(&key))
    }

    pub fn new(key: &[u8; 32]) -> Sealer {
        Sealer {
            cipher: ChaCha20Poly1305::new(Key::from_slice(key)),
            list_scope: crate::tasks::scope::derive_secret(key),
        }
    }

    pub fn seal(&self, plain: &str) -> Result<String, StoreError> {
        use rand::RngCore;
        let mut nonce = [0u8; 12];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let ct = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plain.as_bytes())
            .map_err(|_| StoreError("sealing a credential failed".into()))?;
        let mut all = nonce.to_vec();
        all.extend_from_slice(&ct);
        Ok(format!("{PREFIX}{}", encode_base64(&all)))
    }

    pub fn open(&self, stored: &str) -> Result<String, StoreError> {
        let Some(b64) = stored.strip_prefix(PREFIX) else {
            return Ok(stored.to_string());
        };
        let wrong = || {
            StoreError(
                "a stored credential does not open with this credentials key (another key?)".into(),
            )
        };
        let all = decode_base64(b64).map_err(|_| wrong())?;
        if all.len() < 12 {
            return Err(wrong());
        }
        let (nonce, ct) = all.split_at(12);
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), ct)
            .map_err(|_| wrong())?;
        String::from_utf8(plain).map_err(|_| wrong())
    }

    fn seal_config(&self, c: &PushConfig) -> Result<PushConfig, StoreError> {
        let mut out = c.clone();
        out.callback_secret = self.seal(&c.callback_secret)?;
        out.token = c.token.as_deref().map(|t| self.seal(t)).transpose()?;
        if let Some(a) = out.auth.as_mut() {
            a.credentials = a.credentials.as_deref().map(|t| self.seal(t)).transpose()?;
        }
        Ok(out)
    }

    fn open_config(&self, mut c: PushConfig) -> Result<PushConfig, StoreError> {
        c.callback_secret = self.open(&c.callback_secret)?;
        c.token = c.token.as_deref().map(|t| self.open(t)).transpose()?;
        if let Some(a) = c.auth.as_mut() {
            a.credentials = a.credentials.as_deref().map(|t| self.open(t)).transpose()?;
        }
        Ok(c)
    }
}

fn parse_hex_key(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// A backend whose configs' credentials are sealed.
pub struct SealedStore {
    inner: Arc<dyn Store>,
    sealer: Sealer,
}

impl SealedStore {
    pub fn new(inner: Arc<dyn Store>, sealer: Sealer) -> SealedStore {
        SealedStore { inner, sealer }
    }
}

impl Store for SealedStore {
    fn put_config(&self, c: &PushConfig) -> Result<(), StoreError> {
        self.inner.put_config(&self.sealer.seal_config(c)?)
    }
    fn config_by_callback(&self, callback_id: &str) -> Result<Option<PushConfig>, StoreError> {
        self.inner
            .config_by_callback(callback_id)?
            .map(|c| self.sealer.open_config(c))
            .transpose()
    }
    fn configs_for_task(&self, task_id: &str) -> Result<Vec<PushConfig>, StoreError> {
        self.inner
            .configs_for_task(task_id)?
            .into_iter()
            .map(|c| self.sealer.open_config(c))
            .collect()
    }
    fn delete_config(&self, task_id: &str, config_id: &str) -> Result<usize, StoreError> {
        self.inner.delete_config(task_id, config_id)
    }
    fn enqueue_folded(
        &self,
        items: Vec<(OutboxItem, Option<SnapshotWrite>)>,
    ) -> Result<Vec<Option<u64>>, StoreError> {
        // Snapshots hold task content, no credential: not sealed.
        self.inner.enqueue_folded(items)
    }
    fn enqueue_bounded(
        &self,
        items: Vec<(OutboxItem, Option<SnapshotWrite>)>,
        bounds: &OutboxBounds,
    ) -> Result<Vec<Enqueued>, StoreError> {
        self.inner.enqueue_bounded(items, bounds)
    }
    fn snapshot(&self, callback_id: &str) -> Result<Snapshot, StoreError> {
        self.inner.snapshot(callback_id)
    }
    fn pending(&self, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        self.inner.pending(limit)
    }
    fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
        run_limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        self.inner.claim(owner, now_ms, lease_ms, limit, run_limit)
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
        self.inner
            .claim_within(owner, now_ms, lease_ms, limit, run_limit, max_bytes)
    }
    fn renew(&self, owner: &str, seqs: &[u64], until_ms: i64) -> Result<Vec<u64>, StoreError> {
        self.inner.renew(owner, seqs, until_ms)
    }
    fn reschedule(&self, item: &OutboxItem, held_by: &str) -> Result<(), StoreError> {
        self.inner.reschedule(item, held_by)
    }
    fn complete_many(&self, seqs: &[u64]) -> Result<(), StoreError> {
        self.inner.complete_many(seqs)
    }
    fn dead_letter(&self, item: &OutboxItem, reason: &str) -> Result<(), StoreError> {
        self.inner.dead_letter(item, reason)
    }
    fn dead_letters(&self) -> Result<Vec<DeadLetter>, StoreError> {
        self.inner.dead_letters()
    }
    fn outbox_len(&self) -> Result<u64, StoreError> {
        self.inner.outbox_len()
    }
    fn outbox_usage(&self) -> Result<Usage, StoreError> {
        self.inner.outbox_usage()
    }
    fn put_tasks(&self, tasks: &[TaskRecord], keep: usize) -> Result<(), StoreError> {
        self.inner.put_tasks(tasks, keep)
    }
    fn load_tasks(&self, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        self.inner.load_tasks(limit)
    }
    fn list_scope_secret(&self) -> Option<[u8; 32]> {
        Some(self.sealer.list_scope)
    }
    fn shared(&self) -> Option<Arc<super::pg_shared::PgShared>> {
        self.inner.shared()
    }
    fn close(&self) {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::redb_store::tests::{contract_on_temp_stores, dir};
    use crate::push::{contract, redb_store::RedbStore, Auth};

    #[test]
    fn contract_holds_and_credentials_are_sealed_at_rest() {
        contract_on_temp_stores(&|s| {
            Box::new(SealedStore::new(Arc::new(s), Sealer::new(&[7; 32])))
        });

        let d = dir("at-rest");
        let inner: Arc<dyn Store> = Arc::new(RedbStore::open(&d).unwrap());
        let key = d.join("credentials.key");
        let sealed = SealedStore::new(inner.clone(), Sealer::from_file_or_new(&key).unwrap());
        let mut c = contract::cfg("cb", "t1", "c1");
        // Long enough that random sealed bytes cannot spell it by chance
        // (the contract's "tok" did, once in a few thousand runs).
        c.token = Some("token-in-clear-QWERTY".into());
        c.callback_secret = "secret-in-clear-ASDFGH".into();
        c.auth = Some(Auth {
            scheme: "Bearer".into(),
            credentials: Some("cred-XYZ".into()),
        });
        sealed.put_config(&c).unwrap();
        // The backend holds no credential in clear; the wrapper gives them back.
        let raw = inner.config_by_callback("cb").unwrap().unwrap();
        let all = format!(
            "{:?} {:?} {}",
            raw.token,
            raw.auth.as_ref().unwrap().credentials,
            raw.callback_secret
        );
        for clear in [
            "token-in-clear-QWERTY",
            "secret-in-clear-ASDFGH",
            "cred-XYZ",
        ] {
            assert!(!all.contains(clear), "{clear} in {all}");
        }
        assert!(raw.callback_secret.starts_with(PREFIX), "{all}");
        assert_eq!(sealed.config_by_callback("cb").unwrap().unwrap(), c);
        assert_eq!(sealed.configs_for_task("t1").unwrap(), vec![c.clone()]);
        // The key file is private and read back on the next start.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = SealedStore::new(inner.clone(), Sealer::from_file_or_new(&key).unwrap());
        assert_eq!(again.config_by_callback("cb").unwrap().unwrap(), c);
        // Another key: an error, not wrong credentials.
        let other = SealedStore::new(inner.clone(), Sealer::new(&[1; 32]));
        assert!(other.config_by_callback("cb").is_err());
        // Configs written in clear (before sealing) still read.
        inner.put_config(&contract::cfg("old", "t2", "c2")).unwrap();
        assert_eq!(
            sealed.config_by_callback("old").unwrap().unwrap(),
            contract::cfg("old", "t2", "c2")
        );
        std::fs::write(d.join("bad.key"), "xyz").unwrap();
        assert!(Sealer::from_file(&d.join("bad.key")).is_err());
        drop((sealed, again, other));
        inner.close();
        let _ = std::fs::remove_dir_all(&d);
    }
}
