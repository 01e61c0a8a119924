//! The embedded store's accept journal: outbox items are appended to a
//! segment file and `fdatasync`ed before the callback gets its 2xx, which is
//! far cheaper than a durable redb commit (one small sequential write and
//! one data sync instead of copy-on-write pages and a header). The redb
//! tables catch up behind it with non-durable commits, and a checkpoint (a
//! durable redb commit) lets the segments it covers be deleted. On open,
//! records newer than the last durable checkpoint are replayed.
//!
//! Segment files are `wal-<n>.log` in the data directory. A record is
//! `[len: u32 LE][crc32 of payload: u32 LE][payload]`, the payload one
//! JSON [`OutboxItem`] with, when its push changed its config's fold
//! snapshot, that change as a `snapshot` member (a [`SnapshotWrite`];
//! records written before schema 3 have none and read the same). The item
//! and its snapshot change are one record, so they are durable together or
//! not at all, with no second sync. A torn tail (a crash in the middle of an append)
//! ends the replay of its segment; it was never acknowledged.
//!
//! A record's place ([`At`]) is handed back by [`Wal::append`]: the store
//! keeps only that in memory for an item not checkpointed yet, and reads
//! the body back from the segment when it needs it ([`read_at`]), so the
//! memory an accepted backlog takes does not grow with its bodies.
//!
//! Segments are written full of zeros and synced before use (a spare one is
//! prepared ahead, off the append path), so an append overwrites allocated
//! blocks and its `fdatasync` carries no metadata: no filesystem journal
//! commit, which would also flush the redb file's dirty pages. A zero
//! length field ends a segment's records.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{OutboxItem, SnapshotWrite, StoreError};

/// One record as written.
#[derive(Serialize)]
struct RecordOut<'a> {
    #[serde(flatten)]
    item: &'a OutboxItem,
    #[serde(skip_serializing_if = "Option::is_none")]
    snapshot: Option<&'a SnapshotWrite>,
}

/// One record as replayed: an accepted item and the snapshot change
/// accepted with it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Record {
    #[serde(flatten)]
    pub item: OutboxItem,
    #[serde(default)]
    pub snapshot: Option<SnapshotWrite>,
}

/// A segment's size (written as zeros before use); one holding fewer bytes
/// than a record needs is closed for the next.
const SEGMENT_BYTES: u64 = 4 << 20;

/// Largest record written and replayed (a longer length field is
/// corruption): what its `u32` length field can say.
const MAX_RECORD: usize = u32::MAX as usize;

/// Where one record is: its segment, the offset of its frame (length and
/// crc, then the payload) and the payload's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub segment: u64,
    pub offset: u64,
    pub len: u32,
}

fn e(x: impl std::fmt::Display) -> StoreError {
    StoreError(format!("journal: {x}"))
}

/// The open journal (callers hold it behind a mutex).
pub struct Wal {
    dir: PathBuf,
    file: File,
    segment: u64,
    bytes: u64,
    /// The largest seq in the open segment (0: none yet).
    open_max: u64,
    /// Closed segments: (number, largest seq in it).
    closed: Vec<(u64, u64)>,
    /// A zeroed, synced segment ready to take over (its number is
    /// `segment + 1`).
    spare: Option<File>,
}

fn segment_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("wal-{n:012}.log"))
}

