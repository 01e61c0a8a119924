//! Push-notification configs and RPC request / response messages:
//! model -> prost -> bytes -> prost -> model, for both versions.
//!
//! * Hand-written values inside what the protos can carry round-trip exactly.
//! * Malformed v0.3 resource names are errors.
//! * For arbitrary models (translate's `strategy::rpc`) conversion succeeds
//!   and the model read back is a fixed point of a second pass.
//! * Arbitrary bytes never make decode + convert panic.

use proptest::prelude::*;
use prost::Message as _;
use serde_json::{json, Value};
use translate::json::{Extras, Metadata};
use translate::strategy::payload as sp;
use translate::strategy::rpc as sr;
use translate::{v03 as m03, v10 as m10};

use proto::convert_v03_rpc as c03;
use proto::convert_v10_rpc as c10;
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

/// model -> prost -> bytes -> prost -> model equals the input.
macro_rules! exact {
    ($x:expr, $to:path, $from:path) => {{
        let x = $x;
        let p = wire(&$to(x.clone()).expect("model converts to prost"));
        assert_eq!($from(p).expect("prost converts back"), x);
    }};
}

// ---------------------------------------------------------------------------
// v0.3

fn message03() -> m03::message::Message {
    use m03::part::{Kind, Part, TextPart};
    m03::message::Message {
        kind: Kind::new(),
        message_id: "m1".into(),
        context_id: Some("c1".into()),
        task_id: None,
        role: m03::message::Role::User,
        parts: vec![Part::Text(TextPart {
            kind: Kind::new(),
            text: "hi".into(),
            metadata: None,
            extra: Extras::new(),
        })],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
        extra: Extras::new(),
    }
}

fn push03(id: Option<&str>) -> m03::push_config::PushNotificationConfig {
    m03::push_config::PushNotificationConfig {
        id: id.map(Into::into),
        url: "https://hook.example/cb".into(),
        token: Some("tok".into()),
        authentication: Some(m03::push_config::PushNotificationAuthenticationInfo {
            schemes: vec!["Bearer".into(), "Basic".into()],
            credentials: Some("secret".into()),
            extra: Extras::new(),
        }),
        extra: Extras::new(),
    }
}

fn task_push03(id: Option<&str>) -> m03::push_config::TaskPushNotificationConfig {
    m03::push_config::TaskPushNotificationConfig {
        task_id: "t1".into(),
        push_notification_config: push03(id),
        extra: Extras::new(),
    }
}

#[test]
fn v03_names() {
    assert_eq!(c03::task_name("t1").unwrap(), "tasks/t1");
    assert_eq!(c03::parse_task_name("tasks/t1").unwrap(), "t1");
    assert_eq!(
        c03::push_config_name("t1", "c1").unwrap(),
        "tasks/t1/pushNotificationConfigs/c1"
    );
    assert_eq!(
        c03::parse_push_config_name("tasks/t1/pushNotificationConfigs/c1").unwrap(),
        ("t1".to_owned(), "c1".to_owned())
    );
    for bad in [
        "",
        "t1",
        "tasks/",
        "tasks",
        "task/t1",
        "/tasks/t1",
        "tasks/t1/",
        "tasks/a/b",
        "Tasks/t1",
        "tasks/t1/pushNotificationConfigs/c1",
    ] {
        assert!(c03::parse_task_name(bad).is_err(), "{bad:?}");
    }
    for bad in [
        "",
        "tasks/t1",
        "tasks/t1/pushNotificationConfigs",
        "tasks/t1/pushNotificationConfigs/",
        "tasks//pushNotificationConfigs/c1",
        "tasks/t1/pushNotificationConfigs/c1/x",
        "tasks/t1/pushnotificationconfigs/c1",
        "tasks/t1/x/pushNotificationConfigs/c1",
        "task/t1/pushNotificationConfigs/c1",
        "tasks/t1/pushNotificationConfigs/c1/pushNotificationConfigs/c2",
    ] {
        assert!(c03::parse_push_config_name(bad).is_err(), "{bad:?}");
    }
    for bad in ["", "a/b"] {
        assert!(c03::task_name(bad).is_err());
        assert!(c03::push_config_name(bad, "c").is_err());
        assert!(c03::push_config_name("t", bad).is_err());
    }
}

