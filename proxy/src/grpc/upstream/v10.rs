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
        const V: Version = Version::V10;
        Ok(match method {
            Method::SendMessage => {
                let req = request(V, r::send_request_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/SendMessage", req).await,
                    r::send_response_from_pb,
                )?
            }
            Method::GetTask => {
                let req = request(V, r::get_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/GetTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::ListTasks => {
                let req = request(V, r::list_tasks_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/ListTasks", req).await,
                    r::list_tasks_response_from_pb,
                )?
            }
            Method::CancelTask => {
                let req = request(V, r::cancel_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/CancelTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::CreatePushConfig
            | Method::GetPushConfig
            | Method::ListPushConfigs
            | Method::DeletePushConfig => return self.push_config_v10(method, params, meta).await,
            Method::GetExtendedCard => {
                let req = request(V, r::get_extended_card_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/GetExtendedAgentCard", req)
                        .await,
                    c::agent_card_from_pb,
                )?
            }
            Method::SendStreamingMessage | Method::SubscribeToTask => {
                return Err(not_streaming(method));
            }
        })
    }

    /// A push-config RPC of the v1.0 service (create, get, list, delete).
    async fn push_config_v10(
        &self,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Result<Value, Status>, Failure> {
        use proto::convert_v10_rpc as r;
        const V: Version = Version::V10;
        Ok(match method {
            Method::CreatePushConfig => {
                let req = request(V, r::task_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call(
                        "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig",
                        req,
                    )
                    .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::GetPushConfig => {
                let req = request(V, r::get_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig", req)
                        .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::ListPushConfigs => {
                let req = request(V, r::list_push_configs_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs", req)
                        .await,
                    r::list_push_configs_response_from_pb,
                )?
            }
            Method::DeletePushConfig => {
                let req = request(V, r::delete_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call(
                        "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig",
                        req,
                    )
                    .await,
                    |_: proto::pbjson_types::Empty| Ok::<_, TranslateError>(Value::Null),
                )?
            }
            other => {
                return Err(Failure::Internal {
                    detail: format!("{other:?} is not a v1.0 push-config gRPC call"),
                })
            }
        })
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
        const V: Version = Version::V10;
        let mut c = A2aServiceClient::new(self.channel.clone());
        let s = match method {
            Method::SendStreamingMessage => {
                let req = request(V, r::send_request_to_pb(model(params)?), meta)?;
                c.send_streaming_message(req).await
            }
            Method::SubscribeToTask => {
                let req = request(V, r::subscribe_to_pb(model(params)?), meta)?;
                c.subscribe_to_task(req).await
            }
            other => return Err(not_streaming(other)),
        };
        Ok(events(V, id, s, |m| {
            json_of(proto::convert_v10::stream_from_pb(m))
        }))
    }
}
