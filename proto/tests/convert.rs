//! Round trips model -> prost -> bytes -> prost -> model for both versions.
//!
//! * Hand-written values inside what the protos can carry round-trip exactly.
//! * For arbitrary models (translate's proptest strategies, which include
//!   unknown members, empty strings, ...) conversion never fails, the bytes
//!   decode to the same prost message, and the model read back is a fixed
//!   point: converting it again gives the same prost message and model.

use proptest::prelude::*;
use prost::Message as _;
use serde_json::{json, Map, Value};
use translate::json::{Extras, Metadata};
use translate::strategy::payload as st;
use translate::{v03 as m03, v10 as m10};

use proto::convert_v03 as c03;
use proto::convert_v10 as c10;
use proto::{v03, v10};

fn meta(v: Value) -> Option<Metadata> {
    match v {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

fn wire<T: prost::Message + Default + PartialEq + std::fmt::Debug>(p: &T) -> T {
    let back = T::decode(p.encode_to_vec().as_slice()).expect("own encoding decodes");
    assert_eq!(&back, p);
    back
}

// ---------------------------------------------------------------------------
// v0.3

fn message03() -> m03::message::Message {
    use m03::part::{DataPart, FileContent, FilePart, Kind, Part, TextPart};
    m03::message::Message {
        kind: Kind::new(),
        message_id: "m1".into(),
        context_id: Some("c1".into()),
        task_id: Some("t1".into()),
        role: m03::message::Role::User,
        parts: vec![
            Part::Text(TextPart {
                kind: Kind::new(),
                text: "hi".into(),
                metadata: meta(json!({"k": "v", "n": 3})),
                extra: Extras::new(),
            }),
            Part::File(FilePart {
                kind: Kind::new(),
                file: FileContent {
                    bytes: Some("AAH/".into()),
                    uri: None,
                    name: Some("a.bin".into()),
                    mime_type: Some("application/octet-stream".into()),
                    extra: Extras::new(),
                },
                metadata: None,
                extra: Extras::new(),
            }),
            Part::File(FilePart {
                kind: Kind::new(),
                file: FileContent {
                    bytes: None,
                    uri: Some("https://x/y".into()),
                    name: None,
                    mime_type: None,
                    extra: Extras::new(),
                },
                metadata: None,
                extra: Extras::new(),
            }),
            Part::Data(DataPart {
                kind: Kind::new(),
                data: meta(json!({"a": [1, 2.5, null, {"b": true}]})).unwrap_or_default(),
                metadata: None,
                extra: Extras::new(),
            }),
        ],
        metadata: meta(json!({"x": "y"})),
        extensions: Some(vec!["urn:e".into()]),
        reference_task_ids: None,
        extra: Extras::new(),
    }
}

fn task03() -> m03::task::Task {
    m03::task::Task {
        kind: m03::part::Kind::new(),
        id: "t1".into(),
        context_id: "c1".into(),
        status: m03::task::TaskStatus {
            state: m03::task::TaskState::InputRequired,
            message: Some(message03()),
            timestamp: Some("2025-04-02T16:59:25.331Z".into()),
            extra: Extras::new(),
        },
        artifacts: Some(vec![m03::artifact::Artifact {
            artifact_id: "a1".into(),
            name: Some("n".into()),
            description: Some("d".into()),
            parts: message03().parts,
            metadata: meta(json!({"q": {}})),
            extensions: Some(vec!["urn:e".into()]),
            extra: Extras::new(),
        }]),
        history: Some(vec![message03()]),
        metadata: meta(json!({"t": 1})),
        extra: Extras::new(),
    }
}

#[test]
fn v03_task_round_trips_exactly() {
    let t = task03();
    let p = wire(&c03::task_to_pb(t.clone()).unwrap());
    assert_eq!(p.artifacts[0].name, "n");
    assert_eq!(c03::task_from_pb(p).unwrap(), t);
}

#[test]
fn v03_events_round_trip_exactly() {
    use m03::event::{StreamEvent, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
    let t = task03();
    let events = vec![
        StreamEvent::Task(t.clone()),
        StreamEvent::Message(message03()),
        StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
            kind: m03::part::Kind::new(),
            task_id: "t1".into(),
            context_id: "c1".into(),
            status: t.status.clone(),
            is_final: true,
            metadata: meta(json!({"k": "v"})),
            extra: Extras::new(),
        }),
        StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
            kind: m03::part::Kind::new(),
            task_id: "t1".into(),
            context_id: "c1".into(),
            artifact: t.artifacts.clone().unwrap_or_default().remove(0),
            append: Some(true),
            last_chunk: None,
            metadata: None,
            extra: Extras::new(),
        }),
    ];
    for e in events {
        let p = wire(&c03::stream_to_pb(e.clone()).unwrap());
        assert_eq!(c03::stream_from_pb(p).unwrap(), e);
    }
    let r = wire(&c03::send_response_to_pb(StreamEvent::Message(message03())).unwrap());
    assert_eq!(
        c03::send_response_from_pb(r).unwrap(),
        StreamEvent::Message(message03())
    );
}

