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
        const V: Version = Version::V03;
        Ok(match method {
            Method::SendMessage => {
                let req = request(V, r::send_params_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/SendMessage", req).await,
                    r::send_response_from_pb,
                )?
            }
            Method::GetTask => {
                let req = request(V, r::get_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/GetTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::CancelTask => {
                let req = request(V, r::cancel_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/CancelTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::CreatePushConfig
            | Method::GetPushConfig
            | Method::ListPushConfigs
            | Method::DeletePushConfig => return self.push_config_v03(method, params, meta).await,
            // v0.3's gRPC binding has one card RPC (the agent's card).
            Method::GetExtendedCard => {
                let req = request(V, r::get_agent_card_to_pb(), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/GetAgentCard", req).await,
                    c::agent_card_from_pb,
                )?
            }
            Method::SendStreamingMessage | Method::SubscribeToTask | Method::ListTasks => {
                return Err(Failure::Internal {
                    detail: format!("{method:?} is not a unary v0.3 gRPC call"),
                })
            }
        })
    }

    /// A push-config RPC of the v0.3 service (create, get, list, delete).
    async fn push_config_v03(
        &self,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Result<Value, Status>, Failure> {
        use proto::convert_v03_rpc as r;
        const V: Version = Version::V03;
        Ok(match method {
            Method::CreatePushConfig => {
                let req = request(V, r::create_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/CreateTaskPushNotificationConfig", req)
                        .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::GetPushConfig => {
                let req = request(V, r::get_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/GetTaskPushNotificationConfig", req)
                        .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::ListPushConfigs => {
                let req = request(V, r::list_push_configs_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/ListTaskPushNotificationConfig", req)
                        .await,
                    r::list_push_configs_response_from_pb,
                )?
            }
            Method::DeletePushConfig => {
                let req = request(V, r::delete_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/DeleteTaskPushNotificationConfig", req)
                        .await,
                    |_: proto::pbjson_types::Empty| Ok::<_, TranslateError>(Value::Null),
                )?
            }
            other => {
                return Err(Failure::Internal {
                    detail: format!("{other:?} is not a v0.3 push-config gRPC call"),
                })
            }
        })
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
        const V: Version = Version::V03;
        let mut c = A2aServiceClient::new(self.channel.clone());
        let s = match method {
            Method::SendStreamingMessage => {
                let req = request(V, r::send_params_to_pb(model(params)?), meta)?;
                c.send_streaming_message(req).await
            }
            Method::SubscribeToTask => {
                let req = request(V, r::task_subscription_to_pb(model(params)?), meta)?;
                c.task_subscription(req).await
            }
            other => return Err(not_streaming(other)),
        };
        Ok(events(V, id, s, |m| {
            json_of(proto::convert_v03::stream_from_pb(m))
        }))
    }
}
