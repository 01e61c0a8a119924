//! `a2a.v1.A2AService` (A2A v0.3): each RPC's prost request becomes the
//! v0.3 JSON-RPC params (`proto::convert_v03_rpc`), goes through the
//! [`Bridge`], and the v0.3 result becomes the prost reply.

use std::sync::Arc;

use proto::convert_v03 as c;
use proto::convert_v03_rpc as r;
use proto::v03 as pb;
use proto::v03::a2a_service_server::A2aService;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use translate::method::Method;
use translate::v03 as m;
use translate::TranslateError;

use super::bridge::{call_meta, Bridge};
use super::status::from_failure;
use crate::error::Failure;
use crate::version::Version;

const V: Version = Version::V03;

pub struct V03Service {
    pub bridge: Arc<Bridge>,
}

/// Request conversion failures are the caller's fault: their JSON-RPC code
/// (mostly InvalidParams) as a status.
pub(super) fn params<P: Serialize>(
    client: Version,
    p: Result<P, TranslateError>,
) -> Result<Value, Status> {
    let p = p.map_err(|e| {
        from_failure(
            client,
            &Failure::Translate {
                code: i64::from(e.jsonrpc_code()),
                message: e.to_string(),
            },
        )
    })?;
    serde_json::to_value(p).map_err(|e| {
        from_failure(
            client,
            &Failure::Internal {
                detail: e.to_string(),
            },
        )
    })
}

pub(super) fn model<M: DeserializeOwned>(v: Value) -> Result<M, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

fn bad(client: Version, detail: String) -> Status {
    from_failure(client, &Failure::BadUpstreamResponse { detail })
}

fn stream_item(v: Value) -> Result<pb::StreamResponse, String> {
    c::stream_to_pb(model::<m::event::StreamEvent>(v)?).map_err(|e| e.to_string())
}

type Stream = ReceiverStream<Result<pb::StreamResponse, Status>>;

#[tonic::async_trait]
impl A2aService for V03Service {
    async fn send_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::send_params_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::SendMessage, Some(p), &meta)
            .await?;
        let out = model::<m::event::StreamEvent>(v)
            .and_then(|e| r::send_response_to_pb(e).map_err(|e| e.to_string()))
            .map_err(|d| bad(V, d))?;
        Ok(Response::new(out))
    }

    type SendStreamingMessageStream = Stream;

    async fn send_streaming_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<Self::SendStreamingMessageStream>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::send_params_from_pb(req.into_inner()))?;
        let rx = self
            .bridge
            .stream(V, Method::SendStreamingMessage, Some(p), meta, stream_item)
            .await?;
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn get_task(
        &self,
        req: Request<pb::GetTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::get_task_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::GetTask, Some(p), &meta)
            .await?;
        let out = model::<m::task::Task>(v)
            .and_then(|t| c::task_to_pb(t).map_err(|e| e.to_string()))
            .map_err(|d| bad(V, d))?;
        Ok(Response::new(out))
    }

    async fn cancel_task(
        &self,
        req: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::cancel_task_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::CancelTask, Some(p), &meta)
            .await?;
        let out = model::<m::task::Task>(v)
            .and_then(|t| c::task_to_pb(t).map_err(|e| e.to_string()))
            .map_err(|d| bad(V, d))?;
        Ok(Response::new(out))
    }

    type TaskSubscriptionStream = Stream;

    async fn task_subscription(
        &self,
        req: Request<pb::TaskSubscriptionRequest>,
    ) -> Result<Response<Self::TaskSubscriptionStream>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::task_subscription_from_pb(req.into_inner()))?;
        let rx = self
            .bridge
            .stream(V, Method::SubscribeToTask, Some(p), meta, stream_item)
            .await?;
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn create_task_push_notification_config(
        &self,
        req: Request<pb::CreateTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::create_push_config_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::CreatePushConfig, Some(p), &meta)
            .await?;
        let out = model(v)
            .and_then(|t| r::task_push_config_to_pb(t).map_err(|e| e.to_string()))
            .map_err(|d| bad(V, d))?;
        Ok(Response::new(out))
    }

    async fn get_task_push_notification_config(
        &self,
        req: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::get_push_config_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::GetPushConfig, Some(p), &meta)
            .await?;
        let out = model(v)
            .and_then(|t| r::task_push_config_to_pb(t).map_err(|e| e.to_string()))
            .map_err(|d| bad(V, d))?;
        Ok(Response::new(out))
    }

    async fn list_task_push_notification_config(
        &self,
        req: Request<pb::ListTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigResponse>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::list_push_configs_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::ListPushConfigs, Some(p), &meta)
            .await?;
        let out = model(v)
            .and_then(|t| r::list_push_configs_response_to_pb(t).map_err(|e| e.to_string()))
            .map_err(|d| bad(V, d))?;
        Ok(Response::new(out))
    }

    /// v0.3 `GetAgentCard` is the public card (a2a-python 0.3 serves it so):
    /// the one the proxy serves to v0.3 clients, gRPC interface included.
    async fn get_agent_card(
        &self,
        req: Request<pb::GetAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        call_meta(V, req.metadata())?;
        let served = self
            .bridge
            .app
            .serve_card(V, None)
            .await
            .map_err(|f| from_failure(V, &f))?;
        let out = serde_json::from_slice::<m::agent_card::AgentCard>(&served.body)
            .map(c::agent_card_to_pb)
            .map_err(|e| bad(V, e.to_string()))?;
        Ok(Response::new(out))
    }

    async fn delete_task_push_notification_config(
        &self,
        req: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<proto::pbjson_types::Empty>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::delete_push_config_from_pb(req.into_inner()))?;
        self.bridge
            .unary(V, Method::DeletePushConfig, Some(p), &meta)
            .await?;
        Ok(Response::new(proto::pbjson_types::Empty {}))
    }
}
