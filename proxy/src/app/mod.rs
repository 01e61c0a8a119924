//! The proxy's state and the work behind each hook of [`crate::front`]:
//! upstream resolution, version decisions, local endpoints, card serving.
//! Hooks call these; nothing here knows pingora's phase order.

mod endpoints;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};

use crate::card::{self, CardCache};
use crate::config::{Config, UpstreamVersion};
use crate::error::Failure;
use crate::metrics::Metrics;
use crate::version::Version;

pub use crate::local::LocalResponse;

/// Shared state of one running proxy.
pub struct App {
    pub config: Config,
    pub cards: CardCache,
    /// Shared with the agent's next state after a reload (crate::reload).
    pub metrics: Arc<Metrics>,
    /// Tasks seen in translated answers, per caller scope, for ListTasks
    /// emulation (kept in the push store when there is one).
    pub tasks: std::sync::Arc<crate::tasks::TaskIndex>,
    /// Relayed subscriptions to idle tasks of a v0.3 agent (issue #22 item 6).
    pub relay: std::sync::Arc<crate::tasks::relay::Relay>,
    /// Push interception and delivery (`None` when `push.enabled` is off).
    pub push: Option<std::sync::Arc<crate::push::layer::Push>>,
    push_worker: std::sync::Mutex<Option<crate::push::deliver::Worker>>,
    /// Keep-alive connections of the translated calls, shared with the
    /// card cache (its card and task fetches).
    pub upstream_pool: std::sync::Arc<crate::upstream::UpstreamPool>,
    task_sync: std::sync::Mutex<Option<crate::push::task_sync::TaskSync>>,
    /// This instance's part in a deployment sharing a PostgreSQL store
    /// (the ListTasks index and the relay; `None`: one instance).
    instances: std::sync::Mutex<Option<crate::push::instances::Instances>>,
    in_flight: AtomicUsize,
    /// Set when the v0.3 REST agent refused a push-config create's first
    /// body form and took the other: that one goes first from then on.
    pub rest_other_form_first: std::sync::atomic::AtomicBool,
}

impl App {
    pub fn new(config: Config) -> App {
        let send_version = match config.upstream_version {
            UpstreamVersion::Fixed(v) => v,
            UpstreamVersion::Auto => Version::V10,
        };
        // One upstream client: the card fetch and the proxy's own task
        // fetches share the translated calls' keep-alive connections.
        let upstream_pool = std::sync::Arc::new(crate::upstream::UpstreamPool::default());
        let cards = CardCache::new(
            config.upstream.clone(),
            send_version,
            config.limits.connect_timeout,
            config.limits.read_timeout,
            config.limits.card_default_ttl,
            upstream_pool.clone(),
        );
        let tasks = task_index(&config, crate::tasks::ScopeKey::random());
        let relay = std::sync::Arc::new(crate::tasks::relay::Relay::new(config.limits.relay));
        let metrics = Arc::new(Metrics::named(&config.agent.name));
        App {
            config,
            cards,
            metrics,
            tasks: std::sync::Arc::new(tasks),
            relay,
            push: None,
            push_worker: std::sync::Mutex::new(None),
            upstream_pool,
            task_sync: std::sync::Mutex::new(None),
            instances: std::sync::Mutex::new(None),
            in_flight: AtomicUsize::new(0),
            rest_other_form_first: Default::default(),
        }
    }

    /// The agent's state after a reload changed its config (crate::reload):
    /// what `config` says is new (card cache, upstream client, limits,
    /// routes, TLS files), what it remembers is `old`'s and carried over:
    /// its push layer and store, delivery worker and ListTasks write-behind
    /// (moved here, so `old` must not be stopped), ListTasks index,
    /// relayed subscriptions and counters. Calls still holding `old` end
    /// on `old`'s settings.
    pub fn carried(old: &App, config: Config) -> App {
        let mut app = App::new(config);
        app.metrics = old.metrics.clone();
        app.tasks = old.tasks.clone();
        app.relay = old.relay.clone();
        app.push = old.push.clone();
        let worker = old.push_worker.lock().ok().and_then(|mut w| w.take());
        if let Ok(mut w) = app.push_worker.lock() {
            *w = worker;
        }
        let sync = old.task_sync.lock().ok().and_then(|mut t| t.take());
        if let Ok(mut t) = app.task_sync.lock() {
            *t = sync;
        }
        app
    }