#[test]
fn v03_push_configs_round_trip_exactly() {
    exact!(
        push03(Some("c1")),
        c03::push_config_to_pb,
        c03::push_config_from_pb
    );
    exact!(
        push03(None),
        c03::push_config_to_pb,
        c03::push_config_from_pb
    );
    let tp = task_push03(Some("c1"));
    let p = c03::task_push_config_to_pb(tp.clone()).unwrap();
    assert_eq!(p.name, "tasks/t1/pushNotificationConfigs/c1");
    let inner = p.push_notification_config.as_ref().unwrap();
    assert_eq!(inner.id, "c1");
    assert_eq!(inner.authentication.as_ref().unwrap().schemes.len(), 2);
    exact!(
        tp,
        c03::task_push_config_to_pb,
        c03::task_push_config_from_pb
    );
    exact!(
        vec![task_push03(Some("c1")), task_push03(Some("c2"))],
        c03::list_push_configs_response_to_pb,
        c03::list_push_configs_response_from_pb
    );
    exact!(
        Vec::new(),
        c03::list_push_configs_response_to_pb,
        c03::list_push_configs_response_from_pb
    );
}

#[test]
fn v03_push_config_without_id_takes_the_task_id() {
    let p = c03::task_push_config_to_pb(task_push03(None)).unwrap();
    assert_eq!(p.name, "tasks/t1/pushNotificationConfigs/t1");
    let back = c03::task_push_config_from_pb(p).unwrap();
    assert_eq!(back, task_push03(Some("t1")));
}

#[test]
fn v03_task_push_config_rejects_bad_input() {
    let good = c03::task_push_config_to_pb(task_push03(Some("c1"))).unwrap();
    let mut p = good.clone();
    p.name = "tasks/t1".into();
    assert!(c03::task_push_config_from_pb(p).is_err());
    let mut p = good.clone();
    p.name.clear();
    assert!(c03::task_push_config_from_pb(p).is_err());
    let mut p = good.clone();
    p.push_notification_config = None;
    assert!(c03::task_push_config_from_pb(p).is_err());
    let mut p = good.clone();
    if let Some(c) = p.push_notification_config.as_mut() {
        c.id = "other".into();
    }
    assert!(c03::task_push_config_from_pb(p).is_err());
    // An empty inner id is filled from the name.
    let mut p = good;
    if let Some(c) = p.push_notification_config.as_mut() {
        c.id.clear();
    }
    assert_eq!(
        c03::task_push_config_from_pb(p).unwrap(),
        task_push03(Some("c1"))
    );
    let mut bad = task_push03(Some("c1"));
    bad.task_id = "a/b".into();
    assert!(c03::task_push_config_to_pb(bad).is_err());
}

fn send03() -> m03::params::MessageSendParams {
    m03::params::MessageSendParams {
        message: message03(),
        configuration: Some(m03::params::MessageSendConfiguration {
            accepted_output_modes: Some(vec!["text/plain".into()]),
            push_notification_config: Some(push03(Some("c1"))),
            history_length: Some(5),
            blocking: Some(false),
            extra: Extras::new(),
        }),
        metadata: meta(json!({"k": [1, "v"]})),
        extra: Extras::new(),
    }
}

#[test]
fn v03_send_params_round_trip_exactly() {
    let s = send03();
    let p = c03::send_params_to_pb(s.clone()).unwrap();
    let c = p.configuration.as_ref().unwrap();
    assert!(!c.blocking);
    assert_eq!(c.history_length, 5);
    assert_eq!(c.push_notification.as_ref().unwrap().id, "c1");
    exact!(s, c03::send_params_to_pb, c03::send_params_from_pb);

    let mut bare = send03();
    bare.configuration = None;
    bare.metadata = None;
    exact!(bare, c03::send_params_to_pb, c03::send_params_from_pb);
}

#[test]
fn v03_send_params_documented_losses() {
    let mut s = send03();
    if let Some(c) = s.configuration.as_mut() {
        c.blocking = None;
        c.history_length = Some(0);
        c.accepted_output_modes = Some(vec![]);
        c.extra.insert("x-y".into(), json!(1));
    }
    s.extra.insert("x-z".into(), json!(2));
    let p = wire(&c03::send_params_to_pb(s).unwrap());
    let c = p.configuration.as_ref().unwrap();
    assert!(c.blocking, "absent blocking = blocking");
    assert_eq!(c.history_length, 0);
    let back = c03::send_params_from_pb(p).unwrap();
    let c = back.configuration.unwrap();
    assert_eq!(c.blocking, Some(true));
    assert_eq!(c.history_length, None);
    assert_eq!(c.accepted_output_modes, None);
    assert!(c.extra.is_empty() && back.extra.is_empty());
}

#[test]
fn v03_send_request_without_message_is_an_error() {
    let mut p = c03::send_params_to_pb(send03()).unwrap();
    p.request = None;
    assert!(c03::send_params_from_pb(p).is_err());
}

