//! The card transcoder (`translate::transcode::card`) against the typed
//! path (`document::translate_typed(Kind::Card, ..)`): wherever the transcoder
//! answers, its bytes are exactly the typed path's; wherever the typed path
//! fails, the transcoder does not answer. Checked on every card in the
//! fixtures (cards on their own and in `GetExtendedAgentCard` answers,
//! accepted and rejected, both directions, compact, as written and with
//! members reversed), on generated cards and on mangled ones.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use translate::document::{self, translate, translate_typed, Kind};
use translate::strategy::card::{v03_card, v03_card_any, v10_card, v10_card_any};
use translate::{transcode, Version};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Every `.json` file under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("fixture dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// Whether `v` looks like an agent card of either version.
fn card_like(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        [
            "skills",
            "capabilities",
            "supportedInterfaces",
            "defaultInputModes",
        ]
        .iter()
        .any(|k| o.contains_key(*k))
    })
}

/// The cards of the fixtures: whole documents and `result` members.
fn fixture_cards() -> Vec<(PathBuf, Value, Vec<u8>)> {
    let mut files = Vec::new();
    walk(&fixtures(), &mut files);
    let mut out = Vec::new();
    for f in files {
        let raw = std::fs::read(&f).expect("read fixture");
        let Ok(v) = serde_json::from_slice::<Value>(&raw) else {
            continue;
        };
        if card_like(&v) {
            out.push((f.clone(), v.clone(), raw));
        }
        if let Some(r) = v.get("result").filter(|r| card_like(r)) {
            let bytes = serde_json::to_vec_pretty(r).expect("render");
            out.push((f, r.clone(), bytes));
        }
    }
    out
}

fn compact(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("render")
}

/// `v` with the members of every object in reverse order.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

/// Checks one input in one direction; `Ok(true)` when the transcoder answered.
fn same(to: Version, input: &[u8]) -> Result<bool, String> {
    let general = translate_typed(Kind::Card, to, None, input);
    let fast = transcode::card(to, input);
    // The proxy's entry point answers as the typed path does, always.
    let entry = document::card(to, input);
    match (&entry, &general) {
        (Ok(a), Ok(b)) if a == b => {}
        (Err(_), Err(_)) => {}
        _ => {
            return Err(format!(
                "document::card and the typed path disagree on {to:?}"
            ))
        }
    }
    match (fast, general) {
        (None, _) => Ok(false),
        (Some(fast), Ok(slow)) if fast == slow => Ok(true),
        (Some(fast), Ok(slow)) => Err(format!(
            "to {to:?} differs:\n  transcode {}\n  typed     {}",
            String::from_utf8_lossy(&fast),
            String::from_utf8_lossy(&slow)
        )),
        (Some(fast), Err(e)) => Err(format!(
            "to {to:?}: transcoder answered {} where the typed path fails: {e}",
            String::from_utf8_lossy(&fast)
        )),
    }
}

fn both(v: &Value, raw: Option<&[u8]>) -> Result<usize, String> {
    let mut inputs = vec![compact(v), compact(&reversed(v))];
    if let Some(raw) = raw {
        inputs.push(raw.to_vec());
    }
    let mut answered = 0;
    for input in &inputs {
        for to in [Version::V10, Version::V03] {
            answered += usize::from(same(to, input)?);
        }
    }
    Ok(answered)
}

#[test]
fn card_fixtures() {
    let cards = fixture_cards();
    assert!(
        cards.len() >= 70,
        "only {} card fixtures found",
        cards.len()
    );
    let mut answered = 0;
    let mut failures = Vec::new();
    for (file, v, raw) in &cards {
        match both(v, Some(raw)) {
            Ok(n) => answered += n,
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} card fixtures, {} of {} inputs answered by the transcoder",
        cards.len(),
        answered,
        cards.len() * 6
    );
    // Not vacuous: most fixture cards are taken by the transcoder.
    assert!(answered >= 200, "the transcoder answered only {answered}");
}

