//! Push configs on the way to the agent and back: a subscriber's config
//! registered and swapped for the proxy's callback before the call, its own
//! values restored in the answer, a deleted config forgotten.

use super::*;

impl Push {
    /// Rewrites an `op` request body (already in the `upstream` version) so
    /// a push config in it points at the proxy, and stores the subscriber's
    /// config. Returns the body to send and what the answer may restore.
    pub async fn register(
        &self,
        op: Method,
        client: Version,
        upstream: Version,
        body: &[u8],
    ) -> Result<(Option<Vec<u8>>, Pending), Failure> {
        let mut pending = Pending::default();
        let mut task = None;
        if rewrite::answers_configs(op) || op == Method::DeletePushConfig {
            task = task_param(op, upstream, body);
        }
        // A create is a config (v1.0's is flat: no member names it); a
        // message carries one only under a member naming it, in some
        // spelling (`names`).
        let carries_config =
            op == Method::CreatePushConfig || super::super::names::may_name_push_config(body);
        if rewrite::registers(op) && carries_config {
            // What the agent reads must be what is looked at here: a body
            // read another way by some parser is refused.
            let mut v = crate::json_strict::value(body)?;
            let renamed = match v.get_mut("params") {
                Some(p) => {
                    super::super::names::canonicalize(op, upstream, p).map_err(invalid_params)?
                }
                None => false,
            };
            let taken = self.take_config(op, client, upstream, &mut v).await?;
            if let Some(c) = &taken {
                let callback_id = c.callback_id.clone();
                if !c.task_id.is_empty() {
                    task = Some(c.task_id.clone());
                }
                pending.known.insert(callback_id.clone(), c.clone());
                pending.created = Some(callback_id);
            }
            if taken.is_some() || renamed {
                let out = serde_json::to_vec(&v).map_err(|e| Failure::Internal {
                    detail: e.to_string(),
                })?;
                if let Some(t) = task {
                    self.add_known(&t, &mut pending).await?;
                }
                return Ok((Some(out), pending));
            }
        }
        if let Some(t) = task {
            self.add_known(&t, &mut pending).await?;
        }
        Ok((None, pending))
    }

    /// Takes the push config out of a request `v` (in the `upstream`
    /// version), puts the proxy's callback in its place and stores the
    /// subscriber's config; `None` when the request holds no config.
    async fn take_config(
        &self,
        op: Method,
        client: Version,
        upstream: Version,
        v: &mut Value,
    ) -> Result<Option<PushConfig>, Failure> {
        let callback_id = crate::ids::random_id();
        let secret = crate::ids::random_id();
        let url = format!("{}{CALLBACK_PREFIX}{callback_id}", self.base);
        let Some(p) = v.get_mut("params") else {
            return Ok(None);
        };
        let reg =
            rewrite::take_registration(op, upstream, p, &url, &secret).map_err(invalid_params)?;
        let Some(Registration {
            task_id,
            config_id,
            url: original_url,
            token,
            auth,
        }) = reg
        else {
            return Ok(None);
        };
        self.policy
            .check_url(&original_url)
            .map_err(|r| invalid_params(r.0))?;
        let c = PushConfig {
            callback_id,
            task_id,
            config_id,
            original_url,
            token,
            auth,
            subscriber_version: client,
            upstream_version: upstream,
            callback_secret: secret,
            created: chrono::Utc::now().timestamp(),
            seed: None,
        };
        self.save(c.clone()).await.map_err(store_failure)?;
        self.stats.registered.fetch_add(1, Ordering::Relaxed);
        tracing::info!(task_id = %c.task_id, subscriber = %client, agent = %upstream, "push config intercepted");
        Ok(Some(c))
    }

