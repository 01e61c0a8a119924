//! Work before a cross-version call is sent: ListTasks answered here,
//! the first Task of a v1.0 subscription to a v0.3 agent, the push fold
//! seeded from the agent's current task.

use std::sync::Arc;

use bytes::Bytes;
use pingora::Result;
use serde_json::Value;

use crate::app::{App, LocalResponse};
use crate::error::Failure;

/// A v1.0 client's `ListTasks` toward a v0.3 agent, answered per caller
/// (`caller`: the request's credentials) from [`crate::tasks::TaskIndex`],
/// the page's tasks asked of the agent with those credentials (`url`:
/// the agent's JSON-RPC interface, the path posted to; its HTTP+JSON one
/// when its card lists no JSON-RPC: `App::task_fetch_served`).
pub(crate) async fn list_tasks_locally(
    app: &Arc<App>,
    url: crate::config::HttpUrl,
    body: &[u8],
    id: Option<Value>,
    caller: &crate::tasks::Caller,
) -> std::result::Result<LocalResponse, Failure> {
    let req: Value = serde_json::from_slice(body).map_err(|e| Failure::Translate {
        code: -32700,
        message: format!("invalid JSON: {e}"),
    })?;
    let via = app
        .task_fetch_served(crate::app::TaskFetch::JsonRpc(url))
        .await;
    let result = app.list_tasks_via(caller, req.get("params"), via).await?;
    let env = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
    Ok(LocalResponse::json(200, env))
}

/// A first Task event and its relayed subscription.
pub(crate) type FirstFrame = (Bytes, Option<crate::tasks::relay::Subscription>);

/// The first event of a v1.0 subscription to a v0.3 agent's task
/// ([`crate::call::Prelude::FirstTask`]): the task fetched `via` a binding
/// with the `caller`'s end-to-end headers (crate::forward), framed by
/// `frame` as a `data:` event (the call's codec, crate::codec); a finished or unknown task refused
/// ([`crate::call::first_task_verdict`]); `None` when the agent does not
/// say (its own answer to the subscribe then tells the client why). With
/// the frame, the relayed subscription that serves the subscriber should
/// the agent refuse to resubscribe an idle task (crate::tasks::relay):
/// opened before the task is asked, so nothing relayed meanwhile is
/// missed, and kept only when the agent answered this caller the task.
pub(crate) async fn first_task_frame(
    app: &App,
    via: &crate::app::TaskFetch,
    task_id: &str,
    caller: &[(http::HeaderName, http::HeaderValue)],
    frame: impl FnOnce(&Value) -> Bytes,
) -> Result<Option<FirstFrame>, Failure> {
    use crate::app::FetchedTask;
    use crate::call::TaskLookup;
    let mut sub = app.relay.subscribe(task_id);
    if let Some(s) = sub.as_mut() {
        // Known to the other instances before the task is asked.
        s.shared().await;
    }
    let lookup = match app.fetch_v03_task(via, task_id, caller, None).await {
        FetchedTask::Task(task) => TaskLookup::Found(task),
        FetchedTask::NotFound => TaskLookup::NotFound,
        FetchedTask::Unknown => {
            tracing::debug!("could not fetch the task for the first SubscribeToTask event");
            TaskLookup::Unknown
        }
    };
    let Some(task) = crate::call::first_task_verdict(task_id, lookup)? else {
        return Ok(None);
    };
    let mut sub = sub;
    if let Some(s) = sub.as_mut() {
        s.starts_at(&task);
    }
    let event = frame(&task);
    Ok(Some((event, sub)))
}

/// A config a v0.3 client creates for a task a v1.0 agent already runs:
/// its fold starts at the task as the agent has it now (fetched before the
/// agent learns the callback, so before its first push), not at nothing.
pub(crate) async fn seed_push_fold(
    app: &App,
    push: &crate::push::layer::Push,
    op: translate::method::Method,
    pending: &mut crate::push::layer::Pending,
    via: crate::app::TaskFetch,
    caller: &[(http::HeaderName, http::HeaderValue)],
) {
    let Some(task_id) = crate::push::layer::Push::seed_task(op, pending) else {
        return;
    };
    match app.fetch_v10_task(&via, task_id, caller).await {
        Some(task) => push.seed_snapshot(pending, task).await,
        None => tracing::debug!("no current task to start a v0.3 push snapshot from"),
    }
}

/// Whether a JSON-RPC answer is an error.
pub(crate) fn answer_is_error(out: &[u8]) -> bool {
    serde_json::from_slice::<Value>(out)
        .map(|v| v.get("error").is_some())
        .unwrap_or(true)
}