#[test]
fn v03_task_requests_round_trip_exactly() {
    let q = m03::params::TaskQueryParams {
        id: "t1".into(),
        history_length: Some(3),
        metadata: None,
        extra: Extras::new(),
    };
    let p = c03::get_task_to_pb(q.clone()).unwrap();
    assert_eq!(p.name, "tasks/t1");
    assert_eq!(p.history_length, 3);
    exact!(q.clone(), c03::get_task_to_pb, c03::get_task_from_pb);
    exact!(
        m03::params::TaskQueryParams {
            history_length: None,
            ..q
        },
        c03::get_task_to_pb,
        c03::get_task_from_pb
    );

    let id = m03::params::TaskIdParams {
        id: "t1".into(),
        metadata: None,
        extra: Extras::new(),
    };
    assert_eq!(c03::cancel_task_to_pb(id.clone()).unwrap().name, "tasks/t1");
    exact!(id.clone(), c03::cancel_task_to_pb, c03::cancel_task_from_pb);
    exact!(
        id.clone(),
        c03::task_subscription_to_pb,
        c03::task_subscription_from_pb
    );

    // metadata has no slot in the v0.3 proto requests.
    let with_meta = m03::params::TaskIdParams {
        metadata: meta(json!({"a": 1})),
        ..id.clone()
    };
    let back = c03::cancel_task_from_pb(c03::cancel_task_to_pb(with_meta).unwrap()).unwrap();
    assert_eq!(back, id);
}

#[test]
fn v03_task_requests_reject_malformed_names() {
    for bad in ["", "t1", "tasks/", "tasks/a/b", "projects/p/tasks/t1"] {
        let r = v03::GetTaskRequest {
            name: bad.into(),
            history_length: 0,
        };
        assert!(c03::get_task_from_pb(r).is_err(), "{bad:?}");
        let r = v03::CancelTaskRequest { name: bad.into() };
        assert!(c03::cancel_task_from_pb(r).is_err(), "{bad:?}");
        let r = v03::TaskSubscriptionRequest { name: bad.into() };
        assert!(c03::task_subscription_from_pb(r).is_err(), "{bad:?}");
        let r = v03::ListTaskPushNotificationConfigRequest {
            parent: bad.into(),
            page_size: 0,
            page_token: String::new(),
        };
        assert!(c03::list_push_configs_from_pb(r).is_err(), "{bad:?}");
    }
    for bad in ["", "tasks/t1", "tasks/t1/pushNotificationConfigs/", "x"] {
        let r = v03::GetTaskPushNotificationConfigRequest { name: bad.into() };
        assert!(c03::get_push_config_from_pb(r).is_err(), "{bad:?}");
        let r = v03::DeleteTaskPushNotificationConfigRequest { name: bad.into() };
        assert!(c03::delete_push_config_from_pb(r).is_err(), "{bad:?}");
    }
    let q = m03::params::TaskIdParams {
        id: String::new(),
        metadata: None,
        extra: Extras::new(),
    };
    assert!(c03::cancel_task_to_pb(q).is_err());
}

