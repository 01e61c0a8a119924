//! The one card service: every agent card the proxy serves — the
//! well-known card, the JSON-RPC and HTTP+JSON extended card, and both
//! gRPC card RPCs — is made by [`App::present_card`] for the client's
//! version, so the cards of every binding agree (translated and shaped the
//! same way, every interface URL the proxy's, ListTasks and the gRPC
//! interface advertised alike).

use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};

use crate::app::App;
use crate::card;
use crate::error::Failure;
use crate::local::LocalResponse;
use crate::version::Version;

/// The state a card reaches [`App::present_card`] in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardFrom {
    /// As the agent wrote it, in its version.
    Agent,
    /// Already translated into the client's version by the call that
    /// fetched it (the extended card's answer).
    Translated,
}

impl App {
    /// The card a client of version `client` is served, from a card of an
    /// agent of version `agent`: translated and shaped when the versions
    /// differ (a card that cannot be translated is an error naming what is
    /// wrong with it, the detail logged), every interface URL pointing at
    /// the proxy, the per-caller ListTasks advertised to v1.0 clients of a
    /// v0.3 agent, the proxy's gRPC interface advertised.
    pub fn present_card(
        &self,
        card: Value,
        agent: Version,
        client: Version,
        from: CardFrom,
    ) -> Result<Value, Failure> {
        // The interfaces the proxy serves (area: paths; crate::card::endpoints).
        let ends = self.endpoints_now(Some(&card));
        let grpc = public_grpc(self);
        let mut json = match (agent == client, from) {
            (true, _) => {
                let mut card = card;
                card::keep_served(&mut card, &ends);
                card
            }
            (false, CardFrom::Agent) => {
                match card::translate_card_for(&card, client, &ends, grpc.is_some()) {
                    Ok(j) => j,
                    Err(detail) => {
                        let p = card::card_problem(&card, client, detail);
                        tracing::warn!(detail = %p.detail, problem = %p.message, "cannot serve a translated card");
                        return Err(Failure::Translate {
                            code: translate::code::ErrorCode::InvalidAgentResponse.code(),
                            message: p.message,
                        });
                    }
                }
            }
            (false, CardFrom::Translated) => {
                // As the public card: what the proxy translates, stamped.
                let mut shaped = card.clone();
                card::keep_served(&mut shaped, &ends);
                match card::shape_translated_for(&mut shaped, client, grpc.is_some()) {
                    Ok(()) => shaped,
                    Err(detail) => {
                        tracing::warn!(%detail, "extended card interfaces left as translated");
                        card
                    }
                }
            }
        };
        card::rewrite_card(&mut json, &self.config.upstream, &self.config.public_url);
        if client == Version::V10 && agent == Version::V03 && self.tasks.enabled() {
            card::advertise_list_tasks(&mut json);
        }
        advertise(&mut json, client, grpc.as_ref());
        Ok(json)
    }

    /// An extended-card answer of the JSON-RPC or HTTP+JSON binding (a
    /// JSON-RPC response whose `result` is the card, or a bare card),
    /// presented for the client ([`Self::present_card`]); `translated_to`
    /// is the client's version when the call was translated. Bodies that
    /// are not such JSON are returned unchanged.
    pub fn rewrite_card_body(
        &self,
        body: &[u8],
        jsonrpc: bool,
        translated_to: Option<Version>,
    ) -> Vec<u8> {
        let Ok(mut v) = serde_json::from_slice::<Value>(body) else {
            return body.to_vec();
        };
        let card = if jsonrpc {
            v.get_mut("result")
        } else {
            Some(&mut v)
        };
        let Some(c) = card.filter(|c| c.is_object()) else {
            return body.to_vec();
        };
        let (agent, client, from) = match translated_to {
            Some(to) => (to.other(), to, CardFrom::Translated),
            None => {
                let own = card::card_version(c);
                (own, own, CardFrom::Agent)
            }
        };
        match self.present_card(std::mem::take(c), agent, client, from) {
            Ok(presented) => *c = presented,
            Err(_) => return body.to_vec(),
        }
        if !jsonrpc && translated_to.is_none() && agent == Version::V03 {
            // A v0.3 agent's REST card: each security scheme in both
            // forms, for both v0.3 SDK clients (card::v03_scheme_forms).
            card::v03_scheme_forms(c);
        }
        v.to_string().into_bytes()
    }

    /// The public card in the shape the request asked for (`asked`: its
    /// `A2A-Version`, `None` when it named none).
    ///
    /// Same-version clients get the upstream card unchanged except for its
    /// interface URLs; other clients get it translated, with its JSON-RPC
    /// and HTTP+JSON interfaces (the bindings the proxy translates).
    /// Header-less requests get one hybrid card of both versions
    /// ([`card::hybrid`]); when only one shape can be made, that one.
    pub async fn serve_card(
        &self,
        asked: Option<Version>,
        if_none_match: Option<&str>,
    ) -> Result<LocalResponse, Failure> {
        let addr = self.upstream_addr().await?;
        let card = self.cards.get_or_fail(addr, true).await?;
        // The endpoints of this card, for present_card (area: paths).
        self.endpoints_of(&card);
        let for_client = |client| {
            let agent = card.version;
            self.present_card(card.json.clone(), agent, client, CardFrom::Agent)
        };
        let json = match asked {
            Some(client) => for_client(client)?,
            None => match (for_client(Version::V03), for_client(Version::V10)) {
                (Ok(v03), Ok(v10)) => card::hybrid(&v03, &v10),
                (Ok(one), Err(_)) | (Err(_), Ok(one)) => one,
                (Err(f), Err(_)) => return Err(f),
            },
        };
        let body = Bytes::from(json.to_string());
        let etag = card::etag_for(card::CardShape::of(asked), &body);
        let max_age = card.remaining(Instant::now());
        let mut headers = vec![
            ("ETag", etag.clone()),
            ("Last-Modified", card.last_modified()),
            ("Vary", "A2A-Version".into()),
            ("Cache-Control", format!("max-age={max_age}")),
        ];
        if if_none_match.is_some_and(|inm| card::etag_matches(inm, &etag)) {
            return Ok(LocalResponse {
                status: 304,
                headers,
                body: Bytes::new(),
            });
        }
        headers.insert(0, ("Content-Type", "application/json".into()));
        Ok(LocalResponse {
            status: 200,
            headers,
            body,
        })
    }
}

