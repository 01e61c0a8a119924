//! Field numbers of the project's own protos, checked against hand-written
//! protobuf bytes (numbers taken from MAPPING-FACTS §3.2 / §4), plus prost
//! round trips and the gRPC service paths.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use prost::Message as _;
use proto::pbjson_types::{value::Kind, Struct, Timestamp, Value};
use proto::{v03, v10};

// ---------------------------------------------------------------------------
// A tiny protobuf writer: only what the tests need.

#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn new() -> Self {
        Self::default()
    }
    fn varint_raw(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }
    fn key(&mut self, field: u32, wire_type: u8) {
        self.varint_raw((u64::from(field) << 3) | u64::from(wire_type));
    }
    /// Wire type 0.
    fn varint(mut self, field: u32, v: u64) -> Self {
        self.key(field, 0);
        self.varint_raw(v);
        self
    }
    /// Wire type 2.
    fn bytes(mut self, field: u32, b: &[u8]) -> Self {
        self.key(field, 2);
        self.varint_raw(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn str(self, field: u32, s: &str) -> Self {
        self.bytes(field, s.as_bytes())
    }
    fn msg(self, field: u32, m: W) -> Self {
        self.bytes(field, &m.0)
    }
    fn done(self) -> Vec<u8> {
        self.0
    }
}

/// `google.protobuf.Struct { fields: { key: Value { string_value = 3 } } }`.
fn struct_one(key: &str, string_value: &str) -> W {
    let value = W::new().str(3, string_value);
    let entry = W::new().str(1, key).msg(2, value);
    W::new().msg(1, entry)
}

fn pb_struct(pairs: &[(&str, &str)]) -> Struct {
    Struct {
        fields: pairs
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_owned(),
                    Value {
                        kind: Some(Kind::StringValue((*v).to_owned())),
                    },
                )
            })
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect(),
    }
}

// ---------------------------------------------------------------------------
// Part (§4.2)

#[test]
fn part_field_2_is_file_part_in_v03_and_raw_bytes_in_v10() {
    let file_part = W::new()
        .str(1, "https://x/f")
        .str(3, "text/plain")
        .str(4, "f.txt");
    let inner = file_part.done();
    let bytes = W::new().bytes(2, &inner).done();

    let p03 = v03::Part::decode(bytes.as_slice()).unwrap();
    let Some(v03::part::Part::File(f)) = p03.part else {
        panic!("v0.3 field 2 must be FilePart, got {:?}", p03.part)
    };
    assert_eq!(
        f.file,
        Some(v03::file_part::File::FileWithUri("https://x/f".into()))
    );
    assert_eq!(f.mime_type, "text/plain");
    assert_eq!(f.name, "f.txt");

    let p10 = v10::Part::decode(bytes.as_slice()).unwrap();
    assert_eq!(p10.content, Some(v10::part::Content::Raw(inner)));
}

#[test]
fn file_part_bytes_is_field_2() {
    let bytes = W::new().msg(2, W::new().bytes(2, &[0, 1, 255])).done();
    let p = v03::Part::decode(bytes.as_slice()).unwrap();
    let Some(v03::part::Part::File(f)) = p.part else {
        panic!("expected file")
    };
    assert_eq!(
        f.file,
        Some(v03::file_part::File::FileWithBytes(vec![0, 1, 255]))
    );
}

#[test]
fn part_field_3_is_data_part_in_v03_and_url_in_v10() {
    // DataPart { data = 1: Struct {} } encodes as 0a 00, which is valid UTF-8.
    let data_part = W::new().msg(1, W::new());
    let bytes = W::new().msg(3, data_part).done();

    let p03 = v03::Part::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        p03.part,
        Some(v03::part::Part::Data(v03::DataPart {
            data: Some(Struct::default())
        }))
    );
    let p10 = v10::Part::decode(bytes.as_slice()).unwrap();
    assert_eq!(p10.content, Some(v10::part::Content::Url("\n\0".into())));
}

#[test]
fn part_text_metadata_filename_media_type() {
    let bytes = W::new().str(1, "hi").msg(4, struct_one("k", "v")).done();
    let p03 = v03::Part::decode(bytes.as_slice()).unwrap();
    assert_eq!(p03.part, Some(v03::part::Part::Text("hi".into())));
    assert_eq!(p03.metadata, Some(pb_struct(&[("k", "v")])));

    // In v1.0 field 4 is `google.protobuf.Value data` (metadata is 5): the
    // Struct's length-delimited field 1 clashes with Value's varint field 1.
    assert!(v10::Part::decode(bytes.as_slice()).is_err());

    let bytes = W::new()
        .str(1, "hi")
        .msg(5, struct_one("k", "v"))
        .str(6, "a.txt")
        .str(7, "text/plain")
        .done();
    let p10 = v10::Part::decode(bytes.as_slice()).unwrap();
    assert_eq!(p10.content, Some(v10::part::Content::Text("hi".into())));
    assert_eq!(p10.metadata, Some(pb_struct(&[("k", "v")])));
    assert_eq!(p10.filename, "a.txt");
    assert_eq!(p10.media_type, "text/plain");
}

#[test]
fn part_data_value_is_field_4_in_v10() {
    let value = W::new().msg(5, struct_one("a", "b")); // Value.struct_value = 5
    let bytes = W::new().msg(4, value).done();
    let p10 = v10::Part::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        p10.content,
        Some(v10::part::Content::Data(Value {
            kind: Some(Kind::StructValue(pb_struct(&[("a", "b")])))
        }))
    );
}

// ---------------------------------------------------------------------------
// Message (§4.1), TaskStatus (§4.4), Task (§4.3)

#[test]
fn message_fields() {
    let part = W::new().str(1, "hello");
    let bytes = W::new()
        .str(1, "m1")
        .str(2, "c1")
        .str(3, "t1")
        .varint(4, 2)
        .msg(5, part)
        .msg(6, struct_one("k", "v"))
        .str(7, "urn:ext")
        .str(8, "t0")
        .done();

    let m03 = v03::Message::decode(bytes.as_slice()).unwrap();
    assert_eq!(m03.message_id, "m1");
    assert_eq!(m03.context_id, "c1");
    assert_eq!(m03.task_id, "t1");
    assert_eq!(m03.role(), v03::Role::Agent);
    assert_eq!(m03.content.len(), 1);
    assert_eq!(
        m03.content[0].part,
        Some(v03::part::Part::Text("hello".into()))
    );
    assert_eq!(m03.metadata, Some(pb_struct(&[("k", "v")])));
    assert_eq!(m03.extensions, vec!["urn:ext".to_owned()]);

    let m10 = v10::Message::decode(bytes.as_slice()).unwrap();
    assert_eq!(m10.message_id, "m1");
    assert_eq!(m10.context_id, "c1");
    assert_eq!(m10.task_id, "t1");
    assert_eq!(m10.role(), v10::Role::Agent);
    assert_eq!(
        m10.parts[0].content,
        Some(v10::part::Content::Text("hello".into()))
    );
    assert_eq!(m10.metadata, Some(pb_struct(&[("k", "v")])));
    assert_eq!(m10.extensions, vec!["urn:ext".to_owned()]);
    assert_eq!(m10.reference_task_ids, vec!["t0".to_owned()]);
}

