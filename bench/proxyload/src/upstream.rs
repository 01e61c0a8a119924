//! The fake agent: answers every JSON-RPC POST with the fixed Task (or, by
//! the `x-bench-mode` request header, an SSE stream of `events:N` status
//! updates, or `hold`: one event, then keep-alive comments until the client
//! leaves or [`HOLD_LIMIT`] passes).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};

use crate::http::Reader;
use crate::payload;

/// Longest life of a held stream (the benchmark ends long before).
const HOLD_LIMIT: Duration = Duration::from_secs(180);

/// Connections accepted by all fake agents (shows upstream keep-alive reuse).
pub static ACCEPTED: AtomicUsize = AtomicUsize::new(0);

/// Binds 127.0.0.1:0 and serves until the runtime stops.
pub async fn spawn(v10: bool) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            ACCEPTED.fetch_add(1, Ordering::Relaxed);
            let _ = sock.set_nodelay(true);
            tokio::spawn(async move {
                let _ = serve(sock, v10).await;
            });
        }
    });
    Ok(addr)
}

fn card(v10: bool, addr: SocketAddr) -> Vec<u8> {
    let url = format!("http://{addr}/");
    if v10 {
        format!(
            r#"{{"name":"bench","description":"bench agent","version":"1","supportedInterfaces":[{{"url":"{url}","protocolBinding":"JSONRPC","protocolVersion":"1.0"}}],"capabilities":{{"streaming":true}},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}}"#
        )
    } else {
        format!(
            r#"{{"name":"bench","description":"bench agent","version":"1","protocolVersion":"0.3.0","url":"{url}","preferredTransport":"JSONRPC","capabilities":{{"streaming":true}},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}}"#
        )
    }
    .into_bytes()
}

async fn write_whole(
    w: &mut OwnedWriteHalf,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut out = Vec::with_capacity(head.len() + body.len());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(body);
    w.write_all(&out).await
}

async fn write_chunk(w: &mut OwnedWriteHalf, data: &[u8]) -> std::io::Result<()> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    w.write_all(&out).await
}

const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";

async fn serve(sock: TcpStream, v10: bool) -> std::io::Result<()> {
    let local = sock.local_addr()?;
    let (rd, mut w) = sock.into_split();
    let mut reader = Reader::new(rd);
    let task = payload::task_response(v10);
    while let Some(head) = reader.head().await? {
        reader.body(&head, |_| {}).await?;
        if head.first_line.starts_with("GET ") {
            write_whole(&mut w, "application/json", &card(v10, local)).await?;
            continue;
        }
        match head.header("x-bench-mode") {
            Some("hold") => {
                w.write_all(SSE_HEAD).await?;
                write_chunk(&mut w, &payload::status_event(v10, 0, false)).await?;
                let started = Instant::now();
                while started.elapsed() < HOLD_LIMIT {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    write_chunk(&mut w, b": keep-alive\n\n").await?;
                }
                write_chunk(&mut w, &payload::status_event(v10, 1, true)).await?;
                w.write_all(b"0\r\n\r\n").await?;
            }
            Some(mode) if mode.starts_with("events:") => {
                let n: usize = mode["events:".len()..].parse().unwrap_or(1).max(1);
                w.write_all(SSE_HEAD).await?;
                for i in 0..n {
                    write_chunk(&mut w, &payload::status_event(v10, i, i + 1 == n)).await?;
                }
                w.write_all(b"0\r\n\r\n").await?;
            }
            _ => write_whole(&mut w, "application/json", &task).await?,
        }
    }
    Ok(())
}
