//! Every spelling under which an agent may read a push config, brought to
//! the one the spec gives, before the push layer looks for the config.
//!
//! The push layer swaps a subscriber's config for the proxy's callback; a
//! config it does not see reaches the agent with the subscriber's URL and
//! token. Agents read more spellings than the spec's JSON names: ProtoJSON
//! parsers (a2a-sdk 1.x) take proto field names
//! (`task_push_notification_config`), pydantic models (a2a-sdk 0.3) their
//! snake_case field names (`push_notification_config`), Go's
//! `encoding/json` any case (`PushNotificationConfig`, `puſhNotification…`),
//! and unknown members cross versions as they are. So along the path to a
//! config (params, `configuration`, the config, its `authentication`):
//!
//! - a member that lenient readers take for a spec member
//!   ([`crate::json_strict::fold`]) is renamed to the spec's name;
//! - two members that lenient readers take for the same member are refused;
//! - any other member whose name speaks of a push notification (the other
//!   version's names, a config in the wrong place) is refused: no reader of
//!   this version takes it for a config, and a lenient one might.
//!
//! The params are JSON-RPC params in `version` (v1.0 REST bodies have the
//! same members; v0.3 REST bodies are read by the ProtoJSON reader, which
//! refuses unknown members). Pure.

use serde_json::{Map, Value};

use crate::json_strict::{fold, shown};
use crate::version::Version;
use translate::method::Method;

/// Whether `body` may hold a member naming a push config under any
/// spelling: every one of them has "notification" in it, in some case,
/// unless its name is written with `\u` escapes or the body is not UTF-8
/// (Python's `json.loads` reads UTF-16 and UTF-32 bytes too: they hold
/// NULs). `false` is certain.
pub fn may_name_push_config(body: &[u8]) -> bool {
    // Only an `n`, a backslash or a NUL can start a match: jump between
    // them (memchr's vector search) instead of reading every byte.
    const REST: &[u8] = b"otification";
    memchr::memchr(0, body).is_some()
        || memchr::memchr3_iter(b'n', b'N', b'\\', body).any(|i| match body[i] {
            b'\\' => body.get(i + 1) == Some(&b'u'),
            _ => body
                .get(i + 1..i + 1 + REST.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(REST)),
        })
}

/// The member of `configuration` holding a message's push config.
fn send_slot(version: Version) -> &'static str {
    match version {
        Version::V03 => "pushNotificationConfig",
        Version::V10 => "taskPushNotificationConfig",
    }
}

/// The members of a push config.
fn config_members(version: Version) -> &'static [&'static str] {
    match version {
        Version::V03 => &["id", "url", "token", "authentication"],
        Version::V10 => &["id", "taskId", "url", "token", "authentication", "tenant"],
    }
}

fn auth_members(version: Version) -> &'static [&'static str] {
    match version {
        Version::V03 => &["schemes", "credentials"],
        Version::V10 => &["scheme", "credentials"],
    }
}

/// Brings the members on the way to an `op` request's push config to their
/// spec names (see the module). `Ok(true)` when a member was renamed;
/// `Err` with a message for the client when the request is refused.
pub fn canonicalize(op: Method, version: Version, params: &mut Value) -> Result<bool, String> {
    let Value::Object(p) = params else {
        return Ok(false);
    };
    let mut renamed = false;
    match op {
        Method::SendMessage | Method::SendStreamingMessage => {
            renamed |= members(p, &["configuration"], "params")?;
            if let Some(Value::Object(c)) = p.get_mut("configuration") {
                let slot = send_slot(version);
                renamed |= members(c, &[slot], "params.configuration")?;
                if let Some(Value::Object(cfg)) = c.get_mut(slot) {
                    let at = format!("params.configuration.{slot}");
                    renamed |= config(version, cfg, &at)?;
                }
            }
        }
        Method::CreatePushConfig => match version {
            Version::V03 => {
                renamed |= members(p, &["taskId", "pushNotificationConfig"], "params")?;
                if let Some(Value::Object(cfg)) = p.get_mut("pushNotificationConfig") {
                    renamed |= config(version, cfg, "params.pushNotificationConfig")?;
                }
            }
            Version::V10 => renamed |= config(version, p, "params")?,
        },
        _ => {}
    }
    Ok(renamed)
}

fn config(version: Version, cfg: &mut Map<String, Value>, at: &str) -> Result<bool, String> {
    let mut renamed = members(cfg, config_members(version), at)?;
    if let Some(Value::Object(a)) = cfg.get_mut("authentication") {
        renamed |= members(a, auth_members(version), &format!("{at}.authentication"))?;
    }
    Ok(renamed)
}

