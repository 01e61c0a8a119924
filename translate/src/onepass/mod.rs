//! Single-pass JSON-RPC translation of the hot methods: bytes -> typed
//! wire structs of one version -> typed structs of the other -> bytes, with
//! no `serde_json::Value` of the document in between (unknown members stay
//! values, as everywhere).
//!
//! Covered: requests and results of SendMessage, SendStreamingMessage,
//! GetTask, CancelTask and SubscribeToTask (results and stream events), in
//! both directions. Everything else, and every input this pass does not
//! take (error answers, repeated members, anything that fails), is `None`:
//! the caller then takes the general path ([`crate::jsonrpc`] /
//! [`crate::document`]), whose output and errors are the reference. When
//! this pass answers, its bytes are those of the general path (the
//! `onepass_same_bytes` tests check it on fixtures and generated inputs).

mod de;

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Extras;
use crate::method::Method;
use crate::{event, params, task, v03, v10, Version};

use de::{put, Fast, Key};

/// The JSON-RPC envelope around `member` (`params` or `result`).
struct Envelope<R> {
    jsonrpc: String,
    id: Option<Value>,
    method: Option<String>,
    body: Option<R>,
    extra: Extras,
}

/// Which envelope: a request (`method`, `params`) or a response (`result`;
/// an `error` member is not taken here).
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Request,
    Response,
}

struct EnvelopeVisitor<R>(Shape, PhantomData<R>);

impl<'de, R: Deserialize<'de>> Visitor<'de> for EnvelopeVisitor<R> {
    type Value = Envelope<R>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC envelope")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<R>, A::Error> {
        let (mut jsonrpc, mut id, mut method, mut body) = (None, None, None, None);
        let mut extra = Extras::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match (self.0, key.as_str()) {
                (_, "jsonrpc") => put(&mut jsonrpc, "jsonrpc", &mut map)?,
                (_, "id") => put(&mut id, "id", &mut map)?,
                (Shape::Request, "method") => put(&mut method, "method", &mut map)?,
                (Shape::Request, "params") | (Shape::Response, "result") => {
                    put(&mut body, "body", &mut map)?
                }
                (Shape::Response, "error") => {
                    return Err(serde::de::Error::custom(
                        "error answers take the general path",
                    ))
                }
                _ => de::other(&mut extra, key, &mut map)?,
            }
        }
        Ok(Envelope {
            jsonrpc: de::need(jsonrpc, "jsonrpc")?,
            id,
            method,
            body,
            extra,
        })
    }
}

fn envelope<'de, R: Deserialize<'de>>(shape: Shape, input: &'de [u8]) -> Option<Envelope<R>> {
    let mut d = serde_json::Deserializer::from_slice(input);
    let env = (&mut d)
        .deserialize_map(EnvelopeVisitor(shape, PhantomData))
        .ok()?;
    d.end().ok()?;
    (env.jsonrpc == crate::jsonrpc::JSONRPC_VERSION).then_some(env)
}

#[derive(Serialize)]
struct OutRequest<'a, P> {
    jsonrpc: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Value>,
    method: &'a str,
    params: P,
    #[serde(flatten)]
    extra: Extras,
}

#[derive(Serialize)]
struct OutResponse<'a, T> {
    jsonrpc: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Value>,
    result: T,
    #[serde(flatten)]
    extra: Extras,
}

fn render<T: Serialize>(value: &T, size: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(size + size / 8 + 64);
    serde_json::to_writer(&mut out, value).ok()?;
    Some(out)
}

/// Translates the params of a request envelope (method name of the other
/// version, checked against `name`) with `f`.
fn request_with<P, Q, E>(
    input: &[u8],
    name: &str,
    to_name: &str,
    f: impl FnOnce(P) -> Result<Q, E>,
) -> Option<Vec<u8>>
where
    P: for<'de> Deserialize<'de>,
    Q: Serialize,
{
    let env: Envelope<P> = envelope(Shape::Request, input)?;
    if env.method.as_deref() != Some(name) {
        return None;
    }
    let params = f(env.body?).ok()?;
    render(
        &OutRequest {
            jsonrpc: &env.jsonrpc,
            id: env.id,
            method: to_name,
            params,
            extra: env.extra,
        },
        input.len(),
    )
}