#[test]
fn task_and_status_fields() {
    let status = W::new()
        .varint(1, 5)
        .msg(2, W::new().str(1, "m1"))
        .msg(3, W::new().varint(1, 1_700_000_000).varint(2, 5));
    let bytes = W::new()
        .str(1, "t1")
        .str(2, "c1")
        .msg(3, status)
        .msg(4, W::new().str(1, "a1"))
        .msg(5, W::new().str(1, "m0"))
        .msg(6, struct_one("k", "v"))
        .done();

    let t03 = v03::Task::decode(bytes.as_slice()).unwrap();
    assert_eq!((t03.id.as_str(), t03.context_id.as_str()), ("t1", "c1"));
    let s03 = t03.status.unwrap();
    assert_eq!(s03.state(), v03::TaskState::Cancelled);
    assert_eq!(s03.update.unwrap().message_id, "m1");
    assert_eq!(
        s03.timestamp,
        Some(Timestamp {
            seconds: 1_700_000_000,
            nanos: 5
        })
    );
    assert_eq!(t03.artifacts[0].artifact_id, "a1");
    assert_eq!(t03.history[0].message_id, "m0");
    assert!(t03.metadata.is_some());

    let t10 = v10::Task::decode(bytes.as_slice()).unwrap();
    let s10 = t10.status.unwrap();
    assert_eq!(s10.state(), v10::TaskState::Canceled);
    assert_eq!(s10.message.unwrap().message_id, "m1");
    assert_eq!(s10.timestamp.unwrap().seconds, 1_700_000_000);
    assert_eq!(t10.artifacts[0].artifact_id, "a1");
    assert_eq!(t10.history[0].message_id, "m0");
    assert!(t10.metadata.is_some());
}

#[test]
fn task_state_numbers() {
    let expect03 = [
        v03::TaskState::Unspecified,
        v03::TaskState::Submitted,
        v03::TaskState::Working,
        v03::TaskState::Completed,
        v03::TaskState::Failed,
        v03::TaskState::Cancelled,
        v03::TaskState::InputRequired,
        v03::TaskState::Rejected,
        v03::TaskState::AuthRequired,
    ];
    let expect10 = [
        v10::TaskState::Unspecified,
        v10::TaskState::Submitted,
        v10::TaskState::Working,
        v10::TaskState::Completed,
        v10::TaskState::Failed,
        v10::TaskState::Canceled,
        v10::TaskState::InputRequired,
        v10::TaskState::Rejected,
        v10::TaskState::AuthRequired,
    ];
    for (n, (a, b)) in expect03.iter().zip(expect10.iter()).enumerate() {
        let bytes = W::new().varint(1, n as u64).done();
        assert_eq!(
            v03::TaskStatus::decode(bytes.as_slice()).unwrap().state(),
            *a
        );
        assert_eq!(
            v10::TaskStatus::decode(bytes.as_slice()).unwrap().state(),
            *b
        );
    }
    assert_eq!(v03::Role::User as i32, 1);
    assert_eq!(v10::Role::User as i32, 1);
    assert_eq!(v03::Role::Agent as i32, 2);
    assert_eq!(v10::Role::Agent as i32, 2);
}

// ---------------------------------------------------------------------------
// Artifact (§4.5): renumbered

#[test]
fn artifact_is_renumbered() {
    let bytes = W::new().str(1, "a1").str(2, "two").str(3, "three").done();
    let a03 = v03::Artifact::decode(bytes.as_slice()).unwrap();
    assert_eq!(a03.artifact_id, "a1");
    assert_eq!(a03.name, "three"); // field 2 is unknown in v0.3
    assert_eq!(a03.description, "");
    let a10 = v10::Artifact::decode(bytes.as_slice()).unwrap();
    assert_eq!(a10.name, "two");
    assert_eq!(a10.description, "three");

    let b = W::new().str(4, "four").done();
    assert_eq!(
        v03::Artifact::decode(b.as_slice()).unwrap().description,
        "four"
    );
    // In v1.0 field 4 is `repeated Part`: "four" is not a valid Part.
    assert!(v10::Artifact::decode(b.as_slice()).is_err());

    let part = W::new().str(1, "p");
    let b03 = W::new()
        .msg(5, W::new().str(1, "p"))
        .msg(6, struct_one("k", "v"))
        .str(7, "urn:e")
        .done();
    let a03 = v03::Artifact::decode(b03.as_slice()).unwrap();
    assert_eq!(a03.parts[0].part, Some(v03::part::Part::Text("p".into())));
    assert_eq!(a03.metadata, Some(pb_struct(&[("k", "v")])));
    assert_eq!(a03.extensions, vec!["urn:e".to_owned()]);

    let b10 = W::new()
        .msg(4, part)
        .msg(5, struct_one("k", "v"))
        .str(6, "urn:e")
        .done();
    let a10 = v10::Artifact::decode(b10.as_slice()).unwrap();
    assert_eq!(
        a10.parts[0].content,
        Some(v10::part::Content::Text("p".into()))
    );
    assert_eq!(a10.metadata, Some(pb_struct(&[("k", "v")])));
    assert_eq!(a10.extensions, vec!["urn:e".to_owned()]);
}

// ---------------------------------------------------------------------------
// Events (§4.6, §4.7), StreamResponse (§4.9)

