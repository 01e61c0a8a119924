//! A fake gRPC agent of either A2A version on 127.0.0.1: a raw HTTP/2 gRPC
//! server (a tower service under tonic's server) that records every
//! request's path, headers and exact body bytes and answers with scripted
//! encoded messages, so a test asserts the exact protobuf and metadata the
//! agent received and the exact reply or status the client got.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http_body_util::BodyExt;
use prost::Message;
use proto::v03 as p03;
use proto::v10 as p10;
use proxy::config::{Config, HttpUrl};
use proxy::grpc::GrpcServer;
use proxy::version::Version;
use proxy::RunningProxy;
use tonic::codegen::{BoxFuture, Service};
use tonic::server::NamedService;
use tonic::Status;

use super::{FakeUpstream, Reply};

/// What the fake agent answers to one call.
pub enum Answer {
    /// One encoded message, status OK.
    Msg(Vec<u8>),
    /// Encoded messages, then the final status.
    Stream(Vec<Vec<u8>>, Status),
    /// A status without messages.
    Fail(Status),
    /// Headers, then nothing until the caller goes away (sets `closed`).
    Hang,
}

/// One request the fake agent received.
#[derive(Clone, Debug)]
pub struct Call {
    pub path: String,
    pub headers: http::HeaderMap,
    /// The whole request body (gRPC length-prefixed frames).
    pub body: Vec<u8>,
}

impl Call {
    /// The single uncompressed message of the body.
    pub fn message(&self) -> &[u8] {
        assert!(self.body.len() >= 5, "{self:?}");
        assert_eq!(self.body[0], 0, "compressed frame");
        let len = u32::from_be_bytes([self.body[1], self.body[2], self.body[3], self.body[4]]);
        assert_eq!(self.body.len(), 5 + len as usize, "one message");
        &self.body[5..]
    }
    pub fn decode<M: Message + Default>(&self) -> M {
        M::decode(self.message()).unwrap()
    }
    pub fn header(&self, k: &str) -> Option<&str> {
        self.headers.get(k).and_then(|v| v.to_str().ok())
    }
}

type Script = dyn Fn(&Call) -> Answer + Send + Sync;

struct AgentState {
    calls: Mutex<Vec<Call>>,
    script: Box<Script>,
    /// Set when a hanging answer's body was dropped (the caller went away).
    closed: Mutex<bool>,
}

/// A raw gRPC service named after one A2A version's service (`V`: 3 or 10).
#[derive(Clone)]
struct RawAgent<const V: u8>(Arc<AgentState>);

impl NamedService for RawAgent<3> {
    const NAME: &'static str = "a2a.v1.A2AService";
}
impl NamedService for RawAgent<10> {
    const NAME: &'static str = "lf.a2a.v1.A2AService";
}

/// `m` as one uncompressed gRPC length-prefixed frame.
pub fn frame(m: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(5 + m.len());
    b.put_u8(0);
    b.put_u32(m.len() as u32);
    b.put_slice(m);
    b.freeze()
}

struct SetOnDrop(Arc<AgentState>);
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        *self.0.closed.lock().unwrap() = true;
    }
}

type Frames = Vec<Result<hyper::body::Frame<Bytes>, Infallible>>;

impl<const V: u8> Service<http::Request<tonic::body::Body>> for RawAgent<V> {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let st = self.0.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let body = body
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            let call = Call {
                path: parts.uri.path().to_string(),
                headers: parts.headers,
                body: body.to_vec(),
            };
            let answer = (st.script)(&call);
            st.calls.lock().unwrap().push(call);
            Ok(respond(answer, &st))
        })
    }
}

/// The HTTP/2 answer that carries `answer`.
fn respond(answer: Answer, st: &Arc<AgentState>) -> http::Response<tonic::body::Body> {
    let frames: Frames = match answer {
        Answer::Fail(s) => return s.into_http(),
        Answer::Msg(m) => {
            let mut t = http::HeaderMap::new();
            t.insert("grpc-status", http::HeaderValue::from_static("0"));
            vec![
                Ok(hyper::body::Frame::data(frame(&m))),
                Ok(hyper::body::Frame::trailers(t)),
            ]
        }
        Answer::Stream(ms, s) => {
            let mut f: Frames = ms
                .iter()
                .map(|m| Ok(hyper::body::Frame::data(frame(m))))
                .collect();
            let mut t = http::HeaderMap::new();
            s.add_header(&mut t).unwrap();
            f.push(Ok(hyper::body::Frame::trailers(t)));
            f
        }
        Answer::Hang => {
            let guard = SetOnDrop(st.clone());
            let s = tokio_stream::StreamExt::map(tokio_stream::pending::<()>(), move |_| {
                let _ = &guard;
                Ok::<_, Infallible>(hyper::body::Frame::data(Bytes::new()))
            });
            return grpc_response(tonic::body::Body::new(http_body_util::StreamBody::new(s)));
        }
    };
    let body = http_body_util::StreamBody::new(tokio_stream::iter(frames));
    grpc_response(tonic::body::Body::new(body))
}

