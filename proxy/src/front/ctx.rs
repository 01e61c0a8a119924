//! Per-request state of the HTTP front: what every request has (its
//! start, agent, span, route, status, failure, counters) and one [`Kind`]
//! saying what routing made of it. The kind moves once, at the hook where
//! the decision is made: [`Kind::Undecided`] while `request_filter` routes,
//! then [`Kind::Local`] (answered here), [`Kind::Passthrough`] (pingora's
//! proxy loop carries it) or [`Kind::OwnCall`] (a call the proxy makes
//! itself). Each field lives in the kind it means something for.

use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};

use super::*;
use crate::call::Plan;
use crate::codec::HttpCodec;
use crate::error::{ErrorTarget, Failure};
use crate::push::layer::Pending;
use crate::rest::{RestTranslation, UpstreamRequest};
use crate::route::Route;
use crate::sse::SseFramer;
use crate::tasks::relay::Watch;
use crate::translation::{ExactId, RpcTranslation};

/// How the response body is treated.
#[derive(Default)]
pub(crate) enum RespRewrite {
    /// Forwarded as it arrives.
    #[default]
    Pass,
    /// A whole JSON body, translated at its end.
    Json(Held),
    /// A whole JSON body, translated at its end and sent as one SSE frame
    /// (see [`crate::codec::OverHttp::answer_as_sse`]).
    JsonAsSse(Held),
    /// An SSE stream, translated event by event.
    Sse {
        framer: SseFramer,
        tr: Arc<EventTranslation>,
    },
}

/// A whole answer held until its end, within `limits.max_event_bytes`.
#[derive(Default)]
pub(crate) struct Held {
    pub(crate) buf: BytesMut,
    /// It went past the limit: no longer held, an error goes out in its
    /// place.
    pub(crate) over: bool,
}

/// Per-request state.
pub struct Ctx {
    pub(crate) started: Instant,
    /// Several agents (area: agents): the index of the request's agent,
    /// chosen in the first hook (`None`: answered by no agent).
    pub(crate) agent: Option<usize>,
    /// The agents as they were when the request came (crate::reload swaps
    /// the listener's set; a call ends on the one it started with).
    pub(crate) agents: Option<std::sync::Arc<crate::front::AgentSet>>,
    /// The call's span (`a2a_call` at DEBUG; disabled unless logging asks
    /// for it): every hook runs in it, so each log line of the call names
    /// the caller's trace id.
    pub(crate) span: tracing::Span,
    pub(crate) route: Option<Route>,
    /// Where routing sends the request (area: paths; crate::route::locate).
    pub(crate) dest: Option<crate::card::endpoints::Dest>,
    pub(crate) target: ErrorTarget,
    /// The client's JSON-RPC id as written, when it is one a number in
    /// memory cannot carry (past 64 bits): a same-version call's errors
    /// carry it (a codec keeps its own, see [`Self::failure_response`]).
    pub(crate) exact_id: Option<ExactId>,
    /// Counted in `App::enter`.
    pub(crate) entered: bool,
    /// The response is an SSE stream (counted as open).
    pub(crate) stream_open: bool,
    pub(crate) status: Option<u16>,
    /// What went wrong, when the proxy answered with an error itself.
    pub(crate) failure: Option<Failure>,
    /// The upstream's version, once known (sent as its `A2A-Version`).
    pub(crate) upstream_version: Option<crate::version::Version>,
    /// What routing made of the request.
    pub(crate) kind: Kind,
}

/// What routing made of a request.
pub(crate) enum Kind {
    /// The head is read; `request_filter` has not decided yet.
    Undecided,
    /// Answered by the proxy itself: health, readiness, metrics, the
    /// well-known card, ListTasks toward a v0.3 agent, errors before a call.
    Local,
    /// Same version, carried by pingora's proxy loop (set when routing
    /// leaves the request to it).
    Passthrough(Passthrough),
    /// A call the proxy makes itself (set when routing names it).
    OwnCall(Box<OwnCall>),
}

/// A request pingora's proxy loop carries, byte for byte but for an
/// extended card's URLs.
#[derive(Default)]
pub(crate) struct Passthrough {
    /// Request body bytes seen so far (`limits.max_body_bytes`).
    pub(crate) body_seen: usize,
    /// The https:// agent Pingora connects to (`None` for plain HTTP).
    pub(crate) agent: Option<crate::upstream::tls::AgentAddr>,
    /// A failure on that connection may hide a TLS refusal: found out
    /// before the client is answered.
    pub(crate) diagnose: bool,
    /// How its answer is treated: passed on, or an extended card held for
    /// its URLs.
    pub(crate) resp: RespRewrite,
}

