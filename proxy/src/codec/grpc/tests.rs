//! The gRPC codec made for each pair of versions: a request, an answer, a
//! stream event and errors, each in the caller's shape (its prost
//! messages, its status dialect), through the one [`Codec`] trait.

use prost::Message as _;
use proto::{convert_v03_rpc as r03, convert_v10_rpc as r10, v03 as p03, v10 as p10};
use tonic::Code;

use super::status::{ErrorInfo, RpcStatus};
use super::*;

const V03: Version = Version::V03;
const V10: Version = Version::V10;

/// The ErrorInfo a status carries.
fn info(s: &Status) -> ErrorInfo {
    let st = RpcStatus::decode(s.details()).expect("google.rpc.Status details");
    ErrorInfo::decode(st.details[0].value.as_slice()).expect("an ErrorInfo")
}

/// A JSON-RPC error response of the agent's version (its `data` in that
/// version's form), as the gRPC binding's transport reads an A2A error
/// status.
fn agent_error(code: i64, message: &str, data: serde_json::Value) -> AgentError {
    let v = serde_json::json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": code, "message": message, "data": data}});
    AgentError::Answered(serde_json::to_vec(&v).unwrap())
}

fn text03(t: &str) -> p03::Part {
    p03::Part {
        metadata: None,
        part: Some(p03::part::Part::Text(t.into())),
    }
}

fn text10(t: &str) -> p10::Part {
    p10::Part {
        content: Some(p10::part::Content::Text(t.into())),
        ..Default::default()
    }
}

fn texts10(m: &p10::Message) -> Vec<String> {
    let text = |p: &p10::Part| match &p.content {
        Some(p10::part::Content::Text(t)) => t.clone(),
        other => format!("{other:?}"),
    };
    m.parts.iter().map(text).collect()
}

fn texts03(m: &p03::Message) -> Vec<String> {
    let text = |p: &p03::Part| match &p.part {
        Some(p03::part::Part::Text(t)) => t.clone(),
        other => format!("{other:?}"),
    };
    m.content.iter().map(text).collect()
}