#[test]
fn v03_create_push_config() {
    let c = task_push03(Some("c1"));
    let p = wire(&c03::create_push_config_to_pb(c.clone()).unwrap());
    assert_eq!(p.parent, "tasks/t1");
    assert_eq!(p.config_id, "c1");
    assert_eq!(
        p.config.as_ref().unwrap().name,
        "tasks/t1/pushNotificationConfigs/c1"
    );
    assert_eq!(c03::create_push_config_from_pb(p.clone()).unwrap(), c);

    // Without a config id everything id-ish stays empty, and comes back absent.
    exact!(
        task_push03(None),
        c03::create_push_config_to_pb,
        c03::create_push_config_from_pb
    );

    // Any one of the three places suffices.
    let mut q = p.clone();
    q.config_id.clear();
    if let Some(cfg) = q.config.as_mut() {
        cfg.push_notification_config.as_mut().unwrap().id.clear();
    }
    assert_eq!(c03::create_push_config_from_pb(q).unwrap(), c);
    let mut q = p.clone();
    if let Some(cfg) = q.config.as_mut() {
        cfg.name.clear();
        cfg.push_notification_config.as_mut().unwrap().id.clear();
    }
    assert_eq!(c03::create_push_config_from_pb(q).unwrap(), c);
    // A name that ends at the collection names no config: the id is absent,
    // or comes from the other places.
    let mut q = p.clone();
    if let Some(cfg) = q.config.as_mut() {
        cfg.name = "tasks/t1/pushNotificationConfigs/".into();
    }
    assert_eq!(c03::create_push_config_from_pb(q.clone()).unwrap(), c);
    q.config_id.clear();
    if let Some(cfg) = q.config.as_mut() {
        cfg.push_notification_config.as_mut().unwrap().id.clear();
    }
    assert_eq!(
        c03::create_push_config_from_pb(q).unwrap(),
        task_push03(None)
    );

    // Malformed or conflicting input.
    let mut q = p.clone();
    q.parent = "tasks/t1/x".into();
    assert!(c03::create_push_config_from_pb(q).is_err());
    let mut q = p.clone();
    q.config_id = "c2".into();
    assert!(c03::create_push_config_from_pb(q).is_err());
    let mut q = p.clone();
    if let Some(cfg) = q.config.as_mut() {
        cfg.name = "tasks/t2/pushNotificationConfigs/c1".into();
    }
    assert!(c03::create_push_config_from_pb(q).is_err());
    let mut q = p.clone();
    if let Some(cfg) = q.config.as_mut() {
        cfg.name = "tasks/t1".into();
    }
    assert!(c03::create_push_config_from_pb(q).is_err());
    let mut q = p.clone();
    q.config = None;
    assert!(c03::create_push_config_from_pb(q).is_err());
    let mut q = p;
    if let Some(cfg) = q.config.as_mut() {
        cfg.push_notification_config = None;
    }
    assert!(c03::create_push_config_from_pb(q).is_err());
}

#[test]
fn v03_push_config_requests_round_trip_exactly() {
    let g = m03::params::GetTaskPushNotificationConfigParams {
        id: "t1".into(),
        push_notification_config_id: Some("c1".into()),
        metadata: None,
        extra: Extras::new(),
    };
    assert_eq!(
        c03::get_push_config_to_pb(g.clone()).unwrap().name,
        "tasks/t1/pushNotificationConfigs/c1"
    );
    exact!(
        g.clone(),
        c03::get_push_config_to_pb,
        c03::get_push_config_from_pb
    );
    // Absent config id: the task's default config, stored under the task id.
    let no_id = m03::params::GetTaskPushNotificationConfigParams {
        push_notification_config_id: None,
        ..g
    };
    assert_eq!(
        c03::get_push_config_to_pb(no_id).unwrap().name,
        "tasks/t1/pushNotificationConfigs/t1"
    );

    let l = m03::params::ListTaskPushNotificationConfigParams {
        id: "t1".into(),
        metadata: None,
        extra: Extras::new(),
    };
    assert_eq!(
        c03::list_push_configs_to_pb(l.clone()).unwrap().parent,
        "tasks/t1"
    );
    exact!(
        l,
        c03::list_push_configs_to_pb,
        c03::list_push_configs_from_pb
    );

    let d = m03::params::DeleteTaskPushNotificationConfigParams {
        id: "t1".into(),
        push_notification_config_id: "c1".into(),
        metadata: None,
        extra: Extras::new(),
    };
    assert_eq!(
        c03::delete_push_config_to_pb(d.clone()).unwrap().name,
        "tasks/t1/pushNotificationConfigs/c1"
    );
    exact!(
        d,
        c03::delete_push_config_to_pb,
        c03::delete_push_config_from_pb
    );

    let card = wire(&c03::get_agent_card_to_pb().unwrap());
    c03::get_agent_card_from_pb(card).unwrap();
}

#[test]
fn v03_send_response() {
    let x = m03::event::StreamEvent::Message(message03());
    exact!(x, c03::send_response_to_pb, c03::send_response_from_pb);
}

// ---------------------------------------------------------------------------
// v1.0

fn message10() -> m10::message::Message {
    m10::message::Message {
        message_id: "m1".into(),
        context_id: Some("c1".into()),
        task_id: None,
        role: m10::message::Role::Agent,
        parts: vec![m10::part::Part {
            content: m10::part::PartContent::Text("hi".into()),
            metadata: None,
            filename: None,
            media_type: None,
            extra: Extras::new(),
        }],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
        extra: Extras::new(),
    }
}

fn task10() -> m10::task::Task {
    m10::task::Task {
        id: "t1".into(),
        context_id: Some("c1".into()),
        status: m10::task::TaskStatus {
            state: m10::task::TaskState::Working,
            message: None,
            timestamp: Some("2025-04-02T16:59:25.331Z".into()),
            extra: Extras::new(),
        },
        artifacts: None,
        history: Some(vec![message10()]),
        metadata: None,
        extra: Extras::new(),
    }
}

