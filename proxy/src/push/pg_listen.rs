//! The one listening connection of an instance on a PostgreSQL store
//! (issue #36): `LISTEN`s on the channels the instances notify each other
//! on (`push::pg_shared`), and hands what it hears to one handler on a
//! thread of its own. The connection is redialed with backoff when it
//! breaks; the handler hears [`Heard::Connected`] after each (re)dial,
//! once the channels are listened to, so it can catch up on what a
//! broken connection missed.
//!
//! Bounded: at most [`MAX_BATCH`] notifications are taken before the
//! handler hears [`Heard::Drained`]; the rest wait in the socket (and then
//! in the server's own notification queue), never in this process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::fallible_iterator::FallibleIterator;
use postgres::NoTls;

/// Longest wait for a notification before [`Heard::Drained`] (the
/// handler's periodic work runs at least this often).
pub const WAIT: Duration = Duration::from_millis(250);
/// Notifications taken in one go.
pub const MAX_BATCH: usize = 1024;
/// An idle connection is checked this often (a server gone without a word).
const PING_EVERY: Duration = Duration::from_secs(5);
/// The longest pause between two dials.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What the listener hears.
#[derive(Debug)]
pub enum Heard<'a> {
    /// The connection is (again) up and listening.
    Connected,
    /// A notification.
    Notified { channel: &'a str, payload: &'a str },
    /// What arrived is handed over, or [`WAIT`] passed.
    Drained,
    /// The connection broke or could not be made (the reason; never the
    /// connection string).
    Down(&'a str),
}

/// The running listener; stopped on [`Listener::stop`] or drop.
pub struct Listener {
    stop: Arc<AtomicBool>,
    up: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    /// Listens on `channels` over a connection of `config` and runs
    /// `handler` with everything heard.
    pub fn start(
        config: postgres::Config,
        channels: &'static [&'static str],
        mut handler: impl FnMut(Heard<'_>) + Send + 'static,
    ) -> std::io::Result<Listener> {
        let stop = Arc::new(AtomicBool::new(false));
        let up = Arc::new(AtomicBool::new(false));
        let (s, u) = (stop.clone(), up.clone());
        let listen: String = channels.iter().map(|c| format!("LISTEN {c};")).collect();
        let thread = std::thread::Builder::new()
            .name("a2a-pg-listen".into())
            .spawn(move || {
                let mut backoff = Duration::from_millis(100);
                while !s.load(Ordering::Relaxed) {
                    let reason = match config.connect(NoTls) {
                        Ok(mut c) => match c.batch_execute(&listen) {
                            Ok(()) => {
                                u.store(true, Ordering::Relaxed);
                                backoff = Duration::from_millis(100);
                                handler(Heard::Connected);
                                let r = listen_on(&mut c, &s, &mut handler);
                                u.store(false, Ordering::Relaxed);
                                match r {
                                    Ok(()) => return,
                                    Err(e) => e,
                                }
                            }
                            Err(e) => e.to_string(),
                        },
                        Err(e) => e.to_string(),
                    };
                    handler(Heard::Down(&reason));
                    let until = Instant::now() + backoff;
                    while Instant::now() < until && !s.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            })?;
        Ok(Listener {
            stop,
            up,
            thread: Some(thread),
        })
    }

    /// Whether the connection is up and listening now.
    pub fn up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Hands notifications over until `stop` (`Ok`) or the connection breaks
/// (its reason).
fn listen_on(
    c: &mut postgres::Client,
    stop: &AtomicBool,
    handler: &mut impl FnMut(Heard<'_>),
) -> Result<(), String> {
    let mut checked = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let heard = {
            let mut n = c.notifications();
            let first = n.timeout_iter(WAIT).next().map_err(|e| e.to_string())?;
            if let Some(x) = &first {
                handler(Heard::Notified {
                    channel: x.channel(),
                    payload: x.payload(),
                });
                let mut more = n.iter();
                for _ in 1..MAX_BATCH {
                    match more.next().map_err(|e| e.to_string())? {
                        Some(x) => handler(Heard::Notified {
                            channel: x.channel(),
                            payload: x.payload(),
                        }),
                        None => break,
                    }
                }
            }
            first.is_some()
        };
        if heard {
            checked = Instant::now();
        } else {
            if c.is_closed() {
                return Err("the listening connection closed".into());
            }
            if checked.elapsed() >= PING_EVERY {
                c.simple_query("SELECT 1").map_err(|e| e.to_string())?;
                checked = Instant::now();
            }
        }
        handler(Heard::Drained);
    }
    Ok(())
}
