//! Pingora's way to an `https://` agent without a TLS backend in Pingora.
//!
//! Pingora is built without TLS (its `rustls` feature costs every open
//! stream, plaintext ones too, about 11 KiB). The traffic it passes
//! through, and the card and task fetches made with its connector, reach
//! an https agent through a Unix socket of the proxy's own instead: one
//! socket per TLS target (agent address, server name, that agent's TLS
//! settings) in a private directory (mode 0700) under the system temp
//! dir, opened on first use. Each connection accepted there is carried
//! over a new TCP + TLS connection to the agent (rustls with the agent's
//! `[upstream]` TLS settings, ALPN http/1.1, SNI and certificate checks
//! on), connect and handshake within the connect timeout, then the bytes
//! are copied both ways. Pingora sees a plaintext peer and pools its
//! connections to the socket as it would to the agent.
//!
//! A failure (TCP, TLS handshake, an alert after it, one that cut a write
//! short included) closes the accepted connection; it is logged naming the agent and kept as the target's
//! last failure, so that what Pingora then reports (a closed connection)
//! can be told to the client as what it was (see [`Tunnel::failure`]).
//! The directory is removed when the target's settings are closed
//! ([`Tunnels::close`], at the proxy's stop) or dropped. A proxy killed
//! before it could (SIGKILL) leaves it behind: [`sweep`], at the next
//! start, removes those whose owner is provably gone (see there).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::rustls;

use super::{tls_error, TlsFailureKind, TlsTo};

/// Targets one agent's settings keep open at most; the oldest is closed
/// beyond (an agent host whose address keeps changing).
const MAX_TUNNELS: usize = 32;

/// A tunnel's directory is `<temp dir>/a2a-proxy-tls-<pid>-<random>`:
/// the process that made it, and 12 random hex digits.
const DIR_PREFIX: &str = "a2a-proxy-tls-";
const DIR_RANDOM_LEN: usize = 12;
/// The one entry a tunnel's directory holds.
const SOCKET_NAME: &str = "agent.sock";

/// The pid a tunnel directory's name records, when the name is exactly
/// one this proxy gives ([`DIR_PREFIX`], a pid, 12 lower-case hex digits).
fn recorded_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(DIR_PREFIX)?;
    let (pid, random) = rest.split_once('-')?;
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    if random.len() != DIR_RANDOM_LEN || !random.chars().all(hex) {
        return None;
    }
    if pid.is_empty() || pid.len() > 10 || !pid.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    pid.parse::<i32>().ok().filter(|p| *p > 0)
}

/// Whether no process `pid` exists (`kill(pid, 0)` says so; a process of
/// another user, or any doubt, counts as alive).
fn gone(pid: i32) -> bool {
    // SAFETY: signal 0 sends nothing; it only asks whether `pid` exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Whether `dir` is provably a tunnel directory left by a dead proxy of
/// this user: a real directory (no symlink), owned by this user, mode
/// 0700, named for a pid that is neither this process nor alive, holding
/// nothing but its socket.
fn stale(dir: &Path, pid: i32) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.file_type().is_dir() || meta.uid() != me || meta.mode() & 0o7777 != 0o700 {
        return false;
    }
    if u32::try_from(pid).ok() == Some(std::process::id()) || !gone(pid) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut n = 0;
    for e in entries {
        let Ok(e) = e else { return false };
        n += 1;
        let socket = e.file_name() == SOCKET_NAME
            && std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.file_type().is_socket());
        if n > 1 || !socket {
            return false;
        }
    }
    true
}

/// Removes, under `tmp`, the tunnel directories of proxies that are gone
/// (killed before they could remove their own): only what [`stale`] proves
/// is one, its socket and then the empty directory (never recursively:
/// anything that appeared meanwhile keeps it). Returns how many went.
pub(super) fn sweep(tmp: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(recorded_pid) else {
            continue;
        };
        let dir = e.path();
        if !stale(&dir, pid) {
            continue;
        }
        let sock = dir.join(SOCKET_NAME);
        let gone_sock = match std::fs::remove_file(&sock) {
            Ok(()) => true,
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        };
        if gone_sock && std::fs::remove_dir(&dir).is_ok() {
            tracing::info!(dir = %dir.display(), pid, "removed the TLS socket directory of a proxy that is gone");
            removed += 1;
        }
    }
    removed
}