/// Segment numbers present in `dir`, ascending.
fn segments(dir: &Path) -> Result<Vec<u64>, StoreError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(e)? {
        let name = entry.map_err(e)?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = name
            .strip_prefix("wal-")
            .and_then(|r| r.strip_suffix(".log"))
            .and_then(|n| n.parse::<u64>().ok())
        {
            out.push(n);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Every intact record of every segment in `dir`, in append order.
pub fn replay(dir: &Path) -> Result<Vec<Record>, StoreError> {
    let mut out = Vec::new();
    replay_each(dir, |r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

/// Hands every intact record of every segment in `dir` to `f`, in append
/// order, reading one segment at a time (a long journal is never held
/// whole).
pub fn replay_each(
    dir: &Path,
    mut f: impl FnMut(Record) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    for n in segments(dir)? {
        let mut buf = Vec::new();
        File::open(segment_path(dir, n))
            .and_then(|mut f| f.read_to_end(&mut buf))
            .map_err(e)?;
        let mut at = 0;
        while at + 8 <= buf.len() {
            let len = u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]) as usize;
            let crc = u32::from_le_bytes([buf[at + 4], buf[at + 5], buf[at + 6], buf[at + 7]]);
            let end = at + 8 + len;
            if len == 0 || len > MAX_RECORD || end > buf.len() {
                break;
            }
            let payload = &buf[at + 8..end];
            if crc32fast::hash(payload) != crc {
                break;
            }
            match serde_json::from_slice::<Record>(payload) {
                Ok(r) => f(r)?,
                Err(_) => break,
            }
            at = end;
        }
        if buf[at..].iter().any(|b| *b != 0) {
            tracing::warn!(
                segment = n,
                dropped_bytes = buf.len() - at,
                "push journal: torn tail ignored (a crash during an unacknowledged append)"
            );
        }
    }
    Ok(())
}

/// The record at `at`; `None` when its segment is gone (a checkpoint
/// covered it meanwhile, so its record is in the table now).
pub fn read_at(dir: &Path, at: At) -> Result<Option<Record>, StoreError> {
    let f = match File::open(segment_path(dir, at.segment)) {
        Ok(f) => f,
        Err(x) if x.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(x) => return Err(e(x)),
    };
    let mut buf = vec![0u8; 8 + at.len as usize];
    f.read_exact_at(&mut buf, at.offset).map_err(e)?;
    let len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
    let crc = u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]);
    if len != at.len || crc32fast::hash(&buf[8..]) != crc {
        return Err(e(format!(
            "segment {}: no record at {}",
            at.segment, at.offset
        )));
    }
    serde_json::from_slice(&buf[8..]).map(Some).map_err(e)
}

impl Wal {
    /// Starts a fresh segment after every existing one (call [`replay`]
    /// first; the old segments stay until [`Wal::drop_covered`]).
    pub fn open(dir: &Path, old_max_seq: u64) -> Result<Wal, StoreError> {
        let existing = segments(dir)?;
        let segment = existing.last().map_or(1, |n| n + 1);
        let file = Self::create(dir, segment)?;
        Ok(Wal {
            dir: dir.to_path_buf(),
            file,
            segment,
            bytes: 0,
            open_max: 0,
            closed: existing.into_iter().map(|n| (n, old_max_seq)).collect(),
            spare: None,
        })
    }

    /// A new segment: zeros written and synced, its directory entry too.
    fn create(dir: &Path, n: u64) -> Result<File, StoreError> {
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(segment_path(dir, n))
            .map_err(e)?;
        let zeros = vec![0u8; 1 << 20];
        let mut left = SEGMENT_BYTES;
        while left > 0 {
            let k = left.min(zeros.len() as u64) as usize;
            f.write_all(&zeros[..k]).map_err(e)?;
            left -= k as u64;
        }
        f.sync_all().map_err(e)?;
        File::open(dir).and_then(|d| d.sync_all()).map_err(e)?;
        Ok(f)
    }

    /// The number a spare segment would get, if one is wanted.
    pub fn wants_spare(&self) -> Option<u64> {
        self.spare.is_none().then_some(self.segment + 1)
    }

    /// Prepares segment `n` (slow: call without holding the journal).
    pub fn prepare(dir: &Path, n: u64) -> Result<File, StoreError> {
        Self::create(dir, n)
    }

    /// Takes a prepared segment `n` if it is still the next one.
    pub fn give_spare(&mut self, n: u64, f: File) {
        if self.spare.is_none() && n == self.segment + 1 {
            self.spare = Some(f);
        } else if n > self.segment {
            let _ = std::fs::remove_file(segment_path(&self.dir, n));
        }
    }

