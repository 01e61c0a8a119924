//! The upstream agent card: inspected for the upstream version, translated,
//! shaped for each client, and served with every interface URL pointing at
//! the proxy; fetched and cached by [`CardCache`] (`cache.rs`).

pub mod endpoints;

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;

use crate::config::HttpUrl;
use crate::version::Version;
use endpoints::{Endpoints, Iface};

mod cache;
mod ready;

pub use cache::CardCache;
pub use ready::ReadyLog;

/// The well-known card path (v0.3.0 and v1.0).
pub const CARD_PATH: &str = "/.well-known/agent-card.json";

/// Largest card accepted from the upstream.
const MAX_CARD_BYTES: usize = 1024 * 1024;

/// One fetched card.
#[derive(Debug, Clone)]
pub struct CachedCard {
    /// The card as the upstream sent it.
    pub raw: Bytes,
    pub json: Value,
    /// The upstream's validator, sent back as `If-None-Match`.
    pub etag: Option<String>,
    pub fetched: Instant,
    pub ttl: Duration,
    /// The version the card is written in.
    pub version: Version,
    /// When the card last changed, served as `Last-Modified`: the agent's
    /// own `Last-Modified` when it sent one (not in the future), else
    /// when this proxy first held these bytes (a refetch of the same card
    /// keeps it).
    pub modified: std::time::SystemTime,
    /// [`Self::modified`] is the agent's own `Last-Modified`.
    pub agent_modified: bool,
}

impl CachedCard {
    /// [`Self::modified`] as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
    pub fn last_modified(&self) -> String {
        http_date(self.modified)
    }

    pub fn is_fresh(&self, now: Instant) -> bool {
        now.duration_since(self.fetched) < self.ttl
    }

    /// Seconds of freshness left (for `Cache-Control: max-age`).
    pub fn remaining(&self, now: Instant) -> u64 {
        self.ttl
            .saturating_sub(now.duration_since(self.fetched))
            .as_secs()
    }
}

/// `t` as an HTTP date (RFC 9110 IMF-fixdate, always GMT).
pub fn http_date(t: std::time::SystemTime) -> String {
    let t: chrono::DateTime<chrono::Utc> = t.into();
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// An HTTP date header value (`Last-Modified`) as a time, `None` when it
/// is none or in the future of `now`.
pub fn parse_http_date(v: &str, now: std::time::SystemTime) -> Option<std::time::SystemTime> {
    let t = chrono::DateTime::parse_from_rfc2822(v.trim()).ok()?;
    let t: std::time::SystemTime = t.with_timezone(&chrono::Utc).into();
    (t <= now).then_some(t)
}

/// A v1.0 card has `supportedInterfaces`; anything else is read as v0.3.
/// A 1.N card (`supportedInterfaces` whose `protocolVersion` says 1.1, say)
/// is a v1.0-family card too; [`card_protocol`] gives its precise version.
pub fn card_version(card: &Value) -> Version {
    if card.get("supportedInterfaces").is_some_and(Value::is_array) {
        Version::V10
    } else {
        Version::V03
    }
}

/// The precise version of the agent behind `card`: 0.3 for a v0.3 card;
/// for a v1.0-family card the newest 1.N among its interfaces'
/// `protocolVersion`s (an agent declaring 1.1 is a 1.1 agent), 1.0 when
/// none names a 1.N.
pub fn card_protocol(card: &Value) -> translate::version::ProtocolVersion {
    use translate::version::ProtocolVersion;
    match card_version(card) {
        Version::V03 => ProtocolVersion::V0_3,
        Version::V10 => card
            .get("supportedInterfaces")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("protocolVersion")?.as_str())
            .filter_map(ProtocolVersion::parse)
            .filter(|p| p.family() == Version::V10)
            .max()
            .unwrap_or(ProtocolVersion::V1_0),
    }
}

/// Cache lifetime from `Cache-Control` (`no-store`/`no-cache` = 0, `max-age=N`).
pub fn ttl_from_cache_control(value: Option<&str>, default: Duration) -> Duration {
    let Some(v) = value else { return default };
    let mut ttl = None;
    for directive in v.split(',') {
        let d = directive.trim().to_ascii_lowercase();
        if d == "no-store" || d == "no-cache" {
            return Duration::ZERO;
        }
        if let Some(n) = d.strip_prefix("max-age=") {
            if let Ok(n) = n.trim_matches('"').parse::<u64>() {
                ttl = Some(Duration::from_secs(n));
            }
        }
    }
    ttl.unwrap_or(default)
}