/// The benchmark's full card (every sub-object) is taken in both
/// directions, as written and pretty-printed.
#[test]
fn full_card_is_transcoded_both_ways() {
    let skills: Vec<Value> = (0..3)
        .map(|i| {
            json!({
                "id": format!("skill-{i}"), "name": format!("Skill {i}"),
                "description": "Answers questions.",
                "tags": ["finance"], "examples": ["Summarise Q3"],
                "inputModes": ["text/plain"], "outputModes": ["text/markdown"],
                "security": [{"oauth": ["reports.read"]}]
            })
        })
        .collect();
    let v03 = json!({
        "protocolVersion": "0.3.0",
        "name": "Report Agent",
        "description": "Builds financial reports.",
        "url": "https://agent.example.com/a2a/v1",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "https://agent.example.com/a2a/v1", "transport": "JSONRPC"},
            {"url": "https://agent.example.com/a2a/rest", "transport": "HTTP+JSON"}
        ],
        "provider": {"organization": "Example Corp", "url": "https://example.com"},
        "version": "2.4.1",
        "documentationUrl": "https://docs.example.com/agent",
        "capabilities": {"streaming": true, "pushNotifications": true,
            "extensions": [{"uri": "https://example.com/ext/trace/v1", "required": false, "params": {"level": "info"}}]},
        "securitySchemes": {
            "mtls": {"type": "mutualTLS", "description": "client certificates"},
            "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
            "oauth": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "https://a/i", "scopes": {"b": "B"}},
                "authorizationCode": {"authorizationUrl": "https://a/authorize", "tokenUrl": "https://a/token",
                "scopes": {"reports.write": "Write", "reports.read": "Read"}}}},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://a/.well-known/openid-configuration"}
        },
        "security": [{"oauth": ["reports.read"], "apiKey": []}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "text/markdown"],
        "skills": skills,
        "supportsAuthenticatedExtendedCard": true,
        "x-vendor": {"a": [1, 2.5, "x"]}
    });
    let v10 = translate(Kind::Card, Version::V10, None, &compact(&v03)).expect("to v1.0");
    let v10: Value = serde_json::from_slice(&v10).expect("json");
    for (v, to) in [(&v03, Version::V10), (&v10, Version::V03)] {
        for input in [
            compact(v),
            serde_json::to_vec_pretty(v).expect("render"),
            compact(&reversed(v)),
        ] {
            assert_eq!(same(to, &input), Ok(true), "to {to:?}");
        }
    }
}