#[test]
fn v03_documented_losses() {
    let mut m = message03();
    m.reference_task_ids = Some(vec!["t0".into()]);
    m.extra.insert("x-unknown".into(), json!(1));
    m.context_id = Some(String::new());
    let back = c03::message_from_pb(wire(&c03::message_to_pb(m).unwrap())).unwrap();
    assert_eq!(back.reference_task_ids, None);
    assert!(back.extra.is_empty());
    assert_eq!(back.context_id, None);

    // "unknown" <-> TASK_STATE_UNSPECIFIED; naive timestamps become UTC `Z`.
    let mut s = task03().status;
    s.state = m03::task::TaskState::Unknown;
    s.timestamp = Some("2025-04-02T16:59:25.331844".into());
    let p = c03::status_to_pb(s).unwrap();
    assert_eq!(p.state(), v03::TaskState::Unspecified);
    let back = c03::status_from_pb(p).unwrap();
    assert_eq!(back.state, m03::task::TaskState::Unknown);
    assert_eq!(
        back.timestamp.as_deref(),
        Some("2025-04-02T16:59:25.331844Z")
    );
}

#[test]
fn v03_invalid_inputs_are_errors() {
    // Part without content, file without body.
    assert!(c03::part_from_pb(v03::Part::default()).is_err());
    let empty_file = v03::Part {
        part: Some(v03::part::Part::File(v03::FilePart::default())),
        metadata: None,
    };
    assert!(c03::part_from_pb(empty_file).is_err());
    // Role unspecified / unknown.
    assert!(c03::role_from_pb(0).is_err());
    assert!(c03::role_from_pb(7).is_err());
    // Task without status; bad timestamp.
    assert!(c03::task_from_pb(v03::Task::default()).is_err());
    let bad_ts = v03::TaskStatus {
        timestamp: Some(proto::pbjson_types::Timestamp {
            seconds: 0,
            nanos: -5,
        }),
        ..Default::default()
    };
    assert!(c03::status_from_pb(bad_ts).is_err());
    // Empty stream response; events as a SendMessage result.
    assert!(c03::stream_from_pb(v03::StreamResponse::default()).is_err());
    assert!(c03::send_response_from_pb(v03::SendMessageResponse::default()).is_err());

    // Model side: both bytes and uri, invalid base64, bad timestamp.
    let mut m = message03();
    if let m03::part::Part::File(f) = &mut m.parts[1] {
        f.file.uri = Some("https://x".into());
    }
    assert!(c03::message_to_pb(m).is_err());
    let mut m = message03();
    if let m03::part::Part::File(f) = &mut m.parts[1] {
        f.file.bytes = Some("not base64!".into());
    }
    assert!(c03::message_to_pb(m).is_err());
    let mut s = task03().status;
    s.timestamp = Some("yesterday".into());
    assert!(c03::status_to_pb(s).is_err());
    let e = task03().status;
    let status_update = m03::event::StreamEvent::StatusUpdate(m03::event::TaskStatusUpdateEvent {
        kind: m03::part::Kind::new(),
        task_id: "t".into(),
        context_id: "c".into(),
        status: e,
        is_final: false,
        metadata: None,
        extra: Extras::new(),
    });
    assert!(c03::send_response_to_pb(status_update).is_err());
}

#[test]
fn v03_non_finite_numbers_are_errors() {
    let mut p = c03::message_to_pb(message03()).unwrap();
    p.metadata = Some(proto::pbjson_types::Struct {
        fields: [(
            "nan".to_owned(),
            proto::pbjson_types::Value {
                kind: Some(proto::pbjson_types::value::Kind::NumberValue(f64::NAN)),
            },
        )]
        .into_iter()
        .collect(),
    });
    assert!(c03::message_from_pb(p).is_err());
}