#[test]
fn status_update_final_4_vs_metadata_4() {
    let b = W::new().str(1, "t").str(2, "c").varint(4, 1).done();
    let e03 = v03::TaskStatusUpdateEvent::decode(b.as_slice()).unwrap();
    assert!(e03.r#final);
    // v1.0 field 4 is a Struct: a varint there is a wire-type error.
    assert!(v10::TaskStatusUpdateEvent::decode(b.as_slice()).is_err());

    let b = W::new().str(1, "t").msg(5, struct_one("k", "v")).done();
    let e03 = v03::TaskStatusUpdateEvent::decode(b.as_slice()).unwrap();
    assert_eq!(e03.metadata, Some(pb_struct(&[("k", "v")])));
    let e10 = v10::TaskStatusUpdateEvent::decode(b.as_slice()).unwrap();
    assert_eq!(e10.metadata, None); // field 5 is unknown in v1.0

    let b = W::new().str(1, "t").msg(4, struct_one("k", "v")).done();
    let e10 = v10::TaskStatusUpdateEvent::decode(b.as_slice()).unwrap();
    assert_eq!(e10.task_id, "t");
    assert_eq!(e10.metadata, Some(pb_struct(&[("k", "v")])));
}

#[test]
fn artifact_update_numbering_is_shared() {
    let b = W::new()
        .str(1, "t")
        .str(2, "c")
        .msg(3, W::new().str(1, "a1"))
        .varint(4, 1)
        .varint(5, 1)
        .msg(6, struct_one("k", "v"))
        .done();
    let e03 = v03::TaskArtifactUpdateEvent::decode(b.as_slice()).unwrap();
    let e10 = v10::TaskArtifactUpdateEvent::decode(b.as_slice()).unwrap();
    assert_eq!(
        (
            e03.task_id.as_str(),
            e03.context_id.as_str(),
            e03.append,
            e03.last_chunk
        ),
        ("t", "c", true, true)
    );
    assert_eq!(
        (
            e10.task_id.as_str(),
            e10.context_id.as_str(),
            e10.append,
            e10.last_chunk
        ),
        ("t", "c", true, true)
    );
    assert_eq!(e03.artifact.unwrap().artifact_id, "a1");
    assert_eq!(e10.artifact.unwrap().artifact_id, "a1");
    assert!(e03.metadata.is_some() && e10.metadata.is_some());
}

#[test]
fn stream_response_oneof_numbers() {
    use v03::stream_response::Payload as P03;
    use v10::stream_response::Payload as P10;
    let inner = || W::new().str(1, "x");
    for n in 1..=4u32 {
        let b = W::new().msg(n, inner()).done();
        let s03 = v03::StreamResponse::decode(b.as_slice()).unwrap().payload;
        let s10 = v10::StreamResponse::decode(b.as_slice()).unwrap().payload;
        match (n, s03, s10) {
            (1, Some(P03::Task(a)), Some(P10::Task(b))) => {
                assert_eq!((a.id, b.id), ("x".into(), "x".into()))
            }
            (2, Some(P03::Msg(a)), Some(P10::Message(b))) => {
                assert_eq!((a.message_id, b.message_id), ("x".into(), "x".into()))
            }
            (3, Some(P03::StatusUpdate(a)), Some(P10::StatusUpdate(b))) => {
                assert_eq!((a.task_id, b.task_id), ("x".into(), "x".into()))
            }
            (4, Some(P03::ArtifactUpdate(a)), Some(P10::ArtifactUpdate(b))) => {
                assert_eq!((a.task_id, b.task_id), ("x".into(), "x".into()))
            }
            other => panic!("field {n}: {other:?}"),
        }
    }
    // SendMessageResponse: task 1, message 2 in both.
    let b = W::new().msg(2, inner()).done();
    assert!(matches!(
        v03::SendMessageResponse::decode(b.as_slice())
            .unwrap()
            .payload,
        Some(v03::send_message_response::Payload::Msg(_))
    ));
    assert!(matches!(
        v10::SendMessageResponse::decode(b.as_slice())
            .unwrap()
            .payload,
        Some(v10::send_message_response::Payload::Message(_))
    ));
}

// ---------------------------------------------------------------------------
// SendMessage request and configuration (§4.8)

#[test]
fn send_message_request_message_1_vs_2() {
    let msg = || W::new().str(1, "m1");
    let b = W::new().msg(1, msg()).done();
    let r03 = v03::SendMessageRequest::decode(b.as_slice()).unwrap();
    assert_eq!(r03.request.unwrap().message_id, "m1");
    // v1.0 field 1 is `string tenant`: the Message bytes land there.
    let r10 = v10::SendMessageRequest::decode(b.as_slice()).unwrap();
    assert_eq!(r10.tenant, "\n\u{2}m1");
    assert!(r10.message.is_none());

    let b = W::new()
        .str(1, "tenant-a")
        .msg(2, msg())
        .msg(3, W::new().str(1, "text/plain"))
        .msg(4, struct_one("k", "v"))
        .done();
    let r10 = v10::SendMessageRequest::decode(b.as_slice()).unwrap();
    assert_eq!(r10.tenant, "tenant-a");
    assert_eq!(r10.message.unwrap().message_id, "m1");
    assert_eq!(
        r10.configuration.unwrap().accepted_output_modes,
        vec!["text/plain".to_owned()]
    );
    assert!(r10.metadata.is_some());

    let b = W::new()
        .msg(1, msg())
        .msg(2, W::new().str(1, "text/plain"))
        .msg(3, struct_one("k", "v"))
        .done();
    let r03 = v03::SendMessageRequest::decode(b.as_slice()).unwrap();
    assert_eq!(
        r03.configuration.unwrap().accepted_output_modes,
        vec!["text/plain".to_owned()]
    );
    assert!(r03.metadata.is_some());
}

#[test]
fn send_message_configuration_fields() {
    let b = W::new()
        .str(1, "a/b")
        .msg(2, W::new().str(1, "id-1").str(2, "https://hook"))
        .varint(3, 7)
        .varint(4, 1)
        .done();
    let c03 = v03::SendMessageConfiguration::decode(b.as_slice()).unwrap();
    assert_eq!(c03.accepted_output_modes, vec!["a/b".to_owned()]);
    let pn = c03.push_notification.unwrap();
    assert_eq!((pn.id.as_str(), pn.url.as_str()), ("id-1", "https://hook"));
    assert_eq!(c03.history_length, 7);
    assert!(c03.blocking);

    let c10 = v10::SendMessageConfiguration::decode(b.as_slice()).unwrap();
    // v1.0 #2 is TaskPushNotificationConfig {tenant 1, id 2, ...}.
    let pn = c10.task_push_notification_config.unwrap();
    assert_eq!(
        (pn.tenant.as_str(), pn.id.as_str()),
        ("id-1", "https://hook")
    );
    assert_eq!(c10.history_length, Some(7));
    assert!(c10.return_immediately);

    // `optional` presence: an explicit 0 is kept in v1.0.
    let b = W::new().varint(3, 0).done();
    assert_eq!(
        v10::SendMessageConfiguration::decode(b.as_slice())
            .unwrap()
            .history_length,
        Some(0)
    );
    assert_eq!(
        v10::SendMessageConfiguration::decode(&[][..])
            .unwrap()
            .history_length,
        None
    );
}

// ---------------------------------------------------------------------------
// Push notification configs (§4.10)

#[test]
fn push_config_shapes() {
    let auth = || W::new().str(1, "Bearer").str(2, "secret");
    let b = W::new()
        .str(1, "tasks/t1/pushNotificationConfigs/p1")
        .msg(
            2,
            W::new()
                .str(1, "p1")
                .str(2, "https://hook")
                .str(3, "tok")
                .msg(4, auth()),
        )
        .done();
    let c03 = v03::TaskPushNotificationConfig::decode(b.as_slice()).unwrap();
    assert_eq!(c03.name, "tasks/t1/pushNotificationConfigs/p1");
    let p = c03.push_notification_config.unwrap();
    assert_eq!(
        (p.id.as_str(), p.url.as_str(), p.token.as_str()),
        ("p1", "https://hook", "tok")
    );
    let a = p.authentication.unwrap();
    assert_eq!(a.schemes, vec!["Bearer".to_owned()]);
    assert_eq!(a.credentials, "secret");

    let b = W::new()
        .str(1, "ten")
        .str(2, "p1")
        .str(3, "t1")
        .str(4, "https://hook")
        .str(5, "tok")
        .msg(6, auth())
        .done();
    let c10 = v10::TaskPushNotificationConfig::decode(b.as_slice()).unwrap();
    assert_eq!(
        (
            c10.tenant.as_str(),
            c10.id.as_str(),
            c10.task_id.as_str(),
            c10.url.as_str(),
            c10.token.as_str()
        ),
        ("ten", "p1", "t1", "https://hook", "tok")
    );
    let a = c10.authentication.unwrap();
    assert_eq!(
        (a.scheme.as_str(), a.credentials.as_str()),
        ("Bearer", "secret")
    );

    let b = W::new()
        .str(1, "tasks/t1")
        .str(2, "p1")
        .msg(3, W::new().str(1, "n"))
        .done();
    let r = v03::CreateTaskPushNotificationConfigRequest::decode(b.as_slice()).unwrap();
    assert_eq!(
        (r.parent.as_str(), r.config_id.as_str()),
        ("tasks/t1", "p1")
    );
    assert_eq!(r.config.unwrap().name, "n");
}

// ---------------------------------------------------------------------------
// Other requests (§4.11)

#[test]
fn request_ids_and_tenants() {
    let b = W::new().str(1, "tasks/t1").varint(2, 3).done();
    let g03 = v03::GetTaskRequest::decode(b.as_slice()).unwrap();
    assert_eq!((g03.name.as_str(), g03.history_length), ("tasks/t1", 3));

    let b = W::new().str(1, "ten").str(2, "t1").varint(3, 0).done();
    let g10 = v10::GetTaskRequest::decode(b.as_slice()).unwrap();
    assert_eq!(
        (g10.tenant.as_str(), g10.id.as_str(), g10.history_length),
        ("ten", "t1", Some(0))
    );

    let c10 = v10::CancelTaskRequest::decode(
        W::new()
            .str(1, "ten")
            .str(2, "t1")
            .msg(3, struct_one("k", "v"))
            .done()
            .as_slice(),
    )
    .unwrap();
    assert_eq!((c10.tenant.as_str(), c10.id.as_str()), ("ten", "t1"));
    assert!(c10.metadata.is_some());

    let s10 =
        v10::SubscribeToTaskRequest::decode(W::new().str(1, "ten").str(2, "t1").done().as_slice())
            .unwrap();
    assert_eq!((s10.tenant.as_str(), s10.id.as_str()), ("ten", "t1"));

    let ids = W::new().str(1, "ten").str(2, "t1").str(3, "p1").done();
    let g = v10::GetTaskPushNotificationConfigRequest::decode(ids.as_slice()).unwrap();
    let d = v10::DeleteTaskPushNotificationConfigRequest::decode(ids.as_slice()).unwrap();
    assert_eq!(
        (g.tenant.as_str(), g.task_id.as_str(), g.id.as_str()),
        ("ten", "t1", "p1")
    );
    assert_eq!(
        (d.tenant.as_str(), d.task_id.as_str(), d.id.as_str()),
        ("ten", "t1", "p1")
    );

    // ListTaskPushNotificationConfigsRequest: tenant is 4, task_id is 1.
    let l10 = v10::ListTaskPushNotificationConfigsRequest::decode(
        W::new()
            .str(1, "t1")
            .varint(2, 10)
            .str(3, "pt")
            .str(4, "ten")
            .done()
            .as_slice(),
    )
    .unwrap();
    assert_eq!(
        (
            l10.task_id.as_str(),
            l10.page_size,
            l10.page_token.as_str(),
            l10.tenant.as_str()
        ),
        ("t1", 10, "pt", "ten")
    );
    let l03 = v03::ListTaskPushNotificationConfigRequest::decode(
        W::new()
            .str(1, "tasks/t1")
            .varint(2, 10)
            .str(3, "pt")
            .done()
            .as_slice(),
    )
    .unwrap();
    assert_eq!(
        (l03.parent.as_str(), l03.page_size, l03.page_token.as_str()),
        ("tasks/t1", 10, "pt")
    );

    let lt = v10::ListTasksRequest::decode(
        W::new()
            .str(1, "ten")
            .str(2, "c1")
            .varint(3, 2)
            .varint(4, 50)
            .str(5, "pt")
            .varint(6, 1)
            .msg(7, W::new().varint(1, 10))
            .varint(8, 1)
            .done()
            .as_slice(),
    )
    .unwrap();
    assert_eq!(lt.tenant, "ten");
    assert_eq!(lt.context_id, "c1");
    assert_eq!(lt.status(), v10::TaskState::Working);
    assert_eq!(lt.page_size, Some(50));
    assert_eq!(lt.page_token, "pt");
    assert_eq!(lt.history_length, Some(1));
    assert_eq!(lt.status_timestamp_after.unwrap().seconds, 10);
    assert_eq!(lt.include_artifacts, Some(true));

    let ltr = v10::ListTasksResponse::decode(
        W::new()
            .msg(1, W::new().str(1, "t1"))
            .str(2, "next")
            .varint(3, 50)
            .varint(4, 99)
            .done()
            .as_slice(),
    )
    .unwrap();
    assert_eq!(ltr.tasks[0].id, "t1");
    assert_eq!(
        (ltr.next_page_token.as_str(), ltr.page_size, ltr.total_size),
        ("next", 50, 99)
    );

    let card_req =
        v10::GetExtendedAgentCardRequest::decode(W::new().str(1, "ten").done().as_slice()).unwrap();
    assert_eq!(card_req.tenant, "ten");
}

// ---------------------------------------------------------------------------
// AgentCard (§4.12 – §4.15)

#[test]
fn agent_card_field_3_is_url_in_v03_and_interfaces_in_v10() {
    let iface = W::new()
        .str(1, "u")
        .str(2, "GRPC")
        .str(3, "ten")
        .str(4, "1.0");
    let b = W::new().msg(3, iface).done();
    let c10 = v10::AgentCard::decode(b.as_slice()).unwrap();
    let i = &c10.supported_interfaces[0];
    assert_eq!(
        (
            i.url.as_str(),
            i.protocol_binding.as_str(),
            i.tenant.as_str(),
            i.protocol_version.as_str()
        ),
        ("u", "GRPC", "ten", "1.0")
    );
    let c03 = v03::AgentCard::decode(b.as_slice()).unwrap();
    assert_eq!(c03.url, "\n\u{1}u\u{12}\u{4}GRPC\u{1a}\u{3}ten\"\u{3}1.0");
}

#[test]
fn agent_card_field_13_is_bool_in_v03_and_signatures_in_v10() {
    let b = W::new().varint(13, 1).done();
    assert!(
        v03::AgentCard::decode(b.as_slice())
            .unwrap()
            .supports_authenticated_extended_card
    );
    assert!(v10::AgentCard::decode(b.as_slice()).is_err());

    let sig = || {
        W::new()
            .str(1, "prot")
            .str(2, "sig")
            .msg(3, struct_one("kid", "k1"))
    };
    let b = W::new().msg(13, sig()).done();
    let s = &v10::AgentCard::decode(b.as_slice()).unwrap().signatures[0];
    assert_eq!(
        (s.protected.as_str(), s.signature.as_str()),
        ("prot", "sig")
    );
    assert_eq!(s.header, Some(pb_struct(&[("kid", "k1")])));

    let b = W::new().msg(17, sig()).done();
    let s = &v03::AgentCard::decode(b.as_slice()).unwrap().signatures[0];
    assert_eq!(
        (s.protected.as_str(), s.signature.as_str()),
        ("prot", "sig")
    );
}

#[test]
fn agent_card_field_14_is_transport_in_v03_and_icon_in_v10() {
    let b = W::new()
        .str(14, "GRPC")
        .str(16, "0.3.0")
        .str(18, "https://icon")
        .done();
    let c03 = v03::AgentCard::decode(b.as_slice()).unwrap();
    assert_eq!(c03.preferred_transport, "GRPC");
    assert_eq!(c03.protocol_version, "0.3.0");
    assert_eq!(c03.icon_url, "https://icon");
    let c10 = v10::AgentCard::decode(b.as_slice()).unwrap();
    assert_eq!(c10.icon_url.as_deref(), Some("GRPC"));
}

#[test]
fn agent_card_shared_fields() {
    let security = || {
        let list = W::new().str(1, "read");
        W::new().msg(1, W::new().str(1, "oauth").msg(2, list))
    };
    let skill = W::new()
        .str(1, "s1")
        .str(2, "Skill")
        .str(3, "does")
        .str(4, "tag")
        .str(5, "ex")
        .str(6, "in/x")
        .str(7, "out/x")
        .msg(8, security());
    let caps = W::new().varint(1, 1).varint(2, 1).msg(
        3,
        W::new()
            .str(1, "urn:e")
            .str(2, "d")
            .varint(3, 1)
            .msg(4, struct_one("a", "b")),
    );
    let scheme = W::new().msg(
        1,
        W::new().str(1, "api key").str(2, "header").str(3, "X-Key"),
    );
    let b = W::new()
        .str(1, "Agent")
        .str(2, "Desc")
        .msg(4, W::new().str(1, "https://org").str(2, "Org"))
        .str(5, "1.2.3")
        .str(6, "https://docs")
        .msg(7, caps)
        .msg(8, W::new().str(1, "k").msg(2, scheme))
        .msg(9, security())
        .str(10, "text/plain")
        .str(11, "application/json")
        .msg(12, skill)
        .done();

    let c03 = v03::AgentCard::decode(b.as_slice()).unwrap();
    let c10 = v10::AgentCard::decode(b.as_slice()).unwrap();
    assert_eq!(
        (c03.name.as_str(), c03.description.as_str()),
        ("Agent", "Desc")
    );
    assert_eq!(
        (c10.name.as_str(), c10.description.as_str()),
        ("Agent", "Desc")
    );
    let (p03, p10) = (c03.provider.unwrap(), c10.provider.unwrap());
    assert_eq!(
        (p03.url.as_str(), p03.organization.as_str()),
        ("https://org", "Org")
    );
    assert_eq!(
        (p10.url.as_str(), p10.organization.as_str()),
        ("https://org", "Org")
    );
    assert_eq!(c03.version, "1.2.3");
    assert_eq!(c10.version, "1.2.3");
    assert_eq!(c03.documentation_url, "https://docs");
    assert_eq!(c10.documentation_url.as_deref(), Some("https://docs"));

    let (k03, k10) = (c03.capabilities.unwrap(), c10.capabilities.unwrap());
    assert!(k03.streaming && k03.push_notifications);
    assert_eq!(
        (
            k10.streaming,
            k10.push_notifications,
            k10.extended_agent_card
        ),
        (Some(true), Some(true), None)
    );
    assert_eq!(k03.extensions[0].uri, "urn:e");
    assert!(k10.extensions[0].required);
    assert!(k10.extensions[0].params.is_some());

    let s03 = &c03.security_schemes["k"];
    let Some(v03::security_scheme::Scheme::ApiKeySecurityScheme(a)) = &s03.scheme else {
        panic!("api key expected")
    };
    assert_eq!((a.location.as_str(), a.name.as_str()), ("header", "X-Key"));
    let s10 = &c10.security_schemes["k"];
    let Some(v10::security_scheme::Scheme::ApiKeySecurityScheme(a)) = &s10.scheme else {
        panic!("api key expected")
    };
    assert_eq!(
        (a.description.as_str(), a.location.as_str()),
        ("api key", "header")
    );

    assert_eq!(
        c03.security[0].schemes["oauth"].list,
        vec!["read".to_owned()]
    );
    assert_eq!(
        c10.security_requirements[0].schemes["oauth"].list,
        vec!["read".to_owned()]
    );
    assert_eq!(c03.default_input_modes, vec!["text/plain".to_owned()]);
    assert_eq!(
        c10.default_output_modes,
        vec!["application/json".to_owned()]
    );

    let (sk03, sk10) = (&c03.skills[0], &c10.skills[0]);
    assert_eq!(
        (
            sk03.id.as_str(),
            sk03.name.as_str(),
            sk03.description.as_str()
        ),
        ("s1", "Skill", "does")
    );
    assert_eq!(sk03.tags, vec!["tag".to_owned()]);
    assert_eq!(sk10.examples, vec!["ex".to_owned()]);
    assert_eq!(sk10.input_modes, vec!["in/x".to_owned()]);
    assert_eq!(sk10.output_modes, vec!["out/x".to_owned()]);
    assert_eq!(
        sk03.security[0].schemes["oauth"].list,
        vec!["read".to_owned()]
    );
    assert_eq!(
        sk10.security_requirements[0].schemes["oauth"].list,
        vec!["read".to_owned()]
    );

    // v1.0 AgentCapabilities.extended_agent_card is field 4.
    let k = v10::AgentCapabilities::decode(W::new().varint(4, 1).done().as_slice()).unwrap();
    assert_eq!(k.extended_agent_card, Some(true));
    // v1.0 AgentInterface.protocol_binding is 2 (v0.3 `transport`).
    let i03 = v03::AgentInterface::decode(W::new().str(1, "u").str(2, "JSONRPC").done().as_slice())
        .unwrap();
    assert_eq!((i03.url.as_str(), i03.transport.as_str()), ("u", "JSONRPC"));
}

#[test]
fn oauth_flow_numbers() {
    let scopes = || W::new().str(1, "read").str(2, "Read it");
    let dev = W::new()
        .str(1, "https://dev")
        .str(2, "https://tok")
        .str(3, "https://ref")
        .msg(4, scopes());
    let flows = W::new().msg(5, dev).done();
    let f = v10::OAuthFlows::decode(flows.as_slice()).unwrap();
    let Some(v10::o_auth_flows::Flow::DeviceCode(d)) = f.flow else {
        panic!("device code expected, got {:?}", f.flow)
    };
    assert_eq!(d.device_authorization_url, "https://dev");
    assert_eq!(d.scopes["read"], "Read it");
    // v0.3 has no field 5: the flow is unknown and dropped.
    assert_eq!(
        v03::OAuthFlows::decode(flows.as_slice()).unwrap().flow,
        None
    );

    let ac = W::new()
        .str(1, "https://auth")
        .str(2, "https://tok")
        .msg(4, scopes())
        .varint(5, 1);
    let flows = W::new().msg(1, ac).done();
    let Some(v10::o_auth_flows::Flow::AuthorizationCode(a)) =
        v10::OAuthFlows::decode(flows.as_slice()).unwrap().flow
    else {
        panic!()
    };
    assert!(a.pkce_required);
    let Some(v03::o_auth_flows::Flow::AuthorizationCode(a)) =
        v03::OAuthFlows::decode(flows.as_slice()).unwrap().flow
    else {
        panic!()
    };
    assert_eq!(
        (a.authorization_url.as_str(), a.token_url.as_str()),
        ("https://auth", "https://tok")
    );
    assert_eq!(a.scopes["read"], "Read it");
}

// ---------------------------------------------------------------------------
// Round trips of full messages

fn text_part03(t: &str) -> v03::Part {
    v03::Part {
        part: Some(v03::part::Part::Text(t.into())),
        metadata: Some(pb_struct(&[("k", "v")])),
    }
}

fn full_task03() -> v03::Task {
    let msg = v03::Message {
        message_id: "m1".into(),
        context_id: "c1".into(),
        task_id: "t1".into(),
        role: v03::Role::User as i32,
        content: vec![
            text_part03("hi"),
            v03::Part {
                part: Some(v03::part::Part::File(v03::FilePart {
                    file: Some(v03::file_part::File::FileWithBytes(vec![1, 2, 3])),
                    mime_type: "image/png".into(),
                    name: "a.png".into(),
                })),
                metadata: None,
            },
            v03::Part {
                part: Some(v03::part::Part::Data(v03::DataPart {
                    data: Some(pb_struct(&[("x", "y")])),
                })),
                metadata: None,
            },
        ],
        metadata: Some(pb_struct(&[("m", "n")])),
        extensions: vec!["urn:e".into()],
    };
    v03::Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: Some(v03::TaskStatus {
            state: v03::TaskState::InputRequired as i32,
            update: Some(msg.clone()),
            timestamp: Some(Timestamp {
                seconds: 1_700_000_000,
                nanos: 123_000_000,
            }),
        }),
        artifacts: vec![v03::Artifact {
            artifact_id: "a1".into(),
            name: "n".into(),
            description: "d".into(),
            parts: vec![text_part03("out")],
            metadata: None,
            extensions: vec![],
        }],
        history: vec![msg],
        metadata: Some(pb_struct(&[("t", "u")])),
    }
}

