//! `a2a-compat-proxy doctor`: whether a deployment works, told from
//! outside, as its clients see it. For each agent of a config file (its
//! public URL) or one `--url`, the agent card is fetched as a v0.3 and as
//! a v1.0 client; then, for each client version, every binding that
//! version's card lists (JSON-RPC, HTTP+JSON, gRPC) is asked GetTask of a
//! task id nobody has, which must come back as TaskNotFound in that
//! version's own error shape (the proxy's error mapping); with `--send`, a
//! message also goes to the skill the card declares for tests. One row per
//! (binding, client version): ok, or what failed and why. Exit 0 when
//! every row is ok, 1 when one is not, 2 for bad arguments or config.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};

mod grpc;
mod rpc;

use crate::config::{Config, HttpUrl, RawConfig};
use crate::upstream::tls::{AgentAddr, UpstreamTls};
use crate::upstream::{Limits, Repeat, UpstreamPool};
use crate::version::Version;

/// Flags of `a2a-compat-proxy doctor`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DoctorArgs {
    /// The proxy's config file: every agent is checked at its public URL.
    #[arg(long, value_name = "FILE", conflicts_with = "url")]
    pub config: Option<PathBuf>,
    /// One agent's public URL (where clients read its card).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Also send a message to the card's test skill (a skill tagged
    /// `test`, or the one --skill names) on every binding and version.
    #[arg(long)]
    pub send: bool,
    /// The skill `--send` talks to [default: the first skill tagged `test`].
    #[arg(long, value_name = "ID", requires = "send")]
    pub skill: Option<String>,
    /// PEM CA certificates trusted for an https:// proxy, besides the
    /// public roots.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<String>,
    /// One JSON document on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Longest wait of each call, ms.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub timeout_ms: u64,
}

/// The bindings the doctor can talk, by the cards' names.
pub const JSONRPC: &str = "JSONRPC";
pub const REST: &str = "HTTP+JSON";
pub const GRPC: &str = "GRPC";
/// The row of a card fetch.
pub const CARD: &str = "card";

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub agent: String,
    pub binding: String,
    pub client: Version,
    /// `None`: ok.
    pub failure: Option<String>,
    /// What was checked (or why it was not).
    pub detail: String,
}

impl Row {
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    fn json(&self) -> Value {
        json!({
            "agent": self.agent,
            "binding": self.binding,
            "client": self.client.as_str(),
            "ok": self.ok(),
            "detail": self.failure.as_deref().unwrap_or(&self.detail),
        })
    }
}

/// An agent to check: its name and its public URL.
#[derive(Debug, Clone)]
pub struct Target {
    pub agent: String,
    pub url: HttpUrl,
}

/// How the doctor talks HTTP: the proxy's own client, TLS with the public
/// roots and `--ca-file`.
pub struct Doctor {
    pool: UpstreamPool,
    tls: Arc<UpstreamTls>,
    timeout: Duration,
    send: bool,
    skill: Option<String>,
}

/// A whole HTTP answer.
pub(super) struct Http {
    pub(super) status: u16,
    pub(super) body: Bytes,
}

impl Http {
    pub(super) fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// At most 200 bytes of the body, printable.
    pub(super) fn quoted(&self) -> String {
        quote(&String::from_utf8_lossy(&self.body))
    }

    /// `HTTP <status>` and what an error body says.
    pub(super) fn said(&self) -> String {
        let v = self.json();
        let message = v.as_ref().and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("detail"))
                .and_then(Value::as_str)
        });
        match message {
            Some(m) => format!("HTTP {}: {}", self.status, quote(m)),
            None => format!("HTTP {} {}", self.status, self.quoted()),
        }
    }
}

/// `s` cut to 200 bytes, control characters escaped.
fn quote(s: &str) -> String {
    let mut end = s.len().min(200);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::new();
    for c in s[..end].chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if end < s.len() {
        out.push('…');
    }
    out
}