/// The proxy's gRPC interface as served cards advertise it: the public
/// host with the gRPC listener's port, written in the form each card needs
/// (`grpc.card_url_form`; EDGE-CASES 21).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcInterface {
    /// `host:port` (IPv6 hosts bracketed).
    pub host_port: String,
    /// The listener speaks TLS: URLs say `https://`.
    pub tls: bool,
    pub form: crate::config::GrpcUrlForm,
}

impl GrpcInterface {
    /// The `url` for a card of `version`; `agent` is the agent's own gRPC
    /// `url` in that card (same-version cards only: a translated card has
    /// none). `auto` keeps the agent's form (a URL when it wrote a scheme),
    /// else writes the version's: v0.3 a URL (its spec and examples),
    /// v1.0 `host:port` (v1.0.1+ says so for GRPC).
    pub fn url_for(&self, version: Version, agent: Option<&str>) -> String {
        use crate::config::GrpcUrlForm;
        let as_url = match self.form {
            GrpcUrlForm::Url => true,
            GrpcUrlForm::HostPort => false,
            GrpcUrlForm::Auto => match agent {
                Some(a) => a.contains("://"),
                None => version == Version::V03,
            },
        };
        if as_url {
            let scheme = if self.tls { "https" } else { "http" };
            format!("{scheme}://{}", self.host_port)
        } else {
            self.host_port.clone()
        }
    }
}

/// The proxy's gRPC interface, `None` when the listener is off.
pub fn public_grpc(app: &App) -> Option<GrpcInterface> {
    let port = app.config.grpc_listen?.port();
    let host = &app.config.public_url.host;
    let host_port = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Some(GrpcInterface {
        host_port,
        tls: app.config.grpc_tls.is_some(),
        form: app.config.grpc_card_url_form,
    })
}

/// Replaces any GRPC interface of a served card of `version` by the proxy's
/// own (the one it really serves), or removes them all when the proxy has
/// no gRPC listener (an agent's gRPC address is not the proxy's to give).
pub fn advertise(card: &mut Value, version: Version, grpc: Option<&GrpcInterface>) {
    let is_grpc = |i: &Value, key: &str| i.get(key).and_then(Value::as_str) == Some("GRPC");
    match version {
        Version::V10 => {
            if let Some(Value::Array(list)) = card.get_mut("supportedInterfaces") {
                let agent = list
                    .iter()
                    .find(|i| is_grpc(i, "protocolBinding"))
                    .and_then(|i| i.get("url").and_then(Value::as_str).map(str::to_string));
                list.retain(|i| !is_grpc(i, "protocolBinding"));
                if let Some(g) = grpc {
                    let url = g.url_for(version, agent.as_deref());
                    list.push(
                        json!({"url": url, "protocolBinding": "GRPC", "protocolVersion": "1.0"}),
                    );
                }
            }
        }
        Version::V03 => {
            let Some(obj) = card.as_object_mut() else {
                return;
            };
            let main_is_grpc =
                obj.get("preferredTransport").and_then(Value::as_str) == Some("GRPC");
            let agent = obj
                .get("additionalInterfaces")
                .and_then(Value::as_array)
                .and_then(|l| l.iter().find(|i| is_grpc(i, "transport")))
                .and_then(|i| i.get("url"))
                .or_else(|| obj.get("url").filter(|_| main_is_grpc))
                .and_then(Value::as_str)
                .map(str::to_string);
            let url = grpc.map(|g| g.url_for(version, agent.as_deref()));
            // A new list starts with the main interface (v0.3: the list
            // SHOULD repeat it), so JSON-RPC stays listed.
            let main = obj.get("url").cloned().filter(|_| !main_is_grpc).map(|u| {
                let t = obj
                    .get("preferredTransport")
                    .cloned()
                    .unwrap_or_else(|| Value::from("JSONRPC"));
                json!({"url": u, "transport": t})
            });
            let list = obj
                .entry("additionalInterfaces")
                .or_insert_with(|| Value::Array(main.into_iter().collect()));
            if let Value::Array(list) = list {
                list.retain(|i| !is_grpc(i, "transport"));
                if let Some(u) = &url {
                    list.push(json!({"url": u, "transport": "GRPC"}));
                }
            }
            if main_is_grpc {
                // The main interface was the agent's gRPC: the proxy's, or
                // (no listener) the first other one.
                let first = obj
                    .get("additionalInterfaces")
                    .and_then(Value::as_array)
                    .and_then(|l| l.first())
                    .cloned();
                match (url, first) {
                    (Some(u), _) => {
                        obj.insert("url".into(), Value::from(u));
                    }
                    (None, Some(f)) => {
                        obj.insert("url".into(), f["url"].clone());
                        obj.insert("preferredTransport".into(), f["transport"].clone());
                    }
                    (None, None) => {}
                }
            }
        }
    }
}