fn full_task10() -> v10::Task {
    let msg = v10::Message {
        message_id: "m1".into(),
        context_id: "c1".into(),
        task_id: "t1".into(),
        role: v10::Role::Agent as i32,
        parts: vec![
            v10::Part {
                content: Some(v10::part::Content::Text("hi".into())),
                metadata: Some(pb_struct(&[("k", "v")])),
                filename: String::new(),
                media_type: "text/plain".into(),
            },
            v10::Part {
                content: Some(v10::part::Content::Raw(vec![0, 255])),
                metadata: None,
                filename: "b.bin".into(),
                media_type: "application/octet-stream".into(),
            },
            v10::Part {
                content: Some(v10::part::Content::Data(Value {
                    kind: Some(Kind::ListValue(proto::pbjson_types::ListValue {
                        values: vec![Value {
                            kind: Some(Kind::NumberValue(1.5)),
                        }],
                    })),
                })),
                metadata: None,
                filename: String::new(),
                media_type: String::new(),
            },
        ],
        metadata: None,
        extensions: vec![],
        reference_task_ids: vec!["t0".into()],
    };
    v10::Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: Some(v10::TaskStatus {
            state: v10::TaskState::Completed as i32,
            message: Some(msg.clone()),
            timestamp: Some(Timestamp {
                seconds: 1_700_000_000,
                nanos: 0,
            }),
        }),
        artifacts: vec![v10::Artifact {
            artifact_id: "a1".into(),
            name: "n".into(),
            description: "d".into(),
            parts: msg.parts.clone(),
            metadata: Some(pb_struct(&[("a", "b")])),
            extensions: vec!["urn:e".into()],
        }],
        history: vec![msg],
        metadata: None,
    }
}

