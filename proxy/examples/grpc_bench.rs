//! gRPC load client (run by `bench/grpc.sh`): unary SendMessage calls per
//! second and latency percentiles, all in one process on 127.0.0.1, against
//! the demo's v0.3 echo agent (JSON-RPC):
//!
//! * `direct`: JSON-RPC `message/send` straight to the agent (HTTP/1.1);
//! * `bridged`: v0.3 gRPC -> proxy -> the agent (same version, binding change);
//! * `translated`: v1.0 gRPC -> proxy -> the agent (v1.0 -> v0.3 and back).
//!
//! and against a v0.3 *gRPC* echo agent (in this process: a raw tonic
//! service that decodes each SendMessageRequest and encodes a Task), the
//! proxy's `upstream.grpc_url` pointing at it:
//!
//! * `grpc-direct`: v0.3 gRPC straight to the agent;
//! * `passthrough`: v0.3 gRPC -> proxy -> the agent (same version, raw frames);
//! * `grpc-transl`: v1.0 gRPC -> proxy -> the agent over gRPC (translated).
//!
//! Args: `[seconds per workload = 3] [concurrency = 16] [rounds = 3]`
//! (rounds: of the gRPC-upstream workloads, interleaved). For profiling,
//! `GRPC_BENCH_ONLY=grpc-transl` (or `passthrough`) runs that one workload
//! for the given seconds and nothing else.

#[path = "../tests/support/ports.rs"]
mod ports;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use prost::Message as _;
use proto::v03 as p03;
use proto::v10 as p10;
use proxy::config::{Config, HttpUrl, UpstreamVersion};
use proxy::grpc::GrpcServer;
use proxy::version::Version;

/// The v0.3 gRPC echo agent: SendMessage answers a completed Task holding
/// the message; any other RPC is UNIMPLEMENTED.
#[derive(Clone)]
struct EchoGrpc;

impl tonic::server::NamedService for EchoGrpc {
    const NAME: &'static str = "a2a.v1.A2AService";
}

impl tonic::codegen::Service<http::Request<tonic::body::Body>> for EchoGrpc {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        Box::pin(async move {
            if !req.uri().path().ends_with("/SendMessage") {
                return Ok(tonic::Status::unimplemented("echo agent").into_http());
            }
            let body = req
                .into_body()
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            let msg = body.get(5..).unwrap_or_default();
            let Ok(r) = p03::SendMessageRequest::decode(msg) else {
                return Ok(tonic::Status::invalid_argument("bad message").into_http());
            };
            let task = p03::Task {
                id: "t1".into(),
                context_id: "c1".into(),
                status: Some(p03::TaskStatus {
                    state: p03::TaskState::Completed as i32,
                    ..Default::default()
                }),
                history: r.request.into_iter().collect(),
                ..Default::default()
            };
            let out = p03::SendMessageResponse {
                payload: Some(p03::send_message_response::Payload::Task(task)),
            }
            .encode_to_vec();
            let mut framed = Vec::with_capacity(out.len() + 5);
            framed.push(0);
            framed.extend_from_slice(&(out.len() as u32).to_be_bytes());
            framed.extend_from_slice(&out);
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
            let frames: Vec<Result<hyper::body::Frame<Bytes>, std::convert::Infallible>> = vec![
                Ok(hyper::body::Frame::data(Bytes::from(framed))),
                Ok(hyper::body::Frame::trailers(trailers)),
            ];
            let body = http_body_util::StreamBody::new(tokio_stream::iter(frames));
            let resp = http::Response::builder()
                .status(200)
                .header("content-type", "application/grpc")
                .body(tonic::body::Body::new(body));
            Ok(resp.unwrap_or_else(|_| tonic::Status::internal("response").into_http()))
        })
    }
}

fn v03_send() -> p03::SendMessageRequest {
    p03::SendMessageRequest {
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
    }
}

fn v10_send() -> tonic::Request<p10::SendMessageRequest> {
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
    req
}

struct Stats {
    rps: f64,
    p50: Duration,
    p99: Duration,
    errors: usize,
    /// CPU time of this whole process (client, proxy, agent) per call: on a
    /// shared box less sensitive to other load than RPC/s.
    cpu_us: f64,
}

/// utime + stime of this process in clock ticks (/proc/self/stat).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

/// Clock ticks per second (USER_HZ; 100 on Linux).
const TICKS: f64 = 100.0;

async fn run<F, Fut>(secs: u64, conc: usize, f: F) -> Stats
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let end = Instant::now() + Duration::from_secs(secs);
    let start = Instant::now();
    let cpu0 = cpu_ticks();
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
    let cpu = cpu_ticks().saturating_sub(cpu0) as f64 / TICKS;
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
        cpu_us: cpu * 1e6 / (all.len().max(1) as f64),
    }
}

