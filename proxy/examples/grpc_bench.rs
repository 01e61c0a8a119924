//! gRPC load client (run by `bench/grpc.sh`): unary SendMessage calls per
//! second and latency percentiles, all in one process on 127.0.0.1, against
//! the demo's v0.3 echo agent (JSON-RPC):
//!
//! * `direct`: JSON-RPC `message/send` straight to the agent (HTTP/1.1);
//! * `bridged`: v0.3 gRPC -> proxy -> the agent (same version, binding change);
//! * `translated`: v1.0 gRPC -> proxy -> the agent (v1.0 -> v0.3 and back).
//!
//! Args: `[seconds per workload = 3] [concurrency = 16]`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use proto::v03 as p03;
use proto::v10 as p10;
use proxy::config::{Config, UpstreamVersion};
use proxy::grpc::GrpcServer;
use proxy::version::Version;

struct Stats {
    rps: f64,
    p50: Duration,
    p99: Duration,
    errors: usize,
}

async fn run<F, Fut>(secs: u64, conc: usize, f: F) -> Stats
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let end = Instant::now() + Duration::from_secs(secs);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let f = f.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut errors = 0;
            while Instant::now() < end {
                let t = Instant::now();
                if f().await {
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            (lat, errors)
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    for t in tasks {
        if let Ok((l, e)) = t.await {
            all.extend(l);
            errors += e;
        }
    }
    let took = start.elapsed().as_secs_f64();
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Stats {
        rps: all.len() as f64 / took,
        p50: pct(0.50),
        p99: pct(0.99),
        errors,
    }
}

fn print(name: &str, s: &Stats) {
    println!(
        "{name:<11} {:>9.0} RPC/s  p50 {:>7.2} ms  p99 {:>7.2} ms  errors {}",
        s.rps,
        s.p50.as_secs_f64() * 1e3,
        s.p99.as_secs_f64() * 1e3,
        s.errors
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let conc: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(16);

    let agent = proxy::demo::start_echo_agent().expect("echo agent");
    let addr = proxy::free_local_addr().expect("free port");
    let mut config = Config::new(addr, &format!("http://{agent}")).expect("config");
    config.upstream_version = UpstreamVersion::Fixed(Version::V03);
    config.threads = 2;
    let px = proxy::start(config).expect("proxy");
    let grpc = GrpcServer::start(px.app.clone(), "127.0.0.1:0".parse().unwrap()).expect("grpc");
    let grpc_url = format!("http://{}", grpc.addr);
    println!("gRPC bench: {secs} s per workload, {conc} concurrent callers, SendMessage to the v0.3 echo agent");

    let http: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let agent_url = format!("http://{agent}/");
    let direct = run(secs, conc, move || {
        let http = http.clone();
        let url = agent_url.clone();
        async move {
            let body = r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
            let req = hyper::Request::post(url)
                .header("Content-Type", "application/json")
                .body(Full::new(Bytes::from_static(body.as_bytes())))
                .expect("request");
            match http.request(req).await {
                Ok(r) => r.status() == 200 && r.into_body().collect().await.is_ok(),
                Err(_) => false,
            }
        }
    })
    .await;
    print("direct", &direct);

    let c03 = p03::a2a_service_client::A2aServiceClient::connect(grpc_url.clone())
        .await
        .expect("connect");
    let bridged = run(secs, conc, move || {
        let mut c = c03.clone();
        async move {
            let req = p03::SendMessageRequest {
                request: Some(p03::Message {
                    message_id: "m1".into(),
                    role: p03::Role::User as i32,
                    content: vec![p03::Part {
                        part: Some(p03::part::Part::Text("hi".into())),
                        metadata: None,
                    }],
                    ..Default::default()
                }),
                configuration: None,
                metadata: None,
            };
            c.send_message(req).await.is_ok()
        }
    })
    .await;
    print("bridged", &bridged);

    let c10 = p10::a2a_service_client::A2aServiceClient::connect(grpc_url)
        .await
        .expect("connect");
    let translated = run(secs, conc, move || {
        let mut c = c10.clone();
        async move {
            let mut req = tonic::Request::new(p10::SendMessageRequest {
                message: Some(p10::Message {
                    message_id: "m1".into(),
                    role: p10::Role::User as i32,
                    parts: vec![p10::Part {
                        content: Some(p10::part::Content::Text("hi".into())),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            });
            req.metadata_mut().insert(
                "a2a-version",
                tonic::metadata::MetadataValue::from_static("1.0"),
            );
            c.send_message(req).await.is_ok()
        }
    })
    .await;
    print("translated", &translated);

    println!(
        "ratios: translated/bridged {:.2} (target >= 0.7)  bridged/direct {:.2}  translated/direct {:.2}",
        translated.rps / bridged.rps.max(1e-9),
        bridged.rps / direct.rps.max(1e-9),
        translated.rps / direct.rps.max(1e-9)
    );
}