/// The interfaces of a card the doctor checks: (binding, URL), the first
/// of each binding, in the card's order.
pub fn interfaces(card: &Value, version: Version) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |binding: Option<&str>, url: Option<&str>| {
        if let (Some(b), Some(u)) = (binding, url) {
            if !out.iter().any(|(x, _)| x == b) {
                out.push((b.to_string(), u.to_string()));
            }
        }
    };
    match version {
        Version::V03 => {
            let main = card.get("preferredTransport").and_then(Value::as_str);
            add(
                Some(main.unwrap_or(JSONRPC)),
                card.get("url").and_then(Value::as_str),
            );
            for i in card["additionalInterfaces"]
                .as_array()
                .into_iter()
                .flatten()
            {
                add(i["transport"].as_str(), i["url"].as_str());
            }
        }
        Version::V10 => {
            for i in card["supportedInterfaces"].as_array().into_iter().flatten() {
                let of_1x = i["protocolVersion"]
                    .as_str()
                    .is_none_or(|p| p.starts_with("1."));
                if of_1x {
                    add(i["protocolBinding"].as_str(), i["url"].as_str());
                }
            }
        }
    }
    out
}

/// The members a v0.3 card must have (the v0.3 JSON schema's `required`).
const V03_REQUIRED: [&str; 9] = [
    "name",
    "description",
    "url",
    "version",
    "protocolVersion",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
];
/// The members a v1.0 card must have (REQUIRED in the v1.0 proto).
const V10_REQUIRED: [&str; 8] = [
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
];

/// What is wrong with `card` as a card of `version`, if anything.
pub fn card_problem(card: &Value, version: Version) -> Option<String> {
    if !card.is_object() {
        return Some("the card is not a JSON object".into());
    }
    // The members each version's schema requires (SDK clients refuse a
    // card without them).
    let required: &[&str] = match version {
        Version::V03 => &V03_REQUIRED,
        Version::V10 => &V10_REQUIRED,
    };
    if let Some(m) = required
        .iter()
        .find(|m| card.get(**m).is_none_or(Value::is_null))
    {
        return Some(format!("a v{} card without `{m}`", version.as_str()));
    }
    match version {
        Version::V03 => match card.get("protocolVersion").and_then(Value::as_str) {
            Some(p) if !p.starts_with("0.3") => {
                return Some(format!("a v0.3 client got protocolVersion {}", quote(p)))
            }
            _ => {}
        },
        Version::V10 => {
            if card["supportedInterfaces"]
                .as_array()
                .is_none_or(|a| a.is_empty())
            {
                return Some("a v1.0 card without `supportedInterfaces`".into());
            }
        }
    }
    if interfaces(card, version).is_empty() {
        return Some("the card lists no interface".into());
    }
    None
}

/// The skill `--send` talks to: `asked`, when the card declares it, else
/// the first one tagged `test`.
pub fn test_skill(card: &Value, asked: Option<&str>) -> Result<String, String> {
    let skills = card["skills"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let id = |s: &Value| s["id"].as_str().map(str::to_string);
    match asked {
        Some(a) => skills
            .iter()
            .find(|s| s["id"].as_str() == Some(a))
            .and_then(id)
            .ok_or_else(|| format!("the card declares no skill {}", quote(a))),
        None => skills
            .iter()
            .find(|s| {
                s["tags"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t == "test"))
            })
            .and_then(id)
            .ok_or_else(|| {
                "the card declares no test skill (tag one `test`, or name one with --skill)".into()
            }),
    }
}

/// An interface URL of a card: `host:port` (v1.0's gRPC form) is taken
/// with the scheme of the URL the card came from.
fn interface_url(url: &str, base: &HttpUrl) -> Result<HttpUrl, String> {
    let whole = if url.contains("://") {
        url.to_string()
    } else {
        format!("{}://{url}", base.scheme)
    };
    HttpUrl::parse("interface", &whole)
        .map_err(|e| format!("the card's URL {}: {}", quote(url), e.message))
}

/// A task id no agent has.
fn unknown_id() -> String {
    format!("a2a-doctor-{}", crate::ids::random_id())
}

impl Doctor {
    pub fn new(args: &DoctorArgs) -> Result<Doctor, String> {
        let tls = UpstreamTls::load(args.ca_file.as_deref(), None, None)
            .map_err(|e| e.to_string().replace("upstream.ca_file", "--ca-file"))?;
        Ok(Doctor {
            pool: UpstreamPool::default(),
            tls: Arc::new(tls),
            timeout: Duration::from_millis(args.timeout_ms.max(1)),
            send: args.send,
            skill: args.skill.clone(),
        })
    }