/// Inputs the transcoder leaves to the typed path (which then decides).
#[test]
fn transcoder_declines_what_it_does_not_take() {
    let base = json!({
        "name": "A", "description": "d", "url": "https://a", "version": "1",
        "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    });
    assert!(transcode::card(Version::V10, &compact(&base)).is_some());
    let with = |k: &str, v: Value| {
        let mut c = base.clone();
        c[k] = v;
        compact(&c)
    };
    let declined = [
        // null where a typed member is
        with("iconUrl", Value::Null),
        // the oneof-wrapped scheme form in v0.3 input
        with(
            "securitySchemes",
            json!({"k": {"apiKeySecurityScheme": {"location": "header", "name": "n"}}}),
        ),
        // the ProtoJSON requirement form in v0.3 input
        with("security", json!([{"schemes": {"k": {"list": []}}}])),
        // a signature without its required members (v0.3)
        with("signatures", json!([{"protected": "e30"}])),
        // an escape in a compared value
        with("url", json!("https://a/\"q\"")),
    ];
    // Unknown members of schemes and interfaces are taken, in the typed
    // path's order (`type` is swapped out of a scheme's member map).
    let taken = [
        with(
            "securitySchemes",
            json!({"k": {"x": 0, "type": "apiKey", "in": "header", "y": [1], "name": "n", "z": {}}}),
        ),
        with(
            "additionalInterfaces",
            json!([{"url": "https://b", "x": 1, "transport": "GRPC"},
                   {"url": "https://a", "transport": "JSONRPC", "y": 2}]),
        ),
    ];
    for input in &taken {
        assert_eq!(same(Version::V10, input), Ok(true));
    }
    let v10 = json!({"name": "A", "supportedInterfaces": [
        {"url": "https://b", "x": 1, "protocolBinding": "GRPC", "protocolVersion": "0.3"},
        {"url": "https://c", "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": "t"}
    ]});
    assert_eq!(same(Version::V03, &compact(&v10)), Ok(true));
    for input in &declined {
        assert_eq!(transcode::card(Version::V10, input), None);
        assert!(same(Version::V10, input).is_ok());
    }
    // Repeated members and a missing required member.
    let repeated = br#"{"name":"A","name":"B","description":"d","url":"u","version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}"#;
    assert_eq!(transcode::card(Version::V10, repeated), None);
    let mut missing = base.clone();
    missing.as_object_mut().expect("object").remove("version");
    assert_eq!(transcode::card(Version::V10, &compact(&missing)), None);
    assert!(translate(Kind::Card, Version::V10, None, &compact(&missing)).is_err());
    // A v1.0 card without interfaces has no v0.3 form.
    let v10 = json!({"name": "A", "supportedInterfaces": []});
    assert_eq!(transcode::card(Version::V03, &compact(&v10)), None);
    // Proto spellings in v1.0 input.
    let v10 =
        json!({"name": "A", "supported_interfaces": [{"url": "u", "protocolBinding": "JSONRPC"}]});
    assert_eq!(transcode::card(Version::V03, &compact(&v10)), None);
}

/// Removes the `n`-th member found walking `v` (depth first), if any.
fn drop_member(v: &mut Value, n: &mut usize) -> bool {
    match v {
        Value::Object(o) => {
            let keys: Vec<String> = o.keys().cloned().collect();
            for k in keys {
                if *n == 0 {
                    o.shift_remove(&k);
                    return true;
                }
                *n -= 1;
                if let Some(c) = o.get_mut(&k) {
                    if drop_member(c, n) {
                        return true;
                    }
                }
            }
            false
        }
        Value::Array(a) => a.iter_mut().any(|c| drop_member(c, n)),
        _ => false,
    }
}

/// Sets the `n`-th member found walking `v` to `to`.
fn set_member(v: &mut Value, n: &mut usize, to: &Value) -> bool {
    match v {
        Value::Object(o) => {
            for (_, c) in o.iter_mut() {
                if *n == 0 {
                    *c = to.clone();
                    return true;
                }
                *n -= 1;
                if set_member(c, n, to) {
                    return true;
                }
            }
            false
        }
        Value::Array(a) => a.iter_mut().any(|c| set_member(c, n, to)),
        _ => false,
    }
}

fn check(v: &Value) -> Result<(), TestCaseError> {
    both(v, None).map(|_| ()).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn v03_cards(c in v03_card()) {
        check(&serde_json::to_value(&c).expect("json"))?;
    }

    #[test]
    fn v03_cards_any(c in v03_card_any()) {
        check(&serde_json::to_value(&c).expect("json"))?;
    }

    #[test]
    fn v10_cards(c in v10_card()) {
        check(&serde_json::to_value(&c).expect("json"))?;
    }

    #[test]
    fn v10_cards_any(c in v10_card_any()) {
        check(&serde_json::to_value(&c).expect("json"))?;
    }

    /// Cards with one member removed or replaced by a value of another
    /// type, anywhere: the transcoder answers only as the typed path does.
    #[test]
    fn mangled_cards(
        c in prop_oneof![
            v03_card_any().prop_map(|c| serde_json::to_value(&c).expect("json")),
            v10_card_any().prop_map(|c| serde_json::to_value(&c).expect("json")),
        ],
        n in 0usize..200,
        what in 0usize..6,
    ) {
        let mut v = c;
        let mut k = n;
        let replacement = [Value::Null, json!(1), json!("s"), json!([]), json!({}), json!(true)];
        if what == 0 {
            drop_member(&mut v, &mut k);
        } else {
            set_member(&mut v, &mut k, &replacement[what]);
        }
        check(&v)?;
    }
}

/// The generated cards are mostly taken by the transcoder (so the
/// properties above compare something).
#[test]
fn generated_cards_are_mostly_transcoded() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut n03, mut n10) = (0, 0);
    for _ in 0..200 {
        let c = v03_card().new_tree(&mut runner).expect("tree").current();
        let input = compact(&serde_json::to_value(&c).expect("json"));
        n03 += usize::from(same(Version::V10, &input).expect("same bytes"));
        let c = v10_card().new_tree(&mut runner).expect("tree").current();
        let input = compact(&serde_json::to_value(&c).expect("json"));
        n10 += usize::from(same(Version::V03, &input).expect("same bytes"));
    }
    eprintln!("generated cards transcoded: v0.3 {n03}/200, v1.0 {n10}/200");
    assert!(n03 >= 180 && n10 >= 180, "v0.3 {n03}/200, v1.0 {n10}/200");
}