    /// Appends `records` (items, each with its snapshot change) and syncs
    /// them to disk: when this returns they survive a crash. Returns where
    /// each record is, in order.
    pub fn append(
        &mut self,
        records: &[(OutboxItem, Option<SnapshotWrite>)],
    ) -> Result<Vec<At>, StoreError> {
        let mut buf = Vec::with_capacity(records.len() * 512);
        let mut top = 0;
        // Offsets within `buf`, and lengths.
        let mut frames = Vec::with_capacity(records.len());
        for (item, snapshot) in records {
            let payload = serde_json::to_vec(&RecordOut {
                item,
                snapshot: snapshot.as_ref(),
            })
            .map_err(e)?;
            if payload.len() > MAX_RECORD {
                return Err(e(format!("a record of {} bytes", payload.len())));
            }
            let len = u32::try_from(payload.len()).map_err(e)?;
            frames.push((buf.len() as u64, len));
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
            buf.extend_from_slice(&payload);
            top = top.max(item.seq);
        }
        if self.bytes + buf.len() as u64 > SEGMENT_BYTES && self.bytes > 0 {
            self.rotate()?;
        }
        // Counted in the segment the records go to.
        self.open_max = self.open_max.max(top);
        self.file.write_all_at(&buf, self.bytes).map_err(e)?;
        self.file.sync_data().map_err(e)?;
        let start = self.bytes;
        self.bytes += buf.len() as u64;
        Ok(frames
            .into_iter()
            .map(|(offset, len)| At {
                segment: self.segment,
                offset: start + offset,
                len,
            })
            .collect())
    }

    fn rotate(&mut self) -> Result<(), StoreError> {
        let next = self.segment + 1;
        self.file = match self.spare.take() {
            Some(f) => f,
            None => Self::create(&self.dir, next)?,
        };
        self.closed.push((self.segment, self.open_max));
        self.segment = next;
        self.bytes = 0;
        self.open_max = 0;
        Ok(())
    }

    /// After a durable checkpoint that holds every seq up to `applied`:
    /// deletes the segments it covers (rotating the open one first when it
    /// is covered too and a prepared spare can take over, so an idle
    /// journal does not keep old records).
    pub fn drop_covered(&mut self, applied: u64) -> Result<(), StoreError> {
        for p in self.take_covered(applied)? {
            remove_segment(&p)?;
        }
        Ok(())
    }

    /// [`Wal::drop_covered`] without the deletions: the covered segments'
    /// paths, to delete without holding the journal (an unlink of a full
    /// segment can take a while).
    pub fn take_covered(&mut self, applied: u64) -> Result<Vec<PathBuf>, StoreError> {
        // A covered open segment is rotated once it holds a good share
        // (records older than the checkpoint are skipped on replay anyway),
        // and only onto a spare: zeroing one here would stall appends.
        if self.bytes >= SEGMENT_BYTES / 4 && self.open_max <= applied && self.spare.is_some() {
            self.rotate()?;
        }
        let (gone, keep): (Vec<_>, Vec<_>) =
            self.closed.iter().partition(|(_, max)| *max <= applied);
        self.closed = keep;
        Ok(gone
            .into_iter()
            .map(|(n, _)| segment_path(&self.dir, n))
            .collect())
    }
}