/// Renames the members of `obj` that fold to one of `known` to that name;
/// refuses two that fold to the same one, and any other member speaking of
/// a push notification. `at` names `obj` in messages.
fn members(obj: &mut Map<String, Value>, known: &[&str], at: &str) -> Result<bool, String> {
    let mut spelled: Vec<(String, &str)> = Vec::new();
    for key in obj.keys() {
        let folded = fold(key);
        match known.iter().find(|k| fold(k) == folded) {
            Some(k) => {
                if let Some((first, _)) = spelled.iter().find(|(_, s)| s == k) {
                    return Err(format!(
                        "`{at}` has both `{}` and `{}`, which readers take for the same member `{k}`",
                        shown(first),
                        shown(key)
                    ));
                }
                spelled.push((key.clone(), k));
            }
            None if folded.contains("pushnotification") => {
                return Err(format!(
                    "`{at}.{}` is not a member of this A2A version's request{}",
                    shown(key),
                    expected(known)
                ));
            }
            None => {}
        }
    }
    let renames: Vec<(String, &str)> = spelled.into_iter().filter(|(s, k)| s != k).collect();
    if renames.is_empty() {
        return Ok(false);
    }
    // Rebuilt in order, each renamed member where it stood.
    let old = std::mem::take(obj);
    for (key, v) in old {
        let name = renames
            .iter()
            .find(|(s, _)| *s == key)
            .map_or(key, |(_, k)| k.to_string());
        obj.insert(name, v);
    }
    Ok(true)
}