#[test]
fn round_trip_tasks_and_stream_responses() {
    let t03 = full_task03();
    assert_eq!(
        v03::Task::decode(t03.encode_to_vec().as_slice()).unwrap(),
        t03
    );
    let t10 = full_task10();
    assert_eq!(
        v10::Task::decode(t10.encode_to_vec().as_slice()).unwrap(),
        t10
    );

    let s03 = v03::StreamResponse {
        payload: Some(v03::stream_response::Payload::StatusUpdate(
            v03::TaskStatusUpdateEvent {
                task_id: "t1".into(),
                context_id: "c1".into(),
                status: t03.status.clone(),
                r#final: true,
                metadata: Some(pb_struct(&[("k", "v")])),
            },
        )),
    };
    assert_eq!(
        v03::StreamResponse::decode(s03.encode_to_vec().as_slice()).unwrap(),
        s03
    );
    let s10 = v10::StreamResponse {
        payload: Some(v10::stream_response::Payload::ArtifactUpdate(
            v10::TaskArtifactUpdateEvent {
                task_id: "t1".into(),
                context_id: "c1".into(),
                artifact: t10.artifacts.first().cloned(),
                append: true,
                last_chunk: false,
                metadata: None,
            },
        )),
    };
    assert_eq!(
        v10::StreamResponse::decode(s10.encode_to_vec().as_slice()).unwrap(),
        s10
    );
}