/// Deletes a segment file (already gone is fine).
pub fn remove_segment(p: &Path) -> Result<(), StoreError> {
    match std::fs::remove_file(p) {
        Err(x) if x.kind() != std::io::ErrorKind::NotFound => {
            Err(e(format!("{}: {x}", p.display())))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(seq: u64) -> (OutboxItem, Option<SnapshotWrite>) {
        (plain(seq), None)
    }

    fn plain(seq: u64) -> OutboxItem {
        OutboxItem {
            seq,
            callback_id: "cb".into(),
            task_id: "t".into(),
            body: format!("{{\"n\":{seq}}}"),
            attempts: 0,
            next_attempt_ms: 0,
            accepted_ms: 1,
            lease_owner: String::new(),
            lease_until_ms: 0,
            traceparent: String::new(),
            tracestate: String::new(),
        }
    }

    fn seqs(d: &Path) -> Vec<u64> {
        replay(d).unwrap().iter().map(|r| r.item.seq).collect()
    }

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("a2a-wal-{}", crate::ids::random_id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn appended_records_replay_and_covered_segments_go() {
        let d = dir();
        let mut w = Wal::open(&d, 0).unwrap();
        w.append(&[item(1), item(2)]).unwrap();
        w.append(&[item(3)]).unwrap();
        assert_eq!(seqs(&d), [1, 2, 3]);
        // The open segment stays (small); a spare is taken over on rotate.
        let n = w.wants_spare().unwrap();
        w.give_spare(n, Wal::prepare(&d, n).unwrap());
        assert_eq!(w.wants_spare(), None);
        w.drop_covered(3).unwrap();
        assert_eq!(replay(&d).unwrap().len(), 3);
        w.rotate().unwrap();
        w.append(&[item(4)]).unwrap();
        // Closed and covered up to 3 only: its records go, 4 stays.
        w.drop_covered(3).unwrap();
        assert_eq!(seqs(&d), [4]);
        drop(w);
        // A reopened journal keeps old segments until they are covered.
        let mut w = Wal::open(&d, 4).unwrap();
        assert_eq!(replay(&d).unwrap().len(), 1);
        w.drop_covered(4).unwrap();
        assert!(replay(&d).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }

    /// The end of the records in a zero-filled segment.
    fn records_end(bytes: &[u8]) -> usize {
        let mut at = 0;
        loop {
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            if len == 0 {
                return at;
            }
            at += 8 + len;
        }
    }

    #[test]
    fn a_torn_or_corrupt_tail_ends_the_replay() {
        let d = dir();
        let mut w = Wal::open(&d, 0).unwrap();
        w.append(&[item(1), item(2)]).unwrap();
        drop(w);
        let p = segment_path(&d, 1);
        let clean = std::fs::read(&p).unwrap();
        let end = records_end(&clean);
        // Half a record more: a crash mid-append.
        let mut bytes = clean.clone();
        bytes[end..end + 6].copy_from_slice(&[40, 0, 0, 0, 1, 2]);
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(replay(&d).unwrap().len(), 2);
        // A flipped byte in the second record: only the first survives.
        let mut bytes = clean;
        bytes[end - 2] ^= 0x55;
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(seqs(&d), [1]);
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A snapshot change comes back with its item; a record of the older
    /// format (a bare item, before schema 3) reads as an item without one.
    #[test]
    fn snapshot_changes_replay_with_their_items_and_old_records_still_read() {
        let d = dir();
        let mut w = Wal::open(&d, 0).unwrap();
        let change = SnapshotWrite {
            callback_id: "cb".into(),
            base: 4,
            task: Some("{\"id\":\"t\"}".into()),
        };
        w.append(&[item(1), (plain(2), Some(change.clone()))])
            .unwrap();
        drop(w);
        // A segment as a schema-2 proxy wrote it, after the first.
        let payload = serde_json::to_vec(&plain(3)).unwrap();
        let mut old = Vec::new();
        old.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        old.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        old.extend_from_slice(&payload);
        old.resize(4096, 0);
        std::fs::write(segment_path(&d, 2), &old).unwrap();
        let got = replay(&d).unwrap();
        assert_eq!(
            got,
            [
                Record {
                    item: plain(1),
                    snapshot: None
                },
                Record {
                    item: plain(2),
                    snapshot: Some(change)
                },
                Record {
                    item: plain(3),
                    snapshot: None
                },
            ]
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