fn push10(task: Option<&str>) -> m10::push_config::TaskPushNotificationConfig {
    m10::push_config::TaskPushNotificationConfig {
        tenant: Some("ten".into()),
        id: Some("c1".into()),
        task_id: task.map(Into::into),
        url: "https://hook.example/cb".into(),
        token: Some("tok".into()),
        authentication: Some(m10::push_config::AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("secret".into()),
            extra: Extras::new(),
        }),
        extra: Extras::new(),
    }
}

#[test]
fn v10_push_configs_round_trip_exactly() {
    let p = c10::task_push_config_to_pb(push10(Some("t1"))).unwrap();
    assert_eq!((p.task_id.as_str(), p.id.as_str()), ("t1", "c1"));
    exact!(
        push10(Some("t1")),
        c10::task_push_config_to_pb,
        c10::task_push_config_from_pb
    );
    let minimal = m10::push_config::TaskPushNotificationConfig {
        tenant: None,
        id: None,
        task_id: None,
        url: "u".into(),
        token: None,
        authentication: None,
        extra: Extras::new(),
    };
    exact!(
        minimal,
        c10::task_push_config_to_pb,
        c10::task_push_config_from_pb
    );
    exact!(
        m10::params::ListTaskPushNotificationConfigsResponse {
            configs: Some(vec![push10(Some("t1")), push10(Some("t2"))]),
            next_page_token: Some("next".into()),
            extra: Extras::new(),
        },
        c10::list_push_configs_response_to_pb,
        c10::list_push_configs_response_from_pb
    );
    // `configs` is required: an empty list comes back present.
    let empty = m10::params::ListTaskPushNotificationConfigsResponse {
        configs: None,
        next_page_token: None,
        extra: Extras::new(),
    };
    let back = c10::list_push_configs_response_from_pb(
        c10::list_push_configs_response_to_pb(empty).unwrap(),
    )
    .unwrap();
    assert_eq!(back.configs, Some(vec![]));
}

fn send10() -> m10::params::SendMessageRequest {
    m10::params::SendMessageRequest {
        tenant: Some("ten".into()),
        message: message10(),
        configuration: Some(m10::params::SendMessageConfiguration {
            accepted_output_modes: Some(vec!["text/plain".into()]),
            task_push_notification_config: Some(push10(None)),
            history_length: Some(0),
            return_immediately: Some(true),
            extra: Extras::new(),
        }),
        metadata: meta(json!({"k": {"n": null}})),
        extra: Extras::new(),
    }
}

#[test]
fn v10_send_round_trips_exactly() {
    let s = send10();
    let p = c10::send_request_to_pb(s.clone()).unwrap();
    assert_eq!(p.tenant, "ten");
    let c = p.configuration.as_ref().unwrap();
    assert_eq!(c.history_length, Some(0), "0 = no history, kept");
    assert!(c.return_immediately);
    exact!(s, c10::send_request_to_pb, c10::send_request_from_pb);

    let mut bare = send10();
    bare.tenant = None;
    bare.metadata = None;
    bare.configuration = Some(m10::params::SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: None,
        extra: Extras::new(),
    });
    exact!(bare, c10::send_request_to_pb, c10::send_request_from_pb);

    // returnImmediately false has no presence.
    let mut f = send10();
    if let Some(c) = f.configuration.as_mut() {
        c.return_immediately = Some(false);
    }
    let back = c10::send_request_from_pb(c10::send_request_to_pb(f).unwrap()).unwrap();
    assert_eq!(back.configuration.unwrap().return_immediately, None);

    let mut p = c10::send_request_to_pb(send10()).unwrap();
    p.message = None;
    assert!(c10::send_request_from_pb(p).is_err());

    exact!(
        m10::params::SendMessageResponse::Task(task10()),
        c10::send_response_to_pb,
        c10::send_response_from_pb
    );
    exact!(
        m10::params::SendMessageResponse::Message(message10()),
        c10::send_response_to_pb,
        c10::send_response_from_pb
    );
    assert!(c10::send_response_from_pb(v10::SendMessageResponse { payload: None }).is_err());
}