    /// Opens the push store and starts the delivery worker when
    /// `push.enabled`; an error names what could not be opened.
    pub fn start_push(&mut self) -> std::io::Result<()> {
        let s = &self.config.push;
        if !s.enabled {
            return Ok(());
        }
        let err = |e: crate::push::StoreError| std::io::Error::other(e.to_string());
        let store = crate::push::layer::open_store(s).map_err(err)?;
        // A shared store (PostgreSQL): this instance's key checked against
        // the deployment's, and the scope secret all its instances use.
        let shared = store.shared();
        let secret = match &shared {
            Some(sh) => Some(
                sh.deployment_secret(store.list_scope_secret(), s.credentials_key_file.as_deref())
                    .map_err(err)?,
            ),
            None => store.list_scope_secret(),
        };
        if self.tasks.enabled() {
            // Scopes keyed from the store's credentials key: instances
            // sharing the store, and this one after a restart, agree.
            if let Some(secret) = secret {
                let key = crate::tasks::ScopeKey::derived(&secret);
                self.tasks = std::sync::Arc::new(task_index(&self.config, key));
            } else {
                tracing::warn!("the push store has no credentials key: ListTasks scopes are per process, tasks seen before a restart are listed to no one");
            }
        }
        match shared {
            Some(sh) => {
                let index = self.tasks.enabled().then(|| self.tasks.clone());
                let limits = self.config.limits.relay;
                let inst = crate::push::instances::Instances::start(sh, index, &self.relay, limits)
                    .map_err(err)?;
                if let Ok(mut i) = self.instances.lock() {
                    *i = Some(inst);
                }
            }
            None if self.tasks.enabled() => {
                let sync = crate::push::task_sync::start(self.tasks.clone(), store.clone())
                    .map_err(err)?;
                if let Ok(mut t) = self.task_sync.lock() {
                    *t = Some(sync);
                }
            }
            None => {}
        }
        let push = std::sync::Arc::new(crate::push::layer::Push::new(s.clone(), store)?);
        let worker = crate::push::deliver::Worker::start(push.clone())?;
        self.push = Some(push);
        if let Ok(mut w) = self.push_worker.lock() {
            *w = Some(worker);
        }
        Ok(())
    }

    /// Stops the delivery worker (pending items stay in the outbox).
    pub fn stop_push(&self) {
        let w = self.push_worker.lock().ok().and_then(|mut w| w.take());
        if let Some(mut w) = w {
            w.stop();
        }
        if let Some(mut t) = self.task_sync.lock().ok().and_then(|mut t| t.take()) {
            t.stop();
        }
        if let Some(mut i) = self.instances.lock().ok().and_then(|mut i| i.take()) {
            i.stop();
        }
        if let Some(p) = &self.push {
            p.store.close();
        }
    }

