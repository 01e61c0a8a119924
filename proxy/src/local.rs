//! A response the proxy writes itself (health, metrics, cards, errors,
//! answers given here): plain data every layer may build.

use bytes::Bytes;
use serde_json::Value;

use crate::error::{rescue, ErrorTarget, Failure};

/// A response the proxy writes itself.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalResponse {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
}

impl LocalResponse {
    pub fn json(status: u16, value: Value) -> LocalResponse {
        LocalResponse {
            status,
            headers: vec![("Content-Type", "application/json".into())],
            body: Bytes::from(value.to_string()),
        }
    }

    /// The rendered form of a failure.
    pub fn failure(failure: &Failure, target: &ErrorTarget) -> LocalResponse {
        let r = rescue(failure, target);
        let mut headers = vec![("Content-Type", r.content_type.to_string())];
        if r.content_type == "text/event-stream" {
            headers.push(("Cache-Control", "no-cache".into()));
        }
        LocalResponse {
            status: r.status,
            headers,
            body: r.body,
        }
    }
}
