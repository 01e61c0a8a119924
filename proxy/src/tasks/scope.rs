//! Caller scopes of the ListTasks index: a keyed hash (HMAC-SHA256, cut to
//! 128 bits) of the credentials a call presented, its `Authorization` and
//! the configured identity headers. The credentials themselves are never
//! kept: only the hash, and for the duration of one call, the headers to
//! forward when the proxy asks the agent on the caller's behalf.
//!
//! The key: derived from the push store's credentials key when there is one
//! (`push.credentials_key_file`, or the embedded store's
//! `<data_dir>/credentials.key`), with the label [`SCOPE_LABEL`], so that
//! instances sharing one store agree and a restart keeps its callers'
//! scopes; else random per process (the index then lives in memory only).

use std::fmt;

use http::{HeaderMap, HeaderName, HeaderValue};
use ring::hmac;

/// The label of the scope key's derivation from a store's credentials key:
/// `scope key = HMAC-SHA256(credentials key, SCOPE_LABEL)` ([`derive_secret`]).
pub const SCOPE_LABEL: &[u8] = b"a2a-compat-proxy/list-tasks/caller-scope/v1";

/// Bytes of a scope.
pub const SCOPE_BYTES: usize = 16;

/// Who a call came from, as the index knows it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope([u8; SCOPE_BYTES]);

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scope({})", self.hex())
    }
}

impl Scope {
    /// 32 hex digits (the stored form).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn from_hex(s: &str) -> Option<Scope> {
        if s.len() != 2 * SCOPE_BYTES || !s.is_ascii() {
            return None;
        }
        let mut b = [0u8; SCOPE_BYTES];
        for (i, x) in b.iter_mut().enumerate() {
            *x = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Scope(b))
    }
}

/// The scope secret of a store's credentials key, labelled
/// [`SCOPE_LABEL`] (so it is never the credentials key itself).
pub fn derive_secret(credentials_key: &[u8]) -> [u8; 32] {
    let tag = hmac::sign(
        &hmac::Key::new(hmac::HMAC_SHA256, credentials_key),
        SCOPE_LABEL,
    );
    let mut out = [0u8; 32];
    out.copy_from_slice(tag.as_ref());
    out
}

/// The key scopes are computed with.
pub struct ScopeKey(hmac::Key);

impl ScopeKey {
    /// A random key (no store: scopes live as long as the process).
    pub fn random() -> ScopeKey {
        use rand::RngCore;
        let mut k = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut k);
        ScopeKey(hmac::Key::new(hmac::HMAC_SHA256, &k))
    }

    /// The key of a store's secret ([`derive_secret`]).
    pub fn derived(secret: &[u8; 32]) -> ScopeKey {
        ScopeKey(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    /// The scope of the credential headers `names` in `headers` (every
    /// value of each, in order; none at all: the anonymous scope).
    pub fn scope(&self, names: &[HeaderName], headers: &HeaderMap) -> Scope {
        let mut ctx = hmac::Context::with_key(&self.0);
        for name in names {
            ctx.update(name.as_str().as_bytes());
            ctx.update(&[0]);
            let values: Vec<&HeaderValue> = headers.get_all(name).iter().collect();
            ctx.update(&(values.len() as u32).to_be_bytes());
            for v in values {
                ctx.update(&(v.len() as u32).to_be_bytes());
                ctx.update(v.as_bytes());
            }
        }
        let tag = ctx.sign();
        let mut s = [0u8; SCOPE_BYTES];
        s.copy_from_slice(&tag.as_ref()[..SCOPE_BYTES]);
        Scope(s)
    }
}

/// The caller of one request: its scope, and the credential headers it
/// presented, forwarded when the proxy asks the agent on its behalf.
#[derive(Clone)]
pub struct Caller {
    pub scope: Scope,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the values: they are credentials.
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("Caller")
            .field("scope", &self.scope)
            .field("headers", &names)
            .finish()
    }
}

impl Caller {
    /// The caller of a request with `headers` and `scope` (theirs), the
    /// credential headers being `names` (`authorization` first); those
    /// forwarded are the ones the one rule lets go to the agent
    /// (crate::forward).
    pub fn of(scope: Scope, names: &[HeaderName], headers: &HeaderMap) -> Caller {
        Caller {
            scope,
            headers: crate::forward::caller_headers_named(headers, names),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<HeaderName> {
        vec![
            http::header::AUTHORIZATION,
            HeaderName::from_static("x-user"),
        ]
    }

    fn h(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        m
    }

    #[test]
    fn scopes_differ_by_credentials_and_key_and_hide_them() {
        let k = ScopeKey::derived(&derive_secret(b"secret"));
        let n = names();
        let a = k.scope(&n, &h(&[("authorization", "Bearer a")]));
        let b = k.scope(&n, &h(&[("authorization", "Bearer b")]));
        let anon = k.scope(&n, &h(&[("x-other", "1")]));
        assert_ne!(a, b);
        assert_ne!(a, anon);
        assert_eq!(anon, k.scope(&n, &HeaderMap::new()));
        assert_eq!(
            a,
            k.scope(&n, &h(&[("Authorization", "Bearer a"), ("x-z", "1")]))
        );
        // Identity headers count; names do not run into values.
        assert_ne!(
            a,
            k.scope(&n, &h(&[("authorization", "Bearer a"), ("x-user", "u")]))
        );
        assert_ne!(
            k.scope(&n, &h(&[("authorization", "ab")])),
            k.scope(&n, &h(&[("authorization", "a"), ("authorization", "b")]))
        );
        // Another key (another data dir), another scope; same key, same one.
        assert_ne!(
            a,
            ScopeKey::derived(&derive_secret(b"other"))
                .scope(&n, &h(&[("authorization", "Bearer a")]))
        );
        assert_eq!(
            a,
            ScopeKey::derived(&derive_secret(b"secret"))
                .scope(&n, &h(&[("authorization", "Bearer a")]))
        );
        assert_eq!(Scope::from_hex(&a.hex()), Some(a));
        assert_eq!(Scope::from_hex("zz"), None);
        let creds = h(&[("authorization", "Bearer a"), ("x-user", "u")]);
        let c = Caller::of(k.scope(&n, &creds), &n, &creds);
        assert_eq!(c.headers.len(), 2);
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("Bearer") && shown.contains("authorization"),
            "{shown}"
        );
    }

    /// The credentials asked with are the ones the one rule forwards
    /// (crate::forward): an identity header the caller's `connection`
    /// header nominates is hop-by-hop, so not sent to the agent.
    #[test]
    fn forwarded_credentials_follow_the_one_rule() {
        let k = ScopeKey::derived(&derive_secret(b"secret"));
        let hop = h(&[
            ("authorization", "Bearer a"),
            ("connection", "x-user"),
            ("x-user", "u"),
        ]);
        let c = Caller::of(k.scope(&names(), &hop), &names(), &hop);
        let sent: Vec<&str> = c.headers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(sent, ["authorization"]);
    }
}