/// Points one interface URL at the proxy: the upstream's origin and base path
/// (or, for a URL on another host, just its origin) become the public URL.
pub fn rewrite_url(url: &str, upstream: &HttpUrl, public: &HttpUrl) -> String {
    let Some(after_scheme) = url.split_once("://").map(|(_, r)| r) else {
        return url.to_string();
    };
    let path_start = after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len());
    let mut path = &after_scheme[path_start..];
    if !upstream.base_path.is_empty() {
        if let Some(rest) = path.strip_prefix(upstream.base_path.as_str()) {
            if rest.is_empty() || rest.starts_with(['/', '?', '#']) {
                path = rest;
            }
        }
    }
    format!("{}{}", public.as_string(), path)
}

/// Rewrites `url`, `additionalInterfaces[].url` and `supportedInterfaces[].url`.
pub fn rewrite_card(card: &mut Value, upstream: &HttpUrl, public: &HttpUrl) {
    let fix = |v: &mut Value| {
        if let Some(s) = v.as_str() {
            *v = Value::String(rewrite_url(s, upstream, public));
        }
    };
    if let Some(u) = card.get_mut("url") {
        fix(u);
    }
    for list in ["additionalInterfaces", "supportedInterfaces"] {
        if let Some(Value::Array(items)) = card.get_mut(list) {
            for item in items {
                if let Some(u) = item.get_mut("url") {
                    fix(u);
                }
            }
        }
    }
}

/// The bindings the proxy translates between versions (gRPC interfaces
/// are the proxy's own, added by `cards::advertise` when it serves gRPC).
const TRANSLATED_BINDINGS: [&str; 2] = ["JSONRPC", "HTTP+JSON"];

/// The card translated for a client of version `to`, advertising only what
/// the proxy can translate: the JSON-RPC and HTTP+JSON interfaces it
/// serves (`ends`, [`keep_served`]), stamped with `to`; the primary (v0.3
/// `url`) is the JSON-RPC one if any. URLs are still the agent's.
pub fn translate_card(card: &Value, to: Version, ends: &Endpoints) -> Result<Value, String> {
    translate_card_for(card, to, ends, false)
}

/// [`translate_card`] for a proxy that also serves gRPC (`grpc`: its
/// listener is advertised afterwards, `cards::advertise`): a card whose
/// agent has no JSON-RPC or HTTP+JSON interface (a gRPC-only agent, which
/// the gRPC listener serves translated) is served with that one.
pub fn translate_card_for(
    card: &Value,
    to: Version,
    ends: &Endpoints,
    grpc: bool,
) -> Result<Value, String> {
    let raw = serde_json::to_vec(card).map_err(|e| e.to_string())?;
    let out =
        translate::document::card(to, &raw).map_err(|e| format!("card translation failed: {e}"))?;
    let mut out: Value = serde_json::from_slice(&out).map_err(|e| e.to_string())?;
    keep_served(&mut out, ends);
    shape_translated_for(&mut out, to, grpc)?;
    Ok(out)
}

// Interface endpoints (area: paths).
/// Leaves in `card` (of either version's shape, URLs still the agent's)
/// only the interfaces the proxy serves: each JSON-RPC and HTTP+JSON one
/// that is the binding's endpoint in `ends` (the others, and bindings the
/// proxy does not know, are left out: [`Endpoints::log_left_out`] said
/// why), gRPC ones as they are (`cards::advertise` decides); an endpoint
/// the card does not list (`upstream.url` when the card names nothing
/// usable) is added. A v0.3 card whose primary `url` is left out takes the
/// first served interface (JSON-RPC first) as its primary.
pub fn keep_served(card: &mut Value, ends: &Endpoints) {
    match card_version(card) {
        Version::V10 => keep_served_v10(card, ends),
        Version::V03 => keep_served_v03(card, ends),
    }
}

/// Whether an interface of `binding` at `url` stays on the card: gRPC ones
/// always, JSON-RPC and HTTP+JSON ones when they are that binding's
/// endpoint in `ends`, nothing else.
fn kept(ends: &Endpoints, binding: Option<&str>, url: Option<&str>) -> bool {
    match (binding.and_then(Iface::of), url) {
        (Some(Iface::Grpc), _) => true,
        (Some(i), Some(u)) => ends.serves(i, u),
        _ => false,
    }
}

