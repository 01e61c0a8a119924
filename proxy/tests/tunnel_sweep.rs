//! The private socket directories toward https agents (`upstream::tls`)
//! that a proxy killed with SIGKILL leaves behind are removed when a proxy
//! starts (`serve`), and only those: a directory is removed only when it
//! is provably one (its name, a real directory of this user with mode
//! 0700, holding only its socket) and the process its name records is
//! gone. Each test runs the binary with a temp dir of its own (`TMPDIR`).

#[path = "support/ports.rs"]
mod ports;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A directory `name` under `tmp`, mode `mode`, holding a Unix socket
/// `agent.sock` (left behind by a listener closed without removing it)
/// and, when `extra`, a file of another name.
fn tunnel_dir(tmp: &Path, name: &str, mode: u32, extra: bool) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    drop(std::os::unix::net::UnixListener::bind(dir.join("agent.sock")).unwrap());
    if extra {
        std::fs::write(dir.join("notes.txt"), b"not the proxy's").unwrap();
    }
    dir
}

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn a_start_removes_the_socket_directories_of_dead_proxies_only() {
    let tmp = std::env::temp_dir().join(format!(
        "a2a-sweep-{}-{}",
        std::process::id(),
        proxy::ids::random_id()
    ));
    std::fs::create_dir(&tmp).unwrap();
    let dead = dead_pid();
    let stale = tunnel_dir(
        &tmp,
        &format!("a2a-proxy-tls-{dead}-0123456789ab"),
        0o700,
        false,
    );
    // A live proxy's (this test's pid stands for one).
    let me = std::process::id();
    let live = tunnel_dir(
        &tmp,
        &format!("a2a-proxy-tls-{me}-0123456789ab"),
        0o700,
        false,
    );
    // Not provably the proxy's: another mode, another entry, another name.
    let open = tunnel_dir(
        &tmp,
        &format!("a2a-proxy-tls-{dead}-aaaaaaaaaaaa"),
        0o755,
        false,
    );
    let more = tunnel_dir(
        &tmp,
        &format!("a2a-proxy-tls-{dead}-bbbbbbbbbbbb"),
        0o700,
        true,
    );
    let named = tunnel_dir(&tmp, &format!("a2a-proxy-tls-{dead}-XYZ"), 0o700, false);
    let file = tmp.join(format!("a2a-proxy-tls-{dead}-cccccccccccc"));
    std::fs::write(&file, b"a file").unwrap();

    let listen = ports::free_local_addr().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .args(["serve", "--upstream", "http://127.0.0.1:9", "--no-push"])
        .args(["--listen", &listen.to_string()])
        .env("TMPDIR", &tmp)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start serve");
    let end = Instant::now() + Duration::from_secs(15);
    let listening = loop {
        if std::net::TcpStream::connect_timeout(&listen, Duration::from_millis(200)).is_ok() {
            break true;
        }
        if Instant::now() > end || child.try_wait().ok().flatten().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(listening, "serve did not listen on {listen}");

    assert!(!stale.exists(), "the dead proxy's directory stays");
    for kept in [&live, &open, &more, &named, &file] {
        assert!(kept.exists(), "{} was removed", kept.display());
    }
    assert!(live.join("agent.sock").exists() && more.join("notes.txt").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}