    pub(super) async fn add_known(&self, task_id: &str, p: &mut Pending) -> Result<(), Failure> {
        // In-flight writes are read before the store: a write that ends in
        // between is then in the store (its entry goes only after it).
        let writing: Vec<PushConfig> = match self.writing.lock() {
            Ok(w) => w
                .values()
                .filter(|(_, c)| c.task_id == task_id)
                .map(|(_, c)| c.clone())
                .collect(),
            Err(_) => Vec::new(),
        };
        let (store, t) = (self.store.clone(), task_id.to_string());
        let list = blocking(move || store.configs_for_task(&t))
            .await
            .map_err(store_failure)?;
        for c in list {
            p.known.entry(c.callback_id.clone()).or_insert(c);
        }
        for c in writing {
            if !self.is_deleted(&c.callback_id) {
                p.known.insert(c.callback_id.clone(), c);
            }
        }
        Ok(())
    }

    /// Restores subscriber values in an answer (JSON-RPC envelope in the
    /// client's `version`) and records what the agent answered (config id,
    /// task id) in the background. `None` when nothing changed.
    pub fn restore(&self, version: Version, body: &[u8], p: &Pending) -> Option<Vec<u8>> {
        if p.known.is_empty() && !contains(body, CALLBACK_PREFIX.as_bytes()) {
            return None;
        }
        let mut v: Value = serde_json::from_slice(body).ok()?;
        self.restore_result(version, v.get_mut("result")?, p);
        serde_json::to_vec(&v).ok()
    }

    /// [`Push::restore`] for a REST answer: `body` is the result itself (in
    /// the client's REST shape).
    pub fn restore_rest(&self, version: Version, body: &[u8], p: &Pending) -> Option<Vec<u8>> {
        if p.known.is_empty() && !contains(body, CALLBACK_PREFIX.as_bytes()) {
            return None;
        }
        let mut v: Value = serde_json::from_slice(body).ok()?;
        self.restore_result(version, &mut v, p);
        serde_json::to_vec(&v).ok()
    }