/// The JSON-RPC and HTTP+JSON endpoints the proxy serves, with their URLs.
fn served(ends: &Endpoints) -> impl Iterator<Item = (Iface, String)> + '_ {
    [Iface::JsonRpc, Iface::Rest]
        .into_iter()
        .filter_map(|i| ends.get(i).map(|e| (i, e.url.as_string())))
}

/// Member `k` of `v` when it is a string.
fn str_at<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// Whether `list` has an interface of `iface` (its binding named by `key`).
fn lists(list: &[Value], key: &str, iface: Iface) -> bool {
    list.iter()
        .any(|i| str_at(i, key).and_then(Iface::of) == Some(iface))
}

/// [`keep_served`] on a v1.0 card: `supportedInterfaces` filtered, the
/// missing endpoints added with the card's protocol version.
fn keep_served_v10(card: &mut Value, ends: &Endpoints) {
    let Some(Value::Array(list)) = card.get_mut("supportedInterfaces") else {
        return;
    };
    list.retain(|i| kept(ends, str_at(i, "protocolBinding"), str_at(i, "url")));
    let stamp = list
        .iter()
        .find_map(|i| str_at(i, "protocolVersion"))
        .unwrap_or("1.0")
        .to_string();
    for (iface, url) in served(ends) {
        if !lists(list, "protocolBinding", iface) {
            list.push(serde_json::json!({"url": url, "protocolBinding": iface.name(), "protocolVersion": stamp}));
        }
    }
}

/// [`keep_served`] on a v0.3 card: `additionalInterfaces` filtered, the
/// missing endpoints added, and a new primary when the old one is left out.
fn keep_served_v03(card: &mut Value, ends: &Endpoints) {
    let Some(obj) = card.as_object_mut() else {
        return;
    };
    let main_t = obj
        .get("preferredTransport")
        .and_then(Value::as_str)
        .unwrap_or("JSONRPC")
        .to_string();
    let main_u = obj.get("url").and_then(Value::as_str).map(str::to_string);
    let had_list = obj.contains_key("additionalInterfaces");
    let mut list = match obj.get("additionalInterfaces") {
        Some(Value::Array(l)) => l.clone(),
        _ => Vec::new(),
    };
    list.retain(|i| kept(ends, str_at(i, "transport"), str_at(i, "url")));
    let main_kept = kept(ends, Some(&main_t), main_u.as_deref());
    let mut added = false;
    for (iface, url) in served(ends) {
        let listed =
            lists(&list, "transport", iface) || (main_kept && Iface::of(&main_t) == Some(iface));
        if !listed {
            list.push(serde_json::json!({"url": url, "transport": iface.name()}));
            added = true;
        }
    }
    if !main_kept {
        set_v03_primary(obj, &list);
    }
    if had_list || added || !main_kept {
        obj.insert("additionalInterfaces".into(), Value::Array(list));
    }
}

/// Makes the first non-gRPC interface of `list` (JSON-RPC first; else the
/// first of any kind) the v0.3 card's primary `url`; none: no `url`.
fn set_v03_primary(obj: &mut serde_json::Map<String, Value>, list: &[Value]) {
    let first = list
        .iter()
        .filter(|i| str_at(i, "transport") != Some("GRPC"))
        .min_by_key(|i| str_at(i, "transport") != Some("JSONRPC"))
        .or_else(|| list.first());
    match first {
        Some(f) => {
            obj.insert("url".into(), f["url"].clone());
            obj.insert("preferredTransport".into(), f["transport"].clone());
        }
        None => {
            obj.remove("url");
        }
    }
}

/// A card the proxy cannot serve translated: `message` for the client
/// (fixed text naming at most a short member name, never the agent's
/// bytes), `detail` for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardProblem {
    pub message: String,
    pub detail: String,
}

/// Cards up to this size are searched for the member that breaks their
/// translation (one translation per top-level member, on the error path).
const PROBLEM_SEARCH_MAX_BYTES: usize = 64 * 1024;

