//! A private throwaway PostgreSQL cluster on 127.0.0.1 for tests: `initdb`
//! into a temp dir under target/, `pg_ctl start` on a free port with its
//! unix socket in that dir, stopped (and removed) on drop. As root, the
//! server runs as the `postgres` user. With `A2A_PROXY_TEST_PG_URL` set,
//! that server is used instead (each test still gets a fresh database).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Bound for `pg_ctl -w` waits, seconds.
const PG_WAIT_S: &str = "60";

fn bindir() -> PathBuf {
    if let Ok(o) = Command::new("pg_config").arg("--bindir").output() {
        let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        if o.status.success() && p.join("initdb").exists() {
            return p;
        }
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut v: Vec<PathBuf> = rd
            .filter_map(|d| d.ok().map(|d| d.path().join("bin")))
            .filter(|p| p.join("initdb").exists())
            .collect();
        v.sort();
        if let Some(p) = v.pop() {
            return p;
        }
    }
    PathBuf::new() // PATH
}

/// Whether this test has no PostgreSQL to run on: no `initdb` here and no
/// `A2A_PROXY_TEST_PG_URL`. It then prints one `skipped:` line; under CI
/// (`CI` set: `.ci/run` installs PostgreSQL) a missing one fails instead.
pub fn skipped() -> bool {
    if std::env::var_os("A2A_PROXY_TEST_PG_URL").is_some() {
        return false;
    }
    let bin = bindir();
    let found = if bin.as_os_str().is_empty() {
        Command::new("initdb")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    } else {
        true
    };
    if found {
        return false;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "PostgreSQL (initdb) not found under CI: .ci/run installs it"
    );
    eprintln!(
        "skipped: PostgreSQL not found (no initdb): install postgresql (what .ci/run does) \
         or set A2A_PROXY_TEST_PG_URL to a server this test may create databases on"
    );
    true
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Cluster {
    /// Admin connection string (database `postgres`).
    admin: String,
    dir: Option<PathBuf>,
    bin: PathBuf,
    root: bool,
    /// The server's options (`pg_ctl -o`), to start it again.
    opts: String,
}

fn run(root: bool, bin: &Path, tool: &str, args: &[&str]) -> std::process::Output {
    let exe = bin.join(tool);
    let mut c = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    c.args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|x| panic!("{tool}: {x}"))
}

impl Cluster {
    pub fn start() -> Cluster {
        if let Ok(url) = std::env::var("A2A_PROXY_TEST_PG_URL") {
            return Cluster {
                admin: url,
                dir: None,
                bin: PathBuf::new(),
                root: false,
                opts: String::new(),
            };
        }
        let root = is_root();
        let bin = bindir();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pg-{}", proxy::ids::random_id()));
        std::fs::create_dir_all(&dir).unwrap();
        if root {
            let st = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(st.success(), "chown postgres {}", dir.display());
        }
        let data = dir.join("data");
        let (d, s) = (data.to_str().unwrap(), dir.to_str().unwrap());
        let o = run(
            root,
            &bin,
            "initdb",
            &[
                "-D",
                d,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        assert!(
            o.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let port = free_port();
        let opts = format!("-c listen_addresses=127.0.0.1 -p {port} -k {s} -c fsync=off");
        let log = dir.join("log");
        let o = run(
            root,
            &bin,
            "pg_ctl",
            &[
                "-D",
                d,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                PG_WAIT_S,
                "-o",
                &opts,
                "start",
            ],
        );
        let c = Cluster {
            admin: format!("host=127.0.0.1 port={port} user=postgres dbname=postgres"),
            dir: Some(dir.clone()),
            bin,
            root,
            opts: opts.clone(),
        };
        assert!(
            o.status.success(),
            "pg_ctl start: {} {}",
            String::from_utf8_lossy(&o.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        c
    }

    /// A new empty database; its connection string.
    pub fn fresh_db(&self) -> String {
        let name = format!("t{}", proxy::ids::random_id());
        let mut c = postgres::Client::connect(&self.admin, postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let mut cfg: postgres::Config = self.admin.parse().unwrap();
        cfg.dbname(&name);
        // Back to a libpq string: host/port/user of the admin config.
        let host = match cfg.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => h.clone(),
            _ => "127.0.0.1".into(),
        };
        let port = cfg.get_ports().first().copied().unwrap_or(5432);
        let user = cfg.get_user().unwrap_or("postgres").to_string();
        let pw = cfg
            .get_password()
            .map(|p| format!(" password={}", String::from_utf8_lossy(p)))
            .unwrap_or_default();
        format!("host={host} port={port} user={user}{pw} dbname={name}")
    }

    /// Whether this cluster is one the test started (so it may stop and
    /// start it again): not an `A2A_PROXY_TEST_PG_URL` server.
    pub fn owned(&self) -> bool {
        self.dir.is_some()
    }

    /// Stops the server at once (`-m immediate`), keeping its data, so
    /// that [`Cluster::resume`] starts it again on the same port.
    pub fn pause(&self) {
        let Some(dir) = &self.dir else { return };
        let o = self.stop_now(dir);
        assert!(
            o.status.success(),
            "pg_ctl stop: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// Starts the server [`Cluster::pause`] stopped.
    pub fn resume(&self) {
        let Some(dir) = &self.dir else { return };
        let d = dir.join("data");
        let log = dir.join("log");
        let o = run(
            self.root,
            &self.bin,
            "pg_ctl",
            &[
                "-D",
                d.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                PG_WAIT_S,
                "-o",
                &self.opts,
                "start",
            ],
        );
        assert!(
            o.status.success(),
            "pg_ctl start: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// Stops the server now (drop does the same).
    pub fn stop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = self.stop_now(&dir);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    /// `pg_ctl stop -m immediate` on the cluster under `dir`.
    fn stop_now(&self, dir: &Path) -> std::process::Output {
        let d = dir.join("data");
        run(
            self.root,
            &self.bin,
            "pg_ctl",
            &[
                "-D",
                d.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "-t",
                PG_WAIT_S,
                "stop",
            ],
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}
