//! The hot unary RPCs (SendMessage, GetTask, CancelTask of both services)
//! served without tonic's server codec: the request's single frame read and
//! decoded by hand, the [`direct`] handler run, the reply framed by hand
//! with its `grpc-status` trailer. Anything this does not take as it is (a
//! compressed or oddly framed request, undecodable protobuf) is handed to
//! the tonic service with the bytes read so far, so its answers stay
//! tonic's own; errors are the same statuses (`Status::into_http`, as tonic
//! renders a unary handler's error).
//!
//! [`direct`]: super::direct

use std::convert::Infallible;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Frame;
use tonic::body::Body;
use tonic::codegen::BoxFuture;
use tonic::Status;
use translate::method::Method;
use translate::TranslateError;

use super::bridge::Bridge;
use super::direct::{self, Unary};
use crate::version::Version;

/// tonic's default largest decoded message (4 MiB).
const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// Handing a request to the tonic service.
pub type Inner =
    Box<dyn FnOnce(http::Request<Body>) -> BoxFuture<http::Response<Body>, Infallible> + Send>;

/// The hot unary RPC a path of `version`'s service names, if any.
pub fn hot(version: Version, path: &str) -> Option<Method> {
    let prefix = match version {
        Version::V03 => "/a2a.v1.A2AService/",
        Version::V10 => "/lf.a2a.v1.A2AService/",
    };
    match path.strip_prefix(prefix)? {
        "SendMessage" => Some(Method::SendMessage),
        "GetTask" => Some(Method::GetTask),
        "CancelTask" => Some(Method::CancelTask),
        _ => None,
    }
}

/// Serves one hot unary call of `version` (`method` from [`hot`]).
pub async fn serve(
    bridge: Arc<Bridge>,
    version: Version,
    method: Method,
    req: http::Request<Body>,
    inner: Inner,
) -> http::Response<Body> {
    use proto::{convert_v03_rpc as r03, convert_v10_rpc as r10};
    let compressed = req
        .headers()
        .get("grpc-encoding")
        .is_some_and(|v| v.as_bytes() != b"identity");
    if compressed {
        return handed(inner, req).await;
    }
    let (parts, body) = req.into_parts();
    let limited = http_body_util::Limited::new(body, MAX_MESSAGE + 5);
    let bytes = match limited.collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            let s = match e.downcast::<http_body_util::LengthLimitError>() {
                Ok(_) => Status::out_of_range(format!(
                    "Error, decoded message length too large: the limit is: {MAX_MESSAGE} bytes"
                )),
                Err(e) => Status::cancelled(format!("reading the request: {e}")),
            };
            return s.into_http();
        }
    };
    let b = &bridge;
    let p = parts;
    match (version, method) {
        (Version::V10, Method::SendMessage) => {
            let t = &direct::from_v10::SEND_MESSAGE;
            one(b, version, p, bytes, r10::send_request_from_pb, t, inner).await
        }
        (Version::V10, Method::GetTask) => {
            let t = &direct::from_v10::GET_TASK;
            one(b, version, p, bytes, r10::get_task_from_pb, t, inner).await
        }
        (Version::V10, Method::CancelTask) => {
            let t = &direct::from_v10::CANCEL_TASK;
            one(b, version, p, bytes, r10::cancel_task_from_pb, t, inner).await
        }
        (Version::V03, Method::SendMessage) => {
            let t = &direct::from_v03::SEND_MESSAGE;
            one(b, version, p, bytes, r03::send_params_from_pb, t, inner).await
        }
        (Version::V03, Method::GetTask) => {
            let t = &direct::from_v03::GET_TASK;
            one(b, version, p, bytes, r03::get_task_from_pb, t, inner).await
        }
        (Version::V03, Method::CancelTask) => {
            let t = &direct::from_v03::CANCEL_TASK;
            one(b, version, p, bytes, r03::cancel_task_from_pb, t, inner).await
        }
        _ => handed(inner, http::Request::from_parts(p, Body::new(full(bytes)))).await,
    }
}

/// The tonic service's answer to `req`.
async fn handed(inner: Inner, req: http::Request<Body>) -> http::Response<Body> {
    match inner(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

fn full(b: Bytes) -> http_body_util::Full<Bytes> {
    http_body_util::Full::new(b)
}

/// The single uncompressed message of a request body, if that is what it is.
fn message(bytes: &Bytes) -> Option<Bytes> {
    if bytes.len() < 5 || bytes[0] != 0 {
        return None;
    }
    let n = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
    (bytes.len() == n.checked_add(5)?).then(|| bytes.slice(5..))
}

async fn one<In, CM, UQ, UR, UM, CR, CP>(
    bridge: &Bridge,
    version: Version,
    parts: http::request::Parts,
    bytes: Bytes,
    from_pb: fn(In) -> Result<CM, TranslateError>,
    t: &Unary<CM, UQ, UR, UM, CR, CP>,
    inner: Inner,
) -> http::Response<Body>
where
    In: prost::Message + Default,
    CM: serde::Serialize,
    UQ: prost::Message,
    UR: prost::Message + Default,
    CR: serde::Serialize + serde::de::DeserializeOwned,
    CP: prost::Message,
{
    let decoded = message(&bytes).and_then(|m| In::decode(m).ok());
    let Some(msg) = decoded else {
        // tonic's own answer (its status for a malformed message).
        return handed(
            inner,
            http::Request::from_parts(parts, Body::new(full(bytes))),
        )
        .await;
    };
    let md = tonic::metadata::MetadataMap::from_headers(parts.headers);
    let req = tonic::Request::from_parts(md, parts.extensions, msg);
    match direct::unary(bridge, version, req, from_pb, t).await {
        Err(s) => s.into_http(),
        Ok(resp) => reply(resp.into_inner()),
    }
}

/// A unary reply: headers, one frame, `grpc-status: 0` trailers.
fn reply<CP: prost::Message>(msg: CP) -> http::Response<Body> {
    let len = msg.encoded_len();
    let mut buf = BytesMut::with_capacity(5 + len);
    buf.put_u8(0);
    buf.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
    if let Err(e) = msg.encode(&mut buf) {
        return Status::internal(format!("encoding the reply: {e}")).into_http();
    }
    let mut trailers = http::HeaderMap::with_capacity(1);
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    let frames: [Result<Frame<Bytes>, Infallible>; 2] =
        [Ok(Frame::data(buf.freeze())), Ok(Frame::trailers(trailers))];
    let body = http_body_util::StreamBody::new(tokio_stream::iter(frames));
    let mut r = http::Response::new(Body::new(body));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_paths_and_frames() {
        assert_eq!(
            hot(Version::V10, "/lf.a2a.v1.A2AService/SendMessage"),
            Some(Method::SendMessage)
        );
        assert_eq!(hot(Version::V03, "/lf.a2a.v1.A2AService/SendMessage"), None);
        assert_eq!(
            hot(Version::V03, "/a2a.v1.A2AService/CancelTask"),
            Some(Method::CancelTask)
        );
        assert_eq!(
            hot(Version::V03, "/a2a.v1.A2AService/TaskSubscription"),
            None
        );
        assert_eq!(
            message(&Bytes::from_static(&[0, 0, 0, 0, 2, 8, 1])).as_deref(),
            Some(&[8u8, 1][..])
        );
        assert!(message(&Bytes::from_static(&[1, 0, 0, 0, 2, 8, 1])).is_none());
        assert!(message(&Bytes::from_static(&[0, 0, 0, 0, 3, 8, 1])).is_none());
        assert!(message(&Bytes::from_static(&[0, 0, 0])).is_none());
    }
}
