//! An HTTPS agent (issue #23) with the REAL Python A2A SDK: the a2a-sdk 0.3
//! echo agent (`tests/sdk/agent_v03.py --tls-cert --tls-key`, uvicorn
//! serving TLS with a certificate of a CA made here), the in-process proxy
//! in front of it (`upstream.url = "https://…"`, `upstream.ca_file` = that
//! CA, version read from the card over TLS), and the SDK clients of
//! `interop.rs` (`client_v*.py`) through the proxy: the a2a-sdk 1.x client
//! translated, the a2a-sdk 0.3 client passed through by Pingora. Every step
//! of each run is checked.

use std::path::PathBuf;
use std::time::Duration;

use e2e::peer::{run_client_with, start_sdk_agent, CLIENT_STEPS};
use e2e::sdk::{python, sdk_script};
use proxy::config::{Config, RawConfig, RawPush, RawUpstream};
use serde_json::Value;
use support::assert_run_passed;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);

/// A CA and a server certificate for 127.0.0.1 it signed, as PEM files.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new() -> Pki {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let dir = std::env::temp_dir().join(format!("a2a-https-sdk-{}", proxy::ids::random_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name
            .push(DnType::CommonName, "a2a sdk test CA");
        let ca = p.self_signed(&ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        let key = KeyPair::generate().unwrap();
        let p = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
        std::fs::write(dir.join("server.pem"), cert.pem()).unwrap();
        std::fs::write(dir.join("server-key.pem"), key.serialize_pem()).unwrap();
        Pki { dir }
    }

    fn file(&self, f: &str) -> String {
        self.dir.join(f).to_string_lossy().into_owned()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(client: &str) {
    let pki = Pki::new();
    let agent = start_sdk_agent(
        "agent",
        "v03",
        &[
            "--tls-cert",
            &pki.file("server.pem"),
            "--tls-key",
            &pki.file("server-key.pem"),
        ],
        AGENT_START,
    );
    let raw = RawConfig {
        listen: Some(e2e::free_local_addr().expect("port").to_string()),
        upstream: RawUpstream {
            url: Some(format!("https://{}", agent.addr)),
            ca_file: Some(pki.file("ca.pem")),
            ..RawUpstream::default()
        },
        push: RawPush {
            enabled: Some(false),
            ..RawPush::default()
        },
        threads: Some(1),
        ..RawConfig::default()
    };
    let mut config = Config::resolve(raw).expect("config");
    config.limits.read_timeout = Duration::from_secs(20);
    let px = proxy::start(config).expect("proxy");
    let run = run_client_with(
        &python(client),
        &sdk_script(&format!("client_{client}.py")),
        &px.url(),
        &[],
        CLIENT_RUN,
    );
    let mut failed = Vec::new();
    // The calls that succeed.
    for name in &CLIENT_STEPS[..10] {
        let s = run.step(name).cloned().unwrap_or(Value::Null);
        if s["ok"] != true {
            failed.push(format!("{name}: not ok: {s}"));
        }
    }
    let label = format!("{client} client -> proxy -> https v0.3 agent");
    assert_run_passed(&label, failed, &run);
    drop(agent);
}

#[test]
fn v10_sdk_client_translated_to_an_https_v03_sdk_agent() {
    run("v10");
}

#[test]
fn v03_sdk_client_passed_through_to_an_https_v03_sdk_agent() {
    run("v03");
}