#[test]
fn v10_task_requests_round_trip_exactly() {
    exact!(
        m10::params::GetTaskRequest {
            tenant: Some("ten".into()),
            id: "t1".into(),
            history_length: Some(0),
            extra: Extras::new(),
        },
        c10::get_task_to_pb,
        c10::get_task_from_pb
    );
    exact!(
        m10::params::GetTaskRequest {
            tenant: None,
            id: "t1".into(),
            history_length: None,
            extra: Extras::new(),
        },
        c10::get_task_to_pb,
        c10::get_task_from_pb
    );
    exact!(
        m10::params::CancelTaskRequest {
            tenant: Some("ten".into()),
            id: "t1".into(),
            metadata: meta(json!({"why": "bored"})),
            extra: Extras::new(),
        },
        c10::cancel_task_to_pb,
        c10::cancel_task_from_pb
    );
    exact!(
        m10::params::SubscribeToTaskRequest {
            tenant: Some("ten".into()),
            id: "t1".into(),
            extra: Extras::new(),
        },
        c10::subscribe_to_pb,
        c10::subscribe_from_pb
    );
    exact!(
        m10::params::GetExtendedAgentCardRequest {
            tenant: Some("ten".into()),
            extra: Extras::new(),
        },
        c10::get_extended_card_to_pb,
        c10::get_extended_card_from_pb
    );
}

#[test]
fn v10_list_tasks_round_trips_exactly() {
    let r = m10::params::ListTasksRequest {
        tenant: Some("ten".into()),
        context_id: Some("c1".into()),
        status: Some(m10::task::TaskState::InputRequired),
        page_size: Some(0),
        page_token: Some("p2".into()),
        history_length: Some(2),
        status_timestamp_after: Some("2025-04-02T16:59:25Z".into()),
        include_artifacts: Some(false),
        extra: Extras::new(),
    };
    let p = c10::list_tasks_to_pb(r.clone()).unwrap();
    assert_eq!(p.status, v10::TaskState::InputRequired as i32);
    assert_eq!(
        p.status_timestamp_after.as_ref().unwrap().seconds,
        1743613165
    );
    exact!(r.clone(), c10::list_tasks_to_pb, c10::list_tasks_from_pb);
    let empty = m10::params::ListTasksRequest {
        tenant: None,
        context_id: None,
        status: None,
        page_size: None,
        page_token: None,
        history_length: None,
        status_timestamp_after: None,
        include_artifacts: None,
        extra: Extras::new(),
    };
    exact!(empty, c10::list_tasks_to_pb, c10::list_tasks_from_pb);

    let mut bad = r.clone();
    bad.status_timestamp_after = Some("yesterday".into());
    assert!(c10::list_tasks_to_pb(bad).is_err());
    let mut bad = r;
    bad.status = Some(m10::task::TaskState::Unrecognized(
        "TASK_STATE_NAPPING".into(),
    ));
    assert!(c10::list_tasks_to_pb(bad).is_err());

    let resp = m10::params::ListTasksResponse {
        tasks: Some(vec![task10()]),
        next_page_token: Some(String::new()),
        page_size: Some(50),
        total_size: Some(1),
        extra: Extras::new(),
    };
    exact!(
        resp,
        c10::list_tasks_response_to_pb,
        c10::list_tasks_response_from_pb
    );
    // All members are required and come back present.
    let back = c10::list_tasks_response_from_pb(v10::ListTasksResponse::default()).unwrap();
    assert_eq!(back.tasks, Some(vec![]));
    assert_eq!(back.next_page_token.as_deref(), Some(""));
    assert_eq!((back.page_size, back.total_size), (Some(0), Some(0)));
}

#[test]
fn v10_push_config_requests_round_trip_exactly() {
    exact!(
        m10::params::GetTaskPushNotificationConfigRequest {
            tenant: Some("ten".into()),
            task_id: "t1".into(),
            id: Some("c1".into()),
            extra: Extras::new(),
        },
        c10::get_push_config_to_pb,
        c10::get_push_config_from_pb
    );
    exact!(
        m10::params::ListTaskPushNotificationConfigsRequest {
            tenant: Some("ten".into()),
            task_id: "t1".into(),
            page_size: Some(10),
            page_token: Some("p".into()),
            extra: Extras::new(),
        },
        c10::list_push_configs_to_pb,
        c10::list_push_configs_from_pb
    );
    exact!(
        m10::params::DeleteTaskPushNotificationConfigRequest {
            tenant: None,
            task_id: "t1".into(),
            id: "c1".into(),
            extra: Extras::new(),
        },
        c10::delete_push_config_to_pb,
        c10::delete_push_config_from_pb
    );
}

// ---------------------------------------------------------------------------
// Properties over arbitrary models

/// Conversion succeeds, the bytes decode to the same prost message, and the
/// model read back converts again to the same prost message and model.
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

