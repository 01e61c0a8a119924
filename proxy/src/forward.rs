//! Which of a caller's headers (or gRPC metadata) go on to the agent: the
//! one rule every binding applies, so an agent with access control sees the
//! same caller whichever way the call came in.
//!
//! A header is one of three kinds:
//! * **hop-by-hop**: it describes one connection, not the call
//!   (`connection` and the names it lists, `keep-alive`, `te`, `trailer`,
//!   `transfer-encoding`, `upgrade`, `expect`, `http2-settings`, and every
//!   `proxy-*`, whose credentials are for the proxy). Never forwarded.
//! * **per call**: the one who makes the call sets it for its own binding
//!   and version (`host`, `content-length`, `content-type`,
//!   `content-encoding`, `accept`, `accept-encoding`, `a2a-version`, the
//!   extension headers, which go in the upstream's spelling, gRPC's
//!   `grpc-*`, whose `grpc-timeout` becomes the call's deadline, and HTTP/2
//!   pseudo-headers). Passed on only where the proxy re-sends the caller's
//!   own request on the same binding.
//! * **end to end**: everything else (`authorization`, `cookie`, identity
//!   headers such as `x-tenant`, `user-agent`, tracing headers): forwarded
//!   on every path, including the calls the proxy makes for a caller (the
//!   extended card, the task a v1.0 subscribe starts with).
//!
//! Values are never logged here (they carry credentials).

use http::{HeaderMap, HeaderName, HeaderValue};

/// Whether `name` (lower case, as `http` keeps it) is hop-by-hop.
pub fn hop_by_hop(name: &str) -> bool {
    matches!(
        name,
        "connection"
            | "keep-alive"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "expect"
            | "http2-settings"
    ) || name.starts_with("proxy-")
}

/// Whether `name` is set per call by whoever makes it.
pub fn per_call(name: &str) -> bool {
    matches!(
        name,
        "host"
            | "content-length"
            | "content-type"
            | "content-encoding"
            | "accept"
            | "accept-encoding"
            | "a2a-version"
            | "a2a-extensions"
            | "x-a2a-extensions"
    ) || name.starts_with("grpc-")
        || name.starts_with(':')
}

/// Whether a caller's `name` goes to the agent on a call the proxy composes.
fn end_to_end(name: &str) -> bool {
    !hop_by_hop(name) && !per_call(name)
}

/// The names `headers` lists in its `connection` header (hop-by-hop too).
fn nominated(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(http::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect()
}

/// The hop-by-hop headers of a request the proxy passes on or re-sends on
/// its own binding: to be removed. `keep_te_trailers`: HTTP/2, where
/// `te: trailers` is allowed (gRPC needs it).
pub fn to_strip(headers: &HeaderMap, keep_te_trailers: bool) -> Vec<HeaderName> {
    let named = nominated(headers);
    let mut out: Vec<HeaderName> = Vec::new();
    for (k, v) in headers {
        let n = k.as_str();
        let te_ok = keep_te_trailers && n == "te" && v.as_bytes().eq_ignore_ascii_case(b"trailers");
        let hop = (hop_by_hop(n) && !te_ok) || named.iter().any(|x| x == n);
        if hop && !out.contains(k) {
            out.push(k.clone());
        }
    }
    out
}

/// Removes the hop-by-hop headers from `headers` (see [`to_strip`]).
pub fn strip(headers: &mut HeaderMap, keep_te_trailers: bool) {
    for k in to_strip(headers, keep_te_trailers) {
        headers.remove(&k);
    }
}

/// The one rule: the caller's headers (or gRPC metadata) of `headers`
/// that go on to the agent on a call the proxy composes, in order: the
/// end-to-end ones, minus those a `connection` header nominates. Every
/// path that forwards a caller's headers takes them from here.
pub fn forwarded(headers: &HeaderMap) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
    let named = nominated(headers);
    headers
        .iter()
        .filter(move |(k, _)| end_to_end(k.as_str()) && !named.iter().any(|x| x == k.as_str()))
}