/// Says what is wrong with `card`, whose translation to `to` failed with
/// `detail`: a required member missing or of the wrong type, no interface
/// the proxy translates, or the one top-level member without which it
/// translates.
pub fn card_problem(card: &Value, to: Version, detail: String) -> CardProblem {
    let from = card_version(card);
    let quote = |k: &str| {
        let short = !k.is_empty()
            && k.len() <= 40
            && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if short {
            format!("`{k}`")
        } else {
            "a member".to_string()
        }
    };
    let head = format!("the agent's A2A {from} card cannot be served to A2A {to} clients");
    let say = |what: String| CardProblem {
        message: format!("{head}: {what}"),
        detail: detail.clone(),
    };
    let (list, link) = match from {
        Version::V03 => ("url", "a string"),
        Version::V10 => ("supportedInterfaces", "a list"),
    };
    let required: [(&str, &str); 8] = [
        ("name", "a string"),
        ("description", "a string"),
        ("version", "a string"),
        (list, link),
        ("capabilities", "an object"),
        ("defaultInputModes", "a list"),
        ("defaultOutputModes", "a list"),
        ("skills", "a list"),
    ];
    for (key, kind) in required {
        let ok = matches!(
            (card.get(key), kind),
            (Some(Value::String(_)), "a string")
                | (Some(Value::Object(_)), "an object")
                | (Some(Value::Array(_)), "a list")
        );
        if !ok {
            return say(format!(
                "its member {} is missing or not {kind}",
                quote(key)
            ));
        }
    }
    let translates = |c: &Value| {
        serde_json::to_vec(c).ok().is_some_and(|raw| {
            translate::document::translate(translate::document::Kind::Card, to, None, &raw).is_ok()
        })
    };
    if translates(card) {
        // The translation held; the interfaces did not.
        let members = match from {
            Version::V03 => "`url` and `additionalInterfaces`",
            Version::V10 => "`supportedInterfaces`",
        };
        return say(format!(
            "{members} list no JSON-RPC or HTTP+JSON interface the proxy translates"
        ));
    }
    let small = serde_json::to_vec(card).map_or(0, |b| b.len()) <= PROBLEM_SEARCH_MAX_BYTES;
    if let (true, Some(obj)) = (small, card.as_object()) {
        for key in obj.keys().take(64) {
            let mut without = card.clone();
            if let Some(o) = without.as_object_mut() {
                o.remove(key);
            }
            if translates(&without) {
                return say(format!("its member {} cannot be translated", quote(key)));
            }
        }
    }
    say(format!("it is not a valid A2A {from} card"))
}

/// The interfaces of a card already translated to `to` (the public or the
/// extended card) and left with those the proxy serves ([`keep_served`]):
/// only those the proxy translates, stamped with `to`, JSON-RPC first (see
/// [`translate_card`]).
pub fn shape_translated(out: &mut Value, to: Version) -> Result<(), String> {
    shape_translated_for(out, to, false)
}

/// [`shape_translated`]; with `grpc` (the proxy's gRPC interface is
/// advertised next) a card left with no JSON-RPC or HTTP+JSON interface is
/// served with that one alone (v0.3: `preferredTransport: GRPC`).
pub fn shape_translated_for(out: &mut Value, to: Version, grpc: bool) -> Result<(), String> {
    let translated = |i: &Value, key: &str| {
        let b = i.get(key).and_then(Value::as_str).unwrap_or("JSONRPC");
        TRANSLATED_BINDINGS.contains(&b)
    };
    let no_interface =
        || "the agent has no JSON-RPC or HTTP+JSON interface to translate".to_string();
    match to {
        Version::V10 => {
            let Some(Value::Array(list)) = out.get_mut("supportedInterfaces") else {
                return Err("translated card has no supportedInterfaces".into());
            };
            list.retain(|i| translated(i, "protocolBinding"));
            for i in list.iter_mut() {
                i["protocolVersion"] = Value::from("1.0");
            }
            // JSON-RPC first (a client takes the first interface it supports).
            list.sort_by_key(|i| {
                i.get("protocolBinding").and_then(Value::as_str) != Some("JSONRPC")
            });
            if list.is_empty() && !grpc {
                return Err(no_interface());
            }
        }
        Version::V03 => {
            let mut list = match out.get("additionalInterfaces") {
                Some(Value::Array(l)) => l.clone(),
                _ => Vec::new(),
            };
            if list.is_empty() {
                if let Some(u) = out.get("url") {
                    let t = out
                        .get("preferredTransport")
                        .cloned()
                        .unwrap_or(Value::from("JSONRPC"));
                    list.push(serde_json::json!({"url": u, "transport": t}));
                }
            }
            list.retain(|i| translated(i, "transport"));
            list.sort_by_key(|i| i.get("transport").and_then(Value::as_str) != Some("JSONRPC"));
            let Some(first) = list.first().cloned() else {
                if !grpc {
                    return Err(no_interface());
                }
                // cards::advertise makes the proxy's gRPC the primary (the
                // agent's gRPC `url` is not the proxy's to give).
                if let Some(o) = out.as_object_mut() {
                    o.remove("url");
                }
                out["preferredTransport"] = Value::from("GRPC");
                out["additionalInterfaces"] = Value::Array(Vec::new());
                return Ok(());
            };
            out["url"] = first["url"].clone();
            out["preferredTransport"] = first["transport"].clone();
            out["additionalInterfaces"] = Value::Array(list);
        }
    }
    Ok(())
}

