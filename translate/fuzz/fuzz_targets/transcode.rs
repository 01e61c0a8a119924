//! Differential fuzzing of the streaming transcoder against the typed
//! general path: whenever `translate::transcode` answers, the general path
//! (`document::translate`) must succeed with exactly the same bytes.
//!
//! ```text
//! cd translate/fuzz
//! python3 seeds.py corpus/transcode      # fixtures as seeds
//! cargo +nightly fuzz run -O transcode corpus/transcode -- -dict=transcode.dict -max_total_time=600
//! ```
//!
//! The first input byte picks the direction, request or response, and the
//! method, or (high bit set) an agent card (`transcode::card` against
//! `translate(Kind::Card, ..)`); the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use translate::document::{translate, Kind};
use translate::method::Method;
use translate::{transcode, Version};

const RESPONSES: [Method; 5] = [
    Method::SendMessage,
    Method::SendStreamingMessage,
    Method::SubscribeToTask,
    Method::GetTask,
    Method::CancelTask,
];

fn check(what: &str, fast: Option<Vec<u8>>, slow: impl FnOnce() -> Result<Vec<u8>, String>) {
    let Some(fast) = fast else {
        return;
    };
    match slow() {
        Ok(slow) if slow == fast => {}
        Ok(slow) => panic!(
            "{what}: transcoder and typed path differ\n  transcode {}\n  typed     {}",
            String::from_utf8_lossy(&fast),
            String::from_utf8_lossy(&slow)
        ),
        Err(e) => panic!(
            "{what}: transcoder answered {} where the typed path fails: {e}",
            String::from_utf8_lossy(&fast)
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let to = if sel & 1 == 0 {
        Version::V10
    } else {
        Version::V03
    };
    if sel & 0x80 != 0 {
        check("card", transcode::card(to, body), || {
            translate(Kind::Card, to, None, body).map_err(|e| e.to_string())
        });
    } else if sel & 2 == 0 {
        let m = RESPONSES[usize::from(sel >> 2) % RESPONSES.len()];
        let name = m.name(Version::V10).unwrap_or_default();
        check("response", transcode::response(to, m, body), || {
            translate(Kind::Response, to, Some(name), body).map_err(|e| e.to_string())
        });
    } else {
        let name = match (to, (sel >> 2) & 1) {
            (Version::V10, 0) => "message/send",
            (Version::V10, _) => "message/stream",
            (Version::V03, 0) => "SendMessage",
            (Version::V03, _) => "SendStreamingMessage",
        };
        check("request", transcode::request(to, name, body), || {
            translate(Kind::Request, to, None, body).map_err(|e| e.to_string())
        });
    }
});
