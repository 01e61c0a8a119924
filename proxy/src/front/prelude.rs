//! Work before a cross-version call is sent: ListTasks answered here,
//! the first Task of a v1.0 subscription to a v0.3 agent, the push fold
//! seeded from the agent's current task.

use std::sync::Arc;

use bytes::Bytes;
use pingora::Result;
use serde_json::Value;

use crate::app::{App, LocalResponse};
use crate::error::Failure;
use crate::route::{self};

/// A v1.0 client's `ListTasks` toward a v0.3 agent, answered per caller
/// (`caller`: the request's credentials) from [`crate::tasks::TaskIndex`],
/// the page's tasks asked of the agent with those credentials.
pub(crate) async fn list_tasks_locally(
    app: &Arc<App>,
    path: &str,
    body: &[u8],
    id: Option<Value>,
    caller: &crate::tasks::Caller,
) -> std::result::Result<LocalResponse, Failure> {
    let req: Value = serde_json::from_slice(body).map_err(|e| Failure::Translate {
        code: -32700,
        message: format!("invalid JSON: {e}"),
    })?;
    let via = crate::app::TaskFetch::JsonRpc(app.upstream_path_and_query(path, None));
    let result = app.list_tasks_via(caller, req.get("params"), via).await?;
    let env = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
    Ok(LocalResponse::json(200, env))
}

/// What the proxy learned of a task, asking a v0.3 agent for it, before
/// subscribing a v1.0 client to it.
pub(crate) enum FirstTask {
    /// The task as the stream's first event (`data:` frame), and why it
    /// cannot be subscribed to when it is finished (v1.0 refuses that).
    Known(Bytes, Option<String>),
    /// The agent does not know the task of this id.
    NotFound(String),
}

impl FirstTask {
    /// The task (v1.0 JSON) as a first event, framed by `frame`.
    pub(crate) fn of(task: &Value, frame: impl FnOnce(&Value) -> Value) -> FirstTask {
        let state = task.pointer("/status/state").and_then(Value::as_str);
        let terminal = state.filter(|s| crate::tasks::is_terminal(s));
        let refusal = terminal.map(|state| {
            let id = task.get("id").and_then(Value::as_str).unwrap_or_default();
            format!("task {id} is in the terminal state {state}: there is nothing to subscribe to")
        });
        let event = frame(task);
        FirstTask::Known(Bytes::from(format!("data: {event}\n\n")), refusal)
    }

    /// The answer to the subscribe when the proxy gives it itself: a
    /// finished task is UnsupportedOperation, an unknown one TaskNotFound;
    /// otherwise the first frame to send.
    pub(crate) fn refusal(self) -> Result<Bytes, Failure> {
        use translate::code::ErrorCode;
        match self {
            FirstTask::Known(frame, None) => Ok(frame),
            FirstTask::Known(_, Some(message)) => Err(Failure::Translate {
                code: ErrorCode::UnsupportedOperation.code(),
                message,
            }),
            FirstTask::NotFound(task_id) => Err(Failure::Translate {
                code: ErrorCode::TaskNotFound.code(),
                message: format!("task not found: {task_id}"),
            }),
        }
    }
}

/// The current task, fetched with a v0.3 `tasks/get`, for a v1.0
/// SubscribeToTask stream; `None` when the agent does not say (its own
/// answer to the subscribe then tells the client why).
pub(crate) async fn first_task_frame(
    app: &App,
    path: &str,
    body: &[u8],
    id: Option<Value>,
    caller: &[(http::HeaderName, http::HeaderValue)],
) -> Option<FirstTask> {
    let req: Value = serde_json::from_slice(body).ok()?;
    let task_id = req.pointer("/params/id")?.as_str()?.to_string();
    let via = crate::app::TaskFetch::JsonRpc(app.upstream_path_and_query(path, None));
    first_task(
        app,
        &via,
        &task_id,
        caller,
        |task| serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}}),
    )
    .await
}

/// What [`first_task_frame`] and [`first_task_frame_rest`] share: the
/// task fetched `via` a binding with the `caller`'s end-to-end headers
/// (crate::forward), its event framed by `frame`.
pub(crate) async fn first_task(
    app: &App,
    via: &crate::app::TaskFetch,
    task_id: &str,
    caller: &[(http::HeaderName, http::HeaderValue)],
    frame: impl FnOnce(&Value) -> Value,
) -> Option<FirstTask> {
    use crate::app::FetchedTask;
    match app.fetch_v03_task(via, task_id, caller, None).await {
        FetchedTask::Task(task) => Some(FirstTask::of(&task, frame)),
        FetchedTask::NotFound => Some(FirstTask::NotFound(task_id.to_string())),
        FetchedTask::Unknown => {
            tracing::debug!("could not fetch the task for the first SubscribeToTask event");
            None
        }
    }
}

/// A config a v0.3 client creates for a task a v1.0 agent already runs:
/// its fold starts at the task as the agent has it now (fetched before the
/// agent learns the callback, so before its first push), not at nothing.
pub(crate) async fn seed_push_fold(
    app: &App,
    push: &crate::push::layer::Push,
    op: route::Operation,
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

/// True when the first `data:` line of translated SSE output is a v1.0
/// event carrying a whole Task.
/// Whether a JSON-RPC answer is an error.
pub(crate) fn answer_is_error(out: &[u8]) -> bool {
    serde_json::from_slice::<Value>(out)
        .map(|v| v.get("error").is_some())
        .unwrap_or(true)
}

/// The REST twin of [`first_task_frame`]: the v0.3 agent's task over its
/// REST GetTask, as the first v1.0 `StreamResponse` event.
/// Also tells a terminal task (a v0.3 REST agent breaks off such a stream
/// without a word, a2a-python 0.3 does) and an unknown one (404).
pub(crate) async fn first_task_frame_rest(
    app: &App,
    task_id: &str,
    caller: &[(http::HeaderName, http::HeaderValue)],
) -> Option<FirstTask> {
    let via = crate::app::TaskFetch::Rest;
    first_task(
        app,
        &via,
        task_id,
        caller,
        |task| serde_json::json!({ "task": task }),
    )
    .await
}
