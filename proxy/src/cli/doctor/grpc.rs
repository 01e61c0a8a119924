//! The doctor's gRPC checks: GetTask of an unknown task (NOT_FOUND, with
//! a `TASK_NOT_FOUND` ErrorInfo when the status carries details) and the
//! `--send` message, each version through its own service.

use std::sync::Arc;
use std::time::Duration;

use prost::Message as _;
use tonic::transport::Channel;

use super::quote;
use crate::config::{Config, HttpUrl};
use crate::grpc::status::{ErrorInfo, RpcStatus, ERROR_INFO_TYPE};
use crate::upstream::tls::UpstreamTls;
use crate::version::Version;

/// A channel to the proxy's gRPC listener at `url`.
fn channel(url: &HttpUrl, tls: &Arc<UpstreamTls>, timeout: Duration) -> Result<Channel, String> {
    let mut config =
        Config::new(([127, 0, 0, 1], 0).into(), "http://127.0.0.1:1").map_err(|e| e.to_string())?;
    config.agent.name = "the proxy".into();
    config.upstream_tls = tls.clone();
    config.limits.connect_timeout = timeout;
    let e = crate::grpc::upstream::endpoint(url, &config)
        .map_err(|e| e.replace("upstream.grpc_url: ", ""))?;
    Ok(crate::grpc::upstream::GrpcUpstream::new(&e, 4 << 20, timeout).channel)
}

fn request<T>(msg: T, client: Version, timeout: Duration) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.set_timeout(timeout);
    if let Ok(v) = client.as_str().parse() {
        r.metadata_mut().insert("a2a-version", v);
    }
    r
}

/// What a status says, for the table.
fn said(s: &tonic::Status) -> String {
    format!("gRPC {:?}: {}", s.code(), quote(s.message()))
}

/// The ErrorInfo reason of a status's details, if it has one.
fn reason(s: &tonic::Status) -> Option<String> {
    let st = RpcStatus::decode(s.details()).ok()?;
    let any = st.details.iter().find(|d| d.type_url == ERROR_INFO_TYPE)?;
    Some(ErrorInfo::decode(any.value.as_slice()).ok()?.reason)
}

/// GetTask of `id`, which no agent has: NOT_FOUND is what is expected.
pub(super) async fn get_task(
    url: &HttpUrl,
    client: Version,
    id: &str,
    tls: &Arc<UpstreamTls>,
    timeout: Duration,
) -> Result<(), String> {
    let ch = channel(url, tls, timeout)?;
    let answer = match client {
        Version::V03 => {
            let mut c = proto::v03::a2a_service_client::A2aServiceClient::new(ch);
            let msg = proto::v03::GetTaskRequest {
                name: format!("tasks/{id}"),
                ..Default::default()
            };
            c.get_task(request(msg, client, timeout)).await.map(|_| ())
        }
        Version::V10 => {
            let mut c = proto::v10::a2a_service_client::A2aServiceClient::new(ch);
            let msg = proto::v10::GetTaskRequest {
                id: id.to_string(),
                ..Default::default()
            };
            c.get_task(request(msg, client, timeout)).await.map(|_| ())
        }
    };
    let s = match answer {
        Ok(()) => return Err("a task nobody made was found".into()),
        Err(s) => s,
    };
    if s.code() != tonic::Code::NotFound {
        return Err(format!("{}, not NOT_FOUND", said(&s)));
    }
    match reason(&s) {
        Some(r) if r != "TASK_NOT_FOUND" => Err(format!("NOT_FOUND with ErrorInfo reason {r}")),
        _ => Ok(()),
    }
}

/// A message to `skill`: what the agent answered.
pub(super) async fn send(
    url: &HttpUrl,
    client: Version,
    skill: &str,
    tls: &Arc<UpstreamTls>,
    timeout: Duration,
) -> Result<String, String> {
    let ch = channel(url, tls, timeout)?;
    let text = super::sent_text(skill);
    let message_id = super::unknown_id();
    let task_state = |name: &str| format!("a task, state {name}");
    match client {
        Version::V03 => {
            use proto::v03 as p;
            let mut c = p::a2a_service_client::A2aServiceClient::new(ch);
            let msg = p::SendMessageRequest {
                request: Some(p::Message {
                    message_id,
                    role: p::Role::User as i32,
                    content: vec![p::Part {
                        part: Some(p::part::Part::Text(text)),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                configuration: Some(p::SendMessageConfiguration {
                    blocking: true,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let r = c.send_message(request(msg, client, timeout)).await;
            match r.map_err(|s| said(&s))?.into_inner().payload {
                Some(p::send_message_response::Payload::Task(t)) => {
                    let s = t.status.map(|s| s.state()).unwrap_or_default();
                    Ok(task_state(s.as_str_name()))
                }
                Some(p::send_message_response::Payload::Msg(_)) => Ok("a message".into()),
                None => Err("neither a task nor a message".into()),
            }
        }
        Version::V10 => {
            use proto::v10 as p;
            let mut c = p::a2a_service_client::A2aServiceClient::new(ch);
            let msg = p::SendMessageRequest {
                message: Some(p::Message {
                    message_id,
                    role: p::Role::User as i32,
                    parts: vec![p::Part {
                        content: Some(p::part::Content::Text(text)),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            };
            let r = c.send_message(request(msg, client, timeout)).await;
            match r.map_err(|s| said(&s))?.into_inner().payload {
                Some(p::send_message_response::Payload::Task(t)) => {
                    let s = t.status.map(|s| s.state()).unwrap_or_default();
                    Ok(task_state(s.as_str_name()))
                }
                Some(p::send_message_response::Payload::Message(_)) => Ok("a message".into()),
                None => Err("neither a task nor a message".into()),
            }
        }
    }
}
