//! W3C Trace Context (`traceparent`, `tracestate`): read from a request,
//! checked, and carried on to where the proxy continues the same work
//! (the agent for a call, the subscriber for a webhook delivery).
//!
//! Only a well-formed `traceparent` is carried; a `tracestate` is carried
//! only with one (the W3C rule) and only while it is a short printable
//! list. What does not pass is dropped rather than repaired, so nothing a
//! caller wrote beyond the two headers' grammar travels further.

use http::HeaderMap;

/// Longest `tracestate` carried (the W3C text asks for at least 512
/// characters to be propagated; longer lists may be cut).
pub const MAX_TRACESTATE: usize = 512;

/// A checked trace context.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraceContext {
    /// `00-<trace id>-<parent id>-<flags>`, lowercase hex.
    pub traceparent: String,
    /// Empty when absent.
    pub tracestate: String,
}

impl TraceContext {
    /// The context in `headers`, when its `traceparent` is well formed.
    pub fn from_headers(headers: &HeaderMap) -> Option<TraceContext> {
        let parent = headers.get("traceparent")?.to_str().ok()?.trim();
        if !valid_traceparent(parent) {
            return None;
        }
        // Several `tracestate` lines are one list.
        let mut state = String::new();
        for v in headers.get_all("tracestate") {
            let Ok(s) = v.to_str() else {
                state.clear();
                break;
            };
            let s = s.trim();
            if s.is_empty() {
                continue;
            }
            if !state.is_empty() {
                state.push(',');
            }
            state.push_str(s);
        }
        if state.len() > MAX_TRACESTATE || !state.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            state.clear();
        }
        Some(TraceContext {
            traceparent: parent.to_string(),
            tracestate: state,
        })
    }

    /// The 32-hex-digit trace id.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The headers to send on: `traceparent`, and `tracestate` when set.
    pub fn headers(&self) -> impl Iterator<Item = (&'static str, &str)> {
        std::iter::once(("traceparent", self.traceparent.as_str())).chain(
            (!self.tracestate.is_empty()).then_some(("tracestate", self.tracestate.as_str())),
        )
    }
}

/// `version-traceid-parentid-flags` as W3C Trace Context level 1 writes
/// it: version 00 exactly; a later version is read by its first four
/// fields (and must not be `ff`); ids not all zero; lowercase hex.
pub fn valid_traceparent(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 55 {
        return false;
    }
    let hex = |r: std::ops::Range<usize>| {
        b[r].iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    };
    let zero = |r: std::ops::Range<usize>| b[r].iter().all(|&c| c == b'0');
    let shape = hex(0..2)
        && b[2] == b'-'
        && hex(3..35)
        && b[35] == b'-'
        && hex(36..52)
        && b[52] == b'-'
        && hex(53..55);
    if !shape || &b[0..2] == b"ff" || zero(3..35) || zero(36..52) {
        return false;
    }
    match &b[0..2] {
        b"00" => b.len() == 55,
        _ => b.len() == 55 || b[55] == b'-',
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn of(pairs: &[(&'static str, &str)]) -> Option<TraceContext> {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        TraceContext::from_headers(&h)
    }

    #[test]
    fn well_formed_contexts_are_carried() {
        let t = of(&[
            ("traceparent", GOOD),
            ("tracestate", "a=1"),
            ("tracestate", "b=2"),
        ])
        .unwrap();
        assert_eq!(t.traceparent, GOOD);
        assert_eq!(t.tracestate, "a=1,b=2");
        assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        let h: Vec<_> = t.headers().collect();
        assert_eq!(h, [("traceparent", GOOD), ("tracestate", "a=1,b=2")]);
        let bare = of(&[("traceparent", GOOD)]).unwrap();
        assert_eq!(bare.headers().count(), 1);
        // A later version with more fields is read by its first four.
        assert!(valid_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"
        ));
    }

    #[test]
    fn malformed_contexts_are_dropped() {
        for bad in [
            "",
            "garbage",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(of(&[("traceparent", bad)]).is_none(), "{bad}");
        }
        // No traceparent: no tracestate either.
        assert!(of(&[("tracestate", "a=1")]).is_none());
        // An oversized state is left behind, the parent kept.
        let long = "k=".to_string() + &"v".repeat(MAX_TRACESTATE);
        let t = of(&[("traceparent", GOOD), ("tracestate", &long)]).unwrap();
        assert_eq!(t.tracestate, "");
    }
}