fn grpc_response(body: tonic::body::Body) -> http::Response<tonic::body::Body> {
    http::Response::builder()
        .status(200)
        .header("content-type", "application/grpc")
        .body(body)
        .unwrap()
}

/// A fake gRPC agent of one version on 127.0.0.1:0.
pub struct GrpcAgent {
    pub addr: SocketAddr,
    state: Arc<AgentState>,
    _task: tokio::task::JoinHandle<()>,
}

impl GrpcAgent {
    /// An agent whose `script` answers from the call's path and its
    /// message (the body without its frame prefix).
    pub async fn start(
        version: Version,
        script: impl Fn(&str, &[u8]) -> Answer + Send + Sync + 'static,
    ) -> GrpcAgent {
        GrpcAgent::start_with(version, move |c: &Call| {
            script(&c.path, c.body.get(5..).unwrap_or_default())
        })
        .await
    }

    /// An agent whose `script` answers from the whole call (path,
    /// metadata, body).
    pub async fn start_with(
        version: Version,
        script: impl Fn(&Call) -> Answer + Send + Sync + 'static,
    ) -> GrpcAgent {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(AgentState {
            calls: Mutex::default(),
            script: Box::new(script),
            closed: Mutex::new(false),
        });
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let mut b = tonic::transport::Server::builder();
        let router = match version {
            Version::V03 => b.add_service(RawAgent::<3>(state.clone())),
            Version::V10 => b.add_service(RawAgent::<10>(state.clone())),
        };
        let task = tokio::spawn(async move {
            let _ = router.serve_with_incoming(incoming).await;
        });
        GrpcAgent {
            addr,
            state,
            _task: task,
        }
    }

    /// `http://` and the agent's address.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state.calls.lock().unwrap().clone()
    }

    pub fn one_call(&self) -> Call {
        let c = self.calls();
        assert_eq!(c.len(), 1, "{c:?}");
        c[0].clone()
    }

    pub fn closed(&self) -> bool {
        *self.state.closed.lock().unwrap()
    }

    /// Whether a hanging answer's caller goes away within 5 s.
    pub async fn wait_closed(&self) -> bool {
        for _ in 0..500 {
            if self.closed() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }
}

/// Answers every unary call with `m`.
pub fn always(m: impl Message) -> impl Fn(&str, &[u8]) -> Answer + Send + Sync + 'static {
    let b = m.encode_to_vec();
    move |_, _| Answer::Msg(b.clone())
}

/// A proxy with a gRPC listener, and tonic clients of both versions
/// toward that listener.
pub struct GrpcFront {
    pub http: RunningProxy,
    pub grpc: GrpcServer,
    /// The HTTP agent that serves only the card, in front of a gRPC agent.
    pub card: Option<FakeUpstream>,
}

impl GrpcFront {
    /// Starts `config` with a gRPC listener on a free local address.
    pub fn start(mut config: Config) -> GrpcFront {
        let grpc_addr = super::free_local_addr().unwrap();
        config.grpc_listen = Some(grpc_addr);
        let http = proxy::start(config).unwrap();
        let grpc = GrpcServer::start(http.app.clone(), grpc_addr).unwrap();
        assert_eq!(grpc.addr, grpc_addr);
        GrpcFront {
            http,
            grpc,
            card: None,
        }
    }

    /// A proxy whose upstream is the gRPC agent at `grpc_url` (of
    /// `version`); its HTTP upstream serves only `card`. `tune` changes the
    /// config before the start.
    pub async fn of_grpc_agent(
        grpc_url: &str,
        version: Version,
        card: String,
        tune: impl FnOnce(&mut Config),
    ) -> GrpcFront {
        let card_up = FakeUpstream::start(move |_| Reply::json(200, &card)).await;
        let mut config = super::config_for(&card_up.url(), version);
        config.upstream_grpc = Some(HttpUrl::parse("upstream.grpc_url", grpc_url).unwrap());
        tune(&mut config);
        GrpcFront {
            card: Some(card_up),
            ..GrpcFront::start(config)
        }
    }

    /// `http://` and the gRPC listener's address.
    pub fn url(&self) -> String {
        format!("http://{}", self.grpc.addr)
    }

    pub async fn v10(
        &self,
    ) -> p10::a2a_service_client::A2aServiceClient<tonic::transport::Channel> {
        p10::a2a_service_client::A2aServiceClient::connect(self.url())
            .await
            .unwrap()
    }

    pub async fn v03(
        &self,
    ) -> p03::a2a_service_client::A2aServiceClient<tonic::transport::Channel> {
        p03::a2a_service_client::A2aServiceClient::connect(self.url())
            .await
            .unwrap()
    }
}
