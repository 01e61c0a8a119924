//! HTTPS agents (issue #23) reached through the proxy on 127.0.0.1: a
//! certificate authority made by the test (rcgen), a TLS front (tokio-rustls)
//! before a fake agent, and every path the proxy takes toward it:
//! Pingora's passthrough, the proxy's own translated calls and streams,
//! card fetches, the gRPC bridge and a gRPC agent over TLS. Then the
//! refusals (unknown CA, wrong host name, missing client certificate), told
//! to the client by agent name and kind, never by address; and the config
//! errors of the TLS keys.

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use proto::v10 as p10;
use proxy::config::{Config, HttpUrl, RawConfig, RawPush, RawUpstream};
use proxy::grpc::GrpcServer;
use proxy::upstream::tls::UpstreamTls;
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

const V10: &[(&str, &str)] = JSON_V10;
const V10_SEND: &[u8] = br#"{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
const V10_STREAM: &[u8] = br#"{"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}}"#;
const V03_SEND: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
const V03_STREAM: &[u8] = br#"{"jsonrpc":"2.0","id":"s","method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"go"}]}}}"#;

/// The v0.3 events of a streamed task (`id` "s").
fn v03_events() -> Vec<String> {
    vec![
        r#"data: {"jsonrpc":"2.0","id":"s","result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}}"#.to_string() + "\n\n",
        r#"data: {"jsonrpc":"2.0","id":"s","result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}"#.to_string() + "\n\n",
    ]
}

/// A v0.3 agent behind the TLS front: its card lists its JSON-RPC and
/// REST interfaces at `https://<front>/`; JSON-RPC calls get a completed
/// task (streams: [`v03_events`]), REST reads the task.
fn v03_agent(front: Arc<OnceLock<String>>) -> impl Fn(&Recorded) -> Reply + Send + Sync {
    move |r: &Recorded| {
        let base = front.get().cloned().unwrap_or_default();
        if r.target.starts_with("/.well-known/") {
            let card = json!({"name": "fake", "description": "d", "version": "1",
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                "protocolVersion": "0.3.0", "url": format!("{base}/"), "preferredTransport": "JSONRPC",
                "additionalInterfaces": [{"url": format!("{base}/"), "transport": "JSONRPC"},
                    {"url": format!("{base}/rest"), "transport": "HTTP+JSON"}],
                "capabilities": {"streaming": true}, "skills": []});
            return Reply::json(200, &card.to_string());
        }
        if r.target.contains("/v1/tasks/") {
            return Reply::json(
                200,
                r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}"#,
            );
        }
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        if req["method"] == "message/stream" {
            return Reply::Sse {
                events: v03_events(),
                gate: Arc::new(Semaphore::new(16)),
            };
        }
        let task = json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "completed"}});
        Reply::rpc_result(&req["id"], &task)
    }
}

// ------------------------------------------------------------- certificates

/// A test CA and what it signed: a server certificate for 127.0.0.1 and
/// localhost, one for another name only, and a client certificate.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new() -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
        };
        let dir = tls::temp_dir("https-agent");
        let ca_key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, "a2a test CA");
        let ca = p.self_signed(&ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        for (name, eku, sans) in [
            (
                "server",
                ExtendedKeyUsagePurpose::ServerAuth,
                vec!["127.0.0.1".to_string(), "localhost".to_string()],
            ),
            (
                "elsewhere",
                ExtendedKeyUsagePurpose::ServerAuth,
                vec!["agent.elsewhere.example".to_string()],
            ),
            ("client", ExtendedKeyUsagePurpose::ClientAuth, vec![]),
        ] {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::new(sans).unwrap();
            p.distinguished_name.push(DnType::CommonName, name);
            p.extended_key_usages = vec![eku];
            let cert = p.signed_by(&key, &ca, &ca_key).unwrap();
            std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
            std::fs::write(dir.join(format!("{name}-key.pem")), key.serialize_pem()).unwrap();
        }
        Pki { dir }
    }

    fn path(&self, f: &str) -> PathBuf {
        self.dir.join(f)
    }

    fn file(&self, f: &str) -> String {
        self.path(f).to_string_lossy().into_owned()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TLS server config with certificate `cert` (`server` or `elsewhere`)
/// and `alpn`; with `client_auth` a client certificate of the test CA is
/// required.
fn server_config(pki: &Pki, cert: &str, client_auth: bool, alpn: &[&[u8]]) -> rustls::ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(pki.path(&format!("{cert}.pem")))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_file(pki.path(&format!("{cert}-key.pem"))).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if client_auth {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(pki.path("ca.pem")).unwrap() {
            roots.add(c.unwrap()).unwrap();
        }
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder.with_single_cert(chain, key).unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config
}

/// A TLS front on 127.0.0.1 piping each connection to `backend` (the fake
/// agent, or a gRPC listener).
struct Front {
    addr: SocketAddr,
    handshakes: Arc<AtomicUsize>,
    /// TCP connections accepted (handshakes tried).
    connections: Arc<AtomicUsize>,
    _task: AbortOnDrop,
}

impl Front {
    async fn start(config: rustls::ServerConfig, backend: SocketAddr) -> Front {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let handshakes = Arc::new(AtomicUsize::new(0));
        let connections = Arc::new(AtomicUsize::new(0));
        let done = handshakes.clone();
        let accepted = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = l.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                let done = done.clone();
                tokio::spawn(async move {
                    let Ok(Ok(mut tls)) = tokio::time::timeout(WAIT, acceptor.accept(tcp)).await
                    else {
                        return;
                    };
                    done.fetch_add(1, Ordering::SeqCst);
                    let Ok(mut back) = TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::time::timeout(
                        std::time::Duration::from_secs(30),
                        tokio::io::copy_bidirectional(&mut tls, &mut back),
                    )
                    .await;
                });
            }
        });
        Front {
            addr,
            handshakes,
            connections,
            _task: AbortOnDrop(task),
        }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.addr.port())
    }
}

