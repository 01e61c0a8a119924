//! Where each binding of the agent lives (issue #23): the JSON-RPC, HTTP+JSON
//! and gRPC URLs its card lists, each on a host the operator allows
//! (`upstream.allowed_hosts`), under whatever path the agent uses.
//!
//! [`Endpoints`] is resolved from the card ([`resolve`]) each time the card
//! cache holds a new copy (`App::endpoints`, in `app/endpoints.rs`); when the card names no
//! usable JSON-RPC or HTTP+JSON interface, JSON-RPC is at `upstream.url`
//! ([`Endpoints::fallback`]), as the proxy always assumed. Each interface is
//! advertised at the proxy's public URL keeping the agent's path (its part
//! under `upstream.url`'s path, [`public_path`]): agent `http://a:9/rest`
//! → `http://proxy/rest`. Which interface a request addresses, and the
//! agent URL it goes to, is decided by [`crate::route::place`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::card::{card_version, CachedCard};
use crate::config::{AllowedHosts, HttpUrl};
use crate::version::Version;

/// The bindings an agent card can list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iface {
    JsonRpc,
    Rest,
    Grpc,
}

impl Iface {
    /// The binding of a card's `transport` / `protocolBinding` value.
    pub fn of(name: &str) -> Option<Iface> {
        match name.trim().to_ascii_uppercase().as_str() {
            "JSONRPC" => Some(Iface::JsonRpc),
            "HTTP+JSON" => Some(Iface::Rest),
            "GRPC" => Some(Iface::Grpc),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Iface::JsonRpc => "JSONRPC",
            Iface::Rest => "HTTP+JSON",
            Iface::Grpc => "GRPC",
        }
    }
}

/// One interface of the agent the proxy serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The agent's URL for it (connected to; its path is the binding's base).
    pub url: HttpUrl,
    /// Its path under the proxy's public base path (`""`: the base itself,
    /// else starting with `/`, no trailing `/`): where it is advertised
    /// and where requests for it are recognised.
    pub public_path: String,
}

/// An interface of the card the proxy does not serve, and why (logged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub binding: String,
    pub url: String,
    pub why: &'static str,
}

/// The agent's interfaces the proxy serves.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Endpoints {
    pub jsonrpc: Option<Endpoint>,
    pub rest: Option<Endpoint>,
    pub grpc: Option<Endpoint>,
    /// What the card listed and the proxy leaves out.
    pub left_out: Vec<LeftOut>,
}

/// `url`'s path under the upstream's base path (kept whole when it is not
/// under it), without a trailing `/`.
pub fn public_path(url: &HttpUrl, upstream: &HttpUrl) -> String {
    let path = url.base_path.as_str();
    let base = upstream.base_path.as_str();
    let rel = match path.strip_prefix(base) {
        Some(rest) if !base.is_empty() && (rest.is_empty() || rest.starts_with('/')) => rest,
        _ => path,
    };
    rel.trim_end_matches('/').to_string()
}

/// At most this many left-out interfaces of one card are logged one by one
/// (a card is at most 1 MiB; its interfaces are read once per new card).
const LOGGED_LEFT_OUT_MAX: usize = 16;

/// At most this much of a card's URL goes into a log line.
const LOGGED_URL_MAX: usize = 200;

fn logged(url: &str) -> String {
    url.chars().take(LOGGED_URL_MAX).collect()
}

impl Endpoints {
    /// JSON-RPC at `upstream.url` and nothing else: what the proxy serves
    /// when the card names no usable interface (or cannot be had).
    pub fn fallback(upstream: &HttpUrl) -> Endpoints {
        Endpoints {
            jsonrpc: Some(Endpoint {
                url: upstream.clone(),
                public_path: String::new(),
            }),
            ..Endpoints::default()
        }
    }

    pub fn get(&self, iface: Iface) -> Option<&Endpoint> {
        match iface {
            Iface::JsonRpc => self.jsonrpc.as_ref(),
            Iface::Rest => self.rest.as_ref(),
            Iface::Grpc => self.grpc.as_ref(),
        }
    }

    /// Whether `url` (as a card writes it) is the served interface of
    /// `iface`.
    pub fn serves(&self, iface: Iface, url: &str) -> bool {
        let Some(e) = self.get(iface) else {
            return false;
        };
        HttpUrl::parse("", url.trim()).is_ok_and(|u| same_place(&u, &e.url))
    }

