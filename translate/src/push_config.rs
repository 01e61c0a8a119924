//! Push-notification configuration translation (MAPPING-FACTS §4.10):
//! v0.3 nested `{taskId, pushNotificationConfig{id?, url, token?,
//! authentication?}}` ⇄ v1.0 flat `{tenant?, id?, taskId, url, token?,
//! authentication?}`, and `schemes[]` ⇄ `scheme`.

use crate::json::Extras;
use crate::lossy::{Direction, Lossy};
use crate::{v03, v10, TranslateError, Version};

use v03::push_config as p03;
use v10::push_config as p10;

/// Member names of v1.0 `TaskPushNotificationConfig` (proto spellings included).
const V10_CONFIG_FIELDS: &[&str] = &[
    "tenant",
    "id",
    "taskId",
    "task_id",
    "url",
    "token",
    "authentication",
];
/// Member names of v0.3 `PushNotificationConfig`.
const V03_CONFIG_FIELDS: &[&str] = &["id", "url", "token", "authentication"];
/// Member names of v0.3 `TaskPushNotificationConfig`.
const V03_TASK_CONFIG_FIELDS: &[&str] = &["taskId", "pushNotificationConfig"];
/// Member names of v1.0 `AuthenticationInfo`.
const V10_AUTH_FIELDS: &[&str] = &["scheme", "credentials"];
/// Member names of v0.3 `PushNotificationAuthenticationInfo`.
const V03_AUTH_FIELDS: &[&str] = &["schemes", "credentials"];

/// Unknown members that cross versions: those not named like a member of the
/// target type (such a member would otherwise be duplicated or misread).
pub(crate) fn carry(mut extra: Extras, reserved: &[&str]) -> Extras {
    extra.retain(|k, _| !reserved.contains(&k.as_str()));
    extra
}

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "PushNotificationAuthenticationInfo.schemes",
        direction: Direction::ToV10,
        what: "v0.3 lists several schemes, v1.0 `scheme` holds one",
        decision: "the first scheme is kept (both SDKs); an empty list is rejected; going to v0.3 `scheme` becomes a one-element list",
        fixture: "auth-info/multiple-schemes.v03.json, auth-info/multiple-schemes.v10.json, auth-info/multiple-schemes.to-v03.json, rejected/auth-info/empty-schemes.v03.json",
        at: &["authentication.schemes", "authentication.scheme"],
    },
    Lossy {
        entity: "TaskPushNotificationConfig.tenant",
        direction: Direction::ToV03,
        what: "v1.0 `tenant` has no v0.3 member",
        decision: "dropped",
        fixture: "push-config/tenant.v10.json, push-config/tenant.v03.json, push-config/tenant.to-v10.json",
        at: &["tenant"],
    },
    Lossy {
        entity: "TaskPushNotificationConfig (unknown members)",
        direction: Direction::Both,
        what: "v0.3 has two objects (outer and `pushNotificationConfig`), v1.0 one flat object",
        decision: "unknown members of both v0.3 objects are merged into the flat v1.0 object (inner first); going to v0.3 they all go to the inner `pushNotificationConfig`; members named like a field of the target are dropped",
        fixture: "push-config/outer-extras.v03.json, push-config/outer-extras.v10.json, push-config/outer-extras.to-v03.json",
        at: &[],
    },
    Lossy {
        entity: "TaskPushNotificationConfig.taskId",
        direction: Direction::ToV03,
        what: "v1.0 `taskId` may be empty/absent; v0.3 requires it",
        decision: "a full config without `taskId` is rejected going to v0.3 (inside SendMessage configuration it is not needed and is dropped, see params)",
        fixture: "rejected/push-config/missing-task-id.v10.json",
        at: &["taskId"],
    },
];

/// Translates v0.3 `PushNotificationAuthenticationInfo` to v1.0 `AuthenticationInfo`.
pub fn auth_to_v10(
    a: p03::PushNotificationAuthenticationInfo,
) -> Result<p10::AuthenticationInfo, TranslateError> {
    let scheme = a.schemes.into_iter().next().ok_or_else(|| {
        TranslateError::invalid(
            "PushNotificationAuthenticationInfo",
            "`schemes` is empty; v1.0 `scheme` is required",
        )
    })?;
    Ok(p10::AuthenticationInfo {
        scheme,
        credentials: a.credentials,
        extra: carry(a.extra, V10_AUTH_FIELDS),
    })
}

/// Translates v1.0 `AuthenticationInfo` to v0.3 (`schemes: [scheme]`).
pub fn auth_to_v03(
    a: p10::AuthenticationInfo,
) -> Result<p03::PushNotificationAuthenticationInfo, TranslateError> {
    Ok(p03::PushNotificationAuthenticationInfo {
        schemes: vec![a.scheme],
        credentials: a.credentials,
        extra: carry(a.extra, V03_AUTH_FIELDS),
    })
}

