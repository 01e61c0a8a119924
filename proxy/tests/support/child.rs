//! The lines a started process writes (its log on stderr), read on a
//! thread of their own and handed over a channel, so a test waits for
//! them with a bound (`recv_timeout`).

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;

/// Each line of `from` as it comes; the channel ends when `from` does.
pub fn lines_of(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}