/// Writes each security scheme of a v0.3 card (`securitySchemes`) in both
/// of its wire forms, adding the members of the form it lacks and removing
/// nothing: the JSON-schema form (`type`, `scheme`, `in`, ...), which
/// a2a-python 0.3's clients read (pydantic `AgentCard.model_validate`), and
/// the ProtoJSON form (`httpAuthSecurityScheme: {...}`, ...), which a2a-js
/// 0.3's REST client reads (`AgentCard.fromJSON`, then
/// `FromProto.securityScheme`, which throws "Unsupported security scheme
/// type" without it) as does a2a-sdk 1.x's v0.3 REST client (`ParseDict`,
/// unknown members ignored). Each reader ignores the other form's members.
/// A scheme that is neither form is left as it is. For the v0.3 REST card
/// (`/v1/card`; proxy/README.md, "The v0.3 REST card").
pub fn v03_scheme_forms(card: &mut Value) {
    let Some(Value::Object(schemes)) = card.get_mut("securitySchemes") else {
        return;
    };
    for scheme in schemes.values_mut() {
        let Value::Object(s) = scheme else { continue };
        let Ok(model) = serde_json::from_value::<translate::v03::agent_card::SecurityScheme>(
            Value::Object(s.clone()),
        ) else {
            continue;
        };
        let schema = serde_json::to_value(&model).ok();
        let proto = serde_json::to_value(proto::convert_v03::security_scheme_to_pb(model)).ok();
        for form in [schema, proto].into_iter().flatten() {
            if let Value::Object(f) = form {
                for (k, v) in f {
                    s.entry(k).or_insert(v);
                }
            }
        }
    }
}

/// The URI of the card extension that tells v1.0 clients how ListTasks is
/// answered in front of a v0.3 agent (the proxy's own, not the agent's).
pub const LIST_TASKS_EXTENSION: &str = "urn:a2a-compat-proxy:list-tasks:per-caller";

/// Adds to a v1.0 card (served for a v0.3 agent) the extension entry
/// saying how ListTasks is answered: per caller credentials, only tasks
/// created or seen through this proxy, each fetched from the agent with
/// the caller's credentials. Not required: a client that does not know it
/// ignores it. A card whose `capabilities` or `extensions` is not what
/// v1.0 says is left as it is.
pub fn advertise_list_tasks(card: &mut Value) {
    let Some(obj) = card.as_object_mut() else {
        return;
    };
    let caps = obj
        .entry("capabilities")
        .or_insert_with(|| serde_json::json!({}));
    let Some(caps) = caps.as_object_mut() else {
        return;
    };
    let list = caps
        .entry("extensions")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = list.as_array_mut() else {
        return;
    };
    if list
        .iter()
        .any(|e| e.get("uri").and_then(Value::as_str) == Some(LIST_TASKS_EXTENSION))
    {
        return;
    }
    list.push(serde_json::json!({
        "uri": LIST_TASKS_EXTENSION,
        "description": "ListTasks is answered by the a2a-compat-proxy (the agent speaks A2A v0.3, which has no task list): tasks are listed per caller credentials (the Authorization header and configured identity headers), only tasks created or seen through this proxy by the same credentials, each fetched from the agent with the caller's own credentials; a task the agent refuses is left out.",
        "required": false
    }));
}

/// The shape of a served public card, chosen by the request's `A2A-Version`
/// (header or query parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardShape {
    /// `A2A-Version: 0.3`: the v0.3 card.
    V03,
    /// `A2A-Version: 1.0`: the v1.0 card.
    V10,
    /// No version asked (v0.3 clients, the v1.0 TCK, many v1.0 clients):
    /// one card both read, see [`hybrid`].
    Hybrid,
}

