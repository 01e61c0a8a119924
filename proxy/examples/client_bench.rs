//! The proxy's upstream HTTP client alone, without Pingora around it:
//! `UpstreamPool::call` N times in a row on one keep-alive connection, on a
//! current-thread runtime, against a plain HTTP/1.1 server thread on
//! 127.0.0.1 answering a 1.7 KB JSON body. Prints the calling thread's CPU
//! time (user + sys) and wall time per call; much steadier than the whole
//! proxy's runs, so a change to `proxy/src/upstream` can be measured by
//! running it before and after, alternately (see bench/RESULTS.md).
//!   cargo run --release -p a2a-compat-proxy --example client_bench -- [N=20000]
use std::io::{Read, Write};

use proxy::upstream::{Limits, Outgoing, Repeat, UpstreamPool};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

fn serve() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"kind\":\"task\",\"id\":\"t\",\"x\":\"{}\"}}}}", "a".repeat(1600));
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
            body.len(),
            body
        )
        .into_bytes();
        for s in l.incoming() {
            let mut s = s.unwrap();
            let _ = s.set_nodelay(true);
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut have = 0;
                loop {
                    // one request: head, then Content-Length bytes
                    let n = match s.read(&mut buf[have..]) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    have += n;
                    while let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = std::str::from_utf8(&buf[..end])
                            .unwrap()
                            .to_ascii_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map(|v| v.trim().parse().unwrap())
                            .unwrap_or(0);
                        let total = end + 4 + len;
                        if have < total {
                            break;
                        }
                        s.write_all(&answer).unwrap();
                        buf.copy_within(total..have, 0);
                        have -= total;
                    }
                }
            });
        }
    });
    addr
}

fn thread_cpu() -> f64 {
    // SAFETY: rusage is plain data (all zeros is valid), and getrusage
    // only writes into the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

const LIMITS: Limits = Limits {
    connect_timeout: Duration::from_secs(2),
    read_timeout: Duration::from_secs(2),
    answer_timeout: Duration::from_secs(4),
    max_body: 1 << 20,
    repeat: Repeat::Never,
};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20000);
    let addr = serve();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pool = UpstreamPool::default();
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"message/send\",\"params\":{{\"x\":\"{}\"}}}}",
        "b".repeat(300)
    );
    let req = make(&body);
    rt.block_on(async {
        for _ in 0..500 {
            pool.call(addr, &req, LIMITS).await.unwrap();
        }
        let (c0, w0) = (thread_cpu(), Instant::now());
        for _ in 0..n {
            let a = pool.call(addr, &req, LIMITS).await.unwrap();
            assert_eq!(a.status, 200);
        }
        let (c1, w1) = (thread_cpu(), w0.elapsed());
        println!(
            "{:>8.2} us CPU/call  {:>8.2} us wall/call  (n={n}, connections {})",
            (c1 - c0) * 1e6 / n as f64,
            w1.as_secs_f64() * 1e6 / n as f64,
            pool.opened()
        );
    });
}
/// The SendMessage-sized request of every call.
fn make(body: &str) -> Outgoing {
    let mut r = http::Request::new(bytes::Bytes::from(body.to_string()));
    *r.method_mut() = http::Method::POST;
    *r.uri_mut() = "/".parse().unwrap();
    r.headers_mut()
        .insert(http::header::HOST, "127.0.0.1".parse().unwrap());
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        "application/json".parse().unwrap(),
    );
    r.headers_mut()
        .insert(http::header::CONTENT_LENGTH, body.len().into());
    r
}
