//! Round-trip properties of the push-config, params, JSON-RPC envelope and
//! error translators: same-version serde round trips, `to_v03(to_v10(x)) ==
//! x` and `to_v10(to_v03(y)) == y` on the lossless domain, and the normal
//! forms of the lossy cases.

use proptest::option;
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use translate::method::Method;
use translate::strategy::rpc as s;
use translate::{code, jsonrpc, params, push_config, v03, v10, Version};

/// Serialises and parses `x` again.
fn reparse<T: Serialize + DeserializeOwned>(x: &T) -> T {
    let bytes = serde_json::to_vec(x).expect("serialise");
    serde_json::from_slice(&bytes).expect("parse")
}

/// Asserts `back(forth(x)) == x` and that `x` survives serde.
macro_rules! round_trip {
    ($x:expr, $forth:expr, $back:expr) => {{
        let x = $x;
        prop_assert_eq!(&reparse(&x), &x);
        let y = $forth(x.clone()).expect("forth");
        let y = reparse(&y);
        let z = $back(y).expect("back");
        prop_assert_eq!(z, x);
    }};
}

fn cfg() -> ProptestConfig {
    ProptestConfig::with_cases(1000)
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn auth_info_v03(x in s::v03_auth()) {
        round_trip!(x, push_config::auth_to_v10, push_config::auth_to_v03);
    }

    #[test]
    fn auth_info_v10(x in s::v10_auth()) {
        round_trip!(x, push_config::auth_to_v03, push_config::auth_to_v10);
    }

    #[test]
    fn auth_info_normal_form(x in s::v03_auth_any()) {
        match push_config::auth_to_v10(x.clone()) {
            Ok(y) => {
                let back = push_config::auth_to_v03(y).unwrap();
                prop_assert_eq!(back.schemes, vec![x.schemes[0].clone()]);
                prop_assert_eq!(back.credentials, x.credentials);
            }
            Err(e) => {
                prop_assert!(x.schemes.is_empty());
                prop_assert_eq!(e.jsonrpc_code(), -32602);
            }
        }
    }

    #[test]
    fn push_config_v03(x in s::v03_task_push_config()) {
        round_trip!(x, push_config::to_v10, push_config::to_v03);
    }

    #[test]
    fn push_config_v10(x in s::v10_task_push_config()) {
        round_trip!(x, push_config::to_v03, push_config::to_v10);
    }

    #[test]
    fn inline_push_config_v03(x in s::v03_push_config()) {
        round_trip!(x, push_config::config_to_v10, push_config::config_to_v03);
    }

    #[test]
    fn inline_push_config_v10(x in s::v10_inline_push_config()) {
        round_trip!(x, push_config::config_to_v03, push_config::config_to_v10);
    }

    #[test]
    fn push_config_tenant_is_dropped(x in s::v10_task_push_config(), t in "[a-z]{1,4}") {
        let mut with = x.clone();
        with.tenant = Some(t);
        prop_assert_eq!(push_config::to_v03(with).unwrap(), push_config::to_v03(x).unwrap());
    }

    #[test]
    fn send_params_v03(x in s::v03_send_params()) {
        round_trip!(x, params::to_v10, params::to_v03);
    }

    #[test]
    fn send_params_v10(x in s::v10_send_request()) {
        round_trip!(x, params::to_v03, params::to_v10);
    }

    #[test]
    fn send_params_normal_form(
        x in s::v03_send_params(),
        blocking in option::of(any::<bool>()),
        history in option::of(0..5i32),
        drop_config in any::<bool>(),
    ) {
        let mut x = x;
        if drop_config {
            x.configuration = None;
        } else if let Some(c) = x.configuration.as_mut() {
            c.blocking = blocking;
            c.history_length = history;
        }
        let y = params::to_v10(x.clone()).unwrap();
        let back = params::to_v03(y.clone()).unwrap();
        let c = back.configuration.clone().expect("configuration always present");
        let want_blocking = if drop_config { true } else { blocking != Some(false) };
        prop_assert_eq!(c.blocking, Some(want_blocking));
        let want_history = if drop_config { None } else { history.filter(|h| *h > 0) };
        prop_assert_eq!(c.history_length, want_history);
        // the normal form is a fixed point
        prop_assert_eq!(params::to_v10(back.clone()).unwrap(), y);
        prop_assert_eq!(params::to_v03(params::to_v10(back.clone()).unwrap()).unwrap(), back);
    }

    #[test]
    fn v10_history_zero_and_return_immediately_false(
        x in s::v10_send_request(),
        ri in option::of(any::<bool>()),
        h in option::of(0..3i32),
    ) {
        let mut x = x;
        let mut c = x.configuration.take().unwrap_or(v10::params::SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: None,
            history_length: None,
            return_immediately: None,
            extra: Default::default(),
        });
        c.return_immediately = ri;
        c.history_length = h;
        x.configuration = Some(c);
        let v03p = params::to_v03(x.clone()).unwrap();
        let c03 = v03p.configuration.clone().unwrap();
        prop_assert_eq!(c03.blocking, Some(ri != Some(true)));
        prop_assert_eq!(c03.history_length, h);
        let again = params::to_v10(v03p).unwrap();
        let c10 = again.configuration.clone();
        prop_assert_eq!(
            c10.as_ref().and_then(|c| c.return_immediately),
            if ri == Some(true) { Some(true) } else { None }
        );
        prop_assert_eq!(c10.as_ref().and_then(|c| c.history_length), h.filter(|h| *h > 0));
    }

    #[test]
    fn send_params_tenant_dropped(x in s::v10_send_request(), t in "[a-z]{1,4}") {
        let mut with = x.clone();
        with.tenant = Some(t);
        prop_assert_eq!(params::to_v03(with).unwrap(), params::to_v03(x).unwrap());
    }

    #[test]
    fn get_task(x in s::v03_task_query(), y in s::v10_get_task()) {
        round_trip!(x, params::get_task_to_v10, params::get_task_to_v03);
        round_trip!(y, params::get_task_to_v03, params::get_task_to_v10);
    }

    #[test]
    fn get_task_metadata_dropped(x in s::v03_task_query(), m in s::metadata()) {
        let mut with = x.clone();
        with.metadata = Some(m);
        prop_assert_eq!(
            params::get_task_to_v10(with).unwrap(),
            params::get_task_to_v10(x).unwrap()
        );
    }

    #[test]
    fn cancel(x in s::v03_task_id(true), y in s::v10_cancel()) {
        round_trip!(x, params::cancel_to_v10, params::cancel_to_v03);
        round_trip!(y, params::cancel_to_v03, params::cancel_to_v10);
    }

    #[test]
    fn subscribe(x in s::v03_task_id(false), y in s::v10_subscribe()) {
        round_trip!(x, params::subscribe_to_v10, params::subscribe_to_v03);
        round_trip!(y, params::subscribe_to_v03, params::subscribe_to_v10);
    }

    #[test]
    fn get_push(x in s::v03_get_push(), y in s::v10_get_push()) {
        round_trip!(x, params::get_push_config_to_v10, params::get_push_config_to_v03);
        round_trip!(y, params::get_push_config_to_v03, params::get_push_config_to_v10);
    }

    #[test]
    fn get_push_without_a_config_id_asks_for_the_task_ids(x in s::v03_get_push(), y in s::v10_get_push()) {
        // The lossy row: each side's get without a config id.
        let x = v03::params::GetTaskPushNotificationConfigParams {
            push_notification_config_id: None,
            ..x
        };
        let sent = params::get_push_config_to_v10(x.clone()).expect("forth");
        prop_assert_eq!(sent.id.as_deref(), Some(x.id.as_str()));
        let y = v10::params::GetTaskPushNotificationConfigRequest { id: None, ..y };
        let back = params::get_push_config_to_v03(y.clone()).expect("back");
        prop_assert_eq!(back.push_notification_config_id.as_deref(), None);
        prop_assert_eq!(params::get_push_config_to_v10(back).expect("forth").id, Some(y.task_id));
    }

    #[test]
    fn list_push(x in s::v03_list_push(), y in s::v10_list_push()) {
        round_trip!(x, params::list_push_configs_to_v10, params::list_push_configs_to_v03);
        round_trip!(y, params::list_push_configs_to_v03, params::list_push_configs_to_v10);
    }

    #[test]
    fn list_push_result(x in s::v03_push_config_list(), y in s::v10_push_config_list()) {
        round_trip!(x, params::list_push_configs_result_to_v10, params::list_push_configs_result_to_v03);
        round_trip!(y, params::list_push_configs_result_to_v03, params::list_push_configs_result_to_v10);
    }

    #[test]
    fn list_push_result_page_token_dropped(y in s::v10_push_config_list(), t in "[a-z]{1,4}") {
        let mut with = y.clone();
        with.next_page_token = Some(t);
        let back = params::list_push_configs_result_to_v10(
            params::list_push_configs_result_to_v03(with).unwrap(),
        )
        .unwrap();
        prop_assert_eq!(back, y);
    }

    #[test]
    fn delete_push(x in s::v03_delete_push(), y in s::v10_delete_push()) {
        round_trip!(x, params::delete_push_config_to_v10, params::delete_push_config_to_v03);
        round_trip!(y, params::delete_push_config_to_v03, params::delete_push_config_to_v10);
    }

    #[test]
    fn errors(x in s::v03_error(), y in s::v10_error()) {
        round_trip!(x, code::error_to_v10, code::error_to_v03);
        round_trip!(y, code::error_to_v03, code::error_to_v10);
    }

    #[test]
    fn error_info_present_exactly_for_a2a_codes(x in s::v03_error()) {
        let y = code::error_to_v10(x.clone()).unwrap();
        let has_info = y
            .data
            .as_ref()
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(|d| d.get("@type"))
            == Some(&json!("type.googleapis.com/google.rpc.ErrorInfo"));
        prop_assert_eq!(has_info, (-32010..=-32001).contains(&x.code));
    }

    #[test]
    fn requests_v03(x in s::v03_request()) {
        round_trip!(x, jsonrpc::request_to_v10, jsonrpc::request_to_v03);
    }

    #[test]
    fn requests_v10(x in s::v10_request()) {
        round_trip!(x, jsonrpc::request_to_v03, jsonrpc::request_to_v10);
    }

    #[test]
    fn request_method_names_follow_the_table(x in s::v03_request()) {
        let y = jsonrpc::request_to_v10(x.clone()).unwrap();
        let (m, v) = Method::from_name(&x.method).unwrap();
        prop_assert_eq!(v, Version::V03);
        prop_assert_eq!(Some(y.method.as_str()), m.name(Version::V10));
        prop_assert_eq!(y.id, x.id);
    }

    #[test]
    fn error_responses(x in s::v03_error_response(), m in s::method(Version::V03)) {
        let name = m.name(Version::V03).unwrap();
        let v10name = m.name(Version::V10).unwrap();
        let y = jsonrpc::response_to_v10(x.clone(), name).unwrap();
        let y = reparse(&y);
        prop_assert_eq!(jsonrpc::response_to_v03(y, v10name).unwrap(), x);
    }

    #[test]
    fn list_tasks_never_reaches_v03(id in s::id()) {
        let r = v10::jsonrpc::Request {
            jsonrpc: "2.0".into(),
            id,
            method: "ListTasks".into(),
            params: Some(json!({"pageSize": 10})),
            extra: Default::default(),
        };
        prop_assert_eq!(jsonrpc::request_to_v03(r).unwrap_err().jsonrpc_code(), -32004);
    }

    #[test]
    fn push_config_list_responses(x in s::v03_push_config_list(), id in s::id()) {
        let r = v03::jsonrpc::Response {
            jsonrpc: "2.0".into(),
            id,
            result: Some(serde_json::to_value(&x).unwrap()),
            error: None,
            extra: Default::default(),
        };
        let y = jsonrpc::response_to_v10(r.clone(), "tasks/pushNotificationConfig/list").unwrap();
        let back = jsonrpc::response_to_v03(reparse(&y), "ListTaskPushNotificationConfigs").unwrap();
        prop_assert_eq!(back, r);
    }

    #[test]
    fn success_responses_v03(
        (m, x) in s::method(Version::V03).prop_flat_map(|m| s::v03_success(m).prop_map(move |x| (m, x)))
    ) {
        let y = jsonrpc::response_to_v10_for(x.clone(), m).unwrap();
        let back = jsonrpc::response_to_v03_for(reparse(&y), m).unwrap();
        prop_assert_eq!(reparse(&back), reparse(&x));
    }

    #[test]
    fn success_responses_v10(
        (m, y) in s::method(Version::V10).prop_flat_map(|m| s::v10_success(m).prop_map(move |y| (m, y)))
    ) {
        let x = jsonrpc::response_to_v03_for(y.clone(), m).unwrap();
        let back = jsonrpc::response_to_v10_for(reparse(&x), m).unwrap();
        prop_assert_eq!(reparse(&back), reparse(&y));
    }
}