    /// Logs each interface the card listed that the proxy leaves out (at
    /// most [`LOGGED_LEFT_OUT_MAX`], then how many more; the card's text
    /// quoted, so it cannot start a log line of its own).
    pub fn log_left_out(&self) {
        for l in self.left_out.iter().take(LOGGED_LEFT_OUT_MAX) {
            tracing::warn!(binding = ?l.binding, url = ?l.url, why = l.why, "an interface of the agent's card is left out of the served cards");
        }
        if let Some(more) = self.left_out.len().checked_sub(LOGGED_LEFT_OUT_MAX) {
            if more > 0 {
                tracing::warn!(
                    more,
                    "more interfaces of the agent's card are left out of the served cards"
                );
            }
        }
    }
}

/// Same origin and path (a trailing `/` aside).
fn same_place(a: &HttpUrl, b: &HttpUrl) -> bool {
    a.scheme == b.scheme
        && a.host.eq_ignore_ascii_case(&b.host)
        && a.port == b.port
        && a.base_path.trim_end_matches('/') == b.base_path.trim_end_matches('/')
}

/// The interfaces of an agent card, as (binding name, URL) in the card's
/// order: v0.3 `url` + `preferredTransport` then `additionalInterfaces`;
/// v1.0 `supportedInterfaces` of a 1.N version (or none named).
fn listed(card: &Value) -> Vec<(String, String, bool)> {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    match card_version(card) {
        Version::V03 => {
            if let Some(u) = s(card.get("url")) {
                let t = s(card.get("preferredTransport")).unwrap_or_else(|| "JSONRPC".into());
                out.push((t, u, true));
            }
            if let Some(Value::Array(l)) = card.get("additionalInterfaces") {
                for i in l {
                    if let (Some(t), Some(u)) = (s(i.get("transport")), s(i.get("url"))) {
                        out.push((t, u, true));
                    }
                }
            }
        }
        Version::V10 => {
            if let Some(Value::Array(l)) = card.get("supportedInterfaces") {
                for i in l {
                    let b = s(i.get("protocolBinding"));
                    let v1 = match s(i.get("protocolVersion")) {
                        None => true,
                        Some(v) => translate::version::ProtocolVersion::parse(&v)
                            .is_none_or(|p| p.family() == Version::V10),
                    };
                    if let (Some(b), Some(u)) = (b, s(i.get("url"))) {
                        out.push((b, u, v1));
                    }
                }
            }
        }
    }
    out
}

/// A card interface's URL: an absolute http(s) URL, or for gRPC the
/// `host:port` form v1.0.1 gives it (taken with `upstream.url`'s scheme:
/// an agent served over TLS is taken to serve its gRPC over TLS too).
fn interface_url(iface: Iface, url: &str, upstream: &HttpUrl) -> Option<HttpUrl> {
    let url = url.trim();
    if let Ok(u) = HttpUrl::parse("", url) {
        return Some(u);
    }
    let bare = iface == Iface::Grpc && !url.contains("://") && !url.contains('/');
    bare.then(|| HttpUrl::parse("", &format!("{}://{url}", upstream.scheme)).ok())
        .flatten()
}

/// The interfaces of `card` the proxy serves: for each binding the first
/// one listed on an allowed host; the rest left out with the reason. No
/// usable interface at all: each JSON-RPC and HTTP+JSON binding the card
/// names at `upstream.url` (JSON-RPC when it names no binding the proxy
/// knows, [`Endpoints::fallback`]).
pub fn resolve(card: &Value, upstream: &HttpUrl, allowed: &AllowedHosts) -> Endpoints {
    let mut ends = Endpoints::default();
    for (binding, url, this_version) in listed(card) {
        let mut leave = |why| {
            ends.left_out.push(LeftOut {
                binding: logged(&binding),
                url: logged(&url),
                why,
            })
        };
        let Some(iface) = Iface::of(&binding) else {
            leave("not a binding the proxy serves");
            continue;
        };
        if !this_version {
            leave(
                "an interface of another protocol version (clients of that version are translated)",
            );
            continue;
        }
        let Some(parsed) = interface_url(iface, &url, upstream) else {
            leave("not an absolute http(s) URL without a query");
            continue;
        };
        if !allowed.allows(&parsed) {
            leave("its host is not in upstream.allowed_hosts; never contacted");
            continue;
        }
        let slot = match iface {
            Iface::JsonRpc => &mut ends.jsonrpc,
            Iface::Rest => &mut ends.rest,
            Iface::Grpc => &mut ends.grpc,
        };
        match slot {
            Some(e) if same_place(&e.url, &parsed) => {}
            Some(_) => {
                leave("the card lists an earlier interface of this binding, which is served")
            }
            None => {
                *slot = Some(Endpoint {
                    public_path: public_path(&parsed, upstream),
                    url: parsed,
                });
            }
        }
    }
    if ends.jsonrpc.is_none() && ends.rest.is_none() && ends.grpc.is_none() {
        // Nothing usable: each JSON-RPC and HTTP+JSON binding the card
        // named is taken to be at upstream.url (JSON-RPC when it named none).
        let named = |i: Iface| {
            ends.left_out
                .iter()
                .any(|l| Iface::of(&l.binding) == Some(i))
        };
        let (rpc, rest) = (named(Iface::JsonRpc), named(Iface::Rest));
        let any = rpc || rest || named(Iface::Grpc);
        let at_base = || Endpoint {
            url: upstream.clone(),
            public_path: String::new(),
        };
        ends.rest = rest.then(at_base);
        ends.jsonrpc = (rpc || !any).then(at_base);
    }
    ends
}