/// Translates a v0.3 `PushNotificationConfig` (as found inside
/// `MessageSendConfiguration`) to a v1.0 `TaskPushNotificationConfig`
/// without `taskId` or `tenant`.
pub fn config_to_v10(
    c: p03::PushNotificationConfig,
) -> Result<p10::TaskPushNotificationConfig, TranslateError> {
    Ok(p10::TaskPushNotificationConfig {
        tenant: None,
        id: c.id,
        task_id: None,
        url: c.url,
        token: c.token,
        authentication: c.authentication.map(auth_to_v10).transpose()?,
        extra: carry(c.extra, V10_CONFIG_FIELDS),
    })
}

/// Translates a v1.0 `TaskPushNotificationConfig` to a v0.3
/// `PushNotificationConfig`; `taskId` and `tenant` are dropped.
pub fn config_to_v03(
    c: p10::TaskPushNotificationConfig,
) -> Result<p03::PushNotificationConfig, TranslateError> {
    Ok(p03::PushNotificationConfig {
        id: c.id,
        url: c.url,
        token: c.token,
        authentication: c.authentication.map(auth_to_v03).transpose()?,
        extra: carry(c.extra, V03_CONFIG_FIELDS),
    })
}

/// Translates a v0.3 `TaskPushNotificationConfig` (nested) to v1.0 (flat).
pub fn to_v10(
    c: p03::TaskPushNotificationConfig,
) -> Result<p10::TaskPushNotificationConfig, TranslateError> {
    let mut flat = config_to_v10(c.push_notification_config)?;
    flat.task_id = Some(c.task_id);
    for (k, v) in carry(c.extra, V10_CONFIG_FIELDS) {
        flat.extra.entry(k).or_insert(v);
    }
    Ok(flat)
}

/// Translates a v1.0 `TaskPushNotificationConfig` (flat) to v0.3 (nested);
/// a missing or empty `taskId` is rejected.
pub fn to_v03(
    c: p10::TaskPushNotificationConfig,
) -> Result<p03::TaskPushNotificationConfig, TranslateError> {
    let task_id = match c.task_id.clone() {
        Some(t) if !t.is_empty() => t,
        Some(_) | None => {
            return Err(TranslateError::invalid(
                "TaskPushNotificationConfig",
                format!("`taskId` is required in A2A {}", Version::V03),
            ))
        }
    };
    let mut inner = config_to_v03(c)?;
    inner.extra = carry(inner.extra, V03_TASK_CONFIG_FIELDS);
    Ok(p03::TaskPushNotificationConfig {
        task_id,
        push_notification_config: inner,
        extra: Extras::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn v(x: impl serde::Serialize) -> Value {
        serde_json::to_value(x).unwrap()
    }

    #[test]
    fn nested_to_flat_and_back() {
        let c: p03::TaskPushNotificationConfig = serde_json::from_value(json!({
            "taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://h/x","token":"tok",
            "authentication":{"schemes":["Bearer"],"credentials":"s"}}}))
        .unwrap();
        let flat = to_v10(c.clone()).unwrap();
        assert_eq!(
            v(&flat),
            json!({"id":"c1","taskId":"t1","url":"https://h/x","token":"tok",
                   "authentication":{"scheme":"Bearer","credentials":"s"}})
        );
        assert_eq!(to_v03(flat).unwrap(), c);
    }

    #[test]
    fn first_scheme_kept_and_empty_rejected() {
        let a: p03::PushNotificationAuthenticationInfo =
            serde_json::from_value(json!({"schemes":["Basic","Bearer"]})).unwrap();
        assert_eq!(v(auth_to_v10(a).unwrap()), json!({"scheme":"Basic"}));
        let a: p03::PushNotificationAuthenticationInfo =
            serde_json::from_value(json!({"schemes":[]})).unwrap();
        assert_eq!(auth_to_v10(a).unwrap_err().jsonrpc_code(), -32602);
    }

    #[test]
    fn tenant_dropped_and_missing_task_id_rejected() {
        let c: p10::TaskPushNotificationConfig =
            serde_json::from_value(json!({"tenant":"x","taskId":"t","url":"u"})).unwrap();
        assert_eq!(
            v(to_v03(c).unwrap()),
            json!({"taskId":"t","pushNotificationConfig":{"url":"u"}})
        );
        let c: p10::TaskPushNotificationConfig =
            serde_json::from_value(json!({"url":"u"})).unwrap();
        assert!(to_v03(c).is_err());
    }
}
