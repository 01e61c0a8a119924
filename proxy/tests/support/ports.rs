//! Free ports on 127.0.0.1 for the proxies the tests and benchmarks start
//! (shared by `proxy/tests`, the e2e tests and the examples; not part of
//! the proxy).

use std::net::{SocketAddr, TcpListener};

/// Ports [`free_local_addr`] hands out: below Linux's ephemeral range
/// (32768 and up), so no socket bound to port 0 meanwhile (a test's fake
/// agent, an outgoing connection) can take the one handed out before
/// pingora binds it (pingora cannot report a port-0 bind back).
const HANDED_OUT: std::ops::Range<u16> = 20_000..32_000;

/// A free 127.0.0.1 address: a port of [`HANDED_OUT`] that binds now,
/// never the same twice in one process.
pub fn free_local_addr() -> std::io::Result<SocketAddr> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let span = u32::from(HANDED_OUT.end - HANDED_OUT.start);
    // Processes started together begin at different places.
    let offset = std::process::id().wrapping_mul(7919) % span;
    for _ in 0..span {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = HANDED_OUT.start + ((offset + n) % span) as u16;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        if TcpListener::bind(addr).is_ok() {
            return Ok(addr);
        }
    }
    let l = TcpListener::bind("127.0.0.1:0")?;
    l.local_addr()
}
