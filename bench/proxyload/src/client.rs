//! The load client: closed-loop unary requests over keep-alive connections,
//! SSE streams counted event by event, and held-open streams.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

use crate::http::Reader;

/// A request as bytes on the wire.
pub fn request(v10: bool, body: &[u8], mode: Option<&str>) -> Arc<Vec<u8>> {
    let mut head = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if v10 {
        head.push_str("A2A-Version: 1.0\r\n");
    }
    if let Some(m) = mode {
        head.push_str(&format!("X-Bench-Mode: {m}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    Arc::new(out)
}

/// What one measured run saw.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub ok: usize,
    pub errors: usize,
    pub elapsed: Duration,
    /// Microseconds per successful request, sorted.
    pub latencies_us: Vec<u32>,
}

impl Run {
    pub fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q` quantile in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies_us.len() - 1) as f64 * q).round() as usize;
        f64::from(self.latencies_us[i]) / 1000.0
    }
}

async fn connect(addr: SocketAddr) -> io::Result<(Reader<OwnedReadHalf>, OwnedWriteHalf)> {
    let s = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
    s.set_nodelay(true)?;
    let (r, w) = s.into_split();
    Ok((Reader::new(r), w))
}

/// One request/answer exchange; `Ok(false)` when the answer is not the Task.
async fn exchange(
    r: &mut Reader<OwnedReadHalf>,
    w: &mut OwnedWriteHalf,
    req: &[u8],
) -> io::Result<bool> {
    w.write_all(req).await?;
    let head = r
        .head()
        .await?
        .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    let mut body = Vec::new();
    r.body(&head, |d| body.extend_from_slice(d)).await?;
    let ok = head.status == 200 && contains(&body, b"\"task-1\"") && !contains(&body, b"\"error\"");
    Ok(ok)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

async fn unary_conn(addr: SocketAddr, req: Arc<Vec<u8>>, deadline: Instant) -> Run {
    let mut run = Run::default();
    let mut conn = None;
    while Instant::now() < deadline {
        if conn.is_none() {
            match connect(addr).await {
                Ok(c) => conn = Some(c),
                Err(_) => {
                    run.errors += 1;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        let Some((r, w)) = conn.as_mut() else {
            continue;
        };
        let t = Instant::now();
        let res = tokio::time::timeout(Duration::from_secs(10), exchange(r, w, &req)).await;
        match res {
            Ok(Ok(true)) => {
                run.ok += 1;
                run.latencies_us
                    .push(t.elapsed().as_micros().min(u32::MAX as u128) as u32);
            }
            Ok(Ok(false)) => run.errors += 1,
            _ => {
                run.errors += 1;
                conn = None;
            }
        }
    }
    run
}

/// `conns` connections sending `req` back to back for `duration`.
pub async fn unary(addr: SocketAddr, req: Arc<Vec<u8>>, conns: usize, duration: Duration) -> Run {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..conns)
        .map(|_| tokio::spawn(unary_conn(addr, req.clone(), deadline)))
        .collect();
    let mut all = Run::default();
    for t in tasks {
        if let Ok(r) = t.await {
            all.ok += r.ok;
            all.errors += r.errors;
            all.latencies_us.extend(r.latencies_us);
        }
    }
    all.elapsed = started.elapsed();
    all.latencies_us.sort_unstable();
    all
}

/// Counts `data:` lines across chunk boundaries.
#[derive(Default)]
struct EventCounter {
    events: usize,
    /// At a line start (the stream starts at one).
    line_start: bool,
    /// Bytes of `data:` matched at the current line start.
    matched: usize,
}

impl EventCounter {
    fn new() -> EventCounter {
        EventCounter {
            line_start: true,
            ..Default::default()
        }
    }

    fn feed(&mut self, data: &[u8]) {
        const KEY: &[u8] = b"data:";
        for &b in data {
            if b == b'\n' {
                self.line_start = true;
                self.matched = 0;
                continue;
            }
            if self.line_start {
                if KEY[self.matched] == b {
                    self.matched += 1;
                    if self.matched == KEY.len() {
                        self.events += 1;
                        self.line_start = false;
                        self.matched = 0;
                    }
                } else {
                    self.line_start = false;
                    self.matched = 0;
                }
            }
        }
    }
}

async fn sse_conn(addr: SocketAddr, req: Arc<Vec<u8>>, deadline: Instant) -> (usize, usize) {
    let (mut events, mut errors) = (0, 0);
    let mut conn = None;
    while Instant::now() < deadline {
        if conn.is_none() {
            match connect(addr).await {
                Ok(c) => conn = Some(c),
                Err(_) => {
                    errors += 1;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        let Some((r, w)) = conn.as_mut() else {
            continue;
        };
        let mut counter = EventCounter::new();
        let one = async {
            w.write_all(&req).await?;
            let head = r
                .head()
                .await?
                .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
            if head.status != 200 {
                return Err(io::Error::other(format!("status {}", head.status)));
            }
            r.body(&head, |d| counter.feed(d)).await
        };
        match tokio::time::timeout(Duration::from_secs(30), one).await {
            Ok(Ok(_)) => events += counter.events,
            _ => {
                errors += 1;
                conn = None;
            }
        }
    }
    (events, errors)
}

/// `streams` concurrent SSE calls, repeated for `duration`: (events/s, errors).
pub async fn sse(
    addr: SocketAddr,
    req: Arc<Vec<u8>>,
    streams: usize,
    duration: Duration,
) -> (f64, usize) {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..streams)
        .map(|_| tokio::spawn(sse_conn(addr, req.clone(), deadline)))
        .collect();
    let (mut events, mut errors) = (0, 0);
    for t in tasks {
        if let Ok((e, x)) = t.await {
            events += e;
            errors += x;
        }
    }
    (events as f64 / started.elapsed().as_secs_f64(), errors)
}

/// An open stream that has delivered its first event.
pub struct Held {
    _r: Reader<OwnedReadHalf>,
    _w: OwnedWriteHalf,
}

async fn hold_one(addr: SocketAddr, req: Arc<Vec<u8>>) -> io::Result<Held> {
    let (mut r, mut w) = connect(addr).await?;
    w.write_all(&req).await?;
    let head = r
        .head()
        .await?
        .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    if head.status != 200 || !head.chunked() {
        return Err(io::Error::other(format!("status {}", head.status)));
    }
    let mut counter = EventCounter::new();
    while counter.events == 0 {
        let c = r.chunk().await?;
        if c.is_empty() {
            return Err(io::Error::other("stream ended before its first event"));
        }
        counter.feed(&c);
    }
    Ok(Held { _r: r, _w: w })
}

/// Opens `n` streams (at most 64 connecting at once); every one has its
/// first event when this returns. Errors are counted, not fatal.
pub async fn hold(addr: SocketAddr, req: Arc<Vec<u8>>, n: usize) -> (Vec<Held>, usize) {
    let gate = Arc::new(tokio::sync::Semaphore::new(64));
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (gate, req) = (gate.clone(), req.clone());
            tokio::spawn(async move {
                let _permit = gate.acquire().await;
                tokio::time::timeout(Duration::from_secs(30), hold_one(addr, req)).await
            })
        })
        .collect();
    let (mut held, mut errors) = (Vec::with_capacity(n), 0);
    for t in tasks {
        match t.await {
            Ok(Ok(Ok(h))) => held.push(h),
            _ => errors += 1,
        }
    }
    (held, errors)
}

#[cfg(test)]
mod tests {
    use super::EventCounter;

    #[test]
    fn counts_data_lines_across_pieces() {
        let mut c = EventCounter::new();
        c.feed(b"data: {}\n\n: keep-alive\n\nda");
        c.feed(b"ta: {}\n\nevent: x\ndata:{}\n\n");
        c.feed(b"xdata: no\n\n");
        assert_eq!(c.events, 3);
    }
}