/// Translates the JSON-RPC request envelope `input`, whose method is `name`
/// (in the other version), to `to`. `None`: not taken here.
///
/// The streaming transcoder ([`crate::transcode`]) is tried first; what it
/// does not take goes through the typed single pass below.
pub fn request(to: Version, name: &str, input: &[u8]) -> Option<Vec<u8>> {
    crate::transcode::request(to, name, input).or_else(|| typed_request(to, name, input))
}

/// [`request`] through the typed wire structs only.
pub fn typed_request(to: Version, name: &str, input: &[u8]) -> Option<Vec<u8>> {
    let m = Method::resolve(name, to.other()).ok()?;
    let to_name = m.name(to)?;
    match (to, m) {
        (Version::V10, Method::SendMessage | Method::SendStreamingMessage) => request_with(
            input,
            name,
            to_name,
            |p: Fast<v03::params::MessageSendParams>| params::to_v10(p.0),
        ),
        (Version::V10, Method::GetTask) => {
            request_with(input, name, to_name, params::get_task_to_v10)
        }
        (Version::V10, Method::CancelTask) => {
            request_with(input, name, to_name, params::cancel_to_v10)
        }
        (Version::V10, Method::SubscribeToTask) => {
            request_with(input, name, to_name, params::subscribe_to_v10)
        }
        (Version::V03, Method::SendMessage | Method::SendStreamingMessage) => request_with(
            input,
            name,
            to_name,
            |p: Fast<v10::params::SendMessageRequest>| params::to_v03(p.0),
        ),
        (Version::V03, Method::GetTask) => {
            request_with(input, name, to_name, params::get_task_to_v03)
        }
        (Version::V03, Method::CancelTask) => {
            request_with(input, name, to_name, params::cancel_to_v03)
        }
        (Version::V03, Method::SubscribeToTask) => {
            request_with(input, name, to_name, params::subscribe_to_v03)
        }
        _ => None,
    }
}

fn response_with<R, T, E>(input: &[u8], f: impl FnOnce(R) -> Result<T, E>) -> Option<Vec<u8>>
where
    R: for<'de> Deserialize<'de>,
    T: Serialize,
{
    let env: Envelope<R> = envelope(Shape::Response, input)?;
    let result = f(env.body?).ok()?;
    render(
        &OutResponse {
            jsonrpc: &env.jsonrpc,
            id: env.id,
            result,
            extra: env.extra,
        },
        input.len(),
    )
}

/// Translates a JSON-RPC response envelope (or one stream event envelope)
/// answering `method` to `to`. `None`: not taken here.
///
/// The streaming transcoder ([`crate::transcode`]) is tried first; what it
/// does not take goes through the typed single pass below.
pub fn response(to: Version, method: Method, input: &[u8]) -> Option<Vec<u8>> {
    crate::transcode::response(to, method, input).or_else(|| typed_response(to, method, input))
}

/// [`response`] through the typed wire structs only.
pub fn typed_response(to: Version, method: Method, input: &[u8]) -> Option<Vec<u8>> {
    match (to, method) {
        (Version::V10, Method::SendMessage) => {
            response_with(input, |r: Fast<v03::event::StreamEvent>| {
                params::send_result_to_v10(r.0)
            })
        }
        (Version::V10, Method::SendStreamingMessage | Method::SubscribeToTask) => {
            response_with(input, |r: Fast<v03::event::StreamEvent>| {
                event::stream_to_v10(r.0)
            })
        }
        (Version::V10, Method::GetTask | Method::CancelTask) => {
            response_with(input, |r: Fast<v03::task::Task>| task::to_v10(r.0))
        }
        (Version::V03, Method::SendMessage) => {
            response_with(input, |r: Fast<v10::params::SendMessageResponse>| {
                params::send_result_to_v03(r.0)
            })
        }
        (Version::V03, Method::SendStreamingMessage | Method::SubscribeToTask) => {
            response_with(input, |r: Fast<v10::event::StreamResponse>| {
                event::stream_to_v03(r.0)
            })
        }
        (Version::V03, Method::GetTask | Method::CancelTask) => {
            response_with(input, |r: Fast<v10::task::Task>| task::to_v03(r.0))
        }
        _ => None,
    }
}
