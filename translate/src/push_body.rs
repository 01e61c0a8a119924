//! Push-notification (webhook) bodies (MAPPING-FACTS §9; DECISIONS "Push
//! bodies"): v0.3 receivers get a bare kind-tagged object (normally the Task;
//! a2a-js also sends events and messages), v1.0 receivers a `StreamResponse`.

use crate::lossy::{Direction, Lossy};
use crate::{event, v03, v10, TranslateError};

/// `Content-Type` of a v0.3 webhook body.
pub const V03_CONTENT_TYPE: &str = "application/json";
/// `Content-Type` of a v1.0 webhook body.
pub const V10_CONTENT_TYPE: &str = "application/a2a+json";

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[Lossy {
    entity: "push body",
    direction: Direction::ToV03,
    what: "v0.3 receivers (a2a-python 0.3) expect the full Task on every push; a v1.0 statusUpdate / artifactUpdate / message body carries only a delta",
    decision: "the pure translator emits the bare kind-tagged v0.3 event or message (a2a-js legacy); building a Task snapshot needs task state and is left to the proxy's push layer",
    fixture: "push-body/status-update.v10.json, push-body/status-update.v03.json",
}];

/// Translates a v0.3 webhook body (bare Task, Message or event) to a v1.0
/// `StreamResponse`.
pub fn to_v10(b: v03::event::StreamEvent) -> Result<v10::event::StreamResponse, TranslateError> {
    event::stream_to_v10(b)
}

/// Translates a v1.0 webhook body (`StreamResponse`) to the bare kind-tagged
/// v0.3 object.
pub fn to_v03(b: v10::event::StreamResponse) -> Result<v03::event::StreamEvent, TranslateError> {
    event::stream_to_v03(b)
}