impl CardShape {
    /// The shape for an asked version (`None`: nothing asked).
    pub fn of(asked: Option<Version>) -> CardShape {
        match asked {
            None => CardShape::Hybrid,
            Some(Version::V03) => CardShape::V03,
            Some(Version::V10) => CardShape::V10,
        }
    }

    fn tag(self) -> &'static str {
        match self {
            CardShape::V03 => "0.3",
            CardShape::V10 => "1.0",
            CardShape::Hybrid => "hybrid",
        }
    }
}

/// A strong ETag for a served card body, distinct per shape.
pub fn etag_for(shape: CardShape, body: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    format!("\"a2a-{}-{:016x}\"", shape.tag(), h.finish())
}

/// The card for header-less requests, built from the two cards the proxy
/// serves on explicit requests (both already pointing at the proxy): the
/// v0.3 card (`url`, `preferredTransport`, `additionalInterfaces`,
/// `protocolVersion`, `type`-tagged security schemes, `security`) with
/// every member of the v1.0 card it lacks added, objects merged member by
/// member (so each security scheme carries both forms, the v1.0 one made
/// from the v0.3 one where the v1.0 card lacks it), list items merged
/// by position; where both have a value the v0.3 one stays (v0.3 clients
/// send no header at all and must parse it). A v1.0 reader ignores the
/// v0.3 members (unknown fields), a v0.3 reader the v1.0 ones.
/// `supportedInterfaces` lists each interface the proxy serves with its
/// version: the v1.0 card's entries first, then one `0.3` entry for each
/// interface of the v0.3 card (same URL; the gRPC one in the v0.3 form).
pub fn hybrid(v03: &Value, v10: &Value) -> Value {
    let mut out = v03.clone();
    merge_missing(&mut out, v10);
    // Each security scheme in its v1.0 form too, also one the v1.0 card
    // lacks: its oneof member (`httpAuthSecurityScheme`, ...) has the
    // v0.3 proto's shape, which is v1.0's.
    v03_scheme_forms(&mut out);
    let mut list: Vec<Value> = match v10.get("supportedInterfaces") {
        Some(Value::Array(l)) => l.clone(),
        _ => Vec::new(),
    };
    let major_minor = |v: Option<&Value>| {
        let v = v.and_then(Value::as_str).unwrap_or("");
        let mut it = v.trim().split('.');
        format!("{}.{}", it.next().unwrap_or(""), it.next().unwrap_or("0"))
    };
    let mut v03_ifaces = Vec::new();
    if let Some(u) = v03.get("url").filter(|u| u.is_string()) {
        let t = v03
            .get("preferredTransport")
            .cloned()
            .unwrap_or_else(|| Value::from("JSONRPC"));
        v03_ifaces.push((u.clone(), t));
    }
    if let Some(Value::Array(more)) = v03.get("additionalInterfaces") {
        for i in more {
            if let (Some(u), Some(t)) = (i.get("url"), i.get("transport")) {
                v03_ifaces.push((u.clone(), t.clone()));
            }
        }
    }
    for (url, binding) in v03_ifaces {
        let entry =
            serde_json::json!({"url": url, "protocolBinding": binding, "protocolVersion": "0.3"});
        let listed = list.iter().any(|i| {
            i.get("url") == Some(&url)
                && i.get("protocolBinding") == Some(&binding)
                && major_minor(i.get("protocolVersion")) == "0.3"
        });
        if !listed {
            list.push(entry);
        }
    }
    out["supportedInterfaces"] = Value::Array(list);
    out
}

/// Adds to `base` what `extra` has and `base` lacks (see [`hybrid`]).
fn merge_missing(base: &mut Value, extra: &Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                match b.get_mut(k) {
                    Some(bv) => merge_missing(bv, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(e)) => {
            for (bv, ev) in b.iter_mut().zip(e) {
                merge_missing(bv, ev);
            }
            if e.len() > b.len() {
                let rest = e[b.len()..].to_vec();
                b.extend(rest);
            }
        }
        _ => {}
    }
}

/// Whether an `If-None-Match` value matches `etag` (list, `*`, weak forms).
pub fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    let bare = etag.trim_start_matches("W/");
    if_none_match
        .split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/") == bare)
}

#[cfg(test)]
mod tests;