/// What went wrong on the target's last failed connection.
#[derive(Debug, Clone)]
pub(super) enum Broken {
    Tls {
        kind: TlsFailureKind,
        detail: String,
    },
    Unavailable(String),
    Timeout,
}

#[derive(Default)]
struct Shared {
    /// The last failure and when it happened; cleared by the first byte
    /// an agent answers (a handshake alone proves nothing under TLS 1.3,
    /// where a client certificate is refused after it).
    last: Mutex<Option<(Instant, Broken)>>,
}

impl Shared {
    fn set(&self, b: Option<Broken>) {
        if let Ok(mut l) = self.last.lock() {
            *l = b.map(|b| (Instant::now(), b));
        }
    }
}

/// One running socket and its thread; stopped and removed on drop.
pub(super) struct Tunnel {
    addr: SocketAddr,
    host: Arc<str>,
    dir: PathBuf,
    path: PathBuf,
    within: Duration,
    shared: Arc<Shared>,
    stop: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// Where one connection goes, and how.
#[derive(Clone)]
struct Target {
    to: TlsTo,
    addr: SocketAddr,
    tls: Arc<rustls::ClientConfig>,
    within: Duration,
    shared: Arc<Shared>,
}

impl Tunnel {
    fn start(
        to: &TlsTo,
        addr: SocketAddr,
        config: Arc<rustls::ClientConfig>,
        within: Duration,
    ) -> std::io::Result<Tunnel> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let dir = std::env::temp_dir().join(format!(
            "{DIR_PREFIX}{}-{}",
            std::process::id(),
            &crate::ids::random_id()[..DIR_RANDOM_LEN]
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        // The umask may have taken bits away, never added any; set it whole.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        let path = dir.join("agent.sock");
        let started = (|| {
            let listener = std::os::unix::net::UnixListener::bind(&path)?;
            listener.set_nonblocking(true)?;
            // One thread: the socket's connections are driven where they
            // are accepted.
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let shared = Arc::new(Shared::default());
            let target = Target {
                to: to.clone(),
                addr,
                tls: config,
                within,
                shared: shared.clone(),
            };
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name("a2a-upstream-tls".into())
                .spawn(move || rt.block_on(serve(listener, target, stopped)))?;
            Ok::<_, std::io::Error>((shared, stop, thread))
        })();
        let (shared, stop, thread) = match started {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        Ok(Tunnel {
            addr,
            host: to.host.clone(),
            dir,
            path,
            within,
            shared,
            stop: Mutex::new(Some(stop)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The socket Pingora connects to.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The target's last failure when it is recent (within the connect
    /// timeout): what a connection Pingora just found closed ran into.
    pub(super) fn failure(&self) -> Option<Broken> {
        let last = self.shared.last.lock().ok()?;
        let (at, b) = last.as_ref()?;
        (at.elapsed() <= self.within.max(Duration::from_secs(1))).then(|| b.clone())
    }

    /// Stops accepting, ends the connections carried, removes the socket.
    fn close(&self) {
        if let Some(s) = self.stop.lock().ok().and_then(|mut s| s.take()) {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            // Never joined from its own runtime (a drop there).
            if std::thread::current().id() != t.thread().id() {
                let _ = t.join();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        self.close();
    }
}

/// The accept loop; when it returns, the runtime and every connection it
/// carries go with it.
async fn serve(
    listener: std::os::unix::net::UnixListener,
    target: Target,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(l) = tokio::net::UnixListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            r = l.accept() => match r {
                Ok((local, _)) => {
                    tokio::spawn(carry(local, target.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "upstream TLS socket: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
}

/// Carries one accepted connection over TLS to the agent.
async fn carry(mut local: UnixStream, t: Target) {
    let url = format!("https://{}", t.to.host);
    let agent = &t.to.agent;
    let broke = |b: Broken, error: &dyn std::fmt::Display| {
        tracing::warn!(agent = %agent, url = %url, addr = %t.addr, error = %error, "upstream TLS socket: the connection to the agent failed");
        t.shared.set(Some(b));
    };
    let open = async {
        let tcp = TcpStream::connect(t.addr).await?;
        let _ = tcp.set_nodelay(true);
        super::connect::handshake(t.tls.clone(), t.to.name.clone(), tcp).await
    };
    let remote = match tokio::time::timeout(t.within, open).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            let b = match tls_error(&e) {
                Some((kind, error)) => Broken::Tls {
                    kind,
                    detail: format!("{url} ({}): {error}", t.addr),
                },
                None => Broken::Unavailable(format!("connecting to {url} ({}): {e}", t.addr)),
            };
            broke(b, &e);
            return;
        }
        Err(_) => {
            broke(Broken::Timeout, &"connect and handshake timed out");
            return;
        }
    };
    // Not a success yet: under TLS 1.3 an agent refuses the client
    // certificate after the handshake. The first byte of its answer is
    // ([`both_ways`]).
    let remote = super::Conn::Tls(Box::new(remote));
    if let Err(e) = both_ways(&mut local, remote, t.within, &t.shared).await {
        // An alert after the handshake (the agent refusing the client
        // certificate under TLS 1.3) is a TLS failure too.
        if let Some((kind, error)) = tls_error(&e) {
            let b = Broken::Tls {
                kind,
                detail: format!("{url} ({}): {error}", t.addr),
            };
            broke(b, &error);
        } else {
            tracing::debug!(url = %url, error = %e, "upstream TLS connection ended");
        }
    }
}

/// Copies bytes both ways until both sides are done; once one side has
/// ended (Pingora dropped the connection, or the agent closed its own),
/// the other gets `grace` more at most, so that no connection outlives
/// both its ends. The first byte from the agent clears the target's last
/// failure (`shared`). An error ends both at once, and is returned before
/// either end is closed (the caller records it first); a write the
/// agent's TLS alert cut short returns that alert ([`super::Conn`]).
async fn both_ways(
    local: &mut UnixStream,
    remote: super::Conn,
    grace: Duration,
    shared: &Shared,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut lr, mut lw) = local.split();
    let (mut rr, mut rw) = tokio::io::split(remote);
    let up = async {
        tokio::io::copy(&mut lr, &mut rw).await?;
        rw.shutdown().await
    };
    let down = async {
        let mut first = [0u8; 1024];
        let n = rr.read(&mut first).await?;
        if n > 0 {
            shared.set(None);
            lw.write_all(&first[..n]).await?;
            tokio::io::copy(&mut rr, &mut lw).await?;
        }
        lw.shutdown().await
    };
    tokio::pin!(up, down);
    let rest = tokio::select! {
        r = &mut up => {
            r?;
            tokio::time::timeout(grace, &mut down).await
        }
        r = &mut down => {
            r?;
            tokio::time::timeout(grace, &mut up).await
        }
    };
    rest.unwrap_or(Ok(()))
}

/// The targets of one agent's settings.
#[derive(Default)]
pub(super) struct Tunnels {
    open: Mutex<Vec<Arc<Tunnel>>>,
}

impl Tunnels {
    /// The tunnel to `addr` as `to` says, opened now if need be.
    pub(super) fn get(
        &self,
        to: &TlsTo,
        addr: SocketAddr,
        config: &Arc<rustls::ClientConfig>,
        within: Duration,
    ) -> std::io::Result<Arc<Tunnel>> {
        let mut open = self
            .open
            .lock()
            .map_err(|_| std::io::Error::other("upstream TLS tunnels: poisoned lock"))?;
        if let Some(t) = open.iter().find(|t| t.addr == addr && t.host == to.host) {
            return Ok(t.clone());
        }
        let t = Arc::new(Tunnel::start(to, addr, config.clone(), within)?);
        tracing::debug!(url = %format!("https://{}", to.host), addr = %addr, socket = %t.path.display(), "upstream TLS socket opened");
        if open.len() >= MAX_TUNNELS {
            let old = open.remove(0);
            old.close();
        }
        open.push(t.clone());
        Ok(t)
    }

    /// The tunnel whose socket is `path`.
    pub(super) fn find(&self, path: &Path) -> Option<Arc<Tunnel>> {
        let open = self.open.lock().ok()?;
        open.iter().find(|t| t.path == path).cloned()
    }

    /// Closes every tunnel (their directories removed).
    pub(super) fn close(&self) {
        let all = match self.open.lock() {
            Ok(mut o) => std::mem::take(&mut *o),
            Err(_) => return,
        };
        for t in all {
            t.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::tls::{AgentAddr, UpstreamTls};
    use tokio::io::AsyncReadExt;

    #[test]
    fn only_names_this_proxy_gives_are_read() {
        assert_eq!(recorded_pid("a2a-proxy-tls-123-0123456789ab"), Some(123));
        for bad in [
            "a2a-proxy-tls-123-0123456789a",
            "a2a-proxy-tls-123-0123456789abc",
            "a2a-proxy-tls-123-0123456789AB",
            "a2a-proxy-tls--0123456789ab",
            "a2a-proxy-tls-0-0123456789ab",
            "a2a-proxy-tls-x1-0123456789ab",
            "a2a-proxy-tls-99999999999-0123456789ab",
            "b2a-proxy-tls-123-0123456789ab",
        ] {
            assert_eq!(recorded_pid(bad), None, "{bad}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_private_socket_per_target_removed_when_closed() {
        use std::os::unix::fs::PermissionsExt;
        let settings = Arc::new(UpstreamTls::load(None, None, None).unwrap());
        // A port nothing listens on: the connection is closed, the failure kept.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = closed.local_addr().unwrap();
        drop(closed);
        let to = AgentAddr::new(addr, "https", "agent.example", "billing", &settings).unwrap();
        let t = to.tls.as_ref().unwrap();
        let within = Duration::from_secs(5);
        let tunnels = &settings.tunnels;
        let one = tunnels.get(t, addr, &settings.h1, within).unwrap();
        let again = tunnels.get(t, addr, &settings.h1, within).unwrap();
        assert!(Arc::ptr_eq(&one, &again), "one tunnel per target");
        let other = AgentAddr::new(addr, "https", "other.example", "billing", &settings).unwrap();
        let two = tunnels
            .get(other.tls.as_ref().unwrap(), addr, &settings.h1, within)
            .unwrap();
        assert_ne!(one.path(), two.path());
        let dir = one.path().parent().unwrap().to_path_buf();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        assert!(dir.starts_with(std::env::temp_dir()));
        assert!(one.failure().is_none());

        let mut c = UnixStream::connect(one.path()).await.unwrap();
        let mut buf = [0u8; 16];
        let n = tokio::time::timeout(Duration::from_secs(10), c.read(&mut buf))
            .await
            .expect("closed within the connect timeout")
            .unwrap_or(0);
        assert_eq!(n, 0);
        match one.failure() {
            Some(Broken::Unavailable(d)) => assert!(d.contains("agent.example"), "{d}"),
            b => panic!("{b:?}"),
        }
        assert!(
            tunnels.find(one.path()).is_some() && two.failure().is_none(),
            "failures are the target's own"
        );

        // A sweep leaves the directories of a live proxy (this one).
        assert_eq!(sweep(&std::env::temp_dir().join("a2a-no-such-dir")), 0);
        assert!(!stale(&dir, std::process::id() as i32));
        assert_eq!(
            recorded_pid(&dir.file_name().unwrap().to_string_lossy()),
            Some(std::process::id() as i32)
        );

        tunnels.close();
        assert!(!dir.exists(), "removed when closed");
        assert!(!two.path().exists());
        assert!(tunnels.find(one.path()).is_none());
    }
}
