//! `a2a.v1.A2AService` (A2A v0.3): each RPC's prost request is decoded
//! into its v0.3 model (`proto::convert_v03_rpc`). The hot RPCs go to
//! [`direct`] with their table of the gRPC codec (`from_v03`): toward a
//! v1.0 gRPC agent the call's [`crate::codec::GrpcCodec`] translates,
//! otherwise they take the JSON route as the other RPCs do: the v0.3
//! JSON-RPC params through the [`Bridge`] ([`super::rpc`], translated by
//! its JSON-RPC codec), the v0.3 result as the prost reply.

use std::sync::Arc;

use proto::convert_v03 as c;
use proto::convert_v03_rpc as r;
use proto::v03 as pb;
use proto::v03::a2a_service_server::A2aService;
use serde_json::Value;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use translate::method::Method;
use translate::v03 as m;

use super::bridge::{call_meta, Bridge};
use super::direct;
use super::rpc::{self, bad, empty, model, reply};
use super::status::from_failure;
use crate::version::Version;

const V: Version = Version::V03;

pub struct V03Service {
    pub bridge: Arc<Bridge>,
}

fn stream_item(v: Value) -> Result<pb::StreamResponse, String> {
    c::stream_to_pb(model::<m::event::StreamEvent>(v)?).map_err(|e| e.to_string())
}

type Stream = ReceiverStream<Result<pb::StreamResponse, Status>>;

/// Whether a call presents credentials: non-empty `authorization`
/// metadata (what a2a-sdk's auth interceptors and gRPC call credentials
/// send).
fn presents_credentials(meta: &super::bridge::CallMeta) -> bool {
    meta.presented
        .0
        .get_all(http::header::AUTHORIZATION)
        .iter()
        .any(|v| !v.as_bytes().iter().all(u8::is_ascii_whitespace))
}

#[tonic::async_trait]
impl A2aService for V03Service {
    async fn send_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let t = &direct::from_v03::SEND_MESSAGE;
        direct::unary(&self.bridge, V, req, r::send_params_from_pb, t).await
    }

    type SendStreamingMessageStream = Stream;

    async fn send_streaming_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<Self::SendStreamingMessageStream>, Status> {
        let t = &direct::from_v03::SEND_STREAMING;
        direct::stream(&self.bridge, V, req, r::send_params_from_pb, t, stream_item).await
    }

    async fn get_task(
        &self,
        req: Request<pb::GetTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let t = &direct::from_v03::GET_TASK;
        direct::unary(&self.bridge, V, req, r::get_task_from_pb, t).await
    }

    async fn cancel_task(
        &self,
        req: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let t = &direct::from_v03::CANCEL_TASK;
        direct::unary(&self.bridge, V, req, r::cancel_task_from_pb, t).await
    }

    type TaskSubscriptionStream = Stream;

    async fn task_subscription(
        &self,
        req: Request<pb::TaskSubscriptionRequest>,
    ) -> Result<Response<Self::TaskSubscriptionStream>, Status> {
        let t = &direct::from_v03::SUBSCRIBE;
        direct::stream(
            &self.bridge,
            V,
            req,
            r::task_subscription_from_pb,
            t,
            stream_item,
        )
        .await
    }

    async fn create_task_push_notification_config(
        &self,
        req: Request<pb::CreateTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (b, m) = (&self.bridge, Method::CreatePushConfig);
        rpc::unary(
            b,
            V,
            m,
            req,
            r::create_push_config_from_pb,
            r::task_push_config_to_pb,
        )
        .await
    }

    async fn get_task_push_notification_config(
        &self,
        req: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (b, m) = (&self.bridge, Method::GetPushConfig);
        rpc::unary(
            b,
            V,
            m,
            req,
            r::get_push_config_from_pb,
            r::task_push_config_to_pb,
        )
        .await
    }

    async fn list_task_push_notification_config(
        &self,
        req: Request<pb::ListTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigResponse>, Status> {
        let (b, m) = (&self.bridge, Method::ListPushConfigs);
        let to_pb = r::list_push_configs_response_to_pb;
        rpc::unary(b, V, m, req, r::list_push_configs_from_pb, to_pb).await
    }

    /// v0.3 `GetAgentCard`, under the rule of v1.0's
    /// `GetExtendedAgentCard`: a caller presenting credentials
    /// (`authorization` metadata) of an agent whose card offers an extended
    /// card (v0.3 `supportsAuthenticatedExtendedCard`, v1.0
    /// `capabilities.extendedAgentCard`) gets the agent's extended card,
    /// asked with the caller's metadata (JSON-RPC
    /// `agent/getAuthenticatedExtendedCard` / `GetExtendedAgentCard`, or the
    /// agent's own gRPC card RPC) and presented in v0.3 shape; the agent
    /// decides, its refusal is the answer. Any other caller gets the public
    /// card the proxy serves to v0.3 clients (a2a-python 0.3 serves that),
    /// gRPC interface included.
    async fn get_agent_card(
        &self,
        req: Request<pb::GetAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        let meta = call_meta(V, req.metadata())?;
        let app = &self.bridge.app;
        let served = app
            .serve_card(Some(V), None)
            .await
            .map_err(|f| from_failure(V, &f))?;
        let public: Value =
            serde_json::from_slice(&served.body).map_err(|e| bad(V, e.to_string()))?;
        let offered = public.get("supportsAuthenticatedExtendedCard") == Some(&Value::Bool(true));
        let card = if offered && presents_credentials(&meta) {
            let v = self
                .bridge
                .unary(V, Method::GetExtendedCard, None, &meta)
                .await?;
            let agent = self.bridge.upstream_version(V).await?;
            let from = crate::cards::CardFrom::Translated;
            app.present_card(v, agent, V, from)
                .map_err(|f| from_failure(V, &f))?
        } else {
            public
        };
        reply(V, card, |card: m::agent_card::AgentCard| {
            Ok(c::agent_card_to_pb(card))
        })
        .map(Response::new)
    }

    async fn delete_task_push_notification_config(
        &self,
        req: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<proto::pbjson_types::Empty>, Status> {
        let (b, m) = (&self.bridge, Method::DeletePushConfig);
        rpc::unary(b, V, m, req, r::delete_push_config_from_pb, empty).await
    }
}
