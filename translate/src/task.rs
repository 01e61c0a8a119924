//! Task translation: `Task`, `TaskStatus` and `TaskState`.

use crate::lossy::{Direction, Lossy};
use crate::part::carry;
use crate::{artifact, message, timestamp, v03, v10, TranslateError};

use v03::task::TaskState as S03;
use v10::task::TaskState as S10;

/// Members of a v0.3 task.
const V03_TASK_FIELDS: &[&str] = &[
    "kind",
    "id",
    "contextId",
    "status",
    "artifacts",
    "history",
    "metadata",
];
/// Members of a v1.0 task, proto names included.
const V10_TASK_FIELDS: &[&str] = &[
    "id",
    "contextId",
    "context_id",
    "status",
    "artifacts",
    "history",
    "metadata",
];
/// Members of a task status (both versions).
const STATUS_FIELDS: &[&str] = &["state", "message", "timestamp"];

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "Task.contextId",
        direction: Direction::ToV03,
        what: "v1.0 `contextId` is optional, v0.3 requires it",
        decision: "absent (or empty) becomes `\"\"`; a v0.3 `\"\"` becomes absent in v1.0 (ProtoJSON default)",
        fixture: "task/missing-context-id.v10.json, task/missing-context-id.v03.json",
        at: &["contextId"],
    },
    Lossy {
        entity: "TaskStatus.timestamp",
        direction: Direction::ToV10,
        what: "v0.3 producers emit naive (no offset) or non-UTC timestamps; v1.0 requires UTC with `Z`",
        decision: "naive is taken as UTC, offsets converted; output `Z` with 0/3/6/9 fraction digits; v1.0 -> v0.3 passes the string unchanged; an unparsable timestamp is rejected",
        fixture: "task-status/naive-timestamp.v03.json, task-status/naive-timestamp.to-v03.json, task-status/offset-timestamp.v03.json, task-status/offset-timestamp.to-v03.json, task-status/non-utc-offset.v03.json, task-status/non-utc-offset.to-v03.json, rejected/task-status/bad-timestamp.v03.json",
        at: &["status.timestamp"],
    },
    Lossy {
        entity: "TaskState",
        direction: Direction::ToV03,
        what: "v1.0 input spelled `TASK_STATE_CANCELLED` (v0.3 ProtoJSON) or given as an integer",
        decision: "accepted as canceled / the numbered state; v1.0 output always uses `TASK_STATE_CANCELED` and names",
        fixture: "task-status/cancelled-double-l.v10.json, task-status/cancelled-double-l.to-v10.json, task-status/state-integer.v10.json, task-status/state-integer.to-v10.json",
        at: &["state"],
    },
    Lossy {
        entity: "TaskState",
        direction: Direction::ToV03,
        what: "a v1.0 state name or number this crate does not know",
        decision: "becomes v0.3 `\"unknown\"` (SDKs), i.e. `TASK_STATE_UNSPECIFIED` coming back",
        fixture: "task-status/state-unknown-name.v10.json, task-status/state-unknown-name.v03.json, task-status/state-unknown-name.to-v10.json",
        at: &["state"],
    },
];

/// Translates a v0.3 task state to v1.0.
pub fn state_to_v10(s: S03) -> S10 {
    match s {
        S03::Submitted => S10::Submitted,
        S03::Working => S10::Working,
        S03::InputRequired => S10::InputRequired,
        S03::Completed => S10::Completed,
        S03::Canceled => S10::Canceled,
        S03::Failed => S10::Failed,
        S03::Rejected => S10::Rejected,
        S03::AuthRequired => S10::AuthRequired,
        S03::Unknown => S10::Unspecified,
    }
}

/// Translates a v1.0 task state to v0.3 (unrecognized -> `unknown`).
pub fn state_to_v03(s: S10) -> S03 {
    match s {
        S10::Unspecified | S10::Unrecognized(_) => S03::Unknown,
        S10::Submitted => S03::Submitted,
        S10::Working => S03::Working,
        S10::Completed => S03::Completed,
        S10::Failed => S03::Failed,
        S10::Canceled => S03::Canceled,
        S10::InputRequired => S03::InputRequired,
        S10::Rejected => S03::Rejected,
        S10::AuthRequired => S03::AuthRequired,
    }
}

/// Translates a v0.3 task status to v1.0 (timestamp normalised to UTC `Z`).
pub fn status_to_v10(s: v03::task::TaskStatus) -> Result<v10::task::TaskStatus, TranslateError> {
    Ok(v10::task::TaskStatus {
        state: state_to_v10(s.state),
        message: s.message.map(message::to_v10).transpose()?,
        timestamp: s.timestamp.map(|t| timestamp::to_utc_z(&t)).transpose()?,
        extra: carry(s.extra, STATUS_FIELDS),
    })
}

/// Translates a v1.0 task status to v0.3 (timestamp passed unchanged).
pub fn status_to_v03(s: v10::task::TaskStatus) -> Result<v03::task::TaskStatus, TranslateError> {
    Ok(v03::task::TaskStatus {
        state: state_to_v03(s.state),
        message: s.message.map(message::to_v03).transpose()?,
        timestamp: s.timestamp,
        extra: carry(s.extra, STATUS_FIELDS),
    })
}

/// Translates a v0.3 task to v1.0.
pub fn to_v10(t: v03::task::Task) -> Result<v10::task::Task, TranslateError> {
    Ok(v10::task::Task {
        id: t.id,
        context_id: Some(t.context_id).filter(|c| !c.is_empty()),
        status: status_to_v10(t.status)?,
        artifacts: t
            .artifacts
            .map(|a| a.into_iter().map(artifact::to_v10).collect())
            .transpose()?,
        history: t
            .history
            .map(|h| h.into_iter().map(message::to_v10).collect())
            .transpose()?,
        metadata: t.metadata,
        extra: carry(t.extra, V10_TASK_FIELDS),
    })
}

/// Translates a v1.0 task to v0.3 (absent `contextId` -> `""`).
pub fn to_v03(t: v10::task::Task) -> Result<v03::task::Task, TranslateError> {
    Ok(v03::task::Task {
        kind: Default::default(),
        id: t.id,
        context_id: t.context_id.unwrap_or_default(),
        status: status_to_v03(t.status)?,
        artifacts: t
            .artifacts
            .map(|a| a.into_iter().map(artifact::to_v03).collect())
            .transpose()?,
        history: t
            .history
            .map(|h| h.into_iter().map(message::to_v03).collect())
            .transpose()?,
        metadata: t.metadata,
        extra: carry(t.extra, V03_TASK_FIELDS),
    })
}