    /// Counts a request in; `false` when over `max_connections` (not counted).
    pub fn enter(&self) -> bool {
        let limit = self.config.limits.max_connections;
        let prev = self.in_flight.fetch_add(1, Ordering::AcqRel);
        if prev >= limit {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Counts a request out (after a successful [`App::enter`]).
    pub fn leave(&self) {
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Requests counted in right now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Resolves the upstream host (asynchronously; never the blocking
    /// resolver): its address, with TLS when `upstream.url` is `https://`.
    pub async fn upstream_addr(&self) -> Result<crate::upstream::tls::AgentAddr, Failure> {
        self.resolve_addr(&self.config.upstream).await
    }

    /// The address of `url`'s host and port, with TLS when it is `https://`.
    pub async fn resolve_addr(
        &self,
        url: &crate::config::HttpUrl,
    ) -> Result<crate::upstream::tls::AgentAddr, Failure> {
        let authority = url.authority();
        let mut addrs = tokio::net::lookup_host(authority.as_str())
            .await
            .map_err(|e| Failure::UpstreamUnavailable {
                detail: format!("cannot resolve {authority}: {e}"),
            })?;
        let addr = addrs.next().ok_or_else(|| Failure::UpstreamUnavailable {
            detail: format!("{authority} resolves to no address"),
        })?;
        crate::upstream::tls::AgentAddr::new(
            addr,
            &url.scheme,
            &url.host,
            &self.config.agent.name,
            &self.config.upstream_tls,
        )
    }

    /// What the agent's card says of push notifications
    /// (`capabilities.pushNotifications`); `None` when it says nothing or
    /// the card cannot be had.
    pub async fn agent_pushes(&self) -> Option<bool> {
        let addr = self.upstream_addr().await.ok()?;
        let card = self.cards.get(addr, true).await.ok()?;
        card.json
            .pointer("/capabilities/pushNotifications")
            .and_then(Value::as_bool)
    }

    /// The upstream's version: configured, or read from its card.
    pub async fn upstream_version(&self) -> Result<Version, Failure> {
        match self.config.upstream_version {
            UpstreamVersion::Fixed(v) => Ok(v),
            UpstreamVersion::Auto => {
                let addr = self.upstream_addr().await?;
                let card = self.cards.get_or_fail(addr, true).await?;
                Ok(card.version)
            }
        }
    }

    // A2A 1.N versions (area: versions).
    /// The upstream's precise version: `upstream.version` when it names one,
    /// else read from its card ([`card::card_protocol`]).
    pub async fn upstream_protocol(&self) -> Result<crate::version::ProtocolVersion, Failure> {
        use crate::version::ProtocolVersion;
        if let Some(p) = self.config.upstream_protocol {
            return Ok(p);
        }
        match self.config.upstream_version {
            UpstreamVersion::Fixed(v) => Ok(ProtocolVersion::of(v)),
            UpstreamVersion::Auto => {
                let addr = self.upstream_addr().await?;
                let card = self.cards.get_or_fail(addr, true).await?;
                Ok(card::card_protocol(&card.json))
            }
        }
    }

    /// VersionNotSupported for a 1.N call newer than what is served for
    /// the agent ([`crate::route::refused_minor`]); 0.3 and 1.0 calls pass
    /// at once.
    pub async fn check_minor(&self, route: &crate::route::Route) -> Result<(), Failure> {
        if !crate::route::minor_matters(route) {
            return Ok(());
        }
        let up = Box::pin(self.upstream_protocol()).await?;
        match crate::route::refused_minor(route, up, self.config.newer_minor) {
            Some(served) => Err(Failure::VersionNotServed {
                requested: route.client_protocol,
                served,
            }),
            None => Ok(()),
        }
    }

    /// The request path relative to the public base path.
    pub fn relative_path<'a>(&self, path: &'a str) -> &'a str {
        let base = self.config.public_url.base_path.as_str();
        if base.is_empty() {
            return path;
        }
        match path.strip_prefix(base) {
            Some("") => "/",
            Some(rest) if rest.starts_with('/') => rest,
            _ => path,
        }
    }

    /// The upstream path (and query) for a relative path.
    pub fn upstream_path_and_query(&self, relative: &str, query: Option<&str>) -> String {
        let mut p = format!("{}{}", self.config.upstream.base_path, relative);
        if let Some(q) = query {
            p.push('?');
            p.push_str(q);
        }
        p
    }

    pub fn health(&self) -> LocalResponse {
        LocalResponse::json(200, json!({"status": "ok"}))
    }

    /// Ready when the upstream card can be had now (fresh in cache or refetched).
    pub async fn ready(&self) -> LocalResponse {
        let probe = async {
            let addr = self.upstream_addr().await?;
            self.cards.get_or_fail(addr, false).await
        };
        let r = probe.await;
        // Logged when it changes, not on every poll (crate::card::ReadyLog).
        let agent = &self.config.agent.name;
        self.cards.readiness.note(agent, r.as_ref().map(|_| ()));
        let mut body = match r {
            Ok(card) => (
                200,
                json!({"status": "ready", "upstreamVersion": card.version.as_str()}),
            ),
            // Anyone who reaches the listener may ask: the reason is what a
            // client may be told (no address, no agent bytes); the detail
            // goes to the log.
            Err(f) => (
                503,
                json!({"status": "not ready", "reason": f.client_message(), "proxyReason": f.label()}),
            ),
        };
        if let Some(store) = self.store_report() {
            body.1["pushStore"] = store;
        }
        LocalResponse::json(body.0, body.1)
    }

    /// What `/ready` says of the push store: its backend, whether
    /// instances share it, and for a shared one whether it answers (its
    /// being away does not make the instance unready: what does not need
    /// it goes on, proxy/README.md "Several instances").
    fn store_report(&self) -> Option<Value> {
        if let Some(i) = self.instances.lock().ok()?.as_ref() {
            return Some(i.report());
        }
        let p = self.push.as_ref()?;
        Some(match p.store.shared() {
            Some(_) => json!({"backend": "postgres", "shared": true}),
            None => json!({"backend": "embedded", "shared": false}),
        })
    }

    /// This agent's metrics, labelled with its name (`agent`).
    pub fn metrics_text(&self) -> LocalResponse {
        let text = self.metrics_body();
        let name = self.config.agent.name.as_str();
        let mut own = String::new();
        Metrics::render_process(&mut own);
        crate::metrics::exposition(crate::metrics::label_agents(&[(name, &text), ("", &own)]))
    }

    /// The request and push counters, without the `agent` label.
    pub fn metrics_body(&self) -> String {
        let mut text = self.metrics.render();
        if let Some(p) = &self.push {
            p.stats.render(&mut text);
        }
        if let Some(i) = self.instances.lock().ok().as_ref().and_then(|i| i.as_ref()) {
            i.render(&mut text);
        }
        text
    }
}

/// How the proxy asks a v0.3 agent for one task: the binding the client's
/// call came in on (the agent serves it), at the URL of the agent's
/// interface (its host, port and path: crate::card::endpoints).
#[derive(Debug, Clone)]
pub enum TaskFetch {
    /// `tasks/get` posted to this URL (its path the one posted to).
    JsonRpc(crate::config::HttpUrl),
    /// `GET /v1/tasks/{id}` under this URL (the agent's HTTP+JSON
    /// interface).
    Rest(crate::config::HttpUrl),
}

/// What a v0.3 agent said of a task, asked by the proxy.
pub enum FetchedTask {
    /// The task, in v1.0 shape (also recorded in the task index).
    Task(Value),
    /// The agent does not know it.
    NotFound,
    /// No usable answer (down, another error, nonsense).
    Unknown,
}

/// The task index `config` asks for, its scopes keyed with `key`.
fn task_index(config: &Config, key: crate::tasks::ScopeKey) -> crate::tasks::TaskIndex {
    let l = &config.list_tasks;
    if l.refresh_max_ignored {
        tracing::warn!("limits.list_refresh_max is no longer used and is ignored: ListTasks asks the agent for each listed task with the caller's credentials");
    }
    crate::tasks::TaskIndex::new(
        l.mode == crate::config::ListTasksMode::PerCaller,
        config.limits.list_index,
        key,
        &l.identity_headers,
    )
}

/// Asks the agent for one listed task (by id, with a `historyLength`):
/// the task in v1.0 shape, or `None` when the agent gave none.
pub type FetchListed = Arc<
    dyn Fn(
            String,
            Option<i64>,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<Value>> + Send>>
        + Send
        + Sync,
>;

/// ListTasks with `list_tasks = "off"`: what a v0.3 agent answers.
pub fn list_tasks_unsupported() -> Failure {
    Failure::Translate {
        code: translate::code::ErrorCode::UnsupportedOperation.code(),
        message: "ListTasks is not supported: the agent speaks A2A v0.3, which has no task list"
            .into(),
    }
}

impl App {
    /// A v1.0 `ListTasks` toward a v0.3 agent, answered per caller: the
    /// caller's own entries of the task index select the page, whose tasks
    /// are then asked of the agent with `fetch` (the caller's credentials),
    /// at most `limits.list_fetch_parallel` at once, all within one
    /// `limits.connect_timeout_ms` + `read_timeout_ms`; what the agent does
    /// not give by then is left out. The `result` of the answer.
    pub async fn list_tasks(
        &self,
        caller: &crate::tasks::Caller,
        params: Option<&Value>,
        fetch: FetchListed,
    ) -> Result<Value, Failure> {
        if !self.tasks.enabled() {
            return Err(list_tasks_unsupported());
        }
        let page = self.tasks.page(caller.scope, params)?;
        let history = page.history_length();
        let gate = Arc::new(tokio::sync::Semaphore::new(
            self.config.limits.list_fetch_parallel,
        ));
        let mut set = tokio::task::JoinSet::new();
        for (i, id) in page.ids.iter().enumerate() {
            let (fetch, gate, id) = (fetch.clone(), gate.clone(), id.clone());
            set.spawn(async move {
                let _permit = gate.acquire_owned().await.ok()?;
                let task = fetch(id.clone(), history).await?;
                let same = task.get("id").and_then(Value::as_str) == Some(id.as_str());
                same.then_some((i, task))
            });
        }
        let mut fetched = vec![None; page.ids.len()];
        // The whole page within one connect and read timeout: what the
        // agent has not given by then is left out (the rest are dropped).
        let limits = &self.config.limits;
        let deadline = tokio::time::Instant::now() + limits.connect_timeout + limits.read_timeout;
        while let Ok(Some(r)) = tokio::time::timeout_at(deadline, set.join_next()).await {
            if let Ok(Some((i, task))) = r {
                // What the agent says now, for this caller (in place:
                // crate::tasks::TaskIndex::refresh_task).
                self.tasks.refresh_task(caller.scope, &task);
                fetched[i] = Some(task);
            }
        }
        Ok(page.answer(fetched))
    }

    /// [`App::list_tasks`] asking the agent over the client's binding
    /// (`via`), with the caller's credential headers.
    pub async fn list_tasks_via(
        self: &Arc<Self>,
        caller: &crate::tasks::Caller,
        params: Option<&Value>,
        via: TaskFetch,
    ) -> Result<Value, Failure> {
        let (app, headers) = (self.clone(), Arc::new(caller.headers.clone()));
        let fetch: FetchListed = Arc::new(move |id, history| {
            let (app, via, headers) = (app.clone(), via.clone(), headers.clone());
            Box::pin(async move {
                match app.fetch_v03_task(&via, &id, &headers, history).await {
                    FetchedTask::Task(t) => Some(t),
                    FetchedTask::NotFound | FetchedTask::Unknown => None,
                }
            })
        });
        self.list_tasks(caller, params, fetch).await
    }

    /// The current state of task `id`, asked of the v0.3 agent with the
    /// `credentials` headers (and `historyLength` when given), in v1.0 shape.
    pub async fn fetch_v03_task(
        &self,
        via: &TaskFetch,
        id: &str,
        credentials: &[(http::HeaderName, http::HeaderValue)],
        history: Option<i64>,
    ) -> FetchedTask {
        use crate::translation::RpcTranslation;
        let v03 = Version::V03;
        let asked = self.ask_task(v03, via, id, credentials, history).await;
        let task = match (via, asked) {
            (_, None) => return FetchedTask::Unknown,
            (TaskFetch::JsonRpc(_), Some((200, answer))) => {
                let rpc = RpcTranslation {
                    client: Version::V10,
                    upstream: v03,
                    method: "GetTask".into(),
                    id: None,
                    drop_history: false,
                    asked_config: None,
                    exact_id: None,
                };
                let Ok(mut v10) = serde_json::from_slice::<Value>(&rpc.response(&answer)) else {
                    return FetchedTask::Unknown;
                };
                if v10.pointer("/error/code").and_then(Value::as_i64)
                    == Some(translate::code::ErrorCode::TaskNotFound.code())
                {
                    return FetchedTask::NotFound;
                }
                v10.get_mut("result").map(Value::take)
            }
            (TaskFetch::Rest(_), Some((404, _))) => return FetchedTask::NotFound,
            (TaskFetch::Rest(_), Some((200, answer))) => {
                let t = crate::rest::RestTranslation {
                    client: Version::V10,
                    upstream: v03,
                    op: translate::method::Method::GetTask,
                    drop_history: false,
                    asked_config: None,
                };
                serde_json::from_slice::<Value>(&t.response(200, &answer).1).ok()
            }
            (_, Some(_)) => return FetchedTask::Unknown,
        };
        match task.filter(|t| t.get("id").and_then(Value::as_str) == Some(id)) {
            Some(t) => FetchedTask::Task(t),
            None => FetchedTask::Unknown,
        }
    }

    /// Task `id` as the v1.0 agent has it now (`GetTask`), asked with the
    /// caller's `credentials` headers; `None` when it does not say.
    pub async fn fetch_v10_task(
        &self,
        via: &TaskFetch,
        id: &str,
        credentials: &[(http::HeaderName, http::HeaderValue)],
    ) -> Option<translate::v10::task::Task> {
        let (status, answer) = self
            .ask_task(Version::V10, via, id, credentials, None)
            .await?;
        if status != 200 {
            return None;
        }
        let mut v: Value = serde_json::from_slice(&answer).ok()?;
        let task = match via {
            TaskFetch::JsonRpc(_) => v.get_mut("result")?.take(),
            TaskFetch::Rest(_) => v,
        };
        let task: translate::v10::task::Task = serde_json::from_value(task).ok()?;
        (task.id == id).then_some(task)
    }

    /// The agent's (of `version`) answer to its GetTask of `id` `via` a
    /// binding, sent with the `credentials` headers and a positive
    /// `history` as its `historyLength`: status and body; `None` when it
    /// could not be asked.
    async fn ask_task(
        &self,
        version: Version,
        via: &TaskFetch,
        id: &str,
        credentials: &[(http::HeaderName, http::HeaderValue)],
        history: Option<i64>,
    ) -> Option<(u16, Bytes)> {
        let url = match via {
            TaskFetch::JsonRpc(u) | TaskFetch::Rest(u) => u,
        };
        let addr = self.resolve_addr(url).await.ok()?;
        // The interface's own authority as the `Host` (crate::card::cache).
        let host = http::HeaderValue::try_from(url.authority()).ok()?;
        let credentials: Vec<_> = std::iter::once((http::header::HOST, host))
            .chain(
                credentials
                    .iter()
                    .filter(|(k, _)| *k != http::header::HOST)
                    .cloned(),
            )
            .collect();
        let credentials = credentials.as_slice();
        let history = history.filter(|h| *h > 0);
        let answer = match via {
            TaskFetch::JsonRpc(u) => {
                let path = if u.base_path.is_empty() {
                    "/"
                } else {
                    u.base_path.as_str()
                };
                let method = translate::method::Method::GetTask.name(version)?;
                let mut params = json!({ "id": id });
                if let Some(h) = history {
                    params["historyLength"] = json!(h);
                }
                let get = json!({"jsonrpc": "2.0", "id": "a2a-proxy-task",
                    "method": method, "params": params});
                let body = Bytes::from(get.to_string());
                self.cards
                    .call_json_as(addr, "POST", path, version, Some(body), credentials)
                    .await
            }
            TaskFetch::Rest(u) => {
                let prefix = match version {
                    Version::V03 => "/v1",
                    Version::V10 => "",
                };
                let base = &u.base_path;
                // An id that is no path segment names no task to fetch.
                let id = crate::rest::path_segment(id).ok()?;
                let mut path = format!("{base}{prefix}/tasks/{id}");
                if let Some(h) = history {
                    path.push_str(&format!("?historyLength={h}"));
                }
                self.cards
                    .call_json_as(addr, "GET", &path, version, None, credentials)
                    .await
            }
        };
        answer.ok()
    }
}
