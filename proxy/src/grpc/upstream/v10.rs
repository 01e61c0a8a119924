//! The v1.0 gRPC service's RPCs as the bridge's JSON-RPC calls: each
//! method's request converted to its prost message, sent, and its answer
//! converted back to the JSON `result` (`proto::convert_v10*`).

use serde_json::Value;
use tonic::Status;
use translate::method::Method;
use translate::TranslateError;

use super::json::*;
use super::{Events, GrpcUpstream};
use crate::error::Failure;
use crate::grpc::bridge::CallMeta;
use crate::version::Version;

impl GrpcUpstream {
    /// [`GrpcUpstream::unary`] toward a v1.0 agent: its RPC for `method`.
    pub(super) async fn unary_v10(
        &self,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Result<Value, Status>, Failure> {
        use proto::convert_v10 as c;
        use proto::convert_v10_rpc as r;
        use proto::pbjson_types::Empty;
        unary_rpcs!(self, Version::V10, method, params, meta;
            SendMessage => "/lf.a2a.v1.A2AService/SendMessage",
                r::send_request_to_pb, r::send_response_from_pb;
            GetTask => "/lf.a2a.v1.A2AService/GetTask", r::get_task_to_pb, c::task_from_pb;
            ListTasks => "/lf.a2a.v1.A2AService/ListTasks",
                r::list_tasks_to_pb, r::list_tasks_response_from_pb;
            CancelTask => "/lf.a2a.v1.A2AService/CancelTask", r::cancel_task_to_pb, c::task_from_pb;
            CreatePushConfig => "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig",
                r::task_push_config_to_pb, r::task_push_config_from_pb;
            GetPushConfig => "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig",
                r::get_push_config_to_pb, r::task_push_config_from_pb;
            ListPushConfigs => "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs",
                r::list_push_configs_to_pb, r::list_push_configs_response_from_pb;
            DeletePushConfig => "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig",
                r::delete_push_config_to_pb, |_: Empty| Ok::<_, TranslateError>(Value::Null);
            GetExtendedCard => "/lf.a2a.v1.A2AService/GetExtendedAgentCard",
                r::get_extended_card_to_pb, c::agent_card_from_pb;
        )
    }

    /// [`GrpcUpstream::stream`] toward a v1.0 agent.
    pub(super) async fn stream_v10(
        &self,
        id: Value,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Events, Failure> {
        use proto::convert_v10_rpc as r;
        use proto::v10::a2a_service_client::A2aServiceClient;
        stream_rpcs!(self, Version::V10, A2aServiceClient, id, method, params, meta,
            |m| json_of(proto::convert_v10::stream_from_pb(m));
            SendStreamingMessage => send_streaming_message, r::send_request_to_pb;
            SubscribeToTask => subscribe_to_task, r::subscribe_to_pb;
        )
    }
}
