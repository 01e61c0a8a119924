//! Differences between two JSON documents, each with its JSON path, as
//! `roundtrip` reports them: object member order never matters, numbers
//! compare by value (`1` equals `1.0`), and in v1.0 documents an absent
//! member equals its proto3 default (`false`, `""`, `[]`, `{}`, an
//! `…_UNSPECIFIED` enum name), which ProtoJSON writers leave out and
//! readers take as absent.

use serde_json::Value;

/// One difference: where, what happened, the two values (`None`: absent).
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// `$`, `$.status.timestamp`, `$.history[0].parts[1]`, …
    pub path: String,
    /// The member names of `path` (array indices left out), for
    /// [`translate::lossy::covering`].
    pub names: Vec<String>,
    pub expected: Option<Value>,
    pub got: Option<Value>,
}

impl Difference {
    /// `missing` (expected, not there), `added` (there, not expected) or
    /// `changed`.
    pub fn change(&self) -> &'static str {
        match (&self.expected, &self.got) {
            (Some(_), None) => "missing",
            (None, Some(_)) => "added",
            _ => "changed",
        }
    }
}

/// How documents compare.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Absent equals a proto3 default (v1.0 documents).
    pub proto3_defaults: bool,
}

/// Every difference between `expected` and `got`.
pub fn diff(expected: &Value, got: &Value, rules: Rules) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut names = Vec::new();
    walk("$", &mut names, expected, got, rules, &mut out);
    out
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty() || s.ends_with("_UNSPECIFIED"),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Null | Value::Number(_) => false,
    }
}

fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if a == b {
        return true;
    }
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        // A float against an integer or a float: by value.
        _ => matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y),
    }
}

fn walk(
    path: &str,
    names: &mut Vec<String>,
    a: &Value,
    b: &Value,
    rules: Rules,
    out: &mut Vec<Difference>,
) {
    let differ = |out: &mut Vec<Difference>, names: &[String]| {
        out.push(Difference {
            path: path.to_string(),
            names: names.to_vec(),
            expected: Some(a.clone()),
            got: Some(b.clone()),
        })
    };
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if !same_number(x, y) {
                differ(out, names);
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = member_path(path, k);
                names.push(k.clone());
                match y.get(k) {
                    Some(w) => walk(&p, names, v, w, rules, out),
                    None if rules.proto3_defaults && is_default(v) => {}
                    None => out.push(Difference {
                        path: p,
                        names: names.clone(),
                        expected: Some(v.clone()),
                        got: None,
                    }),
                }
                names.pop();
            }
            for (k, w) in y {
                if x.contains_key(k) || (rules.proto3_defaults && is_default(w)) {
                    continue;
                }
                names.push(k.clone());
                out.push(Difference {
                    path: member_path(path, k),
                    names: names.clone(),
                    expected: None,
                    got: Some(w.clone()),
                });
                names.pop();
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}[{i}]"), names, v, w, rules, out);
            }
        }
        _ if a == b => {}
        _ => differ(out, names),
    }
}

/// `path.name`, or `path["name"]` for a name that is not a plain word.
fn member_path(path: &str, name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!("{path}.{name}")
    } else {
        format!("{path}[{}]", Value::from(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const STRICT: Rules = Rules {
        proto3_defaults: false,
    };
    const PROTO: Rules = Rules {
        proto3_defaults: true,
    };

    fn paths(d: &[Difference]) -> Vec<(&str, &str)> {
        d.iter().map(|d| (d.path.as_str(), d.change())).collect()
    }

    #[test]
    fn paths_name_every_difference() {
        let a = json!({"id": "t", "status": {"state": "working", "timestamp": "a"},
            "history": [{"parts": [{"text": "x"}, {"text": "y"}]}], "odd key": 1});
        let b = json!({"status": {"timestamp": "b", "state": "working"}, "id": "t",
            "history": [{"parts": [{"text": "x"}, {"text": "z", "mediaType": "m"}]}], "extra": true});
        assert_eq!(
            paths(&diff(&a, &b, STRICT)),
            vec![
                ("$.status.timestamp", "changed"),
                ("$.history[0].parts[1].text", "changed"),
                ("$.history[0].parts[1].mediaType", "added"),
                ("$[\"odd key\"]", "missing"),
                ("$.extra", "added"),
            ]
        );
        let d = diff(&a, &b, STRICT);
        assert_eq!(d[2].names, vec!["history", "parts", "mediaType"]);
    }

    #[test]
    fn numbers_by_value_and_arrays_by_length() {
        assert!(diff(&json!({"n": 1}), &json!({"n": 1.0}), STRICT).is_empty());
        assert_eq!(diff(&json!({"n": 1}), &json!({"n": 2}), STRICT).len(), 1);
        assert_eq!(
            diff(
                &json!(9007199254740993u64),
                &json!(9007199254740992u64),
                STRICT
            )
            .len(),
            1
        );
        assert_eq!(
            paths(&diff(&json!({"a": [1, 2]}), &json!({"a": [1]}), STRICT)),
            vec![("$.a", "changed")]
        );
    }

    #[test]
    fn proto3_defaults_equal_absent_only_when_asked() {
        let a = json!({"a": false, "b": "", "c": [], "d": {}, "e": "ROLE_UNSPECIFIED", "f": 0});
        let b = json!({});
        assert_eq!(diff(&a, &b, STRICT).len(), 6);
        assert_eq!(paths(&diff(&a, &b, PROTO)), vec![("$.f", "missing")]);
        assert_eq!(diff(&b, &a, PROTO).len(), 1);
    }
}
