//! The A2A decisions of one call, made once for every binding.
//!
//! Each binding (the HTTP front's JSON-RPC and HTTP+JSON, the gRPC bridge)
//! reads its own bytes into an operation and the two versions, asks
//! [`Plan::new`] what the call needs, and applies the answer. No binding
//! asks "is this ListTasks toward a v0.3 agent?" itself: the plan says
//! whether the proxy answers locally, what happens before the call is sent
//! (the first Task of a v1.0 subscription), whether the push layer takes
//! part, whether the answer's tasks are recorded for ListTasks, and whether
//! the answer is a card the proxy shapes.

use serde_json::Value;

use crate::error::Failure;
use crate::push::layer::Push;
use crate::version::Version;
use translate::method::Method;

/// What the proxy does for one call, decided from its operation and the
/// client's and the upstream's versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub op: Method,
    pub client: Version,
    pub upstream: Version,
    /// Answered here without calling the agent.
    pub local: Option<Local>,
    /// Done before the call is sent.
    pub prelude: Option<Prelude>,
    /// How the push layer takes part.
    pub push: PushStep,
    /// The answer's tasks are recorded for the caller (ListTasks lists them).
    pub record_tasks: bool,
    /// The answer is an agent card: its interface URLs point at the proxy
    /// and it is shaped for the client's version.
    pub card: bool,
}

/// A call the proxy answers itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Local {
    /// A v1.0 ListTasks toward a v0.3 agent (which has no list): the
    /// caller's tasks seen here, each asked of the agent with the caller's
    /// credentials ([`crate::tasks`]).
    ListTasks,
}

/// Work before the call is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prelude {
    /// A v1.0 SubscribeToTask toward a v0.3 agent: v1.0 streams start with
    /// the Task, v0.3 resubscriptions with updates. The task is asked of
    /// the agent first; a finished or unknown one is refused
    /// ([`first_task_verdict`]), else it goes ahead of the stream.
    FirstTask,
}

/// The push layer's part in a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushStep {
    /// None: the call carries no push config, or no layer intercepts it.
    None,
    /// The client's configs are swapped for the proxy's callback before
    /// the call and restored in its answer.
    Intercept,
    /// As `Intercept`, and a successful delete is forgotten afterwards.
    InterceptDelete,
}

impl Plan {
    /// The plan of `op` from a `client` to an `upstream`, with the push
    /// layer when one runs.
    pub fn new(op: Method, client: Version, upstream: Version, push: Option<&Push>) -> Plan {
        let cross = |c, u| client == c && upstream == u;
        let v10_to_v03 = cross(Version::V10, Version::V03);
        let local = (v10_to_v03 && op == Method::ListTasks).then_some(Local::ListTasks);
        let prelude = (v10_to_v03 && op == Method::SubscribeToTask).then_some(Prelude::FirstTask);
        let intercepts = push.is_some_and(|p| p.intercepts(client, upstream))
            && crate::push::rewrite::concerns(op);
        let push = match (intercepts, op) {
            (false, _) => PushStep::None,
            (true, Method::DeletePushConfig) => PushStep::InterceptDelete,
            (true, _) => PushStep::Intercept,
        };
        Plan {
            op,
            client,
            upstream,
            local,
            prelude,
            push,
            record_tasks: v10_to_v03,
            card: op == Method::GetExtendedCard,
        }
    }

    /// The client's and the upstream's versions differ.
    pub fn translates(&self) -> bool {
        self.client != self.upstream
    }

    /// A push-config call to an agent whose card says it has no push
    /// notifications (`capabilities.pushNotifications: false`):
    /// PushNotificationNotSupported, as a v1.0 agent answers, instead of
    /// whatever the agent makes of it (a2a-sdk 0.3 answers an internal
    /// error). `agent_pushes`: what its card says, `None` when it says
    /// nothing (then the agent decides).
    pub fn refuse_push_config(&self, agent_pushes: Option<bool>) -> Option<Failure> {
        (self.asks_push_config() && agent_pushes == Some(false)).then(|| Failure::Translate {
            code: translate::code::ErrorCode::PushNotificationNotSupported.code(),
            message: "push notifications are not supported by this agent".into(),
        })
    }

    /// A cross-version push-config call (see [`Self::refuse_push_config`]).
    pub fn asks_push_config(&self) -> bool {
        let config_op = matches!(
            self.op,
            Method::CreatePushConfig
                | Method::GetPushConfig
                | Method::ListPushConfigs
                | Method::DeletePushConfig
        );
        config_op && self.translates()
    }

