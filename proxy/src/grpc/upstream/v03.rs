//! The v0.3 gRPC service's RPCs as the bridge's JSON-RPC calls: each
//! method's request converted to its prost message, sent, and its answer
//! converted back to the JSON `result` (`proto::convert_v03*`).

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
    /// [`GrpcUpstream::unary`] toward a v0.3 agent: its RPC for `method`.
    pub(super) async fn unary_v03(
        &self,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Result<Value, Status>, Failure> {
        use proto::convert_v03 as c;
        use proto::convert_v03_rpc as r;
        use proto::pbjson_types::Empty;
        unary_rpcs!(self, Version::V03, method, params, meta;
            SendMessage => "/a2a.v1.A2AService/SendMessage",
                r::send_params_to_pb, r::send_response_from_pb;
            GetTask => "/a2a.v1.A2AService/GetTask", r::get_task_to_pb, c::task_from_pb;
            CancelTask => "/a2a.v1.A2AService/CancelTask", r::cancel_task_to_pb, c::task_from_pb;
            CreatePushConfig => "/a2a.v1.A2AService/CreateTaskPushNotificationConfig",
                r::create_push_config_to_pb, r::task_push_config_from_pb;
            GetPushConfig => "/a2a.v1.A2AService/GetTaskPushNotificationConfig",
                r::get_push_config_to_pb, r::task_push_config_from_pb;
            ListPushConfigs => "/a2a.v1.A2AService/ListTaskPushNotificationConfig",
                r::list_push_configs_to_pb, r::list_push_configs_response_from_pb;
            DeletePushConfig => "/a2a.v1.A2AService/DeleteTaskPushNotificationConfig",
                r::delete_push_config_to_pb, |_: Empty| Ok::<_, TranslateError>(Value::Null);
            // v0.3's gRPC binding has one card RPC (the agent's card).
            GetExtendedCard => "/a2a.v1.A2AService/GetAgentCard",
                |_: Value| r::get_agent_card_to_pb(), c::agent_card_from_pb;
        )
    }

    /// [`GrpcUpstream::stream`] toward a v0.3 agent.
    pub(super) async fn stream_v03(
        &self,
        id: Value,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Events, Failure> {
        use proto::convert_v03_rpc as r;
        use proto::v03::a2a_service_client::A2aServiceClient;
        stream_rpcs!(self, Version::V03, A2aServiceClient, id, method, params, meta,
            |m| json_of(proto::convert_v03::stream_from_pb(m));
            SendStreamingMessage => send_streaming_message, r::send_params_to_pb;
            SubscribeToTask => task_subscription, r::task_subscription_to_pb;
        )
    }
}