// ---------------------------------------------------------------------------
// v1.0

fn message10() -> m10::message::Message {
    use m10::part::{Part, PartContent};
    let mut text = Part::new(PartContent::Text("hi".into()));
    text.metadata = meta(json!({"k": "v"}));
    text.media_type = Some("text/plain".into());
    let mut raw = Part::new(PartContent::Raw(vec![0, 1, 255]));
    raw.filename = Some("a.bin".into());
    m10::message::Message {
        message_id: "m1".into(),
        context_id: Some("c1".into()),
        task_id: None,
        role: m10::message::Role::Agent,
        parts: vec![
            text,
            raw,
            Part::new(PartContent::Url("https://x/y".into())),
            Part::new(PartContent::Data(json!([1, "two", null, {"three": 3.5}]))),
            Part::new(PartContent::Data(Value::Null)),
        ],
        metadata: None,
        extensions: Some(vec!["urn:e".into()]),
        reference_task_ids: Some(vec!["t0".into()]),
        extra: Map::new(),
    }
}

fn task10() -> m10::task::Task {
    m10::task::Task {
        id: "t1".into(),
        context_id: Some("c1".into()),
        status: m10::task::TaskStatus {
            state: m10::task::TaskState::Working,
            message: Some(message10()),
            timestamp: Some("2025-04-02T16:59:25Z".into()),
            extra: Extras::new(),
        },
        artifacts: Some(vec![m10::artifact::Artifact {
            artifact_id: "a1".into(),
            name: Some("n".into()),
            description: None,
            parts: message10().parts,
            metadata: meta(json!({"a": "b"})),
            extensions: None,
            extra: Extras::new(),
        }]),
        history: None,
        metadata: meta(json!({"t": [1]})),
        extra: Extras::new(),
    }
}

#[test]
fn v10_task_round_trips_exactly() {
    let t = task10();
    let p = wire(&c10::task_to_pb(t.clone()).unwrap());
    assert_eq!(
        p.status.as_ref().map(|s| s.state()),
        Some(v10::TaskState::Working)
    );
    assert_eq!(c10::task_from_pb(p).unwrap(), t);
}

#[test]
fn v10_events_round_trip_exactly() {
    use m10::event::{StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
    let t = task10();
    let events = vec![
        StreamResponse::Task(t.clone()),
        StreamResponse::Message(message10()),
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t1".into(),
            context_id: "c1".into(),
            status: t.status.clone(),
            metadata: meta(json!({"k": "v"})),
            extra: Extras::new(),
        }),
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t1".into(),
            context_id: String::new(),
            artifact: t.artifacts.clone().unwrap_or_default().remove(0),
            append: None,
            last_chunk: Some(true),
            metadata: None,
            extra: Extras::new(),
        }),
    ];
    for e in events {
        let p = wire(&c10::stream_to_pb(e.clone()).unwrap());
        assert_eq!(c10::stream_from_pb(p).unwrap(), e);
    }
}

#[test]
fn v10_task_states() {
    use m10::task::TaskState as S;
    for s in [
        S::Unspecified,
        S::Submitted,
        S::Working,
        S::Completed,
        S::Failed,
        S::Canceled,
        S::InputRequired,
        S::Rejected,
        S::AuthRequired,
        S::Unrecognized("42".into()),
    ] {
        let n = c10::state_to_pb(&s).unwrap();
        assert_eq!(c10::state_from_pb(n), s);
    }
    assert!(c10::state_to_pb(&S::Unrecognized("TASK_STATE_NEW".into())).is_err());
    assert_eq!(c10::state_to_pb(&S::Canceled).unwrap(), 5);
}

#[test]
fn v10_invalid_inputs_are_errors() {
    assert!(c10::part_from_pb(v10::Part::default()).is_err());
    assert!(c10::role_from_pb(3).is_err());
    assert!(c10::task_from_pb(v10::Task::default()).is_err());
    assert!(c10::status_update_from_pb(v10::TaskStatusUpdateEvent::default()).is_err());
    assert!(c10::artifact_update_from_pb(v10::TaskArtifactUpdateEvent::default()).is_err());
    assert!(c10::stream_from_pb(v10::StreamResponse::default()).is_err());
    let mut s = task10().status;
    s.timestamp = Some("2024-13-01T00:00:00Z".into());
    assert!(c10::status_to_pb(s).is_err());
}

