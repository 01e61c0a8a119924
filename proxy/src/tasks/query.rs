//! A ListTasks request's params, read and checked.

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

use super::{invalid, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, TOKEN_PREFIX};
use crate::error::Failure;

/// A ListTasks request's params, checked.
pub(super) struct Query<'a> {
    pub(super) context: Option<&'a str>,
    pub(super) status: Option<&'a str>,
    pub(super) page_size: i64,
    pub(super) offset: usize,
    pub(super) history: Option<i64>,
    pub(super) artifacts: bool,
    pub(super) after: Option<DateTime<FixedOffset>>,
}

impl<'a> Query<'a> {
    pub(super) fn read(params: Option<&'a Value>) -> Result<Query<'a>, Failure> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let p = match params {
            None | Some(Value::Null) => EMPTY.get_or_init(Map::new),
            Some(Value::Object(o)) => o,
            Some(_) => return Err(invalid("ListTasks params must be an object")),
        };
        let context = str_param(p, "contextId")?.filter(|s| !s.is_empty());
        let status =
            str_param(p, "status")?.filter(|s| !s.is_empty() && *s != "TASK_STATE_UNSPECIFIED");
        if let Some(s) = status {
            if !s.starts_with("TASK_STATE_") {
                return Err(invalid(format!("`status` {s:?} is not a TaskState")));
            }
        }
        let page_size = int_param(p, "pageSize")?.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(invalid(format!(
                "`pageSize` must be between 1 and {MAX_PAGE_SIZE}, got {page_size}"
            )));
        }
        let offset = match str_param(p, "pageToken")?.filter(|s| !s.is_empty()) {
            None => 0usize,
            Some(t) => t
                .strip_prefix(TOKEN_PREFIX)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| invalid("`pageToken` is not a token this proxy issued"))?,
        };
        let history = int_param(p, "historyLength")?;
        if history.is_some_and(|h| h < 0) {
            return Err(invalid("`historyLength` must not be negative"));
        }
        let artifacts = match p.get("includeArtifacts") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(invalid("`includeArtifacts` must be a boolean")),
        };
        let after = match str_param(p, "statusTimestampAfter")? {
            None => None,
            Some(s) => Some(
                DateTime::parse_from_rfc3339(s)
                    .map_err(|_| invalid("`statusTimestampAfter` is not an RFC 3339 timestamp"))?,
            ),
        };
        Ok(Query {
            context,
            status,
            page_size,
            offset,
            history,
            artifacts,
            after,
        })
    }
}

fn str_param<'a>(p: &'a Map<String, Value>, k: &str) -> Result<Option<&'a str>, Failure> {
    match p.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(invalid(format!("`{k}` must be a string"))),
    }
}

fn int_param(p: &Map<String, Value>, k: &str) -> Result<Option<i64>, Failure> {
    match p.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| invalid(format!("`{k}` must be an integer"))),
        // ProtoJSON also accepts integers as strings.
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| invalid(format!("`{k}` must be an integer"))),
        Some(_) => Err(invalid(format!("`{k}` must be an integer"))),
    }
}

/// The `ListTasks` params of a v1.0 REST `GET /tasks?...` query (values
/// percent-decoded; `+` is a space; repeated keys: the last wins).
pub fn params_from_query(query: Option<&str>) -> Result<Value, Failure> {
    let mut p = Map::new();
    for pair in query.unwrap_or("").split('&').filter(|s| !s.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (decode(k)?, decode(v)?);
        let key = match k.as_str() {
            "context_id" => "contextId",
            "page_size" => "pageSize",
            "page_token" => "pageToken",
            "history_length" => "historyLength",
            "include_artifacts" => "includeArtifacts",
            "status_timestamp_after" => "statusTimestampAfter",
            other => other,
        }
        .to_string();
        let value = match (key.as_str(), v.as_str()) {
            ("includeArtifacts", "true") => Value::Bool(true),
            ("includeArtifacts", "false") => Value::Bool(false),
            _ => Value::String(v),
        };
        p.insert(key, value);
    }
    Ok(Value::Object(p))
}

fn decode(s: &str) -> Result<String, Failure> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| invalid("malformed percent-encoding in the query"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| invalid("the query is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn rest_query_becomes_params() {
        let p = params_from_query(Some(
            "contextId=c%201&pageSize=2&include_artifacts=true&status=TASK_STATE_WORKING",
        ))
        .unwrap();
        assert_eq!(
            p,
            json!({"contextId": "c 1", "pageSize": "2", "includeArtifacts": true, "status": "TASK_STATE_WORKING"})
        );
        let q = params_from_query(Some("pageSize=1&contextId=c1")).unwrap();
        assert_eq!(listed(&index(), a(), q, &all()).0, ["t3"]);
        assert!(params_from_query(Some("contextId=%zz")).is_err());
        assert_eq!(params_from_query(None).unwrap(), json!({}));
    }
}