/// The strategy's lossless domain is also lossless here: exact round trip.
macro_rules! round_trip {
    ($x:expr, $to:path, $from:path) => {{
        let x = $x;
        let p = wire(&$to(x.clone()).expect("model converts to prost"));
        prop_assert_eq!($from(p).expect("prost converts back"), x);
    }};
}

/// Drops what no proto can carry (unknown members) from a value.
fn no_extra<T: serde::Serialize + serde::de::DeserializeOwned>(x: &T) -> T {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !k.starts_with("x-"));
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(x).expect("serializes");
    strip(&mut v);
    serde_json::from_value(v).expect("deserializes")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn v03_push_config_is_a_fixed_point(x in sr::v03_push_config()) {
        fixed_point!(x, c03::push_config_to_pb, c03::push_config_from_pb);
    }

    #[test]
    fn v03_auth_any_is_a_fixed_point(x in sr::v03_auth_any()) {
        fixed_point!(x, c03::auth_to_pb, c03::auth_from_pb);
    }

    #[test]
    fn v03_task_push_config_is_a_fixed_point(x in sr::v03_task_push_config()) {
        fixed_point!(x.clone(), c03::task_push_config_to_pb, c03::task_push_config_from_pb);
        fixed_point!(x, c03::create_push_config_to_pb, c03::create_push_config_from_pb);
    }

    #[test]
    fn v03_push_config_list_is_a_fixed_point(x in sr::v03_push_config_list()) {
        fixed_point!(
            x,
            c03::list_push_configs_response_to_pb,
            c03::list_push_configs_response_from_pb
        );
    }

    #[test]
    fn v03_send_params_are_a_fixed_point(x in sr::v03_send_params()) {
        fixed_point!(x, c03::send_params_to_pb, c03::send_params_from_pb);
    }

    #[test]
    fn v03_task_requests_are_a_fixed_point(
        q in sr::v03_task_query(),
        c in sr::v03_task_id(true),
        s in sr::v03_task_id(false),
    ) {
        round_trip!(no_extra(&q), c03::get_task_to_pb, c03::get_task_from_pb);
        fixed_point!(c, c03::cancel_task_to_pb, c03::cancel_task_from_pb);
        round_trip!(no_extra(&s), c03::task_subscription_to_pb, c03::task_subscription_from_pb);
    }

    #[test]
    fn v03_push_config_requests_are_a_fixed_point(
        g in sr::v03_get_push(),
        l in sr::v03_list_push(),
        d in sr::v03_delete_push(),
    ) {
        fixed_point!(g, c03::get_push_config_to_pb, c03::get_push_config_from_pb);
        round_trip!(no_extra(&l), c03::list_push_configs_to_pb, c03::list_push_configs_from_pb);
        round_trip!(no_extra(&d), c03::delete_push_config_to_pb, c03::delete_push_config_from_pb);
    }

    #[test]
    fn v03_send_response_is_a_fixed_point(x in prop_oneof![
        sp::v03_task().prop_map(m03::event::StreamEvent::Task),
        sp::v03_message().prop_map(m03::event::StreamEvent::Message),
    ]) {
        fixed_point!(x, c03::send_response_to_pb, c03::send_response_from_pb);
    }

    #[test]
    fn v10_push_configs_are_a_fixed_point(
        a in sr::v10_auth(),
        f in sr::v10_task_push_config(),
        i in sr::v10_inline_push_config(),
        l in sr::v10_push_config_list(),
    ) {
        fixed_point!(a, c10::auth_to_pb, c10::auth_from_pb);
        fixed_point!(f, c10::task_push_config_to_pb, c10::task_push_config_from_pb);
        fixed_point!(i, c10::task_push_config_to_pb, c10::task_push_config_from_pb);
        fixed_point!(
            l,
            c10::list_push_configs_response_to_pb,
            c10::list_push_configs_response_from_pb
        );
    }

    #[test]
    fn v10_send_request_is_a_fixed_point(x in sr::v10_send_request()) {
        fixed_point!(x, c10::send_request_to_pb, c10::send_request_from_pb);
    }

    #[test]
    fn v10_send_response_is_a_fixed_point(x in prop_oneof![
        sp::v10_task().prop_map(m10::params::SendMessageResponse::Task),
        sp::v10_message().prop_map(m10::params::SendMessageResponse::Message),
    ]) {
        fixed_point!(x, c10::send_response_to_pb, c10::send_response_from_pb);
    }

    #[test]
    fn v10_requests_are_a_fixed_point(
        g in sr::v10_get_task(),
        c in sr::v10_cancel(),
        s in sr::v10_subscribe(),
        gp in sr::v10_get_push(),
        lp in sr::v10_list_push(),
        dp in sr::v10_delete_push(),
    ) {
        round_trip!(no_extra(&g), c10::get_task_to_pb, c10::get_task_from_pb);
        fixed_point!(c, c10::cancel_task_to_pb, c10::cancel_task_from_pb);
        round_trip!(no_extra(&s), c10::subscribe_to_pb, c10::subscribe_from_pb);
        round_trip!(no_extra(&gp), c10::get_push_config_to_pb, c10::get_push_config_from_pb);
        round_trip!(no_extra(&lp), c10::list_push_configs_to_pb, c10::list_push_configs_from_pb);
        round_trip!(no_extra(&dp), c10::delete_push_config_to_pb, c10::delete_push_config_from_pb);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..96)) {
        decode_and_convert_all(&b);
    }

    #[test]
    fn mutated_encodings_never_panic(
        seed in prop_oneof![
            sr::v03_task_push_config()
                .prop_map(|c| c03::create_push_config_to_pb(c).map(|p| p.encode_to_vec())),
            sr::v03_send_params().prop_map(|x| c03::send_params_to_pb(x).map(|p| p.encode_to_vec())),
            sr::v03_get_push().prop_map(|x| c03::get_push_config_to_pb(x).map(|p| p.encode_to_vec())),
            sr::v03_push_config_list()
                .prop_map(|x| c03::list_push_configs_response_to_pb(x).map(|p| p.encode_to_vec())),
            sr::v10_send_request().prop_map(|x| c10::send_request_to_pb(x).map(|p| p.encode_to_vec())),
            sr::v10_push_config_list()
                .prop_map(|x| c10::list_push_configs_response_to_pb(x).map(|p| p.encode_to_vec())),
        ],
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = seed.expect("strategy values convert");
        for (i, v) in edits {
            if !b.is_empty() {
                let i = i.index(b.len());
                b[i] = v;
            }
        }
        decode_and_convert_all(&b);
        let n = cut.index(b.len() + 1);
        decode_and_convert_all(&b[..n]);
    }
}

