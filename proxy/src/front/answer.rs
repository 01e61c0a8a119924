//! The work behind the head and body hooks, as plain functions: pingora's
//! proxy loop reaches them through its hooks ([`super::service`]), the
//! calls of our own ([`super::own_call`], [`super::stream`]) directly — no
//! hook is called by hand.

use std::sync::Arc;

use bytes::Bytes;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::{Error, ErrorType, Result};

use super::*;
use crate::codec::{Codec, HttpCodec, OverHttp};
use crate::route::{self, Binding};
use crate::sse::SseFramer;
use crate::version::Version;

/// The extension header of `headers` in `to`'s spelling, every value of
/// either spelling merged ([`crate::codec::extensions_for`]).
fn set_extensions(
    to: Version,
    headers: &http::HeaderMap,
) -> Option<(&'static str, http::HeaderValue)> {
    let (name, v) = crate::codec::extensions_for(to, headers)?;
    Some((name, http::HeaderValue::try_from(v).ok()?))
}

/// Whether a `Content-Type` value is JSON.
fn is_json(resp: &ResponseHeader) -> bool {
    resp.headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            // `/json` or `+json` in any case, without a lowercased copy.
            ct.as_bytes()
                .windows(5)
                .any(|w| matches!(w[0], b'/' | b'+') && w[1..].eq_ignore_ascii_case(b"json"))
        })
}

impl ProxyService {
    /// The agent's request head: its `Host`, its own `A2A-Version`, the
    /// body's framing, the extension header in its spelling, the path under
    /// its base path (or the REST request the translation built).
    pub(crate) fn upstream_head(
        &self,
        client_uri: &http::Uri,
        upstream_request: &mut RequestHeader,
        ctx: &Ctx,
    ) -> Result<()> {
        let app = &self.app;
        // The agent URL routing chose (route::locate), else upstream.url.
        let dest = ctx.dest.as_ref();
        let agent = dest.map_or(&app.config.upstream, |d| &d.url);
        upstream_request.insert_header("Host", agent.authority())?;
        if let Some(v) = ctx.upstream_version {
            // Always the upstream's own version (EDGE-CASES 4): a v1.0 agent
            // rejects header-less calls even when the method says v1.0.
            // Passthrough keeps the client's 1.N (route::upstream_header).
            let sent = match route::upstream_header(ctx.route.as_ref(), v) {
                std::borrow::Cow::Borrowed(s) => http::HeaderValue::from_static(s),
                std::borrow::Cow::Owned(s) => http::HeaderValue::try_from(s).map_err(|_| {
                    Error::explain(ErrorType::InternalError, "building the A2A-Version header")
                })?,
            };
            upstream_request.insert_header("A2A-Version", sent)?;
        }
        if let Some(codec) = ctx.codec() {
            // The proxy reads this answer to translate it: unencoded
            // (accept-encoding is per call, crate::forward).
            upstream_request.remove_header(&http::header::ACCEPT_ENCODING);
            let to = codec.made_for().upstream;
            if let Some((name, v)) = set_extensions(to, &upstream_request.headers) {
                upstream_request.remove_header(&crate::codec::EXTENSIONS_V10);
                upstream_request.remove_header(&crate::codec::EXTENSIONS_V03);
                upstream_request.insert_header(name, v)?;
            }
        }
        if let Some(up) = ctx.codec().and_then(|c| c.upstream_request()) {
            crate::rest::set_upstream_head(&agent.base_path, up, upstream_request)?;
        } else if let Some(d) = dest {
            let asked = client_uri.path_and_query().map(|p| p.as_str());
            if asked != Some(d.path_and_query.as_str()) {
                let new_uri: http::Uri = d.path_and_query.parse().map_err(|_| {
                    Error::explain(ErrorType::InternalError, "building the upstream path")
                })?;
                upstream_request.set_uri(new_uri);
            }
        } else if app.config.public_url.base_path != app.config.upstream.base_path {
            let rel = app.relative_path(client_uri.path());
            let pq = app.upstream_path_and_query(rel, client_uri.query());
            let new_uri: http::Uri = pq.parse().map_err(|_| {
                Error::explain(ErrorType::InternalError, "building the upstream path")
            })?;
            upstream_request.set_uri(new_uri);
        }
        Ok(())
    }