#[test]
fn round_trip_agent_cards() {
    let card10 = v10::AgentCard {
        name: "A".into(),
        description: "D".into(),
        supported_interfaces: vec![v10::AgentInterface {
            url: "https://a".into(),
            protocol_binding: "JSONRPC".into(),
            tenant: String::new(),
            protocol_version: "1.0".into(),
        }],
        provider: None,
        version: "1".into(),
        documentation_url: None,
        capabilities: Some(v10::AgentCapabilities {
            streaming: Some(false),
            push_notifications: None,
            extensions: vec![],
            extended_agent_card: Some(true),
        }),
        security_schemes: [(
            "o".to_owned(),
            v10::SecurityScheme {
                scheme: Some(v10::security_scheme::Scheme::Oauth2SecurityScheme(
                    v10::OAuth2SecurityScheme {
                        description: String::new(),
                        flows: Some(v10::OAuthFlows {
                            flow: Some(v10::o_auth_flows::Flow::ClientCredentials(
                                v10::ClientCredentialsOAuthFlow {
                                    token_url: "https://t".into(),
                                    refresh_url: String::new(),
                                    scopes: [("r".to_owned(), "read".to_owned())].into(),
                                },
                            )),
                        }),
                        oauth2_metadata_url: String::new(),
                    },
                )),
            },
        )]
        .into(),
        security_requirements: vec![v10::SecurityRequirement {
            schemes: [(
                "o".to_owned(),
                v10::StringList {
                    list: vec!["r".into()],
                },
            )]
            .into(),
        }],
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: vec![],
        signatures: vec![],
        icon_url: Some(String::new()),
    };
    let back = v10::AgentCard::decode(card10.encode_to_vec().as_slice()).unwrap();
    assert_eq!(back, card10);
    // `optional` keeps an explicitly empty icon URL and `streaming: false`.
    assert_eq!(back.icon_url.as_deref(), Some(""));

    let card03 = v03::AgentCard {
        protocol_version: "0.3.0".into(),
        name: "A".into(),
        url: "https://a".into(),
        preferred_transport: "GRPC".into(),
        additional_interfaces: vec![v03::AgentInterface {
            url: "https://a".into(),
            transport: "GRPC".into(),
        }],
        supports_authenticated_extended_card: true,
        icon_url: "https://i".into(),
        ..Default::default()
    };
    assert_eq!(
        v03::AgentCard::decode(card03.encode_to_vec().as_slice()).unwrap(),
        card03
    );
}