/// Decodes `b` as every request / response message of both versions and
/// converts whatever decodes (the results do not matter, only that nothing
/// panics).
fn decode_and_convert_all(b: &[u8]) {
    macro_rules! try_all {
        ($($ty:ty => $from:path),* $(,)?) => {$(
            if let Ok(p) = <$ty>::decode(b) {
                let _ = $from(p);
            }
        )*};
    }
    try_all!(
            v03::PushNotificationConfig => c03::push_config_from_pb,
            v03::TaskPushNotificationConfig => c03::task_push_config_from_pb,
            v03::SendMessageRequest => c03::send_params_from_pb,
            v03::SendMessageResponse => c03::send_response_from_pb,
            v03::GetTaskRequest => c03::get_task_from_pb,
            v03::CancelTaskRequest => c03::cancel_task_from_pb,
            v03::TaskSubscriptionRequest => c03::task_subscription_from_pb,
            v03::CreateTaskPushNotificationConfigRequest => c03::create_push_config_from_pb,
            v03::GetTaskPushNotificationConfigRequest => c03::get_push_config_from_pb,
            v03::ListTaskPushNotificationConfigRequest => c03::list_push_configs_from_pb,
            v03::ListTaskPushNotificationConfigResponse => c03::list_push_configs_response_from_pb,
            v03::DeleteTaskPushNotificationConfigRequest => c03::delete_push_config_from_pb,
            v03::GetAgentCardRequest => c03::get_agent_card_from_pb,
            v10::TaskPushNotificationConfig => c10::task_push_config_from_pb,
            v10::SendMessageRequest => c10::send_request_from_pb,
            v10::SendMessageResponse => c10::send_response_from_pb,
            v10::GetTaskRequest => c10::get_task_from_pb,
            v10::ListTasksRequest => c10::list_tasks_from_pb,
            v10::ListTasksResponse => c10::list_tasks_response_from_pb,
            v10::CancelTaskRequest => c10::cancel_task_from_pb,
            v10::SubscribeToTaskRequest => c10::subscribe_from_pb,
            v10::GetTaskPushNotificationConfigRequest => c10::get_push_config_from_pb,
            v10::ListTaskPushNotificationConfigsRequest => c10::list_push_configs_from_pb,
            v10::ListTaskPushNotificationConfigsResponse => c10::list_push_configs_response_from_pb,
            v10::DeleteTaskPushNotificationConfigRequest => c10::delete_push_config_from_pb,
            v10::GetExtendedAgentCardRequest => c10::get_extended_card_from_pb,
    );
}
