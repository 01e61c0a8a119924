//! Whole wire documents of either version, as the `a2a-compat-proxy gen`
//! subcommand writes them: what an SDK author feeds to their own v0.3 ⇄
//! v1.0 converter.
//!
//! [`document`] gives the strategy of one kind of document in one version
//! on one [`Domain`]; [`Generator`] draws from it deterministically: the
//! same seed gives the same documents, in the same order (stable within a
//! minor release of this crate; a new minor may change the strategies).
//!
//! Every document is valid on the wire of its version: a v0.3 document
//! validates against the official v0.3 JSON schema, a v1.0 document (the
//! `params` / `result` of an envelope) parses as strict ProtoJSON of the
//! v1.0 proto. So that they do, generated documents carry no unknown
//! members (the strategies' `x-…` members are taken out; v1.0 ProtoJSON
//! readers refuse unknown fields) unless [`Generator::with_extras`] keeps
//! them in v0.3 documents, JSON-RPC ids are strings or integers, and in the
//! lossless domain numbers stay within what a `double` holds exactly (v1.0
//! `google.protobuf.Struct` numbers are doubles).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};

use crate::method::Method;
use crate::strategy::{card, lossy_inputs, payload, rpc};
use crate::Version;

/// What a generated document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doc {
    /// A bare Task.
    Task,
    /// A bare Message.
    Message,
    /// An agent card.
    Card,
    /// A JSON-RPC request envelope.
    Request,
    /// A JSON-RPC success response envelope.
    Response,
    /// A stream event envelope (the SSE `data` of a streaming method).
    Event,
    /// A push-notification webhook body.
    PushBody,
    /// A `TaskPushNotificationConfig`.
    PushConfig,
}

impl Doc {
    /// Every kind.
    pub const ALL: [Doc; 8] = [
        Doc::Task,
        Doc::Message,
        Doc::Card,
        Doc::Request,
        Doc::Response,
        Doc::Event,
        Doc::PushBody,
        Doc::PushConfig,
    ];

    /// The kebab-case name (`--kind` of `gen`, and the
    /// [`crate::document::Kind`] of the same name).
    pub fn name(self) -> &'static str {
        self.kind().name()
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Doc> {
        Doc::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The document kind that translates it.
    pub fn kind(self) -> crate::document::Kind {
        use crate::document::Kind;
        match self {
            Doc::Task => Kind::Task,
            Doc::Message => Kind::Message,
            Doc::Card => Kind::Card,
            Doc::Request => Kind::Request,
            Doc::Response => Kind::Response,
            Doc::Event => Kind::Event,
            Doc::PushBody => Kind::PushBody,
            Doc::PushConfig => Kind::PushConfig,
        }
    }
}

/// Which inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// The domain where round trips are exact: every document comes back
    /// from the other version and back unchanged.
    Lossless,
    /// Everything the version's wire allows that this crate reads, the
    /// inputs of the declared lossy mappings (`docs/mapping.md`) included:
    /// their round trips differ exactly where those mappings say.
    Full,
}

impl Domain {
    /// `lossless` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            Domain::Lossless => "lossless",
            Domain::Full => "full",
        }
    }
}

fn json_of<T: serde::Serialize>(t: T) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// The methods requests and responses are drawn from when none is named.
fn methods(version: Version, domain: Domain) -> Vec<Method> {
    Method::ALL
        .into_iter()
        .filter(|m| m.name(version).is_some())
        .filter(|m| *m != Method::ListTasks || domain == Domain::Full)
        .collect()
}

/// Checks `method` for `doc` in `version`: `Err` says why it cannot be.
fn check_method(
    doc: Doc,
    version: Version,
    domain: Domain,
    method: Option<Method>,
) -> Result<(), String> {
    let Some(m) = method else {
        return match doc {
            Doc::Response => Err("a response needs --method (the method it answers)".into()),
            _ => Ok(()),
        };
    };
    if m.name(version).is_none() {
        return Err(format!("{} has no A2A {version} form", m.as_str()));
    }
    if m == Method::ListTasks && domain == Domain::Lossless {
        return Err("ListTasks has no v0.3 form: its documents are in the full domain only".into());
    }
    match doc {
        Doc::Request | Doc::Response => Ok(()),
        Doc::Event if m.is_streaming() => Ok(()),
        Doc::Event => Err(format!("{} is not a streaming method", m.as_str())),
        _ => Err(format!(
            "--method is for requests, responses and events, not {}",
            doc.name()
        )),
    }
}

