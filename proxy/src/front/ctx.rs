//! Per-request state of the HTTP front: what routing decided and what the
//! answer still needs.

use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};

use super::*;
use crate::error::{ErrorTarget, Failure};
use crate::route::Route;
use crate::sse::SseFramer;
use crate::translation::RpcTranslation;

/// How the response body is treated.
pub(crate) enum RespRewrite {
    /// Forwarded as it arrives.
    Pass,
    /// A whole JSON body, translated at its end.
    Json(BytesMut),
    /// A whole JSON body, translated at its end and sent as one SSE frame
    /// (see [`crate::translation::RpcTranslation::json_answer_as_sse`]).
    JsonAsSse(BytesMut),
    /// An SSE stream, translated event by event.
    Sse {
        framer: SseFramer,
        tr: Arc<EventTranslation>,
    },
}

/// Per-request state.
pub struct Ctx {
    pub(crate) started: Instant,
    /// Several agents (area: agents): the index of the request's agent,
    /// chosen in the first hook (`None`: answered by no agent).
    pub(crate) agent: Option<usize>,
    /// The call's span (`a2a_call` at DEBUG; disabled unless logging asks
    /// for it): every hook runs in it, so each log line of the call names
    /// the caller's trace id.
    pub(crate) span: tracing::Span,
    pub(crate) route: Option<Route>,
    /// Where routing sends the request (area: paths; crate::route::locate).
    pub(crate) dest: Option<crate::endpoints::Dest>,
    pub(crate) target: ErrorTarget,
    /// Counted in `App::enter`.
    pub(crate) entered: bool,
    /// Request body bytes seen so far.
    pub(crate) body_seen: usize,
    /// The response is an SSE stream (counted as open).
    pub(crate) stream_open: bool,
    pub(crate) status: Option<u16>,
    /// What went wrong, when the proxy answered with an error itself.
    pub(crate) failure: Option<Failure>,
    /// The upstream's version, once known (sent as its `A2A-Version`).
    pub(crate) upstream_version: Option<crate::version::Version>,
    /// Set when the client's and the upstream's versions differ.
    pub(crate) rpc: Option<RpcTranslation>,
    /// The translated request body, sent in place of the original.
    pub(crate) new_req_body: Option<Bytes>,
    pub(crate) resp: RespRewrite,
    /// A cross-version REST call: its translation and upstream request.
    pub(crate) rest: Option<(crate::rest::RestTranslation, crate::rest::UpstreamRequest)>,
    /// A v1.0 SubscribeToTask through a v0.3 agent: the current Task as the
    /// stream's first event (v1.0 requires it; v0.3 agents start with updates).
    pub(crate) first_frame: Option<Bytes>,
    /// That subscribe's relayed subscription, until the agent's answer shows
    /// whether it streams (crate::tasks::relay).
    pub(crate) relay: Option<crate::tasks::relay::Watch>,
    /// Push configs this request may carry back (subscriber values to restore).
    pub(crate) push: Option<crate::push::layer::Pending>,
    /// A push-config delete: (task id, config id) to forget once it succeeded.
    pub(crate) push_delete: Option<(String, String)>,
    /// A same-version JSON-RPC call intercepted by the push layer
    /// (`push.intercept_same_version`): body swapped, answer restored, both
    /// in the one version.
    pub(crate) same_version_push: bool,
    /// The call of our own that answers this request, once routed.
    pub(crate) own_call: Option<OwnCall>,
    /// The A2A decisions of a call the proxy rebuilds (crate::call).
    pub(crate) plan: Option<crate::call::Plan>,
    /// The status a translated whole answer must go out with instead of the
    /// agent's (its translation failed: 502).
    pub(crate) answer_status: Option<u16>,
    /// Translated stream bytes that precede a failure: written ahead of the
    /// error frame.
    pub(crate) unsent: Option<Bytes>,
    /// A whole answer to translate went past `limits.max_event_bytes`: it
    /// is no longer held, and an error goes out in its place.
    pub(crate) body_over: bool,
}

/// A call the proxy makes itself instead of pingora's proxy loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnCall {
    /// Answered whole, with a length.
    Unary,
    /// An SSE stream, handed on as it arrives.
    Stream,
}

impl Ctx {
    /// The state of a request whose head was just read.
    pub(crate) fn new() -> Ctx {
        Ctx {
            started: Instant::now(),
            agent: None,
            span: tracing::Span::none(),
            route: None,
            dest: None,
            target: ErrorTarget::default(),
            entered: false,
            body_seen: 0,
            stream_open: false,
            status: None,
            failure: None,
            upstream_version: None,
            rpc: None,
            new_req_body: None,
            resp: RespRewrite::Pass,
            rest: None,
            first_frame: None,
            relay: None,
            push: None,
            push_delete: None,
            same_version_push: false,
            answer_status: None,
            own_call: None,
            plan: None,
            unsent: None,
            body_over: false,
        }
    }

    /// Routing's answer for a request one of our calls answers: the call
    /// runs once routing's future is gone (see `request_filter`).
    /// A v1.0 subscribe's first Task `frame`, and the subscription that
    /// serves it should the agent refuse the resubscribe.
    pub(crate) fn start_relay(
        &mut self,
        (frame, sub): (Bytes, Option<crate::tasks::relay::Subscription>),
        max_event_bytes: usize,
    ) {
        self.relay = sub.map(|s| crate::tasks::relay::Watch::new(s, max_event_bytes));
        self.first_frame = Some(frame);
    }

    /// Whether the answer's tasks are recorded for the caller (ListTasks).
    pub(crate) fn records_tasks(&self) -> bool {
        self.plan.is_some_and(|p| p.record_tasks)
    }

    /// Records the request's route (and what its errors are rendered for).
    pub(crate) fn note_route(&mut self, route: &Route) {
        self.target.version = Some(route.client_version);
        self.target.binding = Some(route.binding.clone());
        self.target.operation = route.operation;
        self.route = Some(route.clone());
    }

    pub(crate) fn own_call(&mut self, call: OwnCall) -> bool {
        self.own_call = Some(call);
        true
    }
}