    /// The answer's head for the client: a REST status and extension
    /// header in the client's terms, a stream counted as open, and how the
    /// body is treated ([`RespRewrite`]).
    pub(crate) fn answer_head(
        &self,
        client_headers: &http::HeaderMap,
        resp: &mut ResponseHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        ctx.status = Some(resp.status.as_u16());
        if let Some(codec) = ctx.codec() {
            // The status and the extension header in the client's terms.
            let status = resp.status.as_u16();
            if status >= 400 && codec.client_status(status) != status {
                resp.set_status(codec.client_status(status))?;
            }
            let to = codec.made_for().client;
            if let Some((name, v)) = set_extensions(to, &resp.headers) {
                resp.remove_header(&crate::codec::EXTENSIONS_V10);
                resp.remove_header(&crate::codec::EXTENSIONS_V03);
                resp.insert_header(name, v)?;
            }
        }
        let sse = resp
            .headers
            .get(http::header::CONTENT_TYPE)
            .is_some_and(is_event_stream_type);
        if sse && !ctx.stream_open {
            ctx.stream_open = true;
            self.app.metrics.stream_opened();
            resp.insert_header("X-Accel-Buffering", "no")?;
        }
        self.choose_rewrite(client_headers, resp, ctx, sse)
    }

    /// Whether (and how) the answer's body is rewritten: translated, a
    /// card whose URLs point here, or push configs restored.
    fn choose_rewrite(
        &self,
        client_headers: &http::HeaderMap,
        resp: &mut ResponseHeader,
        ctx: &mut Ctx,
        sse: bool,
    ) -> Result<()> {
        // The extended card's interface URLs must point here too (EDGE-CASES 7).
        let card = ctx.route.as_ref().and_then(|r| r.operation)
            == Some(translate::method::Method::GetExtendedCard)
            && resp.status.as_u16() == 200;
        let translated = ctx.translated();
        let restored = ctx.own().is_some_and(OwnCall::intercepted_same_version);
        if !(translated || card || restored) {
            return Ok(());
        }
        let json = is_json(resp);
        if !(translated || json) {
            return Ok(());
        }
        // A translated call's answer that is neither JSON nor SSE (an HTML
        // error page, garbage) is never passed on: it goes through the JSON
        // translation, which answers the client InvalidAgentResponse in its
        // own version.
        if translated && !json && !sse {
            resp.insert_header(http::header::CONTENT_TYPE, "application/json")?;
        }
        // The length changes: send the rewritten body chunked.
        resp.remove_header(&http::header::CONTENT_LENGTH);
        resp.insert_header(http::header::TRANSFER_ENCODING, "chunked")?;
        let as_sse =
            !sse && resp.status.as_u16() == 200 && ctx.codec().is_some_and(OverHttp::answer_as_sse);
        let tr = if sse {
            EventTranslation::of(ctx, || self.app.tasks.scope_of(client_headers))
        } else {
            None
        };
        let rewrite = if let Some(tr) = tr {
            RespRewrite::Sse {
                framer: SseFramer::new(self.app.config.limits.max_event_bytes),
                tr: Arc::new(tr),
            }
        } else if as_sse {
            resp.insert_header(http::header::CONTENT_TYPE, "text/event-stream")?;
            RespRewrite::JsonAsSse(Held::default())
        } else {
            RespRewrite::Json(Held::default())
        };
        if let Some(r) = ctx.resp_mut() {
            *r = rewrite;
        }
        Ok(())
    }

