//! Proxy set-ups shared by the SDK suites (the `e2e` library holds the
//! SDK peers; these need the proxy crate, a dev-dependency).

#![allow(dead_code)]

use std::time::Duration;

use proxy::config::{Config, RawConfig, UpstreamVersion};
use proxy::RunningProxy;

pub mod scenario;

/// A one-thread proxy in front of `upstream`, the agent's version read
/// from its card, calls allowed 20 s (the SDK agents are slow to start
/// answering).
pub fn auto_proxy(upstream: &str) -> RunningProxy {
    let mut config = Config::new(e2e::free_local_addr().expect("port"), upstream).expect("config");
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Auto;
    config.limits.read_timeout = Duration::from_secs(20);
    proxy::start(config).expect("proxy")
}

/// A one-thread proxy listening on `addr`, push off, calls allowed 20 s,
/// configured further by the config file tables `tables` (its agents).
pub fn proxy_with_tables(addr: std::net::SocketAddr, tables: &str) -> RunningProxy {
    let toml = format!(
        "listen = \"{addr}\"\nthreads = 1\n[push]\nenabled = false\n[limits]\nread_timeout_ms = 20000\n{tables}"
    );
    let config =
        Config::resolve(RawConfig::from_toml(&toml, "agents.toml").expect("toml")).expect("config");
    proxy::start(config).expect("proxy")
}

/// The proxy's `/metrics` text at `addr` (read within 10 s).
pub fn metrics_of(addr: std::net::SocketAddr) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// One test per pairing of SDK client and agent versions for each scenario
/// named (`fn scenario(client: &str, agent: &str)` in the calling file,
/// each of "v03" / "v10"): `scenario::v03_client_v03_agent`,
/// `…v03_client_v10_agent`, `…v10_client_v03_agent`,
/// `…v10_client_v10_agent`.
#[allow(unused_macros)]
macro_rules! sdk_pairs {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[test]
            fn v03_client_v03_agent() {
                super::$scenario("v03", "v03")
            }

            #[test]
            fn v03_client_v10_agent() {
                super::$scenario("v03", "v10")
            }

            #[test]
            fn v10_client_v03_agent() {
                super::$scenario("v10", "v03")
            }

            #[test]
            fn v10_client_v10_agent() {
                super::$scenario("v10", "v10")
            }
        }
    )*};
}

/// Asserts an SDK client's run passed: none of the checks in `failed`
/// failed and the client exited with success; `label` names the run.
pub fn assert_run_passed(label: &str, mut failed: Vec<String>, run: &e2e::peer::ClientRun) {
    if !run.status.is_some_and(|s| s.success()) {
        failed.push(format!("client exit status {:?}", run.status));
    }
    assert!(
        failed.is_empty(),
        "{label}: {} failed checks:\n  {}\nclient output:\n{}",
        failed.len(),
        failed.join("\n  "),
        run.raw
    );
}
