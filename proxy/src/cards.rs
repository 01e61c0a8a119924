//! The one card service: every agent card the proxy serves — the
//! well-known card, the JSON-RPC and HTTP+JSON extended card, and both
//! gRPC card RPCs — is made by [`App::present_card`] for the client's
//! version, so the cards of every binding agree (translated and shaped the
//! same way, every interface URL the proxy's, ListTasks and the gRPC
//! interface advertised alike).

use std::time::Instant;

use bytes::Bytes;
use serde_json::Value;

use crate::app::{App, LocalResponse};
use crate::card;
use crate::error::Failure;
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
        // The interfaces the proxy serves (area: paths; crate::endpoints).
        let ends = self.endpoints_now(Some(&card));
        let mut json = match (agent == client, from) {
            (true, _) => {
                let mut card = card;
                card::keep_served(&mut card, &ends);
                card
            }
            (false, CardFrom::Agent) => match card::translate_card(&card, client, &ends) {
                Ok(j) => j,
                Err(detail) => {
                    let p = card::card_problem(&card, client, detail);
                    tracing::warn!(detail = %p.detail, problem = %p.message, "cannot serve a translated card");
                    return Err(Failure::Translate {
                        code: translate::code::ErrorCode::InvalidAgentResponse.code(),
                        message: p.message,
                    });
                }
            },
            (false, CardFrom::Translated) => {
                // As the public card: what the proxy translates, stamped.
                let mut shaped = card.clone();
                card::keep_served(&mut shaped, &ends);
                match card::shape_translated(&mut shaped, client) {
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
        let grpc = crate::grpc::public_grpc(self);
        crate::grpc::advertise(&mut json, client, grpc.as_ref());
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
