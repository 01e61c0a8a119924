//! The gRPC listener's accept loop: each accepted connection is admitted
//! (TLS handshake, or the HTTP/2 preface for h2c) on its own task within a
//! bound, so a slow or silent client holds up nobody and holds its file
//! descriptor no longer than that bound; only admitted connections reach
//! the HTTP/2 server.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_stream::wrappers::ReceiverStream;

use crate::front::conn::H2_PREFACE;

/// Accepts on `listener` (TCP_NODELAY set) and yields what `admit` makes of
/// each connection within `within` (`None`: dropped). Runs until the
/// receiving side is dropped.
pub fn admitted<T, F, Fut>(
    listener: TcpListener,
    within: Duration,
    admit: F,
) -> ReceiverStream<io::Result<T>>
where
    T: Send + 'static,
    F: Fn(TcpStream, SocketAddr) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Option<T>> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let (tcp, peer) = tokio::select! {
                r = listener.accept() => match r {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(error = %e, "gRPC accept");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = tx.closed() => return,
            };
            let _ = tcp.set_nodelay(true);
            let (admit, tx) = (admit.clone(), tx.clone());
            tokio::spawn(async move {
                match tokio::time::timeout(within, admit(tcp, peer)).await {
                    Ok(Some(conn)) => {
                        let _ = tx.send(Ok(conn)).await;
                    }
                    Ok(None) => {}
                    Err(_) => tracing::debug!(%peer, "gRPC connection not admitted in time"),
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

/// An h2c connection once its client has sent the HTTP/2 preface (left
/// unread for the server); `None` for anything else.
pub async fn h2c_preface(tcp: TcpStream, peer: SocketAddr) -> Option<TcpStream> {
    let mut buf = [0u8; H2_PREFACE.len()];
    loop {
        let n = tcp.peek(&mut buf).await.ok()?;
        if n == 0 || buf[..n] != H2_PREFACE[..n] {
            tracing::debug!(%peer, "gRPC connection without the HTTP/2 preface");
            return None;
        }
        if n == H2_PREFACE.len() {
            return Some(tcp);
        }
        // Part of the preface so far: peek again once more may have come.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