/// A v0.3 agent behind a TLS front with certificate `cert`.
async fn https_agent(pki: &Pki, cert: &str, client_auth: bool) -> (FakeUpstream, Front) {
    let base = Arc::new(OnceLock::new());
    let up = FakeUpstream::start(v03_agent(base.clone())).await;
    let front = Front::start(
        server_config(pki, cert, client_auth, &[b"http/1.1"]),
        up.addr,
    )
    .await;
    base.set(front.url()).unwrap();
    (up, front)
}

/// Which TLS keys the proxy gets.
#[derive(Clone, Copy)]
struct Keys {
    ca: bool,
    client: bool,
}

const CA: Keys = Keys {
    ca: true,
    client: false,
};
const NONE: Keys = Keys {
    ca: false,
    client: false,
};
const CA_AND_CLIENT: Keys = Keys {
    ca: true,
    client: true,
};

/// The config of a proxy in front of `url` with the `[upstream]` TLS keys
/// `keys` (read from a file as an operator writes them).
fn config(pki: &Pki, url: &str, version: Option<Version>, keys: Keys) -> Config {
    let addr = support::free_local_addr().unwrap();
    let raw = RawConfig {
        listen: Some(addr.to_string()),
        upstream: RawUpstream {
            url: Some(url.to_string()),
            version: version.map(|v| v.as_str().to_string()),
            ca_file: keys.ca.then(|| pki.file("ca.pem")),
            client_cert_file: keys.client.then(|| pki.file("client.pem")),
            client_key_file: keys.client.then(|| pki.file("client-key.pem")),
            ..RawUpstream::default()
        },
        push: RawPush {
            enabled: Some(false),
            ..RawPush::default()
        },
        threads: Some(1),
        ..RawConfig::default()
    };
    Config::resolve(raw).unwrap()
}

fn proxy_to(pki: &Pki, url: &str, version: Option<Version>, keys: Keys) -> RunningProxy {
    proxy::start(config(pki, url, version, keys)).unwrap()
}

/// Every string of a JSON answer, one per line.
fn strings(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s}\n"),
        Value::Array(a) => a.iter().map(strings).collect(),
        Value::Object(o) => o.values().map(strings).collect(),
        _ => String::new(),
    }
}

/// An error answer that names agent `default` and says `kind`, and shows
/// nothing of the agent's address or of its bytes.
fn told_clearly(r: &Response, front: &Front, kind: &str) {
    let text = r.text();
    assert_eq!(r.status, 502, "{text}");
    let said = strings(&r.json());
    assert!(said.contains("agent \"default\" unavailable"), "{text}");
    assert!(said.contains(kind), "{text}");
    assert!(!text.contains(&front.addr.port().to_string()), "{text}");
    assert!(!text.contains("127.0.0.1"), "{text}");
}

/// A v1.0 send (translated by the proxy's client) and a v0.3 one
/// (Pingora's passthrough) through `px`, both refused as
/// [`told_clearly`] checks.
async fn both_told_clearly(px: &RunningProxy, front: &Front, kind: &str) {
    let r = post(px.addr, "/", V10, V10_SEND).await;
    told_clearly(&r, front, kind);
    let r = post(px.addr, "/", JSON_HEADER, V03_SEND).await;
    told_clearly(&r, front, kind);
}

