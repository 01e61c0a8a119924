//! `lf.a2a.v1.A2AService` (A2A v1.0): each RPC's prost request is decoded
//! into its v1.0 model (`proto::convert_v10_rpc`). The hot RPCs go to
//! [`direct`] with their table of the gRPC codec (`from_v10`): toward a
//! v0.3 gRPC agent the call's [`crate::codec::GrpcCodec`] translates,
//! otherwise they take the JSON route as the other RPCs do: the v1.0
//! JSON-RPC params through the [`Bridge`] ([`super::rpc`], translated by
//! its JSON-RPC codec), the v1.0 result as the prost reply.

use std::sync::Arc;

use proto::convert_v10 as c;
use proto::convert_v10_rpc as r;
use proto::v10 as pb;
use proto::v10::a2a_service_server::A2aService;
use serde_json::Value;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use translate::method::Method;
use translate::v10 as m;

use super::bridge::Bridge;
use super::direct;
use super::rpc::{self, empty, model, prepare, reply};
use crate::version::Version;

const V: Version = Version::V10;

pub struct V10Service {
    pub bridge: Arc<Bridge>,
}

fn stream_item(v: Value) -> Result<pb::StreamResponse, String> {
    c::stream_to_pb(model::<m::event::StreamResponse>(v)?).map_err(|e| e.to_string())
}

type Stream = ReceiverStream<Result<pb::StreamResponse, Status>>;

/// `replies` with `task` (a Task event) ahead of them, unless their first
/// item is a Task already (an agent that sends one itself).
fn starting_with(task: pb::StreamResponse, mut replies: Stream) -> Stream {
    use pb::stream_response::Payload;
    use tokio_stream::StreamExt;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        let mut task = Some(task);
        loop {
            // A caller gone away ends this, and dropping `replies` then
            // ends the upstream call.
            let next = tokio::select! {
                _ = tx.closed() => return,
                next = replies.next() => next,
            };
            if let Some(task) = task.take() {
                let is_task =
                    matches!(&next, Some(Ok(r)) if matches!(r.payload, Some(Payload::Task(_))));
                if !is_task && tx.send(Ok(task)).await.is_err() {
                    return;
                }
            }
            let Some(item) = next else { return };
            if tx.send(item).await.is_err() {
                return;
            }
        }
    });
    ReceiverStream::new(rx)
}

/// `replies`, or the relayed events of the task should the agent refuse
/// (crate::tasks::relay::follow).
fn relayed(
    bridge: &Bridge,
    task: pb::StreamResponse,
    replies: Stream,
    sub: crate::tasks::relay::Subscription,
    started: std::time::Instant,
) -> Stream {
    let limits = &bridge.app.config.limits;
    let end = (started + limits.stream_max_duration).min(started + limits.relay.max_wait);
    let until = tokio::time::Instant::from_std(end);
    let fail = |f: &crate::error::Failure| super::status::from_failure(V, f);
    let is_task =
        |r: &pb::StreamResponse| matches!(r.payload, Some(pb::stream_response::Payload::Task(_)));
    crate::tasks::relay::follow(task, replies, sub, stream_item, is_task, until, fail)
}