fn print(name: &str, s: &Stats) {
    println!(
        "{name:<11} {:>9.0} RPC/s  p50 {:>7.2} ms  p99 {:>7.2} ms  cpu {:>5.0} us/call  errors {}",
        s.rps,
        s.p50.as_secs_f64() * 1e3,
        s.p99.as_secs_f64() * 1e3,
        s.cpu_us,
        s.errors
    );
}

/// The workloads toward the demo's JSON-RPC echo agent.
async fn json_upstream(agent: std::net::SocketAddr, secs: u64, conc: usize) {
    let addr = ports::free_local_addr().expect("free port");
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
    drop(grpc);
    drop(px);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let conc: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(16);
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3).max(1);

    let only = std::env::var("GRPC_BENCH_ONLY").ok();
    let agent = proxy::cli::demo::start_echo_agent().expect("echo agent");
    if only.is_none() {
        json_upstream(agent, secs, conc).await;
    }
    // ---- against a v0.3 gRPC upstream (upstream.grpc_url)
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let echo_addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let _ = tonic::transport::Server::builder()
            .tcp_nodelay(true)
            .add_service(EchoGrpc)
            .serve_with_incoming(incoming)
            .await;
    });
    let addr = ports::free_local_addr().expect("free port");
    let mut config = Config::new(addr, &format!("http://{agent}")).expect("config");
    config.upstream_version = UpstreamVersion::Fixed(Version::V03);
    config.threads = 2;
    config.upstream_grpc =
        Some(HttpUrl::parse("upstream.grpc_url", &format!("http://{echo_addr}")).expect("url"));
    let px = proxy::start(config).expect("proxy");
    let grpc = GrpcServer::start(px.app.clone(), "127.0.0.1:0".parse().unwrap()).expect("grpc");
    println!("against a v0.3 gRPC echo agent (upstream.grpc_url):");

    let direct_c =
        p03::a2a_service_client::A2aServiceClient::connect(format!("http://{echo_addr}"))
            .await
            .expect("connect");
    let url = format!("http://{}", grpc.addr);
    let c03 = p03::a2a_service_client::A2aServiceClient::connect(url.clone())
        .await
        .expect("connect");
    let c10 = p10::a2a_service_client::A2aServiceClient::connect(url)
        .await
        .expect("connect");
    // Interleaved rounds (the box is shared): the ratio of each round, and
    // the median of those.
    if let Some(name) = only {
        let c = match name.as_str() {
            "grpc-transl" => None,
            "passthrough" => Some(c03.clone()),
            other => panic!("GRPC_BENCH_ONLY: unknown workload {other}"),
        };
        let (c03, c10) = (c, c10.clone());
        let s = run(secs, conc, move || {
            let (c03, mut c10) = (c03.clone(), c10.clone());
            async move {
                match c03 {
                    Some(mut c) => c.send_message(v03_send()).await.is_ok(),
                    None => c10.send_message(v10_send()).await.is_ok(),
                }
            }
        })
        .await;
        print(&name, &s);
        return;
    }
    let mut ratios = Vec::new();
    let mut cpu_ratios = Vec::new();
    for round in 1..=rounds {
        println!("round {round}/{rounds}");
        let c = direct_c.clone();
        let grpc_direct = run(secs, conc, move || {
            let mut c = c.clone();
            async move { c.send_message(v03_send()).await.is_ok() }
        })
        .await;
        print("grpc-direct", &grpc_direct);
        let c = c03.clone();
        let passthrough = run(secs, conc, move || {
            let mut c = c.clone();
            async move { c.send_message(v03_send()).await.is_ok() }
        })
        .await;
        print("passthrough", &passthrough);
        let c = c10.clone();
        let grpc_transl = run(secs, conc, move || {
            let mut c = c.clone();
            async move { c.send_message(v10_send()).await.is_ok() }
        })
        .await;
        print("grpc-transl", &grpc_transl);
        let r = grpc_transl.rps / passthrough.rps.max(1e-9);
        let cr = passthrough.cpu_us / grpc_transl.cpu_us.max(1e-9);
        println!(
            "ratios: translated/passthrough {r:.2} (by CPU per call {cr:.2})  passthrough/direct {:.2}  translated/direct {:.2}",
            passthrough.rps / grpc_direct.rps.max(1e-9),
            grpc_transl.rps / grpc_direct.rps.max(1e-9)
        );
        ratios.push(r);
        cpu_ratios.push(cr);
    }
    ratios.sort_by(f64::total_cmp);
    cpu_ratios.sort_by(f64::total_cmp);
    println!(
        "median translated/passthrough over {rounds} rounds: {:.2} RPC/s, {:.2} by CPU per call (target >= 0.7)",
        ratios[ratios.len() / 2],
        cpu_ratios[cpu_ratios.len() / 2]
    );
}
