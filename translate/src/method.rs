//! The A2A method table: one [`Method`] per operation, with its JSON-RPC
//! name in each wire version (spec v0.3 §7, spec v1.0 §9.4; MAPPING-FACTS §1).
//!
//! The two name sets are disjoint, so a name alone identifies both the
//! operation and the version it belongs to ([`Method::from_name`]).

use crate::{TranslateError, Version};

/// An A2A operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// `message/send` / `SendMessage`.
    SendMessage,
    /// `message/stream` / `SendStreamingMessage` (SSE).
    SendStreamingMessage,
    /// `tasks/get` / `GetTask`.
    GetTask,
    /// v1.0 only: `ListTasks`.
    ListTasks,
    /// `tasks/cancel` / `CancelTask`.
    CancelTask,
    /// `tasks/resubscribe` / `SubscribeToTask` (SSE).
    SubscribeToTask,
    /// `tasks/pushNotificationConfig/set` / `CreateTaskPushNotificationConfig`.
    CreatePushConfig,
    /// `tasks/pushNotificationConfig/get` / `GetTaskPushNotificationConfig`.
    GetPushConfig,
    /// `tasks/pushNotificationConfig/list` / `ListTaskPushNotificationConfigs`.
    ListPushConfigs,
    /// `tasks/pushNotificationConfig/delete` / `DeleteTaskPushNotificationConfig`.
    DeletePushConfig,
    /// `agent/getAuthenticatedExtendedCard` / `GetExtendedAgentCard`.
    GetExtendedCard,
}

impl Method {
    /// Every operation, in the order of MAPPING-FACTS §1.
    pub const ALL: [Method; 11] = [
        Method::SendMessage,
        Method::SendStreamingMessage,
        Method::GetTask,
        Method::ListTasks,
        Method::CancelTask,
        Method::SubscribeToTask,
        Method::CreatePushConfig,
        Method::GetPushConfig,
        Method::ListPushConfigs,
        Method::DeletePushConfig,
        Method::GetExtendedCard,
    ];

    /// The JSON-RPC method name in `version`; `None` when the operation does
    /// not exist there (only `ListTasks` in v0.3).
    pub fn name(self, version: Version) -> Option<&'static str> {
        match version {
            Version::V03 => self.v03_name(),
            Version::V10 => Some(self.v10_name()),
        }
    }

    fn v03_name(self) -> Option<&'static str> {
        match self {
            Method::SendMessage => Some("message/send"),
            Method::SendStreamingMessage => Some("message/stream"),
            Method::GetTask => Some("tasks/get"),
            Method::ListTasks => None,
            Method::CancelTask => Some("tasks/cancel"),
            Method::SubscribeToTask => Some("tasks/resubscribe"),
            Method::CreatePushConfig => Some("tasks/pushNotificationConfig/set"),
            Method::GetPushConfig => Some("tasks/pushNotificationConfig/get"),
            Method::ListPushConfigs => Some("tasks/pushNotificationConfig/list"),
            Method::DeletePushConfig => Some("tasks/pushNotificationConfig/delete"),
            Method::GetExtendedCard => Some("agent/getAuthenticatedExtendedCard"),
        }
    }

    /// The v1.0 name (every operation has one; also the proxy's metrics
    /// label).
    pub fn as_str(self) -> &'static str {
        self.v10_name()
    }

    fn v10_name(self) -> &'static str {
        match self {
            Method::SendMessage => "SendMessage",
            Method::SendStreamingMessage => "SendStreamingMessage",
            Method::GetTask => "GetTask",
            Method::ListTasks => "ListTasks",
            Method::CancelTask => "CancelTask",
            Method::SubscribeToTask => "SubscribeToTask",
            Method::CreatePushConfig => "CreateTaskPushNotificationConfig",
            Method::GetPushConfig => "GetTaskPushNotificationConfig",
            Method::ListPushConfigs => "ListTaskPushNotificationConfigs",
            Method::DeletePushConfig => "DeleteTaskPushNotificationConfig",
            Method::GetExtendedCard => "GetExtendedAgentCard",
        }
    }

    /// The operation and version a JSON-RPC method name belongs to (names are
    /// matched exactly, case-sensitively, as JSON-RPC requires).
    pub fn from_name(name: &str) -> Option<(Method, Version)> {
        Method::ALL.iter().find_map(|m| {
            Version::ALL
                .iter()
                .find(|v| m.name(**v) == Some(name))
                .map(|v| (*m, *v))
        })
    }

    /// The operation named `name` in `version`; a name of the other version
    /// or no A2A name at all is [`TranslateError::MethodNotFound`].
    pub fn resolve(name: &str, version: Version) -> Result<Method, TranslateError> {
        match Method::from_name(name) {
            Some((m, v)) if v == version => Ok(m),
            Some(_) | None => Err(TranslateError::MethodNotFound(name.to_string())),
        }
    }

    /// True for the operations answered with an SSE stream of events.
    pub fn is_streaming(self) -> bool {
        match self {
            Method::SendStreamingMessage | Method::SubscribeToTask => true,
            Method::SendMessage
            | Method::GetTask
            | Method::ListTasks
            | Method::CancelTask
            | Method::CreatePushConfig
            | Method::GetPushConfig
            | Method::ListPushConfigs
            | Method::DeletePushConfig
            | Method::GetExtendedCard => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn table_is_one_to_one() {
        for v in Version::ALL {
            let names: Vec<_> = Method::ALL.iter().filter_map(|m| m.name(v)).collect();
            let set: BTreeSet<_> = names.iter().collect();
            assert_eq!(names.len(), set.len(), "duplicate names in {v}");
            for m in Method::ALL {
                if let Some(n) = m.name(v) {
                    assert_eq!(Method::from_name(n), Some((m, v)));
                    assert_eq!(Method::resolve(n, v), Ok(m));
                }
            }
        }
        let all: BTreeSet<_> = Method::ALL.iter().collect();
        assert_eq!(all.len(), 11);
    }

    #[test]
    fn name_sets_are_disjoint() {
        let v03: BTreeSet<_> = Method::ALL
            .iter()
            .filter_map(|m| m.name(Version::V03))
            .collect();
        let v10: BTreeSet<_> = Method::ALL
            .iter()
            .filter_map(|m| m.name(Version::V10))
            .collect();
        assert!(v03.is_disjoint(&v10));
        assert_eq!(v03.len(), 10);
        assert_eq!(v10.len(), 11);
    }

    #[test]
    fn every_v03_name_has_exactly_one_v10_name() {
        for m in Method::ALL {
            if m.name(Version::V03).is_some() {
                assert!(m.name(Version::V10).is_some());
            }
        }
        assert_eq!(Method::ListTasks.name(Version::V03), None);
        assert_eq!(Method::from_name("tasks/list"), None);
    }

    #[test]
    fn wrong_version_and_unknown_names_are_not_found() {
        assert_eq!(
            Method::resolve("SendMessage", Version::V03),
            Err(TranslateError::MethodNotFound("SendMessage".into()))
        );
        assert!(Method::resolve("message/send", Version::V10).is_err());
        assert!(Method::resolve("sendmessage", Version::V10).is_err());
        assert!(Method::resolve("", Version::V10).is_err());
    }

    #[test]
    fn streaming_methods() {
        let s: Vec<_> = Method::ALL.iter().filter(|m| m.is_streaming()).collect();
        assert_eq!(s, [&Method::SendStreamingMessage, &Method::SubscribeToTask]);
    }
}