/// A call the proxy makes itself: every cross-version call, a same-version
/// one the push layer intercepts, a same-version stream (an open stream
/// holds little more than its sockets), a same-version body pingora cannot
/// replay.
pub(crate) struct OwnCall {
    pub(crate) mode: Mode,
    /// The body to send (taken when the request is built).
    pub(crate) body: Option<Bytes>,
    /// What translates the call for the agent and back: `None` when the
    /// client's version is the agent's and the body goes as it came; a
    /// codec for a call across versions, or an HTTP+JSON call rebuilt in
    /// its own version (the push layer intercepts it).
    pub(crate) codec: Option<HttpCodec>,
    /// The A2A decisions of a call the proxy rebuilds (crate::call).
    pub(crate) plan: Option<Plan>,
    /// Push configs this call may carry back (subscriber values to restore).
    pub(crate) push: Option<Pending>,
    /// A push-config delete: (task id, config id) to forget once it succeeded.
    pub(crate) push_delete: Option<(String, String)>,
    /// That delete, confirmed by the agent: forgotten before the answer
    /// is written.
    pub(crate) forget: Option<(String, String)>,
    /// A v1.0 SubscribeToTask through a v0.3 agent: the current Task as the
    /// stream's first event (v1.0 requires it; v0.3 agents start with updates).
    pub(crate) first_frame: Option<Bytes>,
    /// That subscribe's relayed subscription, until the agent's answer shows
    /// whether it streams (crate::tasks::relay).
    pub(crate) relay: Option<Watch>,
    pub(crate) resp: RespRewrite,
    /// The status a translated whole answer must go out with instead of the
    /// agent's (its translation failed: 502).
    pub(crate) answer_status: Option<u16>,
    /// Translated stream bytes that precede a failure: written ahead of the
    /// error frame.
    pub(crate) unsent: Option<Bytes>,
}

/// How a call of our own is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Answered whole, with a length.
    Unary,
    /// An SSE stream, handed on as it arrives.
    Stream,
    /// A same-version answer nothing rewrites, handed on as it comes: one
    /// of known length up to [`WHOLE_MAX`] whole (one write), any other
    /// piece by piece, whatever its size, within `limits.answer_timeout`
    /// (an SSE answer as a stream).
    Relay,
}

/// The longest same-version answer a [`Mode::Relay`] call writes whole.
pub(crate) const WHOLE_MAX: usize = 64 * 1024;

impl OwnCall {
    /// A call in `mode` sending `body`, translating nothing (yet).
    pub(crate) fn new(mode: Mode, body: Option<Bytes>) -> OwnCall {
        OwnCall {
            mode,
            body,
            codec: None,
            plan: None,
            push: None,
            push_delete: None,
            forget: None,
            first_frame: None,
            relay: None,
            resp: RespRewrite::Pass,
            answer_status: None,
            unsent: None,
        }
    }

    /// A v1.0 subscribe's first Task `frame`, and the subscription that
    /// serves it should the agent refuse the resubscribe.
    pub(crate) fn start_relay(
        &mut self,
        (frame, sub): (Bytes, Option<crate::tasks::relay::Subscription>),
        max_event_bytes: usize,
    ) {
        self.relay = sub.map(|s| Watch::new(s, max_event_bytes));
        self.first_frame = Some(frame);
    }

    /// Whether the answer's tasks are recorded for the caller (ListTasks).
    pub(crate) fn records_tasks(&self) -> bool {
        self.plan.is_some_and(|p| p.record_tasks)
    }

    /// A same-version call the push layer intercepted: its answer restored.
    pub(crate) fn intercepted_same_version(&self) -> bool {
        self.codec.is_none() && self.push.is_some()
    }

    /// The agent request the codec rebuilt (HTTP+JSON), to change.
    pub(crate) fn upstream_request_mut(&mut self) -> Option<&mut UpstreamRequest> {
        use crate::codec::OverHttp;
        self.codec.as_mut()?.upstream_request_mut()
    }
}