/// The caller's forwarded headers ([`forwarded`]), owned.
pub fn caller_headers(headers: &HeaderMap) -> Vec<(HeaderName, HeaderValue)> {
    forwarded(headers)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Appends the caller's forwarded headers of `from` ([`forwarded`]) to
/// `to`.
pub fn append_caller_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (k, v) in forwarded(from) {
        to.append(k.clone(), v.clone());
    }
}

/// The caller's forwarded headers ([`forwarded`]) named in `names`, in the
/// order of `names` (a ListTasks caller's credentials, crate::tasks).
pub fn caller_headers_named(
    headers: &HeaderMap,
    names: &[HeaderName],
) -> Vec<(HeaderName, HeaderValue)> {
    // The rule applied once (its `connection` look-up), then taken by name.
    let all: Vec<(&HeaderName, &HeaderValue)> = forwarded(headers).collect();
    let mut out = Vec::new();
    for name in names {
        let mine = all.iter().filter(|(k, _)| *k == name);
        out.extend(mine.map(|(k, v)| ((*k).clone(), (*v).clone())));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn one_rule() {
        for n in [
            "authorization",
            "cookie",
            "x-tenant",
            "user-agent",
            "traceparent",
            "tracestate",
        ] {
            assert!(end_to_end(n), "{n}");
        }
        for n in [
            "connection",
            "keep-alive",
            "te",
            "transfer-encoding",
            "upgrade",
            "proxy-authorization",
            "proxy-connection",
            "host",
            "content-length",
            "content-type",
            "a2a-version",
            "a2a-extensions",
            "x-a2a-extensions",
            "grpc-timeout",
            "grpc-encoding",
            "grpc-accept-encoding",
        ] {
            assert!(!end_to_end(n), "{n}");
        }
    }

    #[test]
    fn caller_headers_leave_out_the_rest() {
        let h = map(&[
            ("authorization", "Bearer a"),
            ("x-tenant", "t1"),
            ("connection", "x-hop"),
            ("x-hop", "1"),
            ("proxy-authorization", "Basic p"),
            ("te", "trailers"),
            ("grpc-timeout", "1S"),
            ("content-type", "application/grpc"),
            ("a2a-version", "1.0"),
        ]);
        let got: Vec<String> = caller_headers(&h)
            .iter()
            .map(|(k, _)| k.as_str().to_string())
            .collect();
        assert_eq!(got, ["authorization", "x-tenant"]);
        let mut to = HeaderMap::new();
        append_caller_headers(&h, &mut to);
        assert_eq!(to.len(), 2);
        // Credentials by name: the same rule (a nominated, hop-by-hop or
        // per-call name is not forwarded, whatever the configuration).
        let names = [
            HeaderName::from_static("x-hop"),
            HeaderName::from_static("proxy-authorization"),
            HeaderName::from_static("a2a-version"),
            HeaderName::from_static("x-tenant"),
            http::header::AUTHORIZATION,
        ];
        let got: Vec<String> = caller_headers_named(&h, &names)
            .iter()
            .map(|(k, _)| k.as_str().to_string())
            .collect();
        assert_eq!(got, ["x-tenant", "authorization"]);
    }

    #[test]
    fn strip_keeps_the_call() {
        let mut h = map(&[
            ("authorization", "Bearer a"),
            ("connection", "keep-alive, x-hop"),
            ("x-hop", "1"),
            ("proxy-authorization", "Basic p"),
            ("te", "trailers"),
            ("content-type", "application/grpc"),
        ]);
        let names = |h: &HeaderMap| {
            let mut n: Vec<String> = h.keys().map(|k| k.as_str().to_string()).collect();
            n.sort();
            n
        };
        let mut h1 = h.clone();
        strip(&mut h1, false);
        assert_eq!(names(&h1), ["authorization", "content-type"]);
        strip(&mut h, true);
        assert_eq!(names(&h), ["authorization", "content-type", "te"]);
    }
}