#[test]
fn cross_version_bytes_do_not_round_trip() {
    // The reason the proxy must never forward raw protobuf across versions.
    let a03 = v03::Artifact {
        artifact_id: "a".into(),
        name: "n".into(),
        ..Default::default()
    };
    let a10 = v10::Artifact::decode(a03.encode_to_vec().as_slice()).unwrap();
    assert_eq!(a10.name, "");
    assert_eq!(a10.description, "n");
}

// ---------------------------------------------------------------------------
// ProtoJSON (v0.3 only)

#[test]
fn v03_protojson_uses_json_names() {
    let req = v03::SendMessageRequest {
        request: Some(v03::Message {
            message_id: "m1".into(),
            role: v03::Role::User as i32,
            content: vec![v03::Part {
                part: Some(v03::part::Part::File(v03::FilePart {
                    file: Some(v03::file_part::File::FileWithBytes(b"hi".to_vec())),
                    mime_type: "text/plain".into(),
                    name: String::new(),
                })),
                metadata: None,
            }],
            ..Default::default()
        }),
        configuration: Some(v03::SendMessageConfiguration {
            push_notification: Some(v03::PushNotificationConfig {
                url: "https://h".into(),
                ..Default::default()
            }),
            blocking: true,
            ..Default::default()
        }),
        metadata: None,
    };
    let json = serde_json::to_value(&req).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "message": {
                "messageId": "m1",
                "role": "ROLE_USER",
                "content": [{"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain"}}]
            },
            "configuration": {"pushNotification": {"url": "https://h"}, "blocking": true}
        })
    );
    let back: v03::SendMessageRequest = serde_json::from_value(json).unwrap();
    assert_eq!(back, req);

    // Parsers accept the proto field names too.
    let s: v03::StreamResponse =
        serde_json::from_str(r#"{"msg":{"message_id":"x","role":2}}"#).unwrap();
    let Some(v03::stream_response::Payload::Msg(m)) = s.payload else {
        panic!()
    };
    assert_eq!((m.message_id.as_str(), m.role()), ("x", v03::Role::Agent));

    let st: v03::TaskStatus = serde_json::from_str(
        r#"{"state":"TASK_STATE_WORKING","message":{"messageId":"m"},"timestamp":"2025-04-02T16:59:25.331Z"}"#,
    )
    .unwrap();
    assert_eq!(st.state(), v03::TaskState::Working);
    assert_eq!(st.update.unwrap().message_id, "m");
    assert_eq!(st.timestamp.unwrap().nanos, 331_000_000);
}