impl Ctx {
    /// The state of a request whose head was just read.
    pub(crate) fn new() -> Ctx {
        Ctx {
            started: Instant::now(),
            agent: None,
            agents: None,
            span: tracing::Span::none(),
            route: None,
            dest: None,
            target: ErrorTarget::default(),
            exact_id: None,
            entered: false,
            stream_open: false,
            status: None,
            failure: None,
            upstream_version: None,
            kind: Kind::Undecided,
        }
    }

    /// Records the request's route (and what its errors are rendered for).
    pub(crate) fn note_route(&mut self, route: &Route) {
        self.target.version = Some(route.client_version);
        self.target.binding = Some(route.binding.clone());
        self.target.operation = route.operation;
        self.route = Some(route.clone());
    }

    /// Routing's answer for a request one of our calls answers: the call
    /// runs once routing's future is gone (see `request_filter`).
    pub(crate) fn own_call(&mut self, call: OwnCall) -> bool {
        self.kind = Kind::OwnCall(Box::new(call));
        true
    }

    pub(crate) fn own(&self) -> Option<&OwnCall> {
        match &self.kind {
            Kind::OwnCall(own) => Some(own),
            _ => None,
        }
    }

    pub(crate) fn own_mut(&mut self) -> Option<&mut OwnCall> {
        match &mut self.kind {
            Kind::OwnCall(own) => Some(own),
            _ => None,
        }
    }

    /// The call's codec, if it has one.
    pub(crate) fn codec(&self) -> Option<&HttpCodec> {
        self.own()?.codec.as_ref()
    }

    /// The call's JSON-RPC translation, if it has one.
    pub(crate) fn rpc(&self) -> Option<&RpcTranslation> {
        self.codec()?.rpc()
    }

    /// The call's HTTP+JSON translation, if it has one.
    pub(crate) fn rest(&self) -> Option<&RestTranslation> {
        self.codec()?.rest()
    }

    /// A failure of this request rendered for the client: for its error
    /// target, with a JSON-RPC id past 64 bits written back as the client
    /// wrote it: the call's codec's (see [`crate::codec::Codec::error`]),
    /// else the one routing read ([`Self::exact_id`]).
    pub(crate) fn failure_response(&self, f: &Failure) -> crate::local::LocalResponse {
        use crate::local::LocalResponse;
        let codec = self.rpc().and_then(|rpc| rpc.exact_id.as_ref());
        match codec.or(self.exact_id.as_ref()) {
            Some(exact) => {
                let target = ErrorTarget {
                    jsonrpc_id: Some(exact.token()),
                    ..self.target.clone()
                };
                let mut r = LocalResponse::failure(f, &target);
                r.body = Bytes::from(exact.restore(r.body.to_vec()));
                r
            }
            None => LocalResponse::failure(f, &self.target),
        }
    }

    /// Whether the proxy rebuilds the call for the agent (and reads its
    /// answer to translate it).
    pub(crate) fn translated(&self) -> bool {
        self.codec().is_some()
    }

    /// Whether the answer's tasks are recorded for the caller (ListTasks).
    pub(crate) fn records_tasks(&self) -> bool {
        self.own().is_some_and(OwnCall::records_tasks)
    }

    /// How the answer's body is treated, once a call reaches the agent.
    pub(crate) fn resp(&self) -> Option<&RespRewrite> {
        match &self.kind {
            Kind::Passthrough(p) => Some(&p.resp),
            Kind::OwnCall(own) => Some(&own.resp),
            Kind::Undecided | Kind::Local => None,
        }
    }

    pub(crate) fn resp_mut(&mut self) -> Option<&mut RespRewrite> {
        match &mut self.kind {
            Kind::Passthrough(p) => Some(&mut p.resp),
            Kind::OwnCall(own) => Some(&mut own.resp),
            Kind::Undecided | Kind::Local => None,
        }
    }

    /// A v1.0 subscribe's relayed subscription, while it is watched.
    pub(crate) fn relay_mut(&mut self) -> Option<&mut Watch> {
        self.own_mut()?.relay.as_mut()
    }

    /// The relayed subscription is not needed any more.
    pub(crate) fn end_relay(&mut self) {
        if let Some(own) = self.own_mut() {
            own.relay = None;
        }
    }

    /// The inline push config the next event of `tr` settles.
    pub(crate) fn take_created(&mut self, tr: &EventTranslation) -> Option<Pending> {
        tr.take_created(&mut self.own_mut()?.push)
    }
}