#[tonic::async_trait]
impl A2aService for V10Service {
    async fn send_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let t = &direct::from_v10::SEND_MESSAGE;
        direct::unary(&self.bridge, V, req, r::send_request_from_pb, t).await
    }

    type SendStreamingMessageStream = Stream;

    async fn send_streaming_message(
        &self,
        req: Request<pb::SendMessageRequest>,
    ) -> Result<Response<Self::SendStreamingMessageStream>, Status> {
        let t = &direct::from_v10::SEND_STREAMING;
        direct::stream(
            &self.bridge,
            V,
            req,
            r::send_request_from_pb,
            t,
            stream_item,
        )
        .await
    }

    async fn get_task(
        &self,
        req: Request<pb::GetTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let t = &direct::from_v10::GET_TASK;
        direct::unary(&self.bridge, V, req, r::get_task_from_pb, t).await
    }

    /// Toward a v0.3 agent (no ListTasks there): answered from the tasks
    /// seen through this proxy.
    async fn list_tasks(
        &self,
        req: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        let (meta, p) = prepare(V, req, r::list_tasks_from_pb)?;
        let v = match self.bridge.list_tasks_locally(&p, &meta).await? {
            Some(v) => v,
            None => {
                self.bridge
                    .unary(V, Method::ListTasks, Some(p), &meta)
                    .await?
            }
        };
        reply(V, v, r::list_tasks_response_to_pb).map(Response::new)
    }

    async fn cancel_task(
        &self,
        req: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let t = &direct::from_v10::CANCEL_TASK;
        direct::unary(&self.bridge, V, req, r::cancel_task_from_pb, t).await
    }

    type SubscribeToTaskStream = Stream;

    async fn subscribe_to_task(
        &self,
        req: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<Self::SubscribeToTaskStream>, Status> {
        let t = &direct::from_v10::SUBSCRIBE;
        let started = std::time::Instant::now();
        let meta = super::bridge::call_meta(V, req.metadata())?;
        // Relays what follows should the agent refuse (crate::tasks::relay).
        let mut sub = self.bridge.app.relay.subscribe(&req.get_ref().id);
        if let Some(s) = sub.as_mut() {
            // Known to the other instances before the task is asked.
            s.shared().await;
        }
        let first = match self.bridge.first_task(&req.get_ref().id, &meta).await {
            Ok(first) => first,
            Err(s) => {
                let took = started.elapsed();
                self.bridge.count(V, t.method, Some(&s), took).await;
                return Err(s);
            }
        };
        match (&first, sub.as_mut()) {
            (Some(task), Some(s)) => s.starts_at(task),
            _ => sub = None,
        }
        let first = first
            .map(|task| stream_item(serde_json::json!({ "task": task })))
            .transpose()
            .map_err(|detail| {
                super::status::from_failure(
                    V,
                    &crate::error::Failure::BadUpstreamResponse { detail },
                )
            })?;
        let replies =
            direct::stream(&self.bridge, V, req, r::subscribe_from_pb, t, stream_item).await?;
        Ok(match (first, sub) {
            (Some(task), Some(s)) => Response::new(relayed(
                &self.bridge,
                task,
                replies.into_inner(),
                s,
                started,
            )),
            (Some(task), None) => Response::new(starting_with(task, replies.into_inner())),
            (None, _) => replies,
        })
    }

    async fn create_task_push_notification_config(
        &self,
        req: Request<pb::TaskPushNotificationConfig>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (b, m) = (&self.bridge, Method::CreatePushConfig);
        rpc::unary(
            b,
            V,
            m,
            req,
            r::task_push_config_from_pb,
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

    async fn list_task_push_notification_configs(
        &self,
        req: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        let (b, m) = (&self.bridge, Method::ListPushConfigs);
        let to_pb = r::list_push_configs_response_to_pb;
        rpc::unary(b, V, m, req, r::list_push_configs_from_pb, to_pb).await
    }

    /// The upstream's extended card (asked with the caller's metadata),
    /// presented as every binding presents cards.
    async fn get_extended_agent_card(
        &self,
        req: Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        let (meta, p) = prepare(V, req, r::get_extended_card_from_pb)?;
        let mut v = self
            .bridge
            .unary(V, Method::GetExtendedCard, Some(p), &meta)
            .await?;
        // The one card service, as on the other bindings (crate::cards).
        let agent = self.bridge.upstream_version(V).await?;
        let from = crate::cards::CardFrom::Translated;
        let app = &self.bridge.app;
        v = app
            .present_card(v, agent, V, from)
            .map_err(|f| super::status::from_failure(V, &f))?;
        reply(V, v, |card: m::agent_card::AgentCard| {
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
