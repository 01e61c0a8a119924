//! gRPC test builders shared by the suites: messages and tasks of both
//! versions' protos, and `google.rpc.Status` / `ErrorInfo` decoded
//! independently of the proxy.

use std::collections::HashMap;

use prost::Message as _;
use proto::v03 as p03;
use proto::v10 as p10;

/// The type URL of `google.rpc.ErrorInfo` in a status's details.
pub const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";

pub fn v10_msg(id: &str, text: &str) -> p10::Message {
    p10::Message {
        message_id: id.into(),
        role: p10::Role::User as i32,
        parts: vec![p10::Part {
            content: Some(p10::part::Content::Text(text.into())),
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub fn v03_msg(id: &str, text: &str) -> p03::Message {
    p03::Message {
        message_id: id.into(),
        role: p03::Role::User as i32,
        content: vec![p03::Part {
            part: Some(p03::part::Part::Text(text.into())),
            metadata: None,
        }],
        ..Default::default()
    }
}

pub fn v10_task(id: &str, state: p10::TaskState) -> p10::Task {
    p10::Task {
        id: id.into(),
        context_id: "c1".into(),
        status: Some(p10::TaskStatus {
            state: state as i32,
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub fn v03_task(id: &str, state: p03::TaskState) -> p03::Task {
    p03::Task {
        id: id.into(),
        context_id: "c1".into(),
        status: Some(p03::TaskStatus {
            state: state as i32,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `google.rpc.Status`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<AnyMsg>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnyMsg {
    #[prost(string, tag = "1")]
    pub type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// `google.rpc.ErrorInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ErrorInfo {
    #[prost(string, tag = "1")]
    pub reason: String,
    #[prost(string, tag = "2")]
    pub domain: String,
    #[prost(map = "string, string", tag = "3")]
    pub metadata: HashMap<String, String>,
}

/// The `ErrorInfo` of a status (its first detail), checking the status's
/// code is repeated in its details.
pub fn error_info(s: &tonic::Status) -> ErrorInfo {
    let st = RpcStatus::decode(s.details()).expect("grpc-status-details-bin");
    assert_eq!(st.code, s.code() as i32);
    assert_eq!(st.details[0].type_url, ERROR_INFO);
    ErrorInfo::decode(st.details[0].value.as_slice()).unwrap()
}
