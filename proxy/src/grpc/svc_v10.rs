//! `lf.a2a.v1.A2AService` (A2A v1.0): each RPC's prost request becomes the
//! v1.0 JSON-RPC params (`proto::convert_v10_rpc`), goes through the
//! [`Bridge`], and the v1.0 result becomes the prost reply.

use std::sync::Arc;

use proto::convert_v10 as c;
use proto::convert_v10_rpc as r;
use proto::v10 as pb;
use proto::v10::a2a_service_server::A2aService;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use translate::method::Method;
use translate::v10 as m;

use super::bridge::{call_meta, Bridge};
use super::status::from_failure;
use super::svc_v03::{model, params};
use crate::error::Failure;
use crate::version::Version;

const V: Version = Version::V10;

pub struct V10Service {
    pub bridge: Arc<Bridge>,
}

fn bad(detail: String) -> Status {
    from_failure(V, &Failure::BadUpstreamResponse { detail })
}

fn stream_item(v: serde_json::Value) -> Result<pb::StreamResponse, String> {
    c::stream_to_pb(model::<m::event::StreamResponse>(v)?).map_err(|e| e.to_string())
}

fn task(v: serde_json::Value) -> Result<pb::Task, Status> {
    model::<m::task::Task>(v)
        .and_then(|t| c::task_to_pb(t).map_err(|e| e.to_string()))
        .map_err(bad)
}

fn push_config(v: serde_json::Value) -> Result<pb::TaskPushNotificationConfig, Status> {
    model(v)
        .and_then(|t| r::task_push_config_to_pb(t).map_err(|e| e.to_string()))
        .map_err(bad)
}

type Stream = ReceiverStream<Result<pb::StreamResponse, Status>>;

#[tonic::async_trait]
impl A2aService for V10Service {
    async fn send_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::send_request_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::SendMessage, Some(p), &meta)
            .await?;
        let out = model(v)
            .and_then(|x| r::send_response_to_pb(x).map_err(|e| e.to_string()))
            .map_err(bad)?;
        Ok(Response::new(out))
    }

    type SendStreamingMessageStream = Stream;

    async fn send_streaming_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<Self::SendStreamingMessageStream>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::send_request_from_pb(req.into_inner()))?;
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
        Ok(Response::new(task(v)?))
    }

    async fn list_tasks(
        &self,
        req: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::list_tasks_from_pb(req.into_inner()))?;
        let v = match self.bridge.list_tasks_locally(&p).await? {
            Some(v) => v,
            None => {
                self.bridge
                    .unary(V, Method::ListTasks, Some(p), &meta)
                    .await?
            }
        };
        let out = model(v)
            .and_then(|x| r::list_tasks_response_to_pb(x).map_err(|e| e.to_string()))
            .map_err(bad)?;
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
        Ok(Response::new(task(v)?))
    }

    type SubscribeToTaskStream = Stream;

    async fn subscribe_to_task(
        &self,
        req: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<Self::SubscribeToTaskStream>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::subscribe_from_pb(req.into_inner()))?;
        let rx = self
            .bridge
            .stream(V, Method::SubscribeToTask, Some(p), meta, stream_item)
            .await?;
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn create_task_push_notification_config(
        &self,
        req: Request<pb::TaskPushNotificationConfig>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::task_push_config_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::CreatePushConfig, Some(p), &meta)
            .await?;
        Ok(Response::new(push_config(v)?))
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
        Ok(Response::new(push_config(v)?))
    }

    async fn list_task_push_notification_configs(
        &self,
        req: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::list_push_configs_from_pb(req.into_inner()))?;
        let v = self
            .bridge
            .unary(V, Method::ListPushConfigs, Some(p), &meta)
            .await?;
        let out = model(v)
            .and_then(|x| r::list_push_configs_response_to_pb(x).map_err(|e| e.to_string()))
            .map_err(bad)?;
        Ok(Response::new(out))
    }

    async fn get_extended_agent_card(
        &self,
        req: Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let p = params(V, r::get_extended_card_from_pb(req.into_inner()))?;
        let mut v = self
            .bridge
            .unary(V, Method::GetExtendedCard, Some(p), &meta)
            .await?;
        let cfg = &self.bridge.app.config;
        crate::card::rewrite_card(&mut v, &cfg.upstream, &cfg.public_url);
        let out = model::<m::agent_card::AgentCard>(v)
            .map(c::agent_card_to_pb)
            .map_err(bad)?;
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