/// The strategy of `doc` documents in `version` on `domain`. `method`:
/// for requests the method (else any), for responses the method answered
/// (required), for events the streaming method (else SendStreamingMessage).
/// `Err`: no such document (a method of the other version, a response
/// without a method).
pub fn document(
    doc: Doc,
    version: Version,
    domain: Domain,
    method: Option<Method>,
) -> Result<BoxedStrategy<Value>, String> {
    check_method(doc, version, domain, method)?;
    let full = domain == Domain::Full;
    let base: BoxedStrategy<Value> = match (doc, version) {
        (Doc::Task, Version::V03) => payload::v03_task().prop_map(json_of).boxed(),
        (Doc::Task, Version::V10) => payload::v10_task().prop_map(json_of).boxed(),
        (Doc::Message, Version::V03) => payload::v03_message().prop_map(json_of).boxed(),
        (Doc::Message, Version::V10) => payload::v10_message().prop_map(json_of).boxed(),
        (Doc::Card, Version::V03) if full => card::v03_card_any().prop_map(json_of).boxed(),
        (Doc::Card, Version::V03) => card::v03_card().prop_map(json_of).boxed(),
        (Doc::Card, Version::V10) if full => card::v10_card_any().prop_map(json_of).boxed(),
        (Doc::Card, Version::V10) => card::v10_card().prop_map(json_of).boxed(),
        (Doc::PushBody, Version::V03) => payload::v03_stream_event().prop_map(json_of).boxed(),
        (Doc::PushBody, Version::V10) => payload::v10_stream_response().prop_map(json_of).boxed(),
        (Doc::PushConfig, Version::V03) => rpc::v03_task_push_config().prop_map(json_of).boxed(),
        (Doc::PushConfig, Version::V10) => rpc::v10_task_push_config().prop_map(json_of).boxed(),
        (Doc::Request, _) => {
            let ms = match method {
                Some(m) => vec![m],
                None => methods(version, domain),
            };
            proptest::sample::select(ms)
                .prop_flat_map(move |m| request(m, version))
                .boxed()
        }
        (Doc::Response, _) => response(method.unwrap_or(Method::GetTask), version, full),
        (Doc::Event, _) => {
            let m = method.unwrap_or(Method::SendStreamingMessage);
            response(m, version, full)
        }
    };
    let dice = proptest::collection::vec(any::<u8>(), 96);
    Ok((base, dice)
        .prop_map(move |(mut v, dice)| {
            identifiers(&mut v);
            if full {
                lossy_inputs::apply(doc, version, &mut v, &dice);
            }
            v
        })
        .boxed())
}

/// The JSON-RPC id of generated envelopes: a string or an integer (the
/// v0.3 schema allows no other).
fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..1_000_000).prop_map(Value::from),
        "[a-z0-9-]{1,12}".prop_map(Value::from),
    ]
}

fn request(m: Method, version: Version) -> BoxedStrategy<Value> {
    let name = m.name(version).unwrap_or_default();
    let params: BoxedStrategy<Option<Value>> = match (m, version) {
        // ListTasks has only its v1.0 form (full domain only).
        (Method::ListTasks, _) => lossy_inputs::list_tasks_request().prop_map(Some).boxed(),
        _ => rpc::params(m, version),
    };
    (id(), params)
        .prop_map(move |(id, params)| {
            let mut env = json!({"jsonrpc": "2.0", "id": id, "method": name});
            if let Some(p) = params {
                env["params"] = p;
            }
            env
        })
        .boxed()
}

fn response(m: Method, version: Version, full: bool) -> BoxedStrategy<Value> {
    let result: BoxedStrategy<Value> = match (m, version) {
        (Method::ListTasks, _) => lossy_inputs::list_tasks_response(),
        (_, Version::V03) => rpc::v03_success(m)
            .prop_map(|r| r.result.unwrap_or(Value::Null))
            .boxed(),
        (_, Version::V10) => rpc::v10_success(m)
            .prop_map(|r| r.result.unwrap_or(Value::Null))
            .boxed(),
    };
    let result = match (m, version, full) {
        (Method::GetExtendedCard, Version::V03, true) => {
            card::v03_card_any().prop_map(json_of).boxed()
        }
        (Method::GetExtendedCard, Version::V10, true) => {
            card::v10_card_any().prop_map(json_of).boxed()
        }
        _ => result,
    };
    (id(), result)
        .prop_map(|(id, result)| json!({"jsonrpc": "2.0", "id": id, "result": result}))
        .boxed()
}