    /// The lookup [`crate::translation::AskedConfig::settle`] needs: the
    /// config of a task with an agent-side id among those `p` knows
    /// (registered here), in the v1.0 answer shape; nothing without `p`
    /// (no push layer, or a call it did not see).
    pub fn known_config(p: Option<&Pending>) -> impl FnOnce(&str, &str) -> Option<Value> + '_ {
        move |task_id, config_id| {
            p?.known
                .values()
                .find(|c| c.task_id == task_id && c.config_id == config_id)
                .map(rewrite::v10_config)
        }
    }

    /// [`Push::register`] for params already parsed (the REST path builds
    /// them from the path and body): `params` is rewritten in place.
    pub async fn register_params(
        &self,
        op: Method,
        client: Version,
        upstream: Version,
        params: &mut Value,
    ) -> Result<Pending, Failure> {
        let body = serde_json::to_vec(&serde_json::json!({ "params": &*params })).map_err(|e| {
            Failure::Internal {
                detail: e.to_string(),
            }
        })?;
        let (changed, pending) = self.register(op, client, upstream, &body).await?;
        if let Some(b) = changed {
            let mut v: Value = serde_json::from_slice(&b).map_err(|e| Failure::Internal {
                detail: e.to_string(),
            })?;
            if let Some(p) = v.get_mut("params") {
                *params = p.take();
            }
        }
        Ok(pending)
    }

    pub(super) fn restore_result(&self, version: Version, result: &mut Value, p: &Pending) {
        let task = rewrite::task_of_answer(version, result);
        let r = rewrite::restore(result, version, &self.base, &p.known);
        if r.unknown > 0 {
            tracing::warn!(
                count = r.unknown,
                "answer names push callbacks this proxy does not know"
            );
        }
        let mut updates = Vec::new();
        for (cb, cid) in &r.seen {
            if let Some(c) = p.known.get(cb) {
                if !cid.is_empty() && c.config_id != *cid {
                    updates.push(PushConfig {
                        config_id: cid.clone(),
                        ..c.clone()
                    });
                }
            }
        }
        if let (Some(cb), Some(t)) = (&p.created, task) {
            if let Some(c) = p.known.get(cb).filter(|c| c.task_id.is_empty()) {
                updates.push(PushConfig {
                    task_id: t,
                    ..c.clone()
                });
            }
        }
        for c in updates {
            if self.is_deleted(&c.callback_id) {
                continue;
            }
            self.cache_put(&c);
            let n = self.writes.fetch_add(1, Ordering::Relaxed);
            let id = c.callback_id.clone();
            if let Ok(mut w) = self.writing.lock() {
                w.insert(id.clone(), (n, c.clone()));
            }
            let (store, writing) = (self.store.clone(), self.writing.clone());
            tokio::spawn(async move {
                if let Err(e) = blocking(move || store.put_config(&c)).await {
                    tracing::error!(error = %e, "recording a push config's agent-side id");
                }
                if let Ok(mut w) = writing.lock() {
                    if w.get(&id).is_some_and(|(m, _)| *m == n) {
                        w.remove(&id);
                    }
                }
            });
        }
    }

    /// Forgets a deleted config (after the agent confirmed the delete),
    /// before the delete is answered: its callback ids are tombstoned
    /// first, so a lookup racing with the delete cannot bring it back into
    /// the cache, then it leaves the store, so no instance on the store
    /// answers it once the client has heard it is gone.
    pub async fn forget(&self, task_id: String, config_id: String) {
        let me = self;
        {
            // In-flight writes first (see `add_known`).
            let same = |c: &PushConfig| c.task_id == task_id && c.config_id == config_id;
            let in_flight: Vec<String> = match me.writing.lock() {
                Ok(w) => w
                    .values()
                    .filter(|(_, c)| same(c))
                    .map(|(_, c)| c.callback_id.clone())
                    .collect(),
                Err(_) => Vec::new(),
            };
            let (store, t) = (me.store.clone(), task_id.clone());
            let mut ids: Vec<String> = match blocking(move || store.configs_for_task(&t)).await {
                Ok(list) => list
                    .into_iter()
                    .filter(|c| c.config_id == config_id)
                    .map(|c| c.callback_id)
                    .collect(),
                Err(e) => {
                    tracing::error!(error = %e, "forgetting a deleted push config");
                    return;
                }
            };
            ids.extend(in_flight);
            if let Ok(mut d) = me.deleted.lock() {
                if d.len() >= CACHE_LIMIT {
                    d.clear();
                }
                d.extend(ids.iter().cloned());
            }
            if let Ok(mut m) = me.cache.lock() {
                for id in &ids {
                    m.remove(id);
                }
            }
            for id in &ids {
                me.forget_snapshot(id);
            }
            let store = me.store.clone();
            if let Err(e) = blocking(move || store.delete_config(&task_id, &config_id)).await {
                tracing::error!(error = %e, "forgetting a deleted push config");
            }
        }
    }
}

/// InvalidParams with `message`, for the client.
pub fn invalid_params(message: String) -> Failure {
    Failure::Translate {
        code: translate::code::ErrorCode::InvalidParams.code(),
        message,
    }
}

/// The task id a push-config Get/List/Delete request names.
pub(super) fn task_param(op: Method, version: Version, body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let p = v.get("params")?;
    let key = match (op, version) {
        (_, Version::V10) => "taskId",
        (Method::CreatePushConfig, Version::V03) => "taskId",
        (_, Version::V03) => "id",
    };
    p.get(key)?.as_str().map(str::to_string)
}

/// The (task id, config id) a Delete request names (in `version`).
pub fn delete_target(version: Version, body: &[u8]) -> Option<(String, String)> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let p = v.get("params")?;
    let (t, c) = match version {
        Version::V03 => ("id", "pushNotificationConfigId"),
        Version::V10 => ("taskId", "id"),
    };
    Some((
        p.get(t)?.as_str()?.to_string(),
        p.get(c)?.as_str()?.to_string(),
    ))
}