// ---------------------------------------------------------------------------
// gRPC service paths

#[test]
fn service_names() {
    use tonic::server::NamedService;
    assert_eq!(v03::a2a_service_server::SERVICE_NAME, "a2a.v1.A2AService");
    assert_eq!(
        v10::a2a_service_server::SERVICE_NAME,
        "lf.a2a.v1.A2AService"
    );
    assert_eq!(
        <v03::a2a_service_server::A2aServiceServer<Unimpl03> as NamedService>::NAME,
        "a2a.v1.A2AService"
    );
    assert_eq!(
        <v10::a2a_service_server::A2aServiceServer<Unimpl10> as NamedService>::NAME,
        "lf.a2a.v1.A2AService"
    );
}

// Minimal server types, only used for their `NamedService` constant.
struct Unimpl03;
struct Unimpl10;

/// A tower service that records the request path and fails the call.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl tower_service::Service<http::Request<tonic::body::Body>> for Recorder {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::io::Error;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        if let Ok(mut paths) = self.0.lock() {
            paths.push(req.uri().path().to_owned());
        }
        std::future::ready(Err(std::io::Error::other("recorded")))
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("future did not complete without IO")
}

#[test]
fn client_request_paths() {
    let rec = Recorder::default();
    let mut c03 = v03::a2a_service_client::A2aServiceClient::new(rec.clone());
    let mut c10 = v10::a2a_service_client::A2aServiceClient::new(rec.clone());
    block_on(async {
        let _ = c03.send_message(v03::SendMessageRequest::default()).await;
        let _ = c03
            .send_streaming_message(v03::SendMessageRequest::default())
            .await;
        let _ = c03.get_task(v03::GetTaskRequest::default()).await;
        let _ = c03.cancel_task(v03::CancelTaskRequest::default()).await;
        let _ = c03
            .task_subscription(v03::TaskSubscriptionRequest::default())
            .await;
        let _ = c03
            .create_task_push_notification_config(
                v03::CreateTaskPushNotificationConfigRequest::default(),
            )
            .await;
        let _ = c03
            .get_task_push_notification_config(v03::GetTaskPushNotificationConfigRequest::default())
            .await;
        let _ = c03
            .list_task_push_notification_config(
                v03::ListTaskPushNotificationConfigRequest::default(),
            )
            .await;
        let _ = c03
            .get_agent_card(v03::GetAgentCardRequest::default())
            .await;
        let _ = c03
            .delete_task_push_notification_config(
                v03::DeleteTaskPushNotificationConfigRequest::default(),
            )
            .await;

        let _ = c10.send_message(v10::SendMessageRequest::default()).await;
        let _ = c10
            .send_streaming_message(v10::SendMessageRequest::default())
            .await;
        let _ = c10.get_task(v10::GetTaskRequest::default()).await;
        let _ = c10.list_tasks(v10::ListTasksRequest::default()).await;
        let _ = c10.cancel_task(v10::CancelTaskRequest::default()).await;
        let _ = c10
            .subscribe_to_task(v10::SubscribeToTaskRequest::default())
            .await;
        let _ = c10
            .create_task_push_notification_config(v10::TaskPushNotificationConfig::default())
            .await;
        let _ = c10
            .get_task_push_notification_config(v10::GetTaskPushNotificationConfigRequest::default())
            .await;
        let _ = c10
            .list_task_push_notification_configs(
                v10::ListTaskPushNotificationConfigsRequest::default(),
            )
            .await;
        let _ = c10
            .get_extended_agent_card(v10::GetExtendedAgentCardRequest::default())
            .await;
        let _ = c10
            .delete_task_push_notification_config(
                v10::DeleteTaskPushNotificationConfigRequest::default(),
            )
            .await;
    });
    let paths = rec.0.lock().unwrap().clone();
    let expected: Vec<String> = [
        "/a2a.v1.A2AService/SendMessage",
        "/a2a.v1.A2AService/SendStreamingMessage",
        "/a2a.v1.A2AService/GetTask",
        "/a2a.v1.A2AService/CancelTask",
        "/a2a.v1.A2AService/TaskSubscription",
        "/a2a.v1.A2AService/CreateTaskPushNotificationConfig",
        "/a2a.v1.A2AService/GetTaskPushNotificationConfig",
        "/a2a.v1.A2AService/ListTaskPushNotificationConfig",
        "/a2a.v1.A2AService/GetAgentCard",
        "/a2a.v1.A2AService/DeleteTaskPushNotificationConfig",
        "/lf.a2a.v1.A2AService/SendMessage",
        "/lf.a2a.v1.A2AService/SendStreamingMessage",
        "/lf.a2a.v1.A2AService/GetTask",
        "/lf.a2a.v1.A2AService/ListTasks",
        "/lf.a2a.v1.A2AService/CancelTask",
        "/lf.a2a.v1.A2AService/SubscribeToTask",
        "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig",
        "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig",
        "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs",
        "/lf.a2a.v1.A2AService/GetExtendedAgentCard",
        "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_eq!(paths, expected);
}

#[test]
fn v03_protojson_output_forms() {
    let st = v03::TaskStatus {
        state: v03::TaskState::Cancelled as i32,
        update: None,
        timestamp: Some(Timestamp {
            seconds: 1_743_613_165,
            nanos: 331_000_000,
        }),
    };
    let json = serde_json::to_value(&st).unwrap();
    assert_eq!(json["state"], "TASK_STATE_CANCELLED");
    // pbjson-types 0.9 writes `+00:00`, not the canonical ProtoJSON `Z`
    // (both parse as RFC 3339). Callers wanting `Z` must post-process.
    assert_eq!(json["timestamp"], "2025-04-02T16:59:25.331+00:00");
    let back: v03::TaskStatus = serde_json::from_value(json).unwrap();
    assert_eq!(back, st);
    // Default-valued fields are omitted.
    let empty = serde_json::to_value(v03::Task::default()).unwrap();
    assert_eq!(empty, serde_json::json!({}));
}