/// Members that identify something: never empty in generated documents.
/// (The v1.0 proto requires them, and a ProtoJSON writer leaves an empty
/// string out, which v1.0 readers then refuse as missing.)
const IDENTIFIERS: [&str; 5] = ["id", "messageId", "artifactId", "taskId", "contextId"];

/// Gives empty identifiers a value, outside free-form members.
fn identifiers(v: &mut Value) {
    match v {
        Value::Object(m) => {
            // An extension's `params` are free-form; a request's are not.
            let extension = m.contains_key("uri");
            for (k, x) in m.iter_mut() {
                match x {
                    Value::String(s) if s.is_empty() && IDENTIFIERS.contains(&k.as_str()) => {
                        *s = format!("{k}-0");
                    }
                    _ if matches!(k.as_str(), "metadata" | "data" | "header") => {}
                    _ if k == "params" && extension => {}
                    _ => identifiers(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(identifiers),
        _ => {}
    }
}

/// Removes every member whose name starts with `x-` (the strategies'
/// unknown members; no free-form object of theirs has such a key).
pub fn strip_extras(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with("x-"));
            m.values_mut().for_each(strip_extras);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_extras),
        _ => {}
    }
}

/// The largest integer a `double` holds exactly.
const EXACT: i64 = 1 << 53;

/// Integers beyond what a `double` holds exactly brought within it.
fn exact_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                if !(-EXACT..=EXACT).contains(&i) {
                    *v = Value::from(i % EXACT);
                }
            } else if n.as_u64().is_some() {
                *v = Value::from(n.as_u64().unwrap_or(0) % (EXACT as u64));
            }
        }
        Value::Object(m) => m.values_mut().for_each(exact_numbers),
        Value::Array(a) => a.iter_mut().for_each(exact_numbers),
        _ => {}
    }
}

/// Draws documents one after the other from a seeded generator.
pub struct Generator {
    doc: Doc,
    version: Version,
    domain: Domain,
    strategy: BoxedStrategy<Value>,
    runner: TestRunner,
    max_bytes: usize,
    extras: bool,
}

/// How many documents over `max_bytes` in a row end the generation.
const MAX_SKIPS: usize = 10_000;

impl Generator {
    /// A generator of `doc` documents (see [`document`]) seeded with
    /// `seed`, each at most `max_bytes` long when rendered compact.
    pub fn new(
        doc: Doc,
        version: Version,
        domain: Domain,
        method: Option<Method>,
        seed: u64,
        max_bytes: usize,
    ) -> Result<Generator, String> {
        let strategy = document(doc, version, domain, method)?;
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
        let runner = TestRunner::new_with_rng(Config::default(), rng);
        Ok(Generator {
            doc,
            version,
            domain,
            strategy,
            runner,
            max_bytes,
            extras: false,
        })
    }

    /// Keeps the strategies' unknown members (`x-…`) in v0.3 documents,
    /// which the v0.3 schema allows (v1.0 documents never carry them).
    pub fn with_extras(mut self, extras: bool) -> Generator {
        self.extras = extras;
        self
    }

    /// The next document, rendered compact; `Err` when 10,000 documents in
    /// a row were over `max_bytes`, or the strategy gave up.
    pub fn next_document(&mut self) -> Result<Vec<u8>, String> {
        for _ in 0..MAX_SKIPS {
            let mut v = self
                .strategy
                .new_tree(&mut self.runner)
                .map_err(|e| format!("generation failed: {e}"))?
                .current();
            if !(self.extras && self.version == Version::V03) {
                strip_extras(&mut v);
            }
            if self.domain == Domain::Lossless {
                exact_numbers(&mut v);
            }
            let bytes = serde_json::to_vec(&v).map_err(|e| e.to_string())?;
            if bytes.len() <= self.max_bytes {
                return Ok(bytes);
            }
        }
        Err(format!(
            "no {} {} document of at most {} bytes in {MAX_SKIPS} tries: raise --max-bytes",
            self.domain.name(),
            self.doc.name(),
            self.max_bytes
        ))
    }
}