    /// The push layer swaps this call's configs.
    pub fn intercepts_push(&self) -> bool {
        self.push != PushStep::None
    }
}

/// What the proxy learned of a task before subscribing a v1.0 client to
/// it ([`Prelude::FirstTask`]), whatever binding asked.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskLookup {
    /// The agent's task (v1.0 JSON).
    Found(Value),
    /// The agent does not know a task of this id.
    NotFound,
    /// The agent gave no usable answer: its own answer to the subscribe
    /// tells the client.
    Unknown,
}

/// The v1.0 answer to subscribing to a task: a finished task is refused
/// with UnsupportedOperation and an unknown one with TaskNotFound, as a
/// v1.0 server does; otherwise the task to send first (`None` when the
/// agent did not say).
pub fn first_task_verdict(task_id: &str, lookup: TaskLookup) -> Result<Option<Value>, Failure> {
    use translate::code::ErrorCode;
    match lookup {
        TaskLookup::Found(task) => {
            let state = task.pointer("/status/state").and_then(Value::as_str);
            match state.filter(|s| crate::tasks::is_terminal(s)) {
                Some(state) => Err(Failure::Translate {
                    code: ErrorCode::UnsupportedOperation.code(),
                    message: format!(
                        "task {task_id} is in the terminal state {state}: there is nothing to subscribe to"
                    ),
                }),
                None => Ok(Some(task)),
            }
        }
        TaskLookup::NotFound => Err(Failure::Translate {
            code: ErrorCode::TaskNotFound.code(),
            message: format!("task not found: {task_id}"),
        }),
        TaskLookup::Unknown => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Method as Op;
    use Version::{V03, V10};

    #[test]
    fn list_tasks_is_local_only_from_v10_to_v03() {
        for (c, u) in [(V10, V03), (V03, V10), (V10, V10), (V03, V03)] {
            let p = Plan::new(Op::ListTasks, c, u, None);
            assert_eq!(p.local.is_some(), (c, u) == (V10, V03), "{c} -> {u}");
            assert_eq!(p.record_tasks, (c, u) == (V10, V03));
        }
        assert_eq!(Plan::new(Op::GetTask, V10, V03, None).local, None);
    }

    #[test]
    fn first_task_only_for_a_v10_subscription_to_a_v03_agent() {
        let p = Plan::new(Op::SubscribeToTask, V10, V03, None);
        assert_eq!(p.prelude, Some(Prelude::FirstTask));
        for (op, c, u) in [
            (Op::SubscribeToTask, V03, V10),
            (Op::SubscribeToTask, V10, V10),
            (Op::SendStreamingMessage, V10, V03),
        ] {
            assert_eq!(Plan::new(op, c, u, None).prelude, None);
        }
    }

    #[test]
    fn no_push_layer_no_interception() {
        let p = Plan::new(Op::CreatePushConfig, V10, V03, None);
        assert_eq!(p.push, PushStep::None);
        assert!(Plan::new(Op::GetExtendedCard, V03, V03, None).card);
    }

    #[test]
    fn push_configs_refused_only_when_the_card_says_no() {
        let p = Plan::new(Op::ListPushConfigs, V10, V03, None);
        assert!(p.refuse_push_config(Some(false)).is_some());
        assert!(p.refuse_push_config(None).is_none());
        assert!(p.refuse_push_config(Some(true)).is_none());
        let same = Plan::new(Op::ListPushConfigs, V10, V10, None);
        assert!(
            same.refuse_push_config(Some(false)).is_none(),
            "the agent's own"
        );
        let send = Plan::new(Op::SendMessage, V10, V03, None);
        assert!(send.refuse_push_config(Some(false)).is_none());
    }

    #[test]
    fn verdicts() {
        let working = serde_json::json!({"id": "t", "status": {"state": "TASK_STATE_WORKING"}});
        let done = serde_json::json!({"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}});
        let found = first_task_verdict("t", TaskLookup::Found(working.clone()));
        assert_eq!(found.ok().flatten(), Some(working));
        let code = |r: Result<Option<Value>, Failure>| match r {
            Err(Failure::Translate { code, .. }) => code,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert_eq!(
            code(first_task_verdict("t", TaskLookup::Found(done))),
            -32004
        );
        assert_eq!(code(first_task_verdict("t", TaskLookup::NotFound)), -32001);
        assert!(matches!(
            first_task_verdict("t", TaskLookup::Unknown),
            Ok(None)
        ));
    }
}