fn expected(known: &[&str]) -> String {
    match known.iter().find(|k| fold(k).contains("pushnotification")) {
        Some(k) => format!(" (a push config goes in `{k}`)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn send(v: Version, p: Value) -> (Result<bool, String>, Value) {
        let mut p = p;
        let r = canonicalize(Method::SendMessage, v, &mut p);
        (r, p)
    }

    #[test]
    fn every_spelling_of_the_send_slot_is_brought_to_the_spec_name() {
        let cfg = json!({"url": "https://h/", "token": "t"});
        for name in [
            "push_notification_config",
            "PushNotificationConfig",
            "PUSH_NOTIFICATION_CONFIG",
            "pu\u{017f}hNotificationConfig",
            "push-notification-config",
        ] {
            let (r, p) = send(
                Version::V03,
                json!({"message": {}, "configuration": {"blocking": true, name: cfg}}),
            );
            assert_eq!(r, Ok(true), "{name}");
            assert_eq!(
                p["configuration"],
                json!({"blocking": true, "pushNotificationConfig": cfg}),
                "{name}"
            );
        }
        for name in [
            "task_push_notification_config",
            "TaskPushNotificationConfig",
        ] {
            let (r, p) = send(Version::V10, json!({"configuration": {name: cfg}}));
            assert_eq!(r, Ok(true), "{name}");
            assert_eq!(p["configuration"]["taskPushNotificationConfig"], cfg);
        }
        // Spelled as the spec spells it: nothing to do.
        let (r, _) = send(
            Version::V10,
            json!({"configuration": {"taskPushNotificationConfig": cfg}}),
        );
        assert_eq!(r, Ok(false));
        // The container's own spelling too.
        let (r, p) = send(
            Version::V03,
            json!({"Configuration": {"pushNotificationConfig": cfg}}),
        );
        assert_eq!(r, Ok(true));
        assert_eq!(p["configuration"]["pushNotificationConfig"], cfg);
    }

    #[test]
    fn ambiguous_and_misplaced_configs_are_refused() {
        let cfg = json!({"url": "https://h/"});
        let refused = |v, p| send(v, p).0.is_err();
        // Two spellings of one member.
        assert!(refused(
            Version::V03,
            json!({"configuration": {"pushNotificationConfig": cfg, "push_notification_config": cfg}})
        ));
        assert!(refused(
            Version::V03,
            json!({"configuration": {}, "CONFIGURATION": {"pushNotificationConfig": cfg}})
        ));
        // The other version's name, which unknown-member rules would carry.
        assert!(refused(
            Version::V03,
            json!({"configuration": {"taskPushNotificationConfig": cfg}})
        ));
        assert!(refused(
            Version::V10,
            json!({"configuration": {"pushNotificationConfig": cfg}})
        ));
        assert!(refused(
            Version::V10,
            json!({"configuration": {"push_notification": cfg}})
        ));
        // A config beside the configuration.
        assert!(refused(
            Version::V03,
            json!({"pushNotificationConfig": cfg})
        ));
        // Two spellings inside the config, and in its authentication.
        assert!(refused(
            Version::V03,
            json!({"configuration": {"pushNotificationConfig": {"url": "https://a/", "URL": "http://10.0.0.1/"}}})
        ));
        assert!(refused(
            Version::V10,
            json!({"configuration": {"taskPushNotificationConfig": {"url": "https://a/",
                "authentication": {"scheme": "Bearer", "Scheme": "Basic"}}}})
        ));
        // Metadata and messages are the caller's own: not looked into.
        let (r, _) = send(
            Version::V03,
            json!({"message": {"metadata": {"pushNotificationConfig": 1}},
                "metadata": {"push_notification_config": 2}}),
        );
        assert_eq!(r, Ok(false));
    }

    #[test]
    fn config_members_and_creates() {
        let mut p = json!({"configuration": {"taskPushNotificationConfig":
            {"URL": "https://h/", "Token": "t", "task_id": "x",
             "Authentication": {"Scheme": "Bearer", "credentials": "c"}}}});
        assert_eq!(
            canonicalize(Method::SendMessage, Version::V10, &mut p),
            Ok(true)
        );
        assert_eq!(
            p["configuration"]["taskPushNotificationConfig"],
            json!({"url": "https://h/", "token": "t", "taskId": "x",
                "authentication": {"scheme": "Bearer", "credentials": "c"}})
        );
        let mut p = json!({"task_id": "t", "push_notification_config": {"url": "https://h/"}});
        assert_eq!(
            canonicalize(Method::CreatePushConfig, Version::V03, &mut p),
            Ok(true)
        );
        assert_eq!(
            p,
            json!({"taskId": "t", "pushNotificationConfig": {"url": "https://h/"}})
        );
        let mut p = json!({"taskId": "t", "Url": "https://h/", "pushNotificationConfig": {}});
        assert!(canonicalize(Method::CreatePushConfig, Version::V10, &mut p).is_err());
        let mut p = json!({"taskId": "t", "url": "https://h/", "url_": "x"});
        assert!(canonicalize(Method::CreatePushConfig, Version::V10, &mut p).is_err());
    }

    #[test]
    fn the_precheck_is_never_wrong_when_it_says_no() {
        assert!(may_name_push_config(br#"{"x":{"PUSH_NOTIFICATION":1}}"#));
        assert!(may_name_push_config(
            br#"{"p\u0075shNotificationConfig":1}"#
        ));
        let utf16: Vec<u8> = "{\"pushNotificationConfig\":1}"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert!(may_name_push_config(&utf16));
        assert!(!may_name_push_config(
            br#"{"message":{"parts":[{"text":"hi"}]}}"#
        ));
        // The word at the very end, cut one byte short, a lone backslash
        // last: the one pass reads no byte past the body.
        assert!(may_name_push_config(b"xNoTiFiCaTiOn"));
        assert!(!may_name_push_config(b"xnotificatio"));
        assert!(!may_name_push_config(b"ab\\"));
        assert!(may_name_push_config(b"a\\u"));
    }

    #[test]
    fn the_one_pass_precheck_agrees_with_the_three_scans() {
        // The definition: "notification" in any case, or `\u`, or a NUL.
        let reference = |b: &[u8]| {
            b.windows(12)
                .any(|w| w.eq_ignore_ascii_case(b"notification"))
                || b.windows(2).any(|w| w == b"\\u")
                || b.contains(&0)
        };
        // Bodies joined from pieces of the word in several cases, so whole
        // words, near misses and split words are all frequent (a fixed
        // sequence: no flakiness).
        let pieces: [&[u8]; 11] = [
            b"n",
            b"otification",
            b"notificatio",
            b"NOTIFICATION",
            b"NoTiFiCaTiOn",
            b"notifi",
            b"CATION",
            b"\\",
            b"u",
            b"\0",
            b"x\"",
        ];
        let mut state = 0x2545_f491_u32;
        for len in 0..12 {
            for _ in 0..500 {
                let body: Vec<u8> = (0..len)
                    .flat_map(|_| {
                        state ^= state << 13;
                        state ^= state >> 17;
                        state ^= state << 5;
                        pieces[state as usize % pieces.len()].iter().copied()
                    })
                    .collect();
                assert_eq!(may_name_push_config(&body), reference(&body), "{body:?}");
            }
        }
        for w in [
            &b"notification"[..],
            b"NOTIFICATION",
            b"pushNotificationConfig",
        ] {
            assert_eq!(may_name_push_config(w), reference(w));
        }
    }
}