// ---------------------------------------------------------------------------
// Properties over arbitrary models

macro_rules! fixed_point {
    ($x:expr, $to:path, $from:path) => {{
        let p = $to($x).expect("model converts to prost");
        let p = wire(&p);
        let y = $from(p.clone()).expect("own prost converts back");
        let p2 = $to(y.clone()).expect("normalized model converts");
        prop_assert_eq!(&p2, &p);
        prop_assert_eq!($from(p2).expect("again"), y);
    }};
}

fn ok<T>(v: T) -> Result<T, translate::TranslateError> {
    Ok(v)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn v03_task_is_a_fixed_point(x in st::v03_task()) {
        fixed_point!(x, c03::task_to_pb, c03::task_from_pb);
    }

    #[test]
    fn v03_stream_event_is_a_fixed_point(x in st::v03_stream_event()) {
        fixed_point!(x, c03::stream_to_pb, c03::stream_from_pb);
    }

    #[test]
    fn v10_task_is_a_fixed_point(x in st::v10_task()) {
        fixed_point!(x, c10::task_to_pb, c10::task_from_pb);
    }

    #[test]
    fn v10_stream_response_is_a_fixed_point(x in st::v10_stream_response()) {
        fixed_point!(x, c10::stream_to_pb, c10::stream_from_pb);
    }

    #[test]
    fn v10_message_is_a_fixed_point(x in st::v10_message()) {
        let to = |m| ok(c10::message_to_pb(m));
        fixed_point!(x, to, c10::message_from_pb);
    }

    #[test]
    fn v03_arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(p) = v03::StreamResponse::decode(b.as_slice()) {
            let _ = c03::stream_from_pb(p);
        }
        if let Ok(p) = v10::StreamResponse::decode(b.as_slice()) {
            let _ = c10::stream_from_pb(p);
        }
    }
}

// ---------------------------------------------------------------------------
// Agent cards

mod cards {
    use super::*;
    use std::collections::BTreeMap;
    use translate::strategy::card as sc;
    use translate::v03::agent_card as k03;
    use translate::v10::agent_card as k10;

    fn card03() -> k03::AgentCard {
        let mut schemes = BTreeMap::new();
        schemes.insert(
            "key".to_owned(),
            k03::SecurityScheme::ApiKey(k03::ApiKeySecurityScheme {
                description: Some("api key".into()),
                location: k03::ApiKeyLocation::Header,
                name: "X-Key".into(),
                extra: Extras::new(),
            }),
        );
        schemes.insert(
            "oauth".to_owned(),
            k03::SecurityScheme::OAuth2(k03::OAuth2SecurityScheme {
                description: None,
                flows: k03::OAuthFlows {
                    client_credentials: Some(k03::ClientCredentialsOAuthFlow {
                        token_url: "https://tok".into(),
                        refresh_url: None,
                        scopes: [("read".to_owned(), "Read".to_owned())].into(),
                        extra: Extras::new(),
                    }),
                    ..Default::default()
                },
                oauth2_metadata_url: Some("https://meta".into()),
                extra: Extras::new(),
            }),
        );
        schemes.insert(
            "mtls".to_owned(),
            k03::SecurityScheme::MutualTls(k03::MutualTlsSecurityScheme {
                description: None,
                extra: Extras::new(),
            }),
        );
        let req: k03::SecurityRequirement = [("oauth".to_owned(), vec!["read".to_owned()])].into();
        k03::AgentCard {
            protocol_version: Some("0.3.0".into()),
            name: "Agent".into(),
            description: "Does things".into(),
            url: "https://a/rpc".into(),
            preferred_transport: Some("JSONRPC".into()),
            additional_interfaces: Some(vec![k03::AgentInterface {
                url: "grpc.a:443".into(),
                transport: "GRPC".into(),
                extra: Extras::new(),
            }]),
            icon_url: Some("https://a/icon".into()),
            provider: Some(k03::AgentProvider {
                organization: "Org".into(),
                url: "https://org".into(),
                extra: Extras::new(),
            }),
            version: "1.0.0".into(),
            documentation_url: Some("https://docs".into()),
            capabilities: k03::AgentCapabilities {
                streaming: Some(true),
                push_notifications: None,
                state_transition_history: None,
                extensions: Some(vec![k03::AgentExtension {
                    uri: "urn:e".into(),
                    description: Some("ext".into()),
                    required: Some(true),
                    params: meta(json!({"p": 1})),
                    extra: Extras::new(),
                }]),
                extra: Extras::new(),
            },
            security_schemes: Some(schemes),
            security: Some(vec![req.clone()]),
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec!["application/json".into()],
            skills: vec![k03::AgentSkill {
                id: "s1".into(),
                name: "Skill".into(),
                description: "skill".into(),
                tags: vec!["t".into()],
                examples: Some(vec!["ex".into()]),
                input_modes: None,
                output_modes: Some(vec!["text/plain".into()]),
                security: Some(vec![req]),
                extra: Extras::new(),
            }],
            supports_authenticated_extended_card: Some(true),
            supports_extended_agent_card: None,
            signatures: Some(vec![k03::AgentCardSignature {
                protected: "eyJ".into(),
                signature: "sig".into(),
                header: meta(json!({"kid": "k1"})),
                extra: Extras::new(),
            }]),
            extra: Extras::new(),
        }
    }