    /// One HTTP exchange with the proxy at `url` (its host and port).
    pub(super) async fn call(
        &self,
        method: &str,
        url: &HttpUrl,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Http, String> {
        let authority = url.authority();
        let addr = tokio::time::timeout(self.timeout, tokio::net::lookup_host(authority.as_str()))
            .await
            .map_err(|_| format!("cannot resolve {authority}: timed out"))?
            .map_err(|e| format!("cannot resolve {authority}: {e}"))?
            .next()
            .ok_or_else(|| format!("{authority} resolves to no address"))?;
        let to = AgentAddr::new(addr, &url.scheme, &url.host, "the proxy", &self.tls)
            .map_err(|f| f.operator_text())?;
        let mut req = http::Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::HOST, authority.as_str());
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let body = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        if !body.is_empty() {
            req = req.header(http::header::CONTENT_TYPE, "application/json");
        }
        let req = req.body(body).map_err(|e| e.to_string())?;
        let limits = Limits {
            connect_timeout: self.timeout,
            read_timeout: self.timeout,
            answer_timeout: self.timeout,
            max_body: 4 << 20,
            repeat: Repeat::Never,
        };
        let answer = self
            .pool
            .call(to, &req, limits)
            .await
            .map_err(|f| f.operator_text())?;
        Ok(Http {
            status: answer.status,
            body: answer.body,
        })
    }

    /// Every row of one agent.
    pub async fn check(&self, target: &Target) -> Vec<Row> {
        let mut rows = Vec::new();
        for client in Version::ALL {
            let row = |binding: &str, r: Result<String, String>| {
                let (failure, detail) = match r {
                    Ok(d) => (None, d),
                    Err(e) => (Some(e), String::new()),
                };
                Row {
                    agent: target.agent.clone(),
                    binding: binding.to_string(),
                    client,
                    failure,
                    detail,
                }
            };
            let card = match self.card(&target.url, client).await {
                Ok(c) => c,
                Err(e) => {
                    rows.push(row(CARD, Err(e)));
                    continue;
                }
            };
            let name = card["name"].as_str().unwrap_or_default();
            rows.push(row(CARD, Ok(format!("agent card of {}", quote(name)))));
            let skill = if self.send {
                Some(test_skill(&card, self.skill.as_deref()))
            } else {
                None
            };
            for (binding, url) in interfaces(&card, client) {
                let r = match interface_url(&url, &target.url) {
                    Err(e) => Err(e),
                    Ok(url) => self.binding(&binding, &url, client, skill.as_ref()).await,
                };
                rows.push(row(&binding, r));
            }
        }
        rows
    }

    /// The agent's card as `client` gets it.
    async fn card(&self, base: &HttpUrl, client: Version) -> Result<Value, String> {
        let path = format!("{}/.well-known/agent-card.json", base.base_path);
        let a = self
            .call(
                "GET",
                base,
                &path,
                &[("a2a-version", client.as_str())],
                None,
            )
            .await
            .map_err(|e| format!("card: {e}"))?;
        if a.status != 200 {
            return Err(format!("card: {}", a.said()));
        }
        let card = a
            .json()
            .ok_or_else(|| format!("card: not JSON: {}", a.quoted()))?;
        match card_problem(&card, client) {
            Some(p) => Err(format!("card: {p}")),
            None => Ok(card),
        }
    }