    /// One piece of the answer's body as [`RespRewrite`] says: passed on,
    /// held until its end and translated whole, or a stream translated
    /// event by event.
    pub(crate) fn answer_body(
        &self,
        client_headers: &http::HeaderMap,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut Ctx,
    ) -> Result<()> {
        let limit = self.app.config.limits.max_event_bytes;
        let Some(rewrite) = ctx.resp_mut() else {
            return Ok(());
        };
        let held = match rewrite {
            RespRewrite::Pass => return Ok(()),
            RespRewrite::Sse { framer, tr } => {
                // A unary call of ours answered as a stream: translated in
                // place.
                let tr = tr.clone();
                let piece = body.take();
                let mut events = Vec::new();
                let framed = frame(framer, piece, end_of_stream, &mut events);
                let mut created = ctx.take_created(&tr);
                let mut out = Vec::new();
                for e in &events {
                    tr.rewrite(&self.app, e, &mut created, &mut out);
                }
                *body = Some(settle_piece(ctx, &tr, created, out, framed)?);
                return Ok(());
            }
            RespRewrite::Json(held) | RespRewrite::JsonAsSse(held) => held,
        };
        hold(&mut held.buf, body.take(), limit, &mut held.over);
        if !end_of_stream {
            *body = Some(Bytes::new());
            return Ok(());
        }
        let (buf, over) = (std::mem::take(&mut held.buf), held.over);
        let as_sse = matches!(ctx.resp(), Some(RespRewrite::JsonAsSse(_)));
        let status = ctx.status.unwrap_or(200);
        *body = Some(match (over, ctx.codec()) {
            (true, _) => over_limit(ctx, limit),
            (false, Some(codec)) if as_sse => sse_frame(codec.answer((status, &buf)).body),
            (false, _) if as_sse => buf.freeze(),
            (false, _) => Bytes::from(self.finish_whole(client_headers, ctx, &buf)),
        });
        Ok(())
    }

    /// A whole answer, translated (or restored) for the client, with what
    /// its plan asks after the call: tasks recorded, push configs restored
    /// and settled, a deleted config forgotten, a card shaped.
    fn finish_whole(&self, client_headers: &http::HeaderMap, ctx: &mut Ctx, buf: &[u8]) -> Vec<u8> {
        let (status, upstream) = (ctx.status, ctx.upstream_version);
        let op = ctx.route.as_ref().and_then(|r| r.operation);
        let mut out = match ctx.own_mut() {
            Some(own) => match own.codec.take() {
                Some(codec) => {
                    let out = self.finish_translated(client_headers, own, &codec, status, buf);
                    own.codec = Some(codec);
                    out
                }
                None => {
                    let mut out = buf.to_vec();
                    if own.intercepted_same_version() {
                        self.restore_same_version(own, upstream, status, &mut out);
                    }
                    out
                }
            },
            None => buf.to_vec(),
        };
        if op == Some(translate::method::Method::GetExtendedCard) {
            let jsonrpc = ctx.target.binding == Some(Binding::JsonRpc);
            let to = ctx
                .target
                .version
                .filter(|c| ctx.upstream_version.is_some_and(|u| u != *c));
            out = self.app.rewrite_card_body(&out, jsonrpc, to);
        }
        out
    }

    /// [`Self::finish_whole`] of a translated answer (`status`: the
    /// agent's), in any binding: the codec decodes it, the plan's steps
    /// follow; the status its body calls for is left in the call's
    /// `answer_status`.
    fn finish_translated(
        &self,
        client_headers: &http::HeaderMap,
        own: &mut OwnCall,
        codec: &HttpCodec,
        status: Option<u16>,
        buf: &[u8],
    ) -> Vec<u8> {
        let app = &self.app;
        let status = status.unwrap_or(200);
        let records = own.records_tasks();
        let (decoded, facts) = match records {
            true => codec.answer_with_facts((status, buf)),
            false => (codec.answer((status, buf)), None),
        };
        let ok = codec.succeeded(status, &decoded);
        own.answer_status = decoded.status;
        let mut out = decoded.body;
        if ok && records {
            let scope = app.tasks.scope_of(client_headers);
            record_answer(app, scope, codec, facts.as_ref(), &out);
        }
        if let (Some(push), Some(p)) = (&app.push, &own.push) {
            if let Some(b) = restore_push(push, codec, &out, p) {
                out = b;
            }
        }
        if ok {
            let mut known = Some(crate::push::layer::Push::known_config(own.push.as_ref()));
            let mut known = |t: &str, c: &str| known.take().and_then(|k| k(t, c));
            let settled = codec.settle_config(out, &mut known);
            out = settled.body;
            if settled.status.is_some() {
                own.answer_status = settled.status;
            }
        }
        if let Some(deleted) = own.push_delete.take() {
            if app.push.is_some() && ok && !codec.answer_is_error(&out) {
                own.forget = Some(deleted);
            }
        }
        out
    }
}

/// A whole answer as one SSE `data:` frame.
fn sse_frame(json: Vec<u8>) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(&json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}
