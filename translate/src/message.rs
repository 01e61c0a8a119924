//! Message translation: v0.3 `Message` (`kind: "message"`) <-> v1.0
//! `Message`, and `Role` (`user`/`agent` <-> `ROLE_*`).

use crate::lossy::{Direction, Lossy};
use crate::part::carry;
use crate::{part, v03, v10, TranslateError};

/// Members of a v0.3 message.
const V03_FIELDS: &[&str] = &[
    "kind",
    "messageId",
    "contextId",
    "taskId",
    "role",
    "parts",
    "metadata",
    "extensions",
    "referenceTaskIds",
];
/// Members of a v1.0 message, proto names included.
const V10_FIELDS: &[&str] = &[
    "messageId",
    "message_id",
    "contextId",
    "context_id",
    "taskId",
    "task_id",
    "role",
    "parts",
    "metadata",
    "extensions",
    "referenceTaskIds",
    "reference_task_ids",
];

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "Message.role",
        direction: Direction::ToV03,
        what: "`ROLE_UNSPECIFIED`, an absent role, or an unknown role name or number has no v0.3 value",
        decision: "becomes `\"agent\"` (a2a-js), i.e. `ROLE_AGENT` coming back",
        fixture: "message/role-unspecified.v10.json, message/role-unspecified.v03.json, message/role-unspecified.to-v10.json",
        at: &["role"],
    },
    Lossy {
        entity: "Message.role",
        direction: Direction::ToV03,
        what: "v1.0 enum given as an integer",
        decision: "accepted; v1.0 output always uses the name",
        fixture: "message/role-integer.v10.json, message/role-integer.v03.json, message/role-integer.to-v10.json",
        at: &["role"],
    },
    Lossy {
        entity: "Message",
        direction: Direction::ToV10,
        what: "v0.3 message without `kind`",
        decision: "accepted (kind inferred); `kind: \"message\"` always emitted going to v0.3; a wrong kind is rejected",
        fixture: "message/kind-missing.v03.json, message/kind-missing.v10.json, message/kind-missing.to-v03.json, rejected/message/kind-task.v03.json",
        at: &["kind"],
    },
];

/// Translates a v0.3 role to v1.0.
pub fn role_to_v10(r: v03::message::Role) -> v10::message::Role {
    match r {
        v03::message::Role::User => v10::message::Role::User,
        v03::message::Role::Agent => v10::message::Role::Agent,
    }
}

/// Translates a v1.0 role to v0.3 (`ROLE_UNSPECIFIED` -> agent).
pub fn role_to_v03(r: v10::message::Role) -> v03::message::Role {
    match r {
        v10::message::Role::User => v03::message::Role::User,
        v10::message::Role::Agent | v10::message::Role::Unspecified => v03::message::Role::Agent,
    }
}

/// Translates a v0.3 message to v1.0.
pub fn to_v10(m: v03::message::Message) -> Result<v10::message::Message, TranslateError> {
    Ok(v10::message::Message {
        message_id: m.message_id,
        context_id: m.context_id,
        task_id: m.task_id,
        role: role_to_v10(m.role),
        parts: m
            .parts
            .into_iter()
            .map(part::to_v10)
            .collect::<Result<_, _>>()?,
        metadata: m.metadata,
        extensions: m.extensions,
        reference_task_ids: m.reference_task_ids,
        extra: carry(m.extra, V10_FIELDS),
    })
}

/// Translates a v1.0 message to v0.3.
pub fn to_v03(m: v10::message::Message) -> Result<v03::message::Message, TranslateError> {
    Ok(v03::message::Message {
        kind: Default::default(),
        message_id: m.message_id,
        context_id: m.context_id,
        task_id: m.task_id,
        role: role_to_v03(m.role),
        parts: m
            .parts
            .into_iter()
            .map(part::to_v03)
            .collect::<Result<_, _>>()?,
        metadata: m.metadata,
        extensions: m.extensions,
        reference_task_ids: m.reference_task_ids,
        extra: carry(m.extra, V03_FIELDS),
    })
}