    /// The checks of one binding for `client`.
    async fn binding(
        &self,
        binding: &str,
        url: &HttpUrl,
        client: Version,
        skill: Option<&Result<String, String>>,
    ) -> Result<String, String> {
        let id = unknown_id();
        let got = match binding {
            JSONRPC => self.jsonrpc_get(url, client, &id).await,
            REST => self.rest_get(url, client, &id).await,
            GRPC => grpc::get_task(url, client, &id, &self.tls, self.timeout).await,
            other => {
                return Ok(format!(
                    "binding {} not checked by the doctor",
                    quote(other)
                ))
            }
        };
        got.map_err(|e| format!("GetTask of an unknown task: {e}"))?;
        let mut done = "GetTask of an unknown task: TaskNotFound".to_string();
        if let Some(skill) = skill {
            let skill = skill.as_ref().map_err(|e| format!("send: {e}"))?;
            let sent = match binding {
                JSONRPC => self.jsonrpc_send(url, client, skill).await,
                REST => self.rest_send(url, client, skill).await,
                _ => grpc::send(url, client, skill, &self.tls, self.timeout).await,
            };
            let what = sent.map_err(|e| format!("send to skill {}: {e}", quote(skill)))?;
            done.push_str(&format!("; send to skill {}: {what}", quote(skill)));
        }
        Ok(done)
    }
}

/// The text `--send` sends to `skill`.
pub fn sent_text(skill: &str) -> String {
    format!("a2a-compat-proxy doctor: skill {skill}")
}

/// The agents of `args`: `--url`, or each agent of `--config` at its
/// public URL.
pub fn targets(args: &DoctorArgs) -> Result<Vec<Target>, String> {
    match (&args.url, &args.config) {
        (Some(u), _) => {
            let url =
                HttpUrl::parse("--url", u.trim_end_matches('/')).map_err(|e| e.to_string())?;
            Ok(vec![Target {
                agent: crate::agents::DEFAULT_AGENT.into(),
                url,
            }])
        }
        (None, Some(file)) => {
            let raw = RawConfig::from_file(file).map_err(|e| e.to_string())?;
            let config = Config::resolve(raw).map_err(|e| e.to_string())?;
            Ok(config
                .agent_configs()
                .into_iter()
                .map(|c| Target {
                    agent: c.agent.name.clone(),
                    url: c.public_url.clone(),
                })
                .collect())
        }
        (None, None) => Err("give --url URL or --config FILE".into()),
    }
}

/// Every agent's rows, agents checked at once, in the order given.
pub async fn run(doctor: Arc<Doctor>, targets: Vec<Target>) -> Vec<Row> {
    let mut set = tokio::task::JoinSet::new();
    for (i, t) in targets.into_iter().enumerate() {
        let d = doctor.clone();
        set.spawn(async move { (i, d.check(&t).await) });
    }
    let mut all = Vec::new();
    while let Some(done) = set.join_next().await {
        if let Ok(r) = done {
            all.push(r);
        }
    }
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().flat_map(|(_, rows)| rows).collect()
}

/// The table: one line per row, columns aligned.
pub fn table(rows: &[Row]) -> String {
    let head = ["AGENT", "BINDING", "CLIENT", "RESULT"];
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            let result = match &r.failure {
                None => format!("ok: {}", r.detail),
                Some(f) => format!("FAILED: {f}"),
            };
            [
                r.agent.clone(),
                r.binding.clone(),
                r.client.as_str().into(),
                result,
            ]
        })
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let w = [width(0), width(1), width(2)];
    let mut out = String::new();
    let mut line = |c: [&str; 4]| {
        out.push_str(&format!(
            "{:w0$}  {:w1$}  {:w2$}  {}\n",
            c[0],
            c[1],
            c[2],
            c[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2]
        ));
    };
    line(head);
    for c in &cells {
        line([&c[0], &c[1], &c[2], &c[3]]);
    }
    out
}