// ------------------------------------------------------------ the paths

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_passthrough_over_tls_unary_and_stream() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    let px = proxy_to(&pki, &front.url(), Some(Version::V03), CA);
    for _ in 0..2 {
        let r = post(px.addr, "/", JSON_HEADER, V03_SEND).await;
        assert_v03_completed(&r);
    }
    let mut s = open(
        px.addr,
        &request(
            "POST",
            "/",
            &[
                ("Accept", "text/event-stream"),
                ("Content-Type", "application/json"),
            ],
            V03_STREAM,
        ),
    )
    .await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    // The agent's v0.3 events, as they were.
    for ev in v03_events() {
        assert!(text.contains(ev.trim()), "{text}");
    }
    let calls = up.calls();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[0].body, V03_SEND.to_vec());
    // SNI and Host: the agent's URL host.
    assert_eq!(
        calls[0].header("host"),
        Some(front.url().trim_start_matches("https://"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn translated_jsonrpc_unary_and_stream_over_tls() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    let px = proxy_to(&pki, &front.url(), Some(Version::V03), CA);
    let r = post(px.addr, "/", V10, V10_SEND).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{}",
        r.text()
    );
    let mut s = open(px.addr, &request("POST", "/", V10, V10_STREAM)).await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    assert!(text.contains("TASK_STATE_SUBMITTED"), "{text}");
    assert!(text.contains("TASK_STATE_COMPLETED"), "{text}");
    assert!(!text.contains("\"kind\""), "v1.0 events only: {text}");
    let methods: Vec<String> = up
        .calls()
        .iter()
        .map(|c| serde_json::from_slice::<Value>(&c.body).unwrap()["method"].to_string())
        .collect();
    assert_eq!(methods, ["\"message/send\"", "\"message/stream\""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn translated_rest_over_tls() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    // Version auto: the card's https REST interface (under /rest) is used.
    let px = proxy_to(&pki, &front.url(), None, CA);
    let r = get(px.addr, "/rest/tasks/t1", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{}",
        r.text()
    );
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].target, "/rest/v1/tasks/t1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn card_fetched_over_tls_and_served_with_the_proxys_interfaces() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    // Version auto: the card is fetched (over TLS) to learn it.
    let px = proxy_to(&pki, &front.url(), None, CA);
    let card = card_as(px.addr, "/.well-known/agent-card.json", "0.3").await;
    let public = format!("http://{}", px.addr);
    assert_eq!(card["url"], format!("{public}/"), "{card}");
    let urls: Vec<&str> = card["additionalInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["url"].as_str())
        .collect();
    // Both https interfaces of the agent are served, at the proxy.
    assert!(urls.contains(&format!("{public}/rest").as_str()), "{card}");
    assert!(
        !card.to_string().contains(&front.addr.port().to_string()),
        "{card}"
    );
    assert!(up
        .recorded()
        .iter()
        .any(|r| r.target.starts_with("/.well-known/")));
    // And a v1.0 call goes to the agent over TLS.
    let r = post(px.addr, "/", V10, V10_SEND).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

/// A v1.0 gRPC GetTask of t1 through a gRPC listener started in front of
/// `px`.
async fn grpc_get_task(px: &RunningProxy) -> Result<p10::Task, tonic::Status> {
    let g = GrpcServer::start(px.app.clone(), support::free_local_addr().unwrap()).unwrap();
    p10::a2a_service_client::A2aServiceClient::connect(format!("http://{}", g.addr))
        .await
        .unwrap()
        .get_task(grpc::v10_get_task("t1"))
        .await
        .map(tonic::Response::into_inner)
}

/// A gRPC agent over TLS: a second proxy's h2c gRPC listener (before a
/// fake v0.3 agent, returned first) behind a TLS front offering h2.
async fn tls_grpc_agent(pki: &Pki) -> (FakeUpstream, RunningProxy, GrpcServer, Front) {
    let up = FakeUpstream::start(v03_agent(Arc::new(OnceLock::new()))).await;
    let inner_http = proxy::start(config_for(&up.url(), Version::V03)).unwrap();
    let inner_grpc =
        GrpcServer::start(inner_http.app.clone(), support::free_local_addr().unwrap()).unwrap();
    let front = Front::start(
        server_config(pki, "server", false, &[b"h2"]),
        inner_grpc.addr,
    )
    .await;
    (up, inner_http, inner_grpc, front)
}

/// A proxy trusting the test CA (`with(CA)`) reaches the TLS gRPC agent
/// behind `front`; one without it (`with(NONE)`) is refused, told by agent
/// name and without the agent's address, and no call arrives.
async fn grpc_over_tls_needs_the_ca(
    with: impl Fn(Keys) -> RunningProxy,
    up: &FakeUpstream,
    front: &Front,
) {
    let outer = with(CA);
    let task = grpc_get_task(&outer).await.unwrap();
    assert_eq!(task.id, "t1");
    assert_eq!(up.calls().len(), 1, "{:?}", up.calls());
    assert!(front.handshakes.load(Ordering::SeqCst) >= 1);

    let untrusting = with(NONE);
    let s = grpc_get_task(&untrusting).await.unwrap_err();
    assert!(s.message().contains("agent \"default\""), "{s:?}");
    assert!(
        !s.message().contains(&front.addr.port().to_string()),
        "{s:?}"
    );
    assert_eq!(up.calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_bridge_to_an_https_jsonrpc_agent() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    let px = proxy_to(&pki, &front.url(), Some(Version::V03), CA);
    let task = grpc_get_task(&px).await.unwrap();
    assert_eq!(task.id, "t1");
    assert_eq!(task.status.unwrap().state, p10::TaskState::Completed as i32);
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(sent["method"], "tasks/get");

    // Without the test CA: refused, told by agent name and kind.
    let px = proxy_to(&pki, &front.url(), Some(Version::V03), NONE);
    let s = grpc_get_task(&px).await.unwrap_err();
    assert_eq!(s.code(), tonic::Code::Unavailable, "{s:?}");
    assert!(s.message().contains("agent \"default\""), "{s:?}");
    assert!(s.message().contains("not signed by an authority"), "{s:?}");
    assert!(
        !s.message().contains(&front.addr.port().to_string()),
        "{s:?}"
    );
    assert_eq!(up.calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_agent_at_an_https_grpc_url() {
    let pki = Pki::new();
    let (up, _inner_http, _inner_grpc, front) = tls_grpc_agent(&pki).await;

    let card = FakeUpstream::start(|_| Reply::json(404, "{}")).await;
    let grpc_url = front.url();
    let with = |keys| {
        let mut c = config(&pki, &card.url(), Some(Version::V10), keys);
        c.upstream_grpc = Some(HttpUrl::parse("upstream.grpc_url", &grpc_url).unwrap());
        proxy::start(c).unwrap()
    };
    // Without the CA the TLS channel is refused: no call arrives.
    grpc_over_tls_needs_the_ca(with, &up, &front).await;
}

/// A gRPC agent over TLS that the card lists (no `grpc_url`): reached on
/// the card's `https://` gRPC interface with the `[upstream]` TLS
/// settings, as at an https `grpc_url`; refused without the test CA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_agent_at_the_https_grpc_interface_of_its_card() {
    let pki = Pki::new();
    let (up, _inner_http, _inner_grpc, front) = tls_grpc_agent(&pki).await;
    let card = json!({"name": "g", "description": "d", "version": "1",
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "capabilities": {}, "skills": [], "supportedInterfaces": [
            {"url": front.url(), "protocolBinding": "GRPC", "protocolVersion": "1.0"}]})
    .to_string();
    let card_up = FakeUpstream::start(move |_| Reply::json(200, &card)).await;
    let with = |keys| {
        let mut c = config(&pki, &card_up.url(), Some(Version::V10), keys);
        let allowed = ["127.0.0.1".to_string()];
        c.allowed_hosts =
            proxy::config::AllowedHosts::resolve(Some(&allowed), &c.upstream, None).unwrap();
        proxy::start(c).unwrap()
    };
    grpc_over_tls_needs_the_ca(with, &up, &front).await;
}

// --------------------------------------------------------------- refusals

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_requiring_a_client_certificate() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", true).await;
    // Without client_cert_file: refused, on the proxy's own call and on
    // Pingora's passthrough alike.
    let without = proxy_to(&pki, &front.url(), Some(Version::V03), CA);
    let r = post(without.addr, "/", V10, V10_SEND).await;
    told_clearly(&r, &front, "client certificate");
    // Pingora's passthrough (same version) of a read: the agent's refusal
    // (a TLS 1.3 alert after the handshake) is read as such.
    let r = get(without.addr, "/rest/v1/tasks/t1", &[]).await;
    told_clearly(&r, &front, "client certificate");
    // A passthrough POST: the same (more sizes and REST in
    // a_passthrough_post_refused_for_its_client_certificate_names_the_refusal).
    let r = post(without.addr, "/", JSON_HEADER, V03_SEND).await;
    told_clearly(&r, &front, "client certificate");
    assert!(up.calls().is_empty(), "{:?}", up.calls());

    // With it: served on both paths.
    let with = proxy_to(&pki, &front.url(), Some(Version::V03), CA_AND_CLIENT);
    let r = post(with.addr, "/", V10, V10_SEND).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = post(with.addr, "/", JSON_HEADER, V03_SEND).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(up.calls().len(), 2);
}

/// An error answer naming agent `name`, saying the agent refused the
/// proxy's client certificate, with nothing of the agent's address.
fn told_client_cert_refused(r: &Response, front: &Front, name: &str) {
    let text = r.text();
    assert_eq!(r.status, 502, "{text}");
    let said = strings(&r.json());
    assert!(
        said.contains(&format!("agent {name:?} unavailable")),
        "{text}"
    );
    assert!(
        said.contains("refused the proxy's TLS client certificate"),
        "{text}"
    );
    assert!(!text.contains(&front.addr.port().to_string()), "{text}");
    assert!(!text.contains("127.0.0.1"), "{text}");
}

/// A same-version POST to an agent that refuses the proxy's missing client
/// certificate (a TLS 1.3 alert after the handshake, while the request is
/// being written): JSON-RPC and REST, on Pingora's passthrough and on the
/// proxy's own client, one at a time and many at once, are told the
/// refusal and the agent's name, never a bare "unavailable" nor the
/// agent's address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passthrough_post_refused_for_its_client_certificate_names_the_refusal() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", true).await;
    let listen = support::free_local_addr().unwrap();
    let text = format!(
        "listen = \"{listen}\"\nthreads = 1\n[upstream]\nurl = \"{url}\"\nversion = \"0.3\"\nca_file = {ca:?}\n\
         [push]\nenabled = false\n\
         [[agents]]\nname = \"billing\"\nprefix = \"/billing\"\n",
        url = front.url(),
        ca = pki.file("ca.pem"),
    );
    let config = Config::resolve(RawConfig::from_toml(&text, "t.toml").unwrap()).unwrap();
    let px = proxy::start(config).unwrap();
    // A small body; one still being written when the agent's refusal
    // closes the connection, on Pingora's way (the tunnel) and, past what
    // Pingora can replay, on the proxy's own client.
    for (round, size) in [8, 60_000, 300_000, 8, 60_000, 300_000]
        .into_iter()
        .enumerate()
    {
        let message = json!({"kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": "x".repeat(size)}]});
        let rpc = json!({"jsonrpc": "2.0", "id": round, "method": "message/send",
            "params": {"message": message}});
        let r = post(
            px.addr,
            "/billing/",
            JSON_HEADER,
            rpc.to_string().as_bytes(),
        )
        .await;
        told_client_cert_refused(&r, &front, "billing");
        let rest = json!({ "message": message }).to_string();
        let r = post(
            px.addr,
            "/billing/rest/v1/message:send",
            JSON_HEADER,
            rest.as_bytes(),
        )
        .await;
        told_client_cert_refused(&r, &front, "billing");
    }
    // Many at once: each told, whatever the others' handshakes did.
    let many = (0..16).map(|i| {
        let (target, body) = if i % 2 == 0 {
            ("/billing/", V03_SEND.to_vec())
        } else {
            let message = json!({"kind": "message", "messageId": "m1", "role": "user",
                "parts": [{"kind": "text", "text": "hi"}]});
            let body = json!({ "message": message }).to_string().into_bytes();
            ("/billing/rest/v1/message:send", body)
        };
        let addr = px.addr;
        tokio::spawn(async move { post(addr, target, JSON_HEADER, &body).await })
    });
    let many: Vec<_> = many.collect();
    for h in many {
        let r = tokio::time::timeout(WAIT, h).await.unwrap().unwrap();
        told_client_cert_refused(&r, &front, "billing");
    }
    // A same-version stream (a call of the proxy's own, on its client):
    // its one event is the error.
    let r = post(
        px.addr,
        "/billing/",
        &[
            ("Accept", "text/event-stream"),
            ("Content-Type", "application/json"),
        ],
        V03_STREAM,
    )
    .await;
    let text = r.text();
    let event = text.trim().strip_prefix("data:").unwrap_or(&text);
    let said = strings(&serde_json::from_str::<Value>(event.trim()).unwrap_or(Value::Null));
    assert!(said.contains("agent \"billing\" unavailable"), "{text}");
    assert!(
        said.contains("refused the proxy's TLS client certificate"),
        "{text}"
    );
    assert!(!text.contains(&front.addr.port().to_string()), "{text}");
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

/// A TLS agent (certificate `server`, a client certificate of the test CA
/// required) that refuses without an alert, as servers on Python's asyncio
/// TLS do: a handshake that fails is closed without a word; one that
/// succeeds gets its session tickets, then the connection is closed
/// without an answer. Stopped on drop.
struct SilentFront {
    addr: SocketAddr,
    _task: AbortOnDrop,
}

impl SilentFront {
    async fn start(pki: &Pki) -> SilentFront {
        let config = Arc::new(server_config(pki, "server", true, &[b"http/1.1"]));
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = l.accept().await {
                let Ok(mut tcp) = tcp.into_std() else {
                    continue;
                };
                let config = config.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = tcp.set_nonblocking(false);
                    let _ = tcp.set_read_timeout(Some(WAIT));
                    let mut tls = rustls::ServerConnection::new(config).unwrap();
                    while tls.is_handshaking() {
                        while tls.wants_write() {
                            if tls.write_tls(&mut tcp).is_err() {
                                return;
                            }
                        }
                        if !matches!(tls.read_tls(&mut tcp), Ok(n) if n > 0) {
                            return;
                        }
                        // A refused handshake: closed, its alert never sent.
                        if tls.process_new_packets().is_err() {
                            return;
                        }
                    }
                    // Accepted: the session tickets, then closed unanswered.
                    while tls.wants_write() {
                        if tls.write_tls(&mut tcp).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        SilentFront {
            addr,
            _task: AbortOnDrop(task),
        }
    }
}

/// An agent that asks for a client certificate and, without one, closes
/// the connection after the handshake without an alert (Python's asyncio
/// TLS): every path is told the refusal and the agent's name (a
/// passthrough POST, REST, a translated call, the card fetch), never a
/// bare "unavailable" nor the address. With the certificate, the same
/// agent closing unanswered is not called a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_refusing_the_client_certificate_without_an_alert() {
    let pki = Pki::new();
    let agent = SilentFront::start(&pki).await;
    let url = format!("https://127.0.0.1:{}", agent.addr.port());
    // What told_clearly checks the answers against: the agent's address.
    let front = Front {
        addr: agent.addr,
        handshakes: Arc::new(AtomicUsize::new(0)),
        connections: Arc::new(AtomicUsize::new(0)),
        _task: AbortOnDrop(tokio::spawn(async {})),
    };
    let rest = br#"{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}"#;
    // Version auto: the card fetch (the proxy's upstream client)
    // is refused, and so are the calls that need it.
    let auto = proxy_to(&pki, &url, None, CA);
    let r = get(auto.addr, "/.well-known/agent-card.json", &[]).await;
    told_clearly(&r, &front, "refused the proxy's TLS client certificate");
    let r = post(auto.addr, "/", V10, V10_SEND).await;
    told_clearly(&r, &front, "refused the proxy's TLS client certificate");
    // Version fixed: Pingora's passthrough (JSON-RPC and REST, a body it
    // can replay and one it cannot) and the proxy's own translated call.
    let px = proxy_to(&pki, &url, Some(Version::V03), CA);
    for size in [8, 300_000] {
        let message = json!({"kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": "x".repeat(size)}]});
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": message}});
        let r = post(px.addr, "/", JSON_HEADER, rpc.to_string().as_bytes()).await;
        told_clearly(&r, &front, "refused the proxy's TLS client certificate");
    }
    let r = post(px.addr, "/v1/message:send", JSON_HEADER, rest).await;
    told_clearly(&r, &front, "refused the proxy's TLS client certificate");
    let r = post(px.addr, "/", V10, V10_SEND).await;
    told_clearly(&r, &front, "refused the proxy's TLS client certificate");
    // With the certificate the handshake is accepted: the agent then
    // closing without an answer is no refusal.
    let with = proxy_to(&pki, &url, Some(Version::V03), CA_AND_CLIENT);
    for r in [
        post(with.addr, "/", V10, V10_SEND).await,
        post(with.addr, "/", JSON_HEADER, V03_SEND).await,
    ] {
        assert_eq!(r.status, 502, "{}", r.text());
        assert!(!r.text().contains("client certificate"), "{}", r.text());
        assert!(!r.text().contains("127.0.0.1"), "{}", r.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_certificate_of_an_unknown_authority_is_refused() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    // Only the Mozilla roots: the test CA is unknown.
    let px = proxy_to(&pki, &front.url(), Some(Version::V03), NONE);
    both_told_clearly(&px, &front, "not signed by an authority").await;
    assert!(up.calls().is_empty());
    // Version auto: the card fetch (the proxy's upstream client) is refused the same
    // way, for the card and for the calls that need it.
    let auto = proxy_to(&pki, &front.url(), None, NONE);
    let r = get(
        auto.addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await;
    told_clearly(&r, &front, "not signed by an authority");
    let r = post(auto.addr, "/", V10, V10_SEND).await;
    told_clearly(&r, &front, "not signed by an authority");
    assert!(up.recorded().is_empty());
}

/// Pingora's passthrough reports a TLS failure only as text, so the proxy
/// tells it by a handshake of its own; a burst of refused calls makes one
/// such handshake a second, not one each: the agent sees about one
/// handshake per call (Pingora's), not two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_refused_passthrough_calls_is_diagnosed_once() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    let px = proxy_to(&pki, &front.url(), Some(Version::V03), NONE);
    let calls: Vec<_> = (0..24)
        .map(|_| {
            let addr = px.addr;
            tokio::spawn(async move { post(addr, "/", JSON_HEADER, V03_SEND).await })
        })
        .collect();
    let started = std::time::Instant::now();
    for c in calls {
        let r = tokio::time::timeout(WAIT, c).await.unwrap().unwrap();
        told_clearly(&r, &front, "not signed by an authority");
    }
    let seconds = started.elapsed().as_secs() as usize + 1;
    let tried = front.connections.load(Ordering::SeqCst);
    // Pingora's own (one per call, none retried) and the diagnoses.
    assert!(tried >= 24, "{tried} connections for 24 calls");
    assert!(
        tried <= 24 + 2 * seconds,
        "{tried} connections for 24 calls in {seconds} s"
    );
    assert!(up.calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_certificate_for_another_name_is_refused() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "elsewhere", false).await;
    let px = proxy_to(&pki, &front.url(), Some(Version::V03), CA);
    both_told_clearly(&px, &front, "not valid for the agent's host name").await;
    assert!(up.calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_agent_has_its_own_tls_keys_and_is_named_in_refusals() {
    let pki = Pki::new();
    let (up, front) = https_agent(&pki, "server", false).await;
    let listen = support::free_local_addr().unwrap();
    let text = format!(
        "listen = \"{listen}\"\nthreads = 1\n[upstream]\nurl = \"{url}\"\nversion = \"0.3\"\n[push]\nenabled = false\n\
         [[agents]]\nname = \"billing\"\nprefix = \"/billing\"\n\
         [[agents]]\nname = \"trusted\"\nprefix = \"/trusted\"\n[agents.upstream]\nca_file = {ca:?}\n",
        url = front.url(),
        ca = pki.file("ca.pem"),
    );
    let config = Config::resolve(RawConfig::from_toml(&text, "t.toml").unwrap()).unwrap();
    let px = proxy::start(config).unwrap();
    let r = post(px.addr, "/trusted", V10, V10_SEND).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = post(px.addr, "/billing", V10, V10_SEND).await;
    assert_eq!(r.status, 502, "{}", r.text());
    let said = strings(&r.json());
    assert!(said.contains("agent \"billing\" unavailable"), "{said}");
    assert!(said.contains("not signed by an authority"), "{said}");
    assert!(
        !r.text().contains(&front.addr.port().to_string()),
        "{}",
        r.text()
    );
    assert_eq!(up.calls().len(), 1);
    // A key of one agent that cannot be used names that agent.
    let bad = text.replace("ca.pem", "missing.pem");
    let e = Config::resolve(RawConfig::from_toml(&bad, "t.toml").unwrap()).unwrap_err();
    assert_eq!(e.key, "agents[1].upstream.ca_file", "{e:?}");
}

#[test]
fn tls_keys_that_cannot_be_used_are_config_errors() {
    let pki = Pki::new();
    let keys = |ca: Option<String>, cert: Option<String>, key: Option<String>| RawConfig {
        upstream: RawUpstream {
            url: Some("https://agent.example".into()),
            ca_file: ca,
            client_cert_file: cert,
            client_key_file: key,
            ..RawUpstream::default()
        },
        push: RawPush {
            enabled: Some(false),
            ..RawPush::default()
        },
        ..RawConfig::default()
    };
    let missing = pki.file("nope.pem");
    let e = Config::resolve(keys(Some(missing), None, None)).unwrap_err();
    assert_eq!(e.key, "upstream.ca_file", "{e:?}");
    // Not PEM certificates.
    std::fs::write(pki.path("junk.pem"), "junk").unwrap();
    let e = Config::resolve(keys(Some(pki.file("junk.pem")), None, None)).unwrap_err();
    assert_eq!(e.key, "upstream.ca_file", "{e:?}");
    let e = Config::resolve(keys(None, Some(pki.file("client.pem")), None)).unwrap_err();
    assert_eq!(e.key, "upstream.client_key_file", "{e:?}");
    let e = Config::resolve(keys(None, None, Some(pki.file("client-key.pem")))).unwrap_err();
    assert_eq!(e.key, "upstream.client_cert_file", "{e:?}");
    // A key that is not the certificate's.
    let e = Config::resolve(keys(
        None,
        Some(pki.file("client.pem")),
        Some(pki.file("server-key.pem")),
    ))
    .unwrap_err();
    assert_eq!(e.key, "upstream.client_cert_file", "{e:?}");
    // All good: an https upstream.
    let c = Config::resolve(keys(
        Some(pki.file("ca.pem")),
        Some(pki.file("client.pem")),
        Some(pki.file("client-key.pem")),
    ))
    .unwrap();
    assert_eq!(c.upstream.scheme, "https");
    let _: &UpstreamTls = &c.upstream_tls;
}

/// What an h2 agent saw: each request's HTTP version and its target or
/// JSON-RPC method.
type Seen = Arc<std::sync::Mutex<Vec<(http::Version, String)>>>;

/// A v0.3 agent that speaks h2 only (ALPN `h2`, hyper's h2 server) behind
/// TLS with certificate `server`: its card, completed tasks, a stream of
/// [`v03_events`]. Counts its connections.
async fn h2_only_agent(pki: &Pki) -> (String, Seen, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    use http_body_util::Full;
    use hyper::body::Bytes;
    let acceptor =
        tokio_rustls::TlsAcceptor::from(Arc::new(server_config(pki, "server", false, &[b"h2"])));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://127.0.0.1:{}", l.local_addr().unwrap().port());
    let seen: Seen = Arc::default();
    let conns = Arc::new(AtomicUsize::new(0));
    let (seen2, conns2, base2) = (seen.clone(), conns.clone(), base.clone());
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            let (acceptor, seen, base) = (acceptor.clone(), seen2.clone(), base2.clone());
            conns2.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let Ok(Ok(tls)) = tokio::time::timeout(WAIT, acceptor.accept(tcp)).await else {
                    return;
                };
                let serve =
                    hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let (seen, base) = (seen.clone(), base.clone());
                        async move {
                            use http_body_util::BodyExt;
                            let version = req.version();
                            let target = req.uri().path().to_string();
                            let body = req.into_body().collect().await?.to_bytes();
                            let reply = v03_agent(Arc::new(OnceLock::from(base)))(&Recorded {
                                method: "POST".into(),
                                target: target.clone(),
                                headers: Default::default(),
                                body: body.to_vec(),
                            });
                            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                            let what = v["method"].as_str().map_or(target, str::to_string);
                            seen.lock().unwrap().push((version, what));
                            let (ctype, bytes) = match reply {
                                Reply::Sse { events, .. } => ("text/event-stream", events.concat()),
                                Reply::Full { body, .. } => {
                                    ("application/json", String::from_utf8(body).unwrap())
                                }
                                _ => ("text/plain", String::new()),
                            };
                            Ok::<_, hyper::Error>(
                                http::Response::builder()
                                    .header("content-type", ctype)
                                    .body(Full::new(Bytes::from(bytes)))
                                    .unwrap(),
                            )
                        }
                    });
                let io = hyper_util::rt::TokioIo::new(tls);
                let _ =
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(io, serve)
                        .await;
            });
        }
    });
    (base, seen, conns, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_speaking_h2_is_reached_over_h2_on_one_shared_connection() {
    let pki = Pki::new();
    let (url, seen, conns, agent) = h2_only_agent(&pki).await;
    let px = proxy_to(&pki, &url, None, CA);
    // Two v1.0 callers at once, then a stream: translated toward v0.3.
    let (a, b) = tokio::join!(
        post(px.addr, "/", V10, V10_SEND),
        post(px.addr, "/", V10, V10_SEND)
    );
    for r in [a, b] {
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(
            r.json()["result"]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    let mut s = open(px.addr, &request("POST", "/", V10, V10_STREAM)).await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    assert!(text.contains("TASK_STATE_SUBMITTED"), "{text}");
    assert!(text.contains("TASK_STATE_COMPLETED"), "{text}");
    assert!(!text.contains("\"kind\""), "v1.0 events only: {text}");
    let seen = seen.lock().unwrap().clone();
    let methods: Vec<&str> = seen.iter().map(|(_, m)| m.as_str()).collect();
    assert!(
        methods.iter().any(|m| m.starts_with("/.well-known/")),
        "{methods:?}"
    );
    assert_eq!(
        methods.iter().filter(|m| **m == "message/send").count(),
        2,
        "{methods:?}"
    );
    assert!(methods.contains(&"message/stream"), "{methods:?}");
    assert!(
        seen.iter().all(|(v, _)| *v == http::Version::HTTP_2),
        "{seen:?}"
    );
    // The calls share the agent's h2 connection (the card fetch's, at most
    // one more if the two calls raced its opening).
    assert!(
        conns.load(Ordering::SeqCst) <= 2,
        "{}",
        conns.load(Ordering::SeqCst)
    );
    agent.abort();
}

/// A v0.3 agent speaking h2 (the h2 crate's server, over TLS) whose first
/// `message/send` stream is reset with `reset`, every later request
/// answered as [`v03_agent`] answers it. Counts the `message/send`
/// requests it received.
async fn h2_agent_resetting_first_send(
    pki: &Pki,
    reset: h2::Reason,
) -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let acceptor =
        tokio_rustls::TlsAcceptor::from(Arc::new(server_config(pki, "server", false, &[b"h2"])));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://127.0.0.1:{}", l.local_addr().unwrap().port());
    let sends = Arc::new(AtomicUsize::new(0));
    let (sends2, base2) = (sends.clone(), base.clone());
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            let (acceptor, sends, base) = (acceptor.clone(), sends2.clone(), base2.clone());
            tokio::spawn(async move {
                let Ok(Ok(tls)) = tokio::time::timeout(WAIT, acceptor.accept(tcp)).await else {
                    return;
                };
                let Ok(mut conn) = h2::server::handshake(tls).await else {
                    return;
                };
                while let Some(Ok((req, mut respond))) = conn.accept().await {
                    let (sends, base) = (sends.clone(), base.clone());
                    tokio::spawn(async move {
                        let target = req.uri().path().to_string();
                        let mut body = req.into_body();
                        let mut bytes = Vec::new();
                        while let Some(Ok(d)) = body.data().await {
                            let _ = body.flow_control().release_capacity(d.len());
                            bytes.extend_from_slice(&d);
                        }
                        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                        if v["method"] == "message/send"
                            && sends.fetch_add(1, Ordering::SeqCst) == 0
                        {
                            respond.send_reset(reset);
                            return;
                        }
                        let reply = v03_agent(Arc::new(OnceLock::from(base)))(&Recorded {
                            method: "POST".into(),
                            target,
                            headers: Default::default(),
                            body: bytes,
                        });
                        let Reply::Full { body, .. } = reply else {
                            respond.send_reset(h2::Reason::INTERNAL_ERROR);
                            return;
                        };
                        let head = http::Response::builder()
                            .header("content-type", "application/json")
                            .body(())
                            .unwrap();
                        if let Ok(mut out) = respond.send_response(head, false) {
                            let _ = out.send_data(body.into(), true);
                        }
                    });
                }
            });
        }
    });
    (base, sends, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_the_h2_agent_refused_unprocessed_is_sent_again_any_other_reset_is_in_doubt() {
    let pki = Pki::new();
    // REFUSED_STREAM: the agent did not process it (RFC 9113 8.7).
    let (url, sends, agent) = h2_agent_resetting_first_send(&pki, h2::Reason::REFUSED_STREAM).await;
    let px = proxy_to(&pki, &url, Some(Version::V03), CA);
    let r = post(px.addr, "/", V10, V10_SEND).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(sends.load(Ordering::SeqCst), 2);
    agent.abort();
    // Any other reset: it may have acted; a send is not repeated.
    let (url, sends, agent) = h2_agent_resetting_first_send(&pki, h2::Reason::INTERNAL_ERROR).await;
    let px = proxy_to(&pki, &url, Some(Version::V03), CA);
    let r = post(px.addr, "/", V10, V10_SEND).await;
    assert!(
        r.text().contains("outcome_unknown"),
        "{} {}",
        r.status,
        r.text()
    );
    assert_eq!(sends.load(Ordering::SeqCst), 1);
    agent.abort();
}