/// Where one request goes: the agent URL of its binding and the path (and
/// query) asked there ([`crate::route::place`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dest {
    /// The binding's agent URL: connected to, its authority the `Host`,
    /// its path the base of translated REST paths.
    pub url: HttpUrl,
    /// The path and query the request is sent to as it is.
    pub path_and_query: String,
}

/// How long endpoints resolved without a card stand before the card is
/// asked for again.
pub(crate) const NO_CARD_RETRY: Duration = Duration::from_secs(5);

/// The endpoints of the card last seen (kept by the card cache).
#[derive(Default)]
pub struct EndpointsMemo {
    pub(crate) slot: Mutex<Option<Memo>>,
}

pub(crate) struct Memo {
    pub(crate) card: Option<Arc<CachedCard>>,
    pub(crate) ends: Arc<Endpoints>,
    pub(crate) until: Instant,
}

impl EndpointsMemo {
    /// The last endpoints resolved, if still current.
    pub(crate) fn fresh(&self, now: Instant) -> Option<Arc<Endpoints>> {
        let slot = self.slot.lock().ok()?;
        slot.as_ref()
            .filter(|m| now < m.until)
            .map(|m| m.ends.clone())
    }

    /// The endpoints of the last card seen, if one was.
    pub(crate) fn of_card(&self) -> Option<Arc<Endpoints>> {
        let slot = self.slot.lock().ok()?;
        slot.as_ref()
            .filter(|m| m.card.is_some())
            .map(|m| m.ends.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(s: &str) -> HttpUrl {
        HttpUrl::parse("t", s).unwrap()
    }

    fn allowed(list: &[&str]) -> AllowedHosts {
        let l: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        AllowedHosts::resolve(Some(&l), &url("http://x"), None).unwrap()
    }

    #[test]
    fn allowed_hosts() {
        let up = url("http://10.0.0.5:9000/a");
        let g = url("http://10.0.0.5:9100");
        let d = AllowedHosts::resolve(None, &up, Some(&g)).unwrap();
        assert!(d.allows(&url("http://10.0.0.5:9000/rest")));
        assert!(d.allows(&url("http://10.0.0.5:9100")));
        assert!(!d.allows(&url("http://10.0.0.5:9001")));
        assert!(!d.allows(&url("http://evil:9000")));
        let a = allowed(&["Agent.internal", "10.0.0.6:80", "[::1]:9"]);
        assert!(a.allows(&url("http://agent.INTERNAL:1234/x")));
        assert!(a.allows(&url("http://10.0.0.6/")));
        assert!(!a.allows(&url("http://10.0.0.6:81/")));
        assert!(a.allows(&url("http://[::1]:9/")));
        for bad in ["", "a/b", "h:x", "[::1", "u@h"] {
            let l = vec![bad.to_string()];
            assert!(AllowedHosts::resolve(Some(&l), &up, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn allowed_hosts_from_the_file() {
        use crate::config::{Config, RawConfig};
        let file = |extra: &str| {
            let text = format!(
                "[upstream]\nurl = \"http://10.0.0.5:9000\"\ngrpc_url = \"http://g:1\"\n{extra}"
            );
            Config::resolve(RawConfig::from_toml(&text, "f").unwrap())
        };
        let d = file("").unwrap().allowed_hosts;
        assert!(d.allows(&url("http://10.0.0.5:9000/x")) && d.allows(&url("http://g:1")));
        let c = file("allowed_hosts = [\"a\", \"b:2\"]")
            .unwrap()
            .allowed_hosts;
        assert!(c.allows(&url("http://a:7")) && c.allows(&url("http://b:2")));
        assert!(!c.allows(&url("http://10.0.0.5:9000")));
        let e = file("allowed_hosts = [\"http://a/\"]").unwrap_err();
        assert_eq!(e.key, "upstream.allowed_hosts");
    }

    #[test]
    fn v03_card_with_prefixes() {
        let up = url("http://127.0.0.1:9");
        let card = json!({
            "url": "http://127.0.0.1:9/jsonrpc", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [
                {"url": "http://127.0.0.1:9/jsonrpc", "transport": "JSONRPC"},
                {"url": "http://127.0.0.1:9/rest/", "transport": "HTTP+JSON"},
                {"url": "http://127.0.0.1:9/other", "transport": "HTTP+JSON"},
                {"url": "http://evil.example/rest", "transport": "HTTP+JSON"},
                {"url": "http://127.0.0.1:9/g", "transport": "GRPC"},
                {"url": "http://127.0.0.1:9/w", "transport": "WEBSOCKET"}
            ]
        });
        let e = resolve(&card, &up, &AllowedHosts::resolve(None, &up, None).unwrap());
        assert_eq!(e.jsonrpc.as_ref().unwrap().public_path, "/jsonrpc");
        assert_eq!(e.rest.as_ref().unwrap().public_path, "/rest");
        assert_eq!(e.rest.as_ref().unwrap().url.base_path, "/rest");
        assert_eq!(e.grpc.as_ref().unwrap().public_path, "/g");
        let why: Vec<&str> = e.left_out.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(
            why,
            [
                "http://127.0.0.1:9/other",
                "http://evil.example/rest",
                "http://127.0.0.1:9/w"
            ]
        );
        assert!(e.serves(Iface::Rest, "http://127.0.0.1:9/rest"));
        assert!(!e.serves(Iface::Rest, "http://evil.example/rest"));
    }

    #[test]
    fn a_grpc_interface_as_host_and_port() {
        let up = url("https://127.0.0.1:9");
        let card = json!({"supportedInterfaces": [
            {"url": "127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "127.0.0.1:9", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]});
        let e = resolve(&card, &up, &allowed(&["127.0.0.1"]));
        let g = e.grpc.unwrap();
        assert_eq!((g.url.scheme.as_str(), g.url.port), ("https", 50051));
        // Only gRPC has that form.
        assert_eq!(e.jsonrpc, None);
        assert_eq!(e.left_out.len(), 1);
    }

    #[test]
    fn v10_card_and_fallback() {
        let up = url("http://127.0.0.1:9/agent");
        let card = json!({"supportedInterfaces": [
            {"url": "http://127.0.0.1:9/agent/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:9/agent/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://127.0.0.1:9/agent/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.1"}
        ]});
        let all = AllowedHosts::resolve(None, &up, None).unwrap();
        let e = resolve(&card, &up, &all);
        assert_eq!(e.rest.as_ref().unwrap().public_path, "/a2a/rest");
        assert_eq!(e.jsonrpc.as_ref().unwrap().public_path, "/a2a");
        assert_eq!(e.left_out.len(), 1);
        // Nothing usable: JSON-RPC at upstream.url.
        let elsewhere = json!({"url": "http://other:1/", "preferredTransport": "JSONRPC"});
        let e = resolve(&elsewhere, &up, &all);
        assert_eq!(e.jsonrpc, Endpoints::fallback(&up).jsonrpc);
        assert_eq!(e.left_out.len(), 1);
        assert_eq!(resolve(&json!({}), &up, &all), Endpoints::fallback(&up));
        // Another host when allowed; its whole path is kept.
        // Only a gRPC interface, elsewhere: nothing for JSON-RPC.
        let grpc = json!({"supportedInterfaces": [
            {"url": "http://other:1/", "protocolBinding": "GRPC"}
        ]});
        assert_eq!(resolve(&grpc, &up, &all).jsonrpc, None);
        let e = resolve(&elsewhere, &up, &allowed(&["other"]));
        let j = e.jsonrpc.unwrap();
        assert_eq!(
            (j.url.authority(), j.public_path),
            ("other:1".into(), "".into())
        );
    }
}