fn task03(state: p03::TaskState, history: &str) -> p03::Task {
    p03::Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: Some(p03::TaskStatus {
            state: state as i32,
            ..Default::default()
        }),
        history: vec![p03::Message {
            message_id: "m1".into(),
            role: p03::Role::Agent as i32,
            content: vec![text03(history)],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn task10(state: p10::TaskState, history: &str) -> p10::Task {
    p10::Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: Some(p10::TaskStatus {
            state: state as i32,
            ..Default::default()
        }),
        history: vec![p10::Message {
            message_id: "m1".into(),
            role: p10::Role::Agent as i32,
            parts: vec![text10(history)],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A v1.0 caller of a v0.3 agent: GetTask's request in v0.3's resource
/// name, the v0.3 task as a v1.0 one (without history when the caller
/// asked for none, as v0.3 reads 0 as unlimited), a `final` v0.3 status
/// update as the stream's last v1.0 event, the agent's errors in v1.0's
/// status dialect.
#[test]
fn v10_caller_of_a_v03_agent() {
    let mut c = GrpcCodec::unary(&from_v10::GET_TASK, V10, V03);
    let made = (CodecBinding::Grpc, Some(Method::GetTask), V10, V03);
    let m = c.made_for();
    assert_eq!((m.binding, m.op, m.client, m.upstream), made);
    let ask = p10::GetTaskRequest {
        id: "t1".into(),
        history_length: Some(0),
        ..Default::default()
    };
    let uq: p03::GetTaskRequest = c
        .encode_request(r10::get_task_from_pb(ask).unwrap())
        .unwrap();
    assert_eq!(uq.name, "tasks/t1");
    let got = Ok(task03(p03::TaskState::InputRequired, "earlier"));
    let task: p10::Task = c.answer(AgentMessage::plain(got)).unwrap();
    assert_eq!((task.id.as_str(), task.context_id.as_str()), ("t1", "c1"));
    let state = task.status.map(|s| s.state);
    assert_eq!(state, Some(p10::TaskState::InputRequired as i32));
    assert!(task.history.is_empty(), "{:?}", task.history);

    // Asked with history: the v0.3 message's content as v1.0 parts.
    let mut c = GrpcCodec::unary(&from_v10::GET_TASK, V10, V03);
    let ask = p10::GetTaskRequest {
        id: "t1".into(),
        ..Default::default()
    };
    c.encode_request(r10::get_task_from_pb(ask).unwrap())
        .unwrap();
    let got = Ok(task03(p03::TaskState::Working, "earlier"));
    let task = c.answer(AgentMessage::plain(got)).unwrap();
    assert_eq!(texts10(&task.history[0]), ["earlier"]);

    // An A2A error of the agent (v0.3's `data` an object), and a failure
    // of the proxy, in v1.0's dialect: the status by the v1.0 table, the
    // message as it is, `data` as the ErrorInfo's metadata.
    let data = serde_json::json!({"taskId": "t1"});
    let s = c
        .answer(AgentMessage::plain(Err(agent_error(-32002, "done", data))))
        .unwrap_err();
    assert_eq!((s.code(), s.message()), (Code::FailedPrecondition, "done"));
    let i = info(&s);
    assert_eq!(i.reason, "TASK_NOT_CANCELABLE");
    assert_eq!(i.metadata.get("taskId").map(String::as_str), Some("t1"));
    assert_eq!(
        c.error(&Failure::UpstreamTimeout).code(),
        Code::DeadlineExceeded
    );

    // A stream event: v0.3's `final: true` ends the v1.0 caller's stream.
    let c = GrpcCodec::stream(&from_v10::SUBSCRIBE, V10, V03);
    let update = |last: bool| p03::StreamResponse {
        payload: Some(p03::stream_response::Payload::StatusUpdate(
            p03::TaskStatusUpdateEvent {
                task_id: "t1".into(),
                context_id: "c1".into(),
                status: Some(p03::TaskStatus {
                    state: p03::TaskState::Completed as i32,
                    ..Default::default()
                }),
                r#final: last,
                metadata: None,
            },
        )),
    };
    let (item, last) = c.event(AgentMessage::plain(Ok(update(true))));
    let Some(p10::stream_response::Payload::StatusUpdate(u)) = item.unwrap().payload else {
        panic!("not a status update");
    };
    assert_eq!(u.task_id, "t1");
    assert_eq!(
        u.status.map(|s| s.state),
        Some(p10::TaskState::Completed as i32)
    );
    assert!(last);
    assert!(!c.event(AgentMessage::plain(Ok(update(false)))).1);
}

/// A v0.3 caller of a v1.0 agent: SendMessage's request as v1.0 parts,
/// the v1.0 answer and events as v0.3 ones, the agent's errors in the
/// dialect a2a-python 0.3 clients read (its status, the error's name
/// before the message).
#[test]
fn v03_caller_of_a_v10_agent() {
    let mut c = GrpcCodec::unary(&from_v03::SEND_MESSAGE, V03, V10);
    let m = c.made_for();
    let made = (CodecBinding::Grpc, Some(Method::SendMessage), V03, V10);
    assert_eq!((m.binding, m.op, m.client, m.upstream), made);
    let ask = p03::SendMessageRequest {
        request: Some(p03::Message {
            message_id: "m1".into(),
            role: p03::Role::User as i32,
            content: vec![text03("hello")],
            ..Default::default()
        }),
        ..Default::default()
    };
    let uq: p10::SendMessageRequest = c
        .encode_request(r03::send_params_from_pb(ask).unwrap())
        .unwrap();
    let sent = uq.message.expect("a message");
    assert_eq!(texts10(&sent), ["hello"]);
    assert_eq!(sent.role, p10::Role::User as i32);

    let answer = p10::SendMessageResponse {
        payload: Some(p10::send_message_response::Payload::Task(task10(
            p10::TaskState::Canceled,
            "before",
        ))),
    };
    let out: p03::SendMessageResponse = c.answer(AgentMessage::plain(Ok(answer))).unwrap();
    let Some(p03::send_message_response::Payload::Task(task)) = out.payload else {
        panic!("not a task");
    };
    let state = task.status.map(|s| s.state);
    assert_eq!(state, Some(p03::TaskState::Cancelled as i32));
    assert_eq!(texts03(&task.history[0]), ["before"]);

    // v1.0's `data`: an ErrorInfo and a value, the value v0.3's `data`.
    let data = serde_json::json!([
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
         "reason": "TASK_NOT_CANCELABLE", "domain": "a2a-protocol.org"},
        {"@type": "type.googleapis.com/google.protobuf.Value", "value": {"why": "done"}}
    ]);
    let s = c
        .answer(AgentMessage::plain(Err(agent_error(-32002, "done", data))))
        .unwrap_err();
    assert_eq!(s.code(), Code::Unimplemented);
    assert_eq!(s.message(), "TaskNotCancelableError: done");
    let i = info(&s);
    assert_eq!(i.reason, "TASK_NOT_CANCELABLE");
    assert_eq!(i.metadata.get("why").map(String::as_str), Some("done"));
    // The proxy's failure, and the agent's transport condition, with the
    // error's name before the message.
    let s = c.error(&Failure::UpstreamTimeout);
    assert_eq!(s.code(), Code::DeadlineExceeded);
    assert!(s.message().contains(": "), "{}", s.message());
    let failed = Err(AgentError::Failed(Failure::UpstreamTimeout));
    let t = c.answer(AgentMessage::plain(failed)).unwrap_err();
    assert_eq!((t.code(), t.message()), (s.code(), s.message()));

    let c = GrpcCodec::stream(&from_v03::SEND_STREAMING, V03, V10);
    let event = p10::StreamResponse {
        payload: Some(p10::stream_response::Payload::Message(p10::Message {
            message_id: "m2".into(),
            role: p10::Role::Agent as i32,
            parts: vec![text10("streamed")],
            ..Default::default()
        })),
    };
    let (item, last) = c.event(AgentMessage::plain(Ok(event)));
    let Some(p03::stream_response::Payload::Msg(msg)) = item.unwrap().payload else {
        panic!("not a message");
    };
    assert_eq!(texts03(&msg), ["streamed"]);
    assert_eq!(msg.role, p03::Role::Agent as i32);
    assert!(!last);
}

/// The call's own step runs on the answer in the caller's version, between
/// the translation and the encoding; a refusal of the caller reaches it as
/// the agent gave it, in either version.
#[test]
fn the_calls_step_and_refusals() {
    let c = GrpcCodec::unary(&from_v10::GET_TASK, V10, V03);
    let mut seen = None;
    let mut then = |mut t: translate::v10::task::Task| {
        seen = Some(serde_json::to_value(&t).unwrap()["status"]["state"].clone());
        t.id = "restored".into();
        Ok(t)
    };
    let got = Ok(task03(p03::TaskState::Working, "x"));
    let then = Some(&mut then as Then<'_, _>);
    let task = c.answer(AgentMessage { got, then }).unwrap();
    assert_eq!(task.id, "restored");
    assert_eq!(seen, Some(serde_json::json!("TASK_STATE_WORKING")));

    fn refused<T>() -> Result<T, AgentError> {
        Err(AgentError::Refused(Status::permission_denied("no")))
    }
    let c10 = GrpcCodec::stream(&from_v10::SUBSCRIBE, V10, V03);
    let s10 = c10.event(AgentMessage::plain(refused())).0;
    let c03 = GrpcCodec::stream(&from_v03::SUBSCRIBE, V03, V10);
    let s03 = c03.event(AgentMessage::plain(refused())).0;
    for s in [s10.unwrap_err(), s03.unwrap_err()] {
        assert_eq!((s.code(), s.message()), (Code::PermissionDenied, "no"));
    }
}
