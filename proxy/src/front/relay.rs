//! A v1.0 subscription the v0.3 agent refused (an idle task), served from
//! the relay ([`crate::tasks::relay`]): the first Task, then the task's
//! events as the proxy relays them for other callers, up to its end.

use std::time::Instant;

use bytes::Bytes;
use pingora::http::ResponseHeader;
use pingora::proxy::Session;
use pingora::{Error, ErrorType, Result};

use super::*;
use crate::error::Failure;

impl ProxyService {
    /// Serves a refused subscribe from the relay within
    /// `limits.relay_max_wait_secs` (and the stream's maximum duration);
    /// `head_sent`: the agent's SSE head is out already.
    pub(crate) async fn relay_events(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        mut sub: crate::tasks::relay::Subscription,
        head_sent: bool,
    ) -> Result<bool> {
        use crate::sse::sse_frame;
        use crate::tasks::relay::Next;
        ctx.end_relay();
        if !head_sent {
            let mut resp = ResponseHeader::build(200, Some(3))?;
            resp.insert_header(http::header::CONTENT_TYPE, "text/event-stream")?;
            self.answer_head(&session.req_header().headers, &mut resp, ctx)?;
            session.write_response_header(Box::new(resp), false).await?;
        }
        let limits = &self.app.config.limits;
        // Each event in the binding's shape (crate::codec).
        let codec = ctx.codec().map(crate::codec::HttpCodec::for_answer);
        let end =
            (ctx.started + limits.stream_max_duration).min(Instant::now() + limits.relay.max_wait);
        let until = tokio::time::Instant::from_std(end);
        let mut out = ctx.own_mut().and_then(|o| o.first_frame.take());
        let mut client_spoke = false;
        loop {
            if let Some(b) = out.take() {
                session
                    .write_response_body(Some(b), false)
                    .await
                    .map_err(|e| e.into_down())?;
            }
            let next = tokio::select! {
                n = sub.next(until) => n,
                r = session.read_body_or_idle(true), if !client_spoke => match r {
                    Err(_) => return Err(client_left()),
                    Ok(_) => {
                        client_spoke = true;
                        continue;
                    }
                },
            };
            let failure = match next {
                Next::Event(e) => {
                    out = Some(match &codec {
                        Some(c) => crate::codec::OverHttp::result_event(c, &e),
                        None => sse_frame(&e, None),
                    });
                    continue;
                }
                Next::End => {
                    let r = session.write_response_body(Some(Bytes::new()), true).await;
                    return r.map(|_| true).map_err(|e| e.into_down());
                }
                Next::Expired => Failure::StreamExpired {
                    limit_secs: limits.relay.max_wait.as_secs(),
                },
                Next::Lost => Failure::Internal {
                    detail: "more relayed events than limits.relay_max_buffer_bytes".into(),
                },
            };
            ctx.failure = Some(failure);
            return Error::e_explain(
                ErrorType::Custom("relayed subscription ended"),
                "a relayed subscription ended before its task did",
            );
        }
    }
}
