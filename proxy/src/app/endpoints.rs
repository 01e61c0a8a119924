//! Where the agent's bindings live, as the app knows them (its endpoints
//! from the card cache's copy, `crate::card::endpoints`), and the address a
//! call goes to.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::App;
use crate::card::endpoints::{resolve, Dest, Endpoints, Memo, NO_CARD_RETRY};
use crate::card::CachedCard;
use crate::error::Failure;

impl App {
    /// The agent's endpoints: from the card cache's copy (resolved again
    /// when the cache holds a new one), or [`Endpoints::fallback`] when no
    /// card can be had (asked again after a few seconds). With
    /// `upstream.version = auto` the card is fetched when stale (the
    /// version is read from it anyway); with a fixed version it is not
    /// fetched for this: the card last fetched (to serve it, say) is used.
    pub async fn endpoints(&self) -> Arc<Endpoints> {
        let now = Instant::now();
        let memo = &self.cards.endpoints;
        if let Some(e) = memo.fresh(now) {
            return e;
        }
        let card = match self.config.upstream_version {
            crate::config::UpstreamVersion::Auto => match self.upstream_addr().await {
                Ok(addr) => self.cards.get(addr, true).await.ok(),
                Err(_) => None,
            },
            crate::config::UpstreamVersion::Fixed(_) => self.cards.peek(),
        };
        if let Some(c) = card {
            return self.endpoints_of(&c);
        }
        let Ok(mut slot) = memo.slot.lock() else {
            return Arc::new(Endpoints::fallback(&self.config.upstream));
        };
        // No card to be had: the last card's, else upstream.url; asked
        // again in a few seconds.
        match slot.as_mut() {
            Some(m) => {
                m.until = now + NO_CARD_RETRY;
                m.ends.clone()
            }
            None => {
                let ends = Arc::new(Endpoints::fallback(&self.config.upstream));
                *slot = Some(Memo {
                    card: None,
                    ends: ends.clone(),
                    until: now + NO_CARD_RETRY,
                });
                ends
            }
        }
    }

    /// The endpoints of `card` (a copy the card cache gave), resolved when
    /// it differs from the one last seen (the left-out interfaces logged
    /// then), and remembered until it goes stale.
    pub fn endpoints_of(&self, card: &Arc<CachedCard>) -> Arc<Endpoints> {
        let now = Instant::now();
        // (A max-age of any size: never past what an Instant holds.)
        let until = card
            .fetched
            .checked_add(card.ttl)
            .unwrap_or(now + NO_CARD_RETRY)
            .max(now + Duration::from_millis(100));
        let Ok(mut slot) = self.cards.endpoints.slot.lock() else {
            return Arc::new(Endpoints::fallback(&self.config.upstream));
        };
        let seen = slot.as_ref().filter(|m| {
            m.card
                .as_ref()
                .is_some_and(|old| Arc::ptr_eq(old, card) || old.raw == card.raw)
        });
        let ends = match seen {
            Some(m) => m.ends.clone(),
            None => {
                let e = resolve(
                    &card.json,
                    &self.config.upstream,
                    &self.config.allowed_hosts,
                );
                e.log_left_out();
                Arc::new(e)
            }
        };
        *slot = Some(Memo {
            card: Some(card.clone()),
            ends: ends.clone(),
            until,
        });
        ends
    }

    /// The endpoints of the last card seen, without asking for one; when
    /// none was, those of `card` (the card being served, whose own
    /// interfaces then decide), else [`Endpoints::fallback`].
    pub fn endpoints_now(&self, card: Option<&Value>) -> Arc<Endpoints> {
        if let Some(e) = self.cards.endpoints.of_card() {
            return e;
        }
        Arc::new(match card {
            Some(c) => resolve(c, &self.config.upstream, &self.config.allowed_hosts),
            None => Endpoints::fallback(&self.config.upstream),
        })
    }

    /// How the proxy asks the v0.3 agent for a task it lists (ListTasks):
    /// `asked`, the binding the client's call came in on, when the agent's
    /// card serves that binding; else the other binding the card serves,
    /// at its interface's URL (a v1.0 REST `GET /tasks` toward an agent
    /// whose card lists only JSON-RPC asks `tasks/get` there, not `GET
    /// /v1/tasks/{id}`, which the agent does not serve); `asked` when the
    /// card serves neither, or no card is known (a fixed version whose card
    /// was never fetched: nothing says the binding is not served).
    pub async fn task_fetch_served(&self, asked: super::TaskFetch) -> super::TaskFetch {
        use super::TaskFetch;
        let ends = self.endpoints().await;
        if self.cards.peek().is_none() {
            return asked;
        }
        match asked {
            TaskFetch::Rest(_) if ends.rest.is_some() => asked,
            TaskFetch::JsonRpc(_) if ends.jsonrpc.is_some() => asked,
            _ => {
                let rest = ends.rest.as_ref().map(|e| TaskFetch::Rest(e.url.clone()));
                let rpc = (ends.jsonrpc.as_ref()).map(|e| TaskFetch::JsonRpc(e.url.clone()));
                rest.or(rpc).unwrap_or(asked)
            }
        }
    }

    /// The address of a request's destination (`None`: `upstream.url`'s),
    /// with TLS when its URL is `https://` (crate::upstream::tls).
    pub async fn dest_addr(
        &self,
        dest: Option<&Dest>,
    ) -> Result<crate::upstream::tls::AgentAddr, Failure> {
        match dest {
            Some(d) => self.resolve_addr(&d.url).await,
            None => self.upstream_addr().await,
        }
    }
}
