//! The admin listener (`admin_listen`, off unless set): an address of its
//! own, apart from the HTTP and gRPC listeners clients reach, answering
//! `POST /admin/reload` (the config file read again, as SIGHUP does:
//! crate::reload) and nothing else. It has no authentication of its own:
//! bind it to loopback or a management network only.
//!
//! HTTP/1.1 on hyper, its own thread and runtime; at most
//! [`MAX_CONNECTIONS`] connections at once, each request head within
//! [`HEAD_TIMEOUT`], the body not read.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use serde_json::json;
use tokio::sync::oneshot;

use crate::reload::Reloader;

/// Connections served at once; more wait in the kernel's backlog.
pub const MAX_CONNECTIONS: usize = 16;
/// A request head's longest wait.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// The running admin listener; stopped by [`AdminServer::stop`] or drop.
pub struct AdminServer {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

fn answer(status: u16, body: serde_json::Value) -> http::Response<Full<Bytes>> {
    let mut r = http::Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// One request: `POST /admin/reload` reloads; anything else is refused.
async fn handle(
    reloader: Arc<Reloader>,
    req: http::Request<hyper::body::Incoming>,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    if req.uri().path() != "/admin/reload" {
        return Ok(answer(404, json!({"error": "not found"})));
    }
    if req.method() != http::Method::POST {
        let mut r = answer(405, json!({"error": "POST /admin/reload"}));
        r.headers_mut()
            .insert(http::header::ALLOW, http::HeaderValue::from_static("POST"));
        return Ok(r);
    }
    tracing::info!("POST /admin/reload: reloading the config file");
    let done = tokio::task::spawn_blocking(move || reloader.reload()).await;
    Ok(match done {
        Ok(Ok(r)) => answer(
            200,
            json!({"status": "reloaded", "added": r.added, "removed": r.removed, "kept": r.kept}),
        ),
        Ok(Err(e)) => answer(
            422,
            json!({"status": "refused", "key": e.key, "error": e.to_string()}),
        ),
        Err(_) => answer(
            500,
            json!({"status": "refused", "error": "the reload did not end"}),
        ),
    })
}

impl AdminServer {
    /// Binds `addr` now (errors are reported here) and serves it on a
    /// thread of its own.
    pub fn start(addr: SocketAddr, reloader: Arc<Reloader>) -> std::io::Result<AdminServer> {
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (tx, mut rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("a2a-admin".into())
            .spawn(move || {
                rt.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                        tracing::error!("admin listener unusable");
                        return;
                    };
                    tracing::info!(%addr, "admin listening (POST /admin/reload)");
                    let gate = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
                    loop {
                        let permit = tokio::select! {
                            _ = &mut rx => return,
                            p = gate.clone().acquire_owned() => p,
                        };
                        let Ok(permit) = permit else { return };
                        let stream = tokio::select! {
                            _ = &mut rx => return,
                            s = listener.accept() => s,
                        };
                        let Ok((stream, _)) = stream else { continue };
                        let reloader = reloader.clone();
                        tokio::spawn(async move {
                            let _permit = permit;
                            let svc = hyper::service::service_fn(move |req| {
                                handle(reloader.clone(), req)
                            });
                            let conn = hyper::server::conn::http1::Builder::new()
                                .timer(hyper_util::rt::TokioTimer::new())
                                .header_read_timeout(HEAD_TIMEOUT)
                                .keep_alive(false)
                                .serve_connection(hyper_util::rt::TokioIo::new(stream), svc);
                            // The reload itself is bounded by its file
                            // read; the whole exchange by a minute.
                            let _ = tokio::time::timeout(Duration::from_secs(60), conn).await;
                        });
                    }
                })
            })?;
        Ok(AdminServer {
            addr,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// Stops accepting and waits for its thread.
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for AdminServer {
    fn drop(&mut self) {
        self.stop();
    }
}