    #[test]
    fn v03_card_round_trips_exactly() {
        let c = card03();
        let p = wire(&c03::agent_card_to_pb(c.clone()));
        assert_eq!(p.url, "https://a/rpc");
        assert!(p.supports_authenticated_extended_card);
        assert_eq!(c03::agent_card_from_pb(p).unwrap(), c);
    }

    #[test]
    fn v03_card_documented_losses() {
        let mut c = card03();
        c.supports_authenticated_extended_card = None;
        c.supports_extended_agent_card = Some(true);
        c.capabilities.state_transition_history = Some(true);
        if let Some(k03::SecurityScheme::OAuth2(o)) =
            c.security_schemes.as_mut().and_then(|s| s.get_mut("oauth"))
        {
            o.flows.password = Some(k03::PasswordOAuthFlow {
                token_url: "https://pw".into(),
                refresh_url: None,
                scopes: BTreeMap::new(),
                extra: Extras::new(),
            });
        }
        let back = c03::agent_card_from_pb(wire(&c03::agent_card_to_pb(c))).unwrap();
        assert_eq!(back.supports_authenticated_extended_card, Some(true));
        assert_eq!(back.supports_extended_agent_card, None);
        assert_eq!(back.capabilities.state_transition_history, None);
        let Some(k03::SecurityScheme::OAuth2(o)) =
            back.security_schemes.as_ref().and_then(|s| s.get("oauth"))
        else {
            panic!("oauth scheme lost")
        };
        assert!(o.flows.client_credentials.is_some());
        assert!(o.flows.password.is_none());
    }

    #[test]
    fn v03_card_invalid_inputs_are_errors() {
        let mut p = c03::agent_card_to_pb(card03());
        p.security_schemes
            .insert("empty".into(), v03::SecurityScheme::default());
        assert!(c03::agent_card_from_pb(p).is_err());
        let mut p = c03::agent_card_to_pb(card03());
        if let Some(v03::security_scheme::Scheme::ApiKeySecurityScheme(a)) = p
            .security_schemes
            .get_mut("key")
            .and_then(|s| s.scheme.as_mut())
        {
            a.location = "body".into();
        }
        assert!(c03::agent_card_from_pb(p).is_err());
    }

