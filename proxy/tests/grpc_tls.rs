//! TLS on the gRPC listener (`grpc.tls_cert_file` / `grpc.tls_key_file`):
//! a tonic v1.0 client over TLS (ALPN h2, the proxy's self-signed
//! certificate trusted) reaches a fake v0.3 JSON-RPC agent through the
//! proxy; a plaintext (h2c) client on the same port gets no answer; a
//! listener with a key that does not fit its certificate does not start.

mod support;

use proto::v10 as p10;
use proxy::config::Config;
use proxy::grpc::GrpcServer;
use proxy::version::Version;
use serde_json::{json, Value};
use support::*;

/// A tonic channel over TLS to `addr`, trusting `cert_der` for "localhost".
async fn tls_channel(addr: std::net::SocketAddr, cert_der: Vec<u8>) -> tonic::transport::Channel {
    let connect = tower::service_fn(move |_uri: http::Uri| {
        let cert_der = cert_der.clone();
        async move {
            let tls = tls::connect(addr, &cert_der, &[b"h2"]).await?;
            assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(tls))
        }
    });
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_with_connector(connect)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_over_tls_reaches_the_agent_and_plaintext_does_not() {
    let up = FakeUpstream::start(|r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let task = json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}});
        Reply::json(200, &json!({"jsonrpc": "2.0", "id": req["id"], "result": task}).to_string())
    })
    .await;
    let d = tls::temp_dir("grpc-tls");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    std::fs::write(d.join("cert.pem"), cert.cert.pem()).unwrap();
    std::fs::write(d.join("key.pem"), cert.key_pair.serialize_pem()).unwrap();

    let mut config = config_for(&up.url(), Version::V03);
    let grpc_addr = support::free_local_addr().unwrap();
    config.grpc_listen = Some(grpc_addr);
    config.grpc_tls = Some((d.join("cert.pem"), d.join("key.pem")));
    let http = proxy::start(config).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), grpc_addr).unwrap();

    let channel = tls_channel(grpc.addr, cert.cert.der().to_vec()).await;
    let mut client = p10::a2a_service_client::A2aServiceClient::new(channel);
    let mut req = tonic::Request::new(grpc::v10_get_task("t1"));
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    let task = client.get_task(req).await.unwrap().into_inner();
    assert_eq!(task.id, "t1");
    assert_eq!(task.status.unwrap().state, p10::TaskState::Completed as i32);
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(sent["method"], "tasks/get", "{sent}");

    // h2c on the TLS port: the handshake fails, no call reaches the agent.
    let plain = tonic::transport::Endpoint::from_shared(format!("http://{}", grpc.addr))
        .unwrap()
        .connect_timeout(std::time::Duration::from_secs(2))
        .timeout(std::time::Duration::from_secs(2));
    let r = match plain.connect().await {
        Err(_) => None,
        Ok(ch) => Some(
            p10::a2a_service_client::A2aServiceClient::new(ch)
                .get_task(grpc::v10_get_task("t1"))
                .await,
        ),
    };
    assert!(!matches!(r, Some(Ok(_))), "plaintext got an answer: {r:?}");
    assert_eq!(up.calls().len(), 1);
    drop(grpc);
    drop(http);

    // A key of another certificate: the listener does not start.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    std::fs::write(d.join("other-key.pem"), other.key_pair.serialize_pem()).unwrap();
    let mut config = Config::new(support::free_local_addr().unwrap(), &up.url()).unwrap();
    config.threads = 1;
    config.grpc_tls = Some((d.join("cert.pem"), d.join("other-key.pem")));
    let http = proxy::start(config).unwrap();
    let err = GrpcServer::start(http.app.clone(), support::free_local_addr().unwrap())
        .err()
        .expect("a mismatched key must not start");
    assert!(err.to_string().contains("do not fit"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
