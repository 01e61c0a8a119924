//! JSON equality as the wire means it: object member order is irrelevant and
//! numbers compare by value (`1` equals `1.0`; the Python SDK routes numbers
//! through `google.protobuf.Struct`, which turns every integer into a double).

use serde_json::Value;

/// True when `a` and `b` are the same JSON document up to member order and number representation.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Removes every object member whose value is a proto3 default: `false`,
/// `""`, `[]`, `{}` or an `*_UNSPECIFIED` enum name, recursively. ProtoJSON
/// writers omit such members and readers treat absent and default alike, so
/// two documents equal after this are the same message. Numbers are kept
/// (`historyLength: 0` is a present optional field, not a default).
pub fn without_defaults(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), without_defaults(v)))
                .filter(|(_, v)| !is_default(v))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_defaults).collect()),
        _ => v.clone(),
    }
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

/// The JSON paths at which `a` and `b` differ, for failure messages.
pub fn diff(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("$", a, b, &mut out);
    out
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => walk(&format!("{path}.{k}"), v, w, out),
                    None => out.push(format!("{path}.{k}: only left ({v})")),
                }
            }
            for (k, w) in y {
                if !x.contains_key(k) {
                    out.push(format!("{path}.{k}: only right ({w})"));
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}[{i}]"), v, w, out);
            }
        }
        _ if same(a, b) => {}
        _ => out.push(format!("{path}: {a} != {b}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_order() {
        assert!(same(
            &json!({"a": 1, "b": [2, {"c": 3}]}),
            &json!({"b": [2.0, {"c": 3}], "a": 1.0})
        ));
        assert!(!same(&json!({"a": 1}), &json!({"a": 2})));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!same(&json!([1, 2]), &json!([2, 1])));
        assert_eq!(diff(&json!({"a": 1, "x": 2}), &json!({"a": 2})).len(), 2);
    }

    #[test]
    fn defaults_removed() {
        let v = json!({"a": false, "b": "", "c": [], "d": {"e": {}}, "f": 0, "g": "ROLE_UNSPECIFIED", "h": [{"i": false}], "j": true});
        assert_eq!(without_defaults(&v), json!({"f": 0, "h": [{}], "j": true}));
    }
}