    fn card10() -> k10::AgentCard {
        let mut schemes = BTreeMap::new();
        schemes.insert(
            "dev".to_owned(),
            k10::SecurityScheme::new(k10::Scheme::OAuth2(k10::OAuth2SecurityScheme {
                description: Some("d".into()),
                flows: k10::OAuthFlows {
                    flow: Some(k10::OAuthFlow::DeviceCode(k10::DeviceCodeOAuthFlow {
                        device_authorization_url: "https://dev".into(),
                        token_url: "https://tok".into(),
                        refresh_url: None,
                        scopes: [("s".to_owned(), "S".to_owned())].into(),
                        extra: Extras::new(),
                    })),
                    extra: Extras::new(),
                },
                oauth2_metadata_url: None,
                extra: Extras::new(),
            })),
        );
        schemes.insert(
            "http".to_owned(),
            k10::SecurityScheme::new(k10::Scheme::HttpAuth(k10::HttpAuthSecurityScheme {
                description: None,
                scheme: "Bearer".into(),
                bearer_format: Some("JWT".into()),
                extra: Extras::new(),
            })),
        );
        let req = k10::SecurityRequirement {
            schemes: [(
                "http".to_owned(),
                k10::StringList {
                    list: vec![],
                    extra: Extras::new(),
                },
            )]
            .into(),
            extra: Extras::new(),
        };
        k10::AgentCard {
            name: "Agent".into(),
            description: "Does things".into(),
            supported_interfaces: vec![
                k10::AgentInterface {
                    url: "https://a/rpc".into(),
                    protocol_binding: "JSONRPC".into(),
                    tenant: None,
                    protocol_version: "1.0".into(),
                    extra: Extras::new(),
                },
                k10::AgentInterface {
                    url: "grpc.a:443".into(),
                    protocol_binding: "GRPC".into(),
                    tenant: Some("t1".into()),
                    protocol_version: "0.3".into(),
                    extra: Extras::new(),
                },
            ],
            provider: None,
            version: "1".into(),
            documentation_url: Some(String::new()),
            capabilities: k10::AgentCapabilities {
                streaming: Some(false),
                push_notifications: Some(true),
                extensions: None,
                extended_agent_card: Some(true),
                extra: Extras::new(),
            },
            security_schemes: Some(schemes),
            security_requirements: Some(vec![req.clone()]),
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec![],
            skills: vec![k10::AgentSkill {
                id: "s".into(),
                name: "n".into(),
                description: "d".into(),
                tags: vec![],
                examples: None,
                input_modes: Some(vec!["a/b".into()]),
                output_modes: None,
                security_requirements: Some(vec![req]),
                extra: Extras::new(),
            }],
            signatures: None,
            icon_url: None,
            extra: Extras::new(),
        }
    }

    #[test]
    fn v10_card_round_trips_exactly() {
        let c = card10();
        let p = wire(&c10::agent_card_to_pb(c.clone()));
        // `optional` presence survives: explicit "" and `false`.
        assert_eq!(p.documentation_url.as_deref(), Some(""));
        assert_eq!(
            p.capabilities.as_ref().and_then(|k| k.streaming),
            Some(false)
        );
        assert_eq!(c10::agent_card_from_pb(p).unwrap(), c);
    }

    #[test]
    fn v10_card_invalid_inputs_are_errors() {
        let mut p = c10::agent_card_to_pb(card10());
        p.security_schemes
            .insert("empty".into(), v10::SecurityScheme::default());
        assert!(c10::agent_card_from_pb(p).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn v03_card_is_a_fixed_point(x in sc::v03_card_any()) {
            let to = |c| ok(c03::agent_card_to_pb(c));
            fixed_point!(x, to, c03::agent_card_from_pb);
        }

        #[test]
        fn v10_card_is_a_fixed_point(x in sc::v10_card_any()) {
            let to = |c| ok(c10::agent_card_to_pb(c));
            fixed_point!(x, to, c10::agent_card_from_pb);
        }
    }
}

/// v0.3 `file_with_bytes` carries the base64 text (a2a-python 0.3 and
/// a2a-go fill it with `bytes.encode('utf-8')` / `[]byte(b64)`); content
/// from a peer that put the raw bytes there is still read.
#[test]
fn v03_file_bytes_follow_the_sdk_convention() {
    let part: m03::part::Part = serde_json::from_value(json!({"kind": "file",
        "file": {"bytes": "AAFiaW5hcnn_", "mimeType": "application/octet-stream"}}))
    .unwrap();
    let pb = wire(&c03::part_to_pb(part).unwrap());
    let Some(v03::part::Part::File(f)) = &pb.part else {
        panic!("{pb:?}")
    };
    // URL-safe input, canonical standard base64 text on the wire.
    assert_eq!(
        f.file,
        Some(v03::file_part::File::FileWithBytes(
            b"AAFiaW5hcnn/".to_vec()
        ))
    );
    let back = serde_json::to_value(c03::part_from_pb(pb).unwrap()).unwrap();
    assert_eq!(back["file"]["bytes"], "AAFiaW5hcnn/");
    // Raw content (not UTF-8) from a spec-literal peer.
    assert_eq!(c03::v03_file_bytes_from_pb(&[0, 1, 0xff]), "AAH/");
    assert!(c03::v03_file_bytes_to_pb("not base64!").is_err());
}
