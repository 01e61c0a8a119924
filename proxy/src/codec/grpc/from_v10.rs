//! Tables for v1.0 callers of a v0.3 gRPC agent.

use super::*;
use proto::{convert_v03 as c03, convert_v03_rpc as r03, convert_v10 as c10};
use proto::{convert_v10_rpc as r10, v03 as p03, v10 as p10};
use translate::{event, params, task, v03 as m03, v10 as m10};

fn inline_push(m: &m10::params::SendMessageRequest) -> bool {
    m.configuration
        .as_ref()
        .is_some_and(|c| c.task_push_notification_config.is_some())
}

pub const SEND_MESSAGE: Unary<
    m10::params::SendMessageRequest,
    p03::SendMessageRequest,
    p03::SendMessageResponse,
    m03::event::StreamEvent,
    m10::params::SendMessageResponse,
    p10::SendMessageResponse,
> = Unary {
    method: Method::SendMessage,
    path: "/a2a.v1.A2AService/SendMessage",
    request: |m| r03::send_params_to_pb(params::to_v03(m)?),
    decode: r03::send_response_from_pb,
    translate: params::send_result_to_v10,
    encode: r10::send_response_to_pb,
    no_history: |m| {
        m.configuration
            .as_ref()
            .is_some_and(|c| c.history_length == Some(0))
    },
    strip_history: |r| {
        if let m10::params::SendMessageResponse::Task(t) = r {
            t.history = None;
        }
    },
    inline_push,
};

pub const GET_TASK: Unary<
    m10::params::GetTaskRequest,
    p03::GetTaskRequest,
    p03::Task,
    m03::task::Task,
    m10::task::Task,
    p10::Task,
> = Unary {
    method: Method::GetTask,
    path: "/a2a.v1.A2AService/GetTask",
    request: |m| r03::get_task_to_pb(params::get_task_to_v03(m)?),
    decode: c03::task_from_pb,
    translate: task::to_v10,
    encode: c10::task_to_pb,
    no_history: |m| m.history_length == Some(0),
    strip_history: |t| t.history = None,
    inline_push: never,
};

pub const CANCEL_TASK: Unary<
    m10::params::CancelTaskRequest,
    p03::CancelTaskRequest,
    p03::Task,
    m03::task::Task,
    m10::task::Task,
    p10::Task,
> = Unary {
    method: Method::CancelTask,
    path: "/a2a.v1.A2AService/CancelTask",
    request: |m| r03::cancel_task_to_pb(params::cancel_to_v03(m)?),
    decode: c03::task_from_pb,
    translate: task::to_v10,
    encode: c10::task_to_pb,
    no_history: never,
    strip_history: keep,
    inline_push: never,
};

fn is_final(e: &m03::event::StreamEvent) -> bool {
    matches!(e, m03::event::StreamEvent::StatusUpdate(u) if u.is_final)
}

pub const SEND_STREAMING: Streaming<
    m10::params::SendMessageRequest,
    p03::SendMessageRequest,
    p03::StreamResponse,
    m03::event::StreamEvent,
    m10::event::StreamResponse,
    p10::StreamResponse,
> = Streaming {
    method: Method::SendStreamingMessage,
    request: |m| r03::send_params_to_pb(params::to_v03(m)?),
    open: |ch, r| {
        Box::pin(async move {
            p03::a2a_service_client::A2aServiceClient::new(ch)
                .send_streaming_message(r)
                .await
        })
    },
    decode: c03::stream_from_pb,
    is_final,
    translate: event::stream_to_v10,
    encode: c10::stream_to_pb,
    inline_push,
};

pub const SUBSCRIBE: Streaming<
    m10::params::SubscribeToTaskRequest,
    p03::TaskSubscriptionRequest,
    p03::StreamResponse,
    m03::event::StreamEvent,
    m10::event::StreamResponse,
    p10::StreamResponse,
> = Streaming {
    method: Method::SubscribeToTask,
    request: |m| r03::task_subscription_to_pb(params::subscribe_to_v03(m)?),
    open: |ch, r| {
        Box::pin(async move {
            p03::a2a_service_client::A2aServiceClient::new(ch)
                .task_subscription(r)
                .await
        })
    },
    decode: c03::stream_from_pb,
    is_final,
    translate: event::stream_to_v10,
    encode: c10::stream_to_pb,
    inline_push: never,
};
