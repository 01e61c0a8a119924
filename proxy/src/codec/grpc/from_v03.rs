//! Tables for v0.3 callers of a v1.0 gRPC agent.

use super::*;
use proto::{convert_v03 as c03, convert_v03_rpc as r03, convert_v10 as c10};
use proto::{convert_v10_rpc as r10, v03 as p03, v10 as p10};
use translate::{event, params, task, v03 as m03, v10 as m10};

fn inline_push(m: &m03::params::MessageSendParams) -> bool {
    m.configuration
        .as_ref()
        .is_some_and(|c| c.push_notification_config.is_some())
}

pub const SEND_MESSAGE: Unary<
    m03::params::MessageSendParams,
    p10::SendMessageRequest,
    p10::SendMessageResponse,
    m10::params::SendMessageResponse,
    m03::event::StreamEvent,
    p03::SendMessageResponse,
> = Unary {
    method: Method::SendMessage,
    path: "/lf.a2a.v1.A2AService/SendMessage",
    request: |m| r10::send_request_to_pb(params::to_v10(m)?),
    decode: r10::send_response_from_pb,
    translate: params::send_result_to_v03,
    encode: r03::send_response_to_pb,
    no_history: never,
    strip_history: keep,
    inline_push,
};

pub const GET_TASK: Unary<
    m03::params::TaskQueryParams,
    p10::GetTaskRequest,
    p10::Task,
    m10::task::Task,
    m03::task::Task,
    p03::Task,
> = Unary {
    method: Method::GetTask,
    path: "/lf.a2a.v1.A2AService/GetTask",
    request: |m| r10::get_task_to_pb(params::get_task_to_v10(m)?),
    decode: c10::task_from_pb,
    translate: task::to_v03,
    encode: c03::task_to_pb,
    no_history: never,
    strip_history: keep,
    inline_push: never,
};

pub const CANCEL_TASK: Unary<
    m03::params::TaskIdParams,
    p10::CancelTaskRequest,
    p10::Task,
    m10::task::Task,
    m03::task::Task,
    p03::Task,
> = Unary {
    method: Method::CancelTask,
    path: "/lf.a2a.v1.A2AService/CancelTask",
    request: |m| r10::cancel_task_to_pb(params::cancel_to_v10(m)?),
    decode: c10::task_from_pb,
    translate: task::to_v03,
    encode: c03::task_to_pb,
    no_history: never,
    strip_history: keep,
    inline_push: never,
};

pub const SEND_STREAMING: Streaming<
    m03::params::MessageSendParams,
    p10::SendMessageRequest,
    p10::StreamResponse,
    m10::event::StreamResponse,
    m03::event::StreamEvent,
    p03::StreamResponse,
> = Streaming {
    method: Method::SendStreamingMessage,
    request: |m| r10::send_request_to_pb(params::to_v10(m)?),
    open: |ch, r| {
        Box::pin(async move {
            p10::a2a_service_client::A2aServiceClient::new(ch)
                .send_streaming_message(r)
                .await
        })
    },
    decode: c10::stream_from_pb,
    is_final: never,
    translate: event::stream_to_v03,
    encode: c03::stream_to_pb,
    inline_push,
};

pub const SUBSCRIBE: Streaming<
    m03::params::TaskIdParams,
    p10::SubscribeToTaskRequest,
    p10::StreamResponse,
    m10::event::StreamResponse,
    m03::event::StreamEvent,
    p03::StreamResponse,
> = Streaming {
    method: Method::SubscribeToTask,
    request: |m| r10::subscribe_to_pb(params::subscribe_to_v10(m)?),
    open: |ch, r| {
        Box::pin(async move {
            p10::a2a_service_client::A2aServiceClient::new(ch)
                .subscribe_to_task(r)
                .await
        })
    },
    decode: c10::stream_from_pb,
    is_final: never,
    translate: event::stream_to_v03,
    encode: c03::stream_to_pb,
    inline_push: never,
};
