//! Routing an HTTP+JSON call of an A2A operation: passed through, or read
//! whole and rebuilt for the agent (across versions, or in its own version
//! when the push layer intercepts it), by the call's [`Plan`].

use std::sync::atomic::Ordering;

use bytes::Bytes;
use pingora::proxy::Session;
use pingora::Result;
use serde_json::Value;

use super::dispatch::{carries_push_config, mode_for, task_event, Incoming};
use super::*;
use crate::call::{Local, Plan, Prelude, PushStep};
use crate::codec::{ClientRequest, HttpCodec, OverHttp, RestCodec};
use crate::error::Failure;
use crate::local::LocalResponse;
use crate::route::Route;
use crate::version::Version;

/// The agent's base path for REST paths of this request (area: paths).
fn rest_base(app: &crate::app::App, ctx: &Ctx) -> crate::config::HttpUrl {
    ctx.dest
        .as_ref()
        .map_or(&app.config.upstream, |d| &d.url)
        .clone()
}

impl ProxyService {
    /// An HTTP+JSON call of `op`.
    pub(super) async fn route_rest(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        route: &Route,
        op: translate::method::Method,
        inc: Incoming,
    ) -> Result<bool> {
        let app = &self.app;
        let up = match app.upstream_version().await {
            Ok(up) => up,
            Err(f) => return self.respond_failure(session, ctx, f).await,
        };
        ctx.upstream_version = Some(up);
        let plan = Plan::new(op, route.client_version, up, app.push.as_deref());
        let mut read = None;
        if !plan.translates() {
            if !plan.intercepts_push() {
                return self.rest_pass(session, ctx, op, &inc).await;
            }
            // `push.intercept_same_version`: read and rebuilt in the same
            // version so the push layer can swap and restore configs. A
            // message may carry a config inline: read, then looked at.
            let sends = matches!(
                op,
                translate::method::Method::SendMessage
                    | translate::method::Method::SendStreamingMessage
            );
            if sends {
                let b = match self.read_whole_body(session, ctx.started).await? {
                    Ok(b) => b,
                    Err(f) => return self.respond_failure(session, ctx, f).await,
                };
                if !carries_push_config(&b) {
                    // Nothing to intercept: on as it came.
                    return Ok(ctx.own_call(OwnCall::new(mode_for(op), Some(b))));
                }
                read = Some(b);
            }
        }
        if plan.asks_push_config() {
            if let Some(f) = plan.refuse_push_config(app.agent_pushes().await) {
                return self.respond_failure(session, ctx, f).await;
            }
        }
        let body = match read {
            Some(b) => b,
            None => match self.rest_body(session, ctx, &inc).await? {
                Ok(b) => b,
                Err(f) => return self.respond_failure(session, ctx, f).await,
            },
        };
        if plan.local == Some(Local::ListTasks) {
            // v0.3 has no list: answered from the tasks this caller saw here.
            let listed = match crate::tasks::params_from_query(inc.query.as_deref()) {
                Ok(p) => {
                    let caller = app.tasks.caller(&inc.headers);
                    let asked = crate::app::TaskFetch::Rest(rest_base(app, ctx));
                    let via = app.task_fetch_served(asked).await;
                    app.list_tasks_via(&caller, Some(&p), via).await
                }
                Err(f) => Err(f),
            };
            return match listed {
                Ok(result) => {
                    self.respond(session, ctx, LocalResponse::json(200, result))
                        .await
                }
                Err(f) => self.respond_failure(session, ctx, f).await,
            };
        }
        match self.rest_prepare(ctx, route, &plan, &inc, &body).await {
            Ok(own) => Ok(ctx.own_call(own)),
            Err(f) => self.respond_failure(session, ctx, f).await,
        }
    }

