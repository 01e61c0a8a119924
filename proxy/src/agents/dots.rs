//! A request path's dot segments resolved before it is routed (RFC 3986
//! section 5.2.4, `remove_dot_segments`).
//!
//! An agent host that resolves `/a/../b` itself would serve `/b` under the
//! route, limits and ListTasks scope the proxy chose for `/a`. So the path
//! is resolved first: percent-encoded dots (`%2e`) count as dots, as they
//! do for servers that decode before resolving; a path that climbs above
//! the root is refused, and so is a dot segment next to an encoded slash
//! or a backslash (`..%2f`, `..\`), which a server may read as a separator
//! and the proxy cannot resolve the same way for every agent.

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPath(pub &'static str);

/// `raw` (an origin-form path, no query) without its dot segments:
/// `Ok(None)` when it has none (the common case, answered without
/// allocating), `Ok(Some(path))` resolved, or why it is refused.
pub fn resolve(raw: &str) -> Result<Option<String>, BadPath> {
    if !raw.contains('.') && !has_encoded_dot(raw) {
        return Ok(None);
    }
    let segments: Vec<&str> = raw.split('/').skip(1).collect();
    let mut dotted = false;
    for s in &segments {
        if dot(s).is_some() {
            dotted = true;
        } else if hides_dot_segment(s) {
            return Err(BadPath(
                "a dot segment next to an encoded slash or a backslash",
            ));
        }
    }
    if !dotted {
        return Ok(None);
    }
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    let last = segments.len().saturating_sub(1);
    for (i, s) in segments.iter().enumerate() {
        match dot(s) {
            Some(Dot::One) => {}
            Some(Dot::Two) => {
                if out.pop().is_none() {
                    return Err(BadPath("the path climbs above the root"));
                }
            }
            None => out.push(s),
        }
        // A dot segment last leaves the path ending in a slash.
        if i == last && dot(s).is_some() {
            out.push("");
        }
    }
    let mut path = String::with_capacity(raw.len());
    for s in &out {
        path.push('/');
        path.push_str(s);
    }
    if path.is_empty() {
        path.push('/');
    }
    Ok(Some(path))
}

enum Dot {
    One,
    Two,
}

/// `.` or `..`, dots percent-encoded or not.
fn dot(segment: &str) -> Option<Dot> {
    let mut dots = 0;
    let mut rest = segment;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
        } else if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case("%2e") {
            rest = &rest[3..];
        } else {
            return None;
        }
        dots += 1;
    }
    match dots {
        1 => Some(Dot::One),
        2 => Some(Dot::Two),
        _ => None,
    }
}

fn has_encoded_dot(raw: &str) -> bool {
    raw.as_bytes()
        .windows(3)
        .any(|w| w.eq_ignore_ascii_case(b"%2e"))
}

/// A segment that holds a dot segment once `%2f`, `%5c` or `\` split it.
fn hides_dot_segment(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    if !lower.contains("%2f") && !lower.contains("%5c") && !lower.contains('\\') {
        return false;
    }
    lower
        .replace("%2f", "/")
        .replace("%5c", "/")
        .replace('\\', "/")
        .split('/')
        .any(|s| dot(s).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_resolved_as_rfc_3986_says() {
        let ok = |raw: &str| resolve(raw).map(|p| p.unwrap_or_else(|| raw.to_string()));
        assert_eq!(ok("/a/b/c"), Ok("/a/b/c".into()));
        assert_eq!(resolve("/a/b.c/v1.0"), Ok(None));
        assert_eq!(ok("/a/../b/x"), Ok("/b/x".into()));
        assert_eq!(ok("/a/./b"), Ok("/a/b".into()));
        assert_eq!(ok("/a/b/.."), Ok("/a/".into()));
        assert_eq!(ok("/a/b/."), Ok("/a/b/".into()));
        assert_eq!(ok("/a/%2e%2e/b"), Ok("/b".into()));
        assert_eq!(ok("/a/%2E./b"), Ok("/b".into()));
        assert_eq!(ok("/a/.%2e/b"), Ok("/b".into()));
        assert_eq!(ok("/a/..."), Ok("/a/...".into()));
        assert_eq!(ok("/.."), Err(BadPath("the path climbs above the root")));
        assert!(resolve("/a/../../b").is_err());
        assert!(resolve("/a/..%2fb/x").is_err());
        assert!(resolve("/a/%2e%2e%2Fb").is_err());
        assert!(resolve("/a/..\\b").is_err());
        assert!(resolve("/a/x%5c..").is_err());
        // An encoded slash with no dot segment is the agent's business.
        assert_eq!(resolve("/a/x%2fy"), Ok(None));
        assert_eq!(ok("/"), Ok("/".into()));
    }
}