/// Runs the subcommand; returns the exit code.
pub fn main(args: &DoctorArgs) -> i32 {
    let fail = |e: String| {
        eprintln!("a2a-compat-proxy doctor: {e}");
        2
    };
    let targets = match targets(args) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let doctor = match Doctor::new(args) {
        Ok(d) => Arc::new(d),
        Err(e) => return fail(e),
    };
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return fail("cannot start a runtime".into());
    };
    let rows = rt.block_on(run(doctor, targets));
    let failed = rows.iter().filter(|r| !r.ok()).count();
    if args.json {
        let doc =
            json!({"ok": failed == 0, "rows": rows.iter().map(Row::json).collect::<Vec<_>>()});
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        print!("{}", table(&rows));
        if failed == 0 {
            println!("doctor: all {} checks ok", rows.len());
        } else {
            println!("doctor: {failed} of {} checks failed", rows.len());
        }
    }
    i32::from(failed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interfaces_of_both_cards() {
        let whole = json!({"name": "a", "description": "d", "version": "1", "capabilities": {},
            "defaultInputModes": [], "defaultOutputModes": [], "skills": []});
        let mut v03 = json!({"protocolVersion": "0.3.0", "url": "http://p/", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": "http://p/", "transport": "JSONRPC"},
                                     {"url": "http://p/rest", "transport": "HTTP+JSON"},
                                     {"url": "http://p:2", "transport": "GRPC"}]});
        assert_eq!(
            interfaces(&v03, Version::V03),
            vec![
                ("JSONRPC".into(), "http://p/".into()),
                ("HTTP+JSON".into(), "http://p/rest".into()),
                ("GRPC".into(), "http://p:2".into())
            ]
        );
        assert!(card_problem(&v03, Version::V03).unwrap().contains("`name`"));
        let merge = |card: &mut Value| {
            for (k, v) in whole.as_object().unwrap() {
                card[k] = v.clone();
            }
        };
        merge(&mut v03);
        assert_eq!(card_problem(&v03, Version::V03), None);
        v03["protocolVersion"] = json!("1.0");
        assert!(card_problem(&v03, Version::V03).is_some());
        let mut v10 = json!({"supportedInterfaces": [
            {"url": "http://p/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://p/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "p:2", "protocolBinding": "GRPC", "protocolVersion": "0.3"},
            {"url": "p:3", "protocolBinding": "GRPC"}]});
        assert_eq!(
            interfaces(&v10, Version::V10),
            vec![
                ("JSONRPC".into(), "http://p/".into()),
                ("GRPC".into(), "p:3".into())
            ]
        );
        merge(&mut v10);
        assert_eq!(card_problem(&v10, Version::V10), None);
        assert!(card_problem(&v10, Version::V03).is_some());
        v10["supportedInterfaces"] = json!([]);
        assert!(card_problem(&v10, Version::V10).is_some());
        let base = HttpUrl::parse("k", "https://q:9/a").unwrap();
        assert_eq!(
            interface_url("p:3", &base).unwrap().as_string(),
            "https://p:3"
        );
    }

    #[test]
    fn the_test_skill() {
        let card = json!({"skills": [{"id": "echo", "tags": ["echo"]}, {"id": "t", "tags": ["x", "test"]}]});
        assert_eq!(test_skill(&card, None).unwrap(), "t");
        assert_eq!(test_skill(&card, Some("echo")).unwrap(), "echo");
        assert!(test_skill(&card, Some("nope")).is_err());
        assert!(test_skill(&json!({}), None).is_err());
    }

    #[test]
    fn error_shapes_per_version() {
        use super::rpc::error_data_shape;
        let info =
            json!([{"@type": crate::grpc::status::ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND"}]);
        assert!(error_data_shape(Version::V10, Some(&info)).is_ok());
        assert!(error_data_shape(Version::V03, Some(&info)).is_err());
        assert!(error_data_shape(Version::V10, Some(&json!({"x": 1}))).is_err());
        assert!(error_data_shape(Version::V03, Some(&json!({"x": 1}))).is_ok());
        assert!(error_data_shape(Version::V10, None).is_ok());
        let other = json!([{"@type": crate::grpc::status::ERROR_INFO_TYPE, "reason": "X"}]);
        assert!(error_data_shape(Version::V10, Some(&other)).is_err());
    }

    #[test]
    fn the_table_lines_up_and_quotes_cut() {
        let rows = vec![
            Row {
                agent: "a".into(),
                binding: CARD.into(),
                client: Version::V03,
                failure: None,
                detail: "x".into(),
            },
            Row {
                agent: "bb".into(),
                binding: REST.into(),
                client: Version::V10,
                failure: Some("y".into()),
                detail: String::new(),
            },
        ];
        let t = table(&rows);
        assert_eq!(t.lines().count(), 3);
        assert!(t.contains("a      card       0.3     ok: x"), "{t}");
        assert!(t.contains("bb     HTTP+JSON  1.0     FAILED: y"), "{t}");
        assert_eq!(quote("a\nb"), "a\\nb");
        assert!(quote(&"é".repeat(300)).chars().count() <= 101);
    }
}