    /// A same-version call nothing intercepts: pingora's proxy loop passes
    /// it on, except a stream, which is a call of our own (its message read
    /// first; the call holds it only until sent).
    async fn rest_pass(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        op: translate::method::Method,
        inc: &Incoming,
    ) -> Result<bool> {
        if !op.is_streaming() {
            return Ok(false);
        }
        let chunked = inc.headers.contains_key(http::header::TRANSFER_ENCODING);
        let mut body = None;
        if chunked || inc.length.is_some_and(|n| n > 0) {
            match self.read_whole_body(session, ctx.started).await? {
                Ok(b) => body = Some(b),
                Err(f) => return self.respond_failure(session, ctx, f).await,
            }
        }
        Ok(ctx.own_call(OwnCall::new(Mode::Stream, body)))
    }

    /// The request's whole body (empty when it announces none).
    async fn rest_body(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        inc: &Incoming,
    ) -> Result<std::result::Result<Bytes, Failure>> {
        let chunked = inc.headers.contains_key(http::header::TRANSFER_ENCODING);
        match inc.length {
            Some(0) => Ok(Ok(Bytes::new())),
            None if !chunked => Ok(Ok(Bytes::new())),
            // Read whole: the translation needs all of it.
            _ => self.read_whole_body(session, ctx.started).await,
        }
    }

    /// The agent's request for a call rebuilt by the proxy: its params in
    /// the agent's version, the push layer's swap, the first Task of a
    /// v1.0 subscription: the call of our own that sends it.
    async fn rest_prepare(
        &self,
        ctx: &Ctx,
        route: &Route,
        plan: &Plan,
        inc: &Incoming,
        body: &[u8],
    ) -> std::result::Result<OwnCall, Failure> {
        let app = &self.app;
        let (client, up, op) = (plan.client, plan.upstream, plan.op);
        // A v0.3 REST body is read by the ProtoJSON reader, which refuses
        // unknown members; a v1.0 one holds JSON-RPC params.
        let renamed = match client {
            Version::V10 => super::dispatch::client_push_names(plan, body, false)?,
            Version::V03 => None,
        };
        let body = renamed.as_deref().unwrap_or(body);
        let req = ClientRequest {
            body,
            params: &route.params,
            query: inc.query.as_deref(),
        };
        // Decoded into params first: the push layer swaps configs in them
        // before they are encoded for the agent.
        let (mut codec, mut params) = RestCodec::decode_params(client, up, op, req)?;
        // Only a prelude or the push fold asks the agent with them.
        let caller = || crate::forward::caller_headers(&inc.headers);
        let mut own = OwnCall::new(mode_for(op), None);
        if let Some(push) = app.push.as_deref().filter(|_| plan.intercepts_push()) {
            if plan.push == PushStep::InterceptDelete {
                let p = &route.params;
                own.push_delete = p.task_id.clone().zip(p.config_id.clone());
            }
            let mut pending = push.register_params(op, client, up, &mut params).await?;
            let via = crate::app::TaskFetch::Rest(rest_base(app, ctx));
            seed_push_fold(app, push, op, &mut pending, via, &caller()).await;
            own.push = Some(pending);
        }
        codec.encode_params(params)?;
        if app.rest_other_form_first.load(Ordering::Relaxed) {
            if let Some(upreq) = codec.upstream_request_mut() {
                upreq.switch_form();
            }
        }
        if plan.prelude == Some(Prelude::FirstTask) {
            if let Some(id) = route.params.task_id.as_deref() {
                // A v0.3 REST agent breaks off a stream of a finished task
                // without a word (a2a-python 0.3 does): asked first.
                let via = crate::app::TaskFetch::Rest(rest_base(app, ctx));
                let frame = |task: &Value| codec.result_event(&task_event(task));
                let first = first_task_frame(app, &via, id, &caller(), frame).await?;
                if let Some(first) = first {
                    own.start_relay(first, app.config.limits.max_event_bytes);
                }
            }
        }
        let sent = codec.upstream_request().and_then(|u| u.body.clone());
        own.body = sent.map(Bytes::from);
        own.codec = Some(HttpCodec::Rest(codec));
        own.plan = Some(*plan);
        Ok(own)
    }
}
