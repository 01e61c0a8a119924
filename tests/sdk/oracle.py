"""Translation oracle: the official a2a-python 1.x SDK's own v0.3 <-> v1.0
converters, driven by JSON lines on stdin.

Each input line: {"kind": <fixture kind>, "to": "1.0"|"0.3", "method": <v1.0 method or null>, "input": <JSON>}
Each output line: {"ok": <JSON>} or {"err": "<message>"}.

v0.3 values are read and written with the SDK's pydantic v0.3 models
(by_alias, exclude_none); v1.0 values with its protobuf types and
google.protobuf.json_format (ProtoJSON).
"""

import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.compat.v0_3 import conversions as cv
from a2a.compat.v0_3 import types as t03
from a2a.types import a2a_pb2 as pb

# kind -> (v0.3 pydantic model, v1.0 proto class, to_v10, to_v03)
ENTITIES = {
    "part": (t03.Part, pb.Part, cv.to_core_part, cv.to_compat_part),
    "message": (t03.Message, pb.Message, cv.to_core_message, cv.to_compat_message),
    "task": (t03.Task, pb.Task, cv.to_core_task, cv.to_compat_task),
    "task-status": (t03.TaskStatus, pb.TaskStatus, cv.to_core_task_status, cv.to_compat_task_status),
    "artifact": (t03.Artifact, pb.Artifact, cv.to_core_artifact, cv.to_compat_artifact),
    "status-update": (
        t03.TaskStatusUpdateEvent,
        pb.TaskStatusUpdateEvent,
        cv.to_core_task_status_update_event,
        cv.to_compat_task_status_update_event,
    ),
    "artifact-update": (
        t03.TaskArtifactUpdateEvent,
        pb.TaskArtifactUpdateEvent,
        cv.to_core_task_artifact_update_event,
        cv.to_compat_task_artifact_update_event,
    ),
    "push-config": (
        t03.TaskPushNotificationConfig,
        pb.TaskPushNotificationConfig,
        cv.to_core_task_push_notification_config,
        cv.to_compat_task_push_notification_config,
    ),
    "auth-info": (
        t03.PushNotificationAuthenticationInfo,
        pb.AuthenticationInfo,
        cv.to_core_authentication_info,
        cv.to_compat_authentication_info,
    ),
    "card": (t03.AgentCard, pb.AgentCard, cv.to_core_agent_card, cv.to_compat_agent_card),
}

# v1.0 method -> (v0.3 method, v0.3 request model, v1.0 request proto, to_v10, to_v03)
REQUESTS = {
    "SendMessage": ("message/send", t03.SendMessageRequest, pb.SendMessageRequest,
                    cv.to_core_send_message_request, cv.to_compat_send_message_request),
    "SendStreamingMessage": ("message/stream", t03.SendStreamingMessageRequest, pb.SendMessageRequest,
                             cv.to_core_send_message_request, None),
    "GetTask": ("tasks/get", t03.GetTaskRequest, pb.GetTaskRequest,
                cv.to_core_get_task_request, cv.to_compat_get_task_request),
    "CancelTask": ("tasks/cancel", t03.CancelTaskRequest, pb.CancelTaskRequest,
                   cv.to_core_cancel_task_request, cv.to_compat_cancel_task_request),
    "SubscribeToTask": ("tasks/resubscribe", t03.TaskResubscriptionRequest, pb.SubscribeToTaskRequest,
                        cv.to_core_subscribe_to_task_request, cv.to_compat_subscribe_to_task_request),
    "CreateTaskPushNotificationConfig": (
        "tasks/pushNotificationConfig/set", t03.SetTaskPushNotificationConfigRequest, pb.TaskPushNotificationConfig,
        cv.to_core_create_task_push_notification_config_request,
        cv.to_compat_create_task_push_notification_config_request),
    "GetTaskPushNotificationConfig": (
        "tasks/pushNotificationConfig/get", t03.GetTaskPushNotificationConfigRequest,
        pb.GetTaskPushNotificationConfigRequest,
        cv.to_core_get_task_push_notification_config_request,
        cv.to_compat_get_task_push_notification_config_request),
    "ListTaskPushNotificationConfigs": (
        "tasks/pushNotificationConfig/list", t03.ListTaskPushNotificationConfigRequest,
        pb.ListTaskPushNotificationConfigsRequest,
        cv.to_core_list_task_push_notification_config_request,
        cv.to_compat_list_task_push_notification_config_request),
    "DeleteTaskPushNotificationConfig": (
        "tasks/pushNotificationConfig/delete", t03.DeleteTaskPushNotificationConfigRequest,
        pb.DeleteTaskPushNotificationConfigRequest,
        cv.to_core_delete_task_push_notification_config_request,
        cv.to_compat_delete_task_push_notification_config_request),
    "GetExtendedAgentCard": (
        "agent/getAuthenticatedExtendedCard", t03.GetAuthenticatedExtendedCardRequest,
        pb.GetExtendedAgentCardRequest,
        cv.to_core_get_extended_agent_card_request, cv.to_compat_get_extended_agent_card_request),
}
V03_TO_V10_METHOD = {v[0]: k for k, v in REQUESTS.items()}


def dump03(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def dump10(msg):
    return MessageToDict(msg, preserving_proto_field_name=False)


def entity(kind, to, value):
    model03, proto10, to_v10, to_v03 = ENTITIES[kind]
    if to == "1.0":
        return dump10(to_v10(model03.model_validate(value)))
    return dump03(to_v03(ParseDict(value, proto10())))


def request(to, env):
    if to == "1.0":
        v10_method = V03_TO_V10_METHOD[env["method"]]
        _, model03, _, to_v10, _ = REQUESTS[v10_method]
        core = to_v10(model03.model_validate(env))
        return {"jsonrpc": "2.0", "id": env.get("id"), "method": v10_method, "params": dump10(core)}
    v03_method, _, proto10, _, to_v03 = REQUESTS[env["method"]]
    core = ParseDict(env.get("params") or {}, proto10())
    if to_v03 is None:  # streaming: same params as SendMessage
        out = dump03(cv.to_compat_send_message_request(core, env.get("id")))
    else:
        out = dump03(to_v03(core, env.get("id")))
    out["method"] = v03_method
    return out


def result(method, to, value):
    """Translates a success `result` of the v1.0-named method."""
    if method in ("SendMessage",):
        if to == "1.0":
            res = cv.to_core_send_message_response(
                t03.SendMessageResponse.model_validate({"jsonrpc": "2.0", "id": 1, "result": value}))
            return dump10(res)
        return dump03(cv.to_compat_send_message_response(ParseDict(value, pb.SendMessageResponse()), 1))["result"]
    if method in ("SendStreamingMessage", "SubscribeToTask"):
        if to == "1.0":
            res = cv.to_core_stream_response(
                t03.SendStreamingMessageSuccessResponse.model_validate({"jsonrpc": "2.0", "id": 1, "result": value}))
            return dump10(res)
        return dump03(cv.to_compat_stream_response(ParseDict(value, pb.StreamResponse()), 1))["result"]
    if method in ("GetTask", "CancelTask"):
        return entity("task", to, value)
    if method in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return entity("push-config", to, value)
    if method == "ListTaskPushNotificationConfigs":
        if to == "1.0":
            res = cv.to_core_list_task_push_notification_config_response(
                t03.ListTaskPushNotificationConfigResponse.model_validate(
                    {"jsonrpc": "2.0", "id": 1, "result": value}))
            return dump10(res)
        return dump03(cv.to_compat_list_task_push_notification_config_response(
            ParseDict(value, pb.ListTaskPushNotificationConfigsResponse()), 1))["result"]
    if method == "GetExtendedAgentCard":
        return entity("card", to, value)
    raise KeyError(f"no oracle for results of {method}")


def response(method, to, env):
    if "result" not in env:
        raise KeyError("error envelopes have no SDK converter")
    return {"jsonrpc": "2.0", "id": env.get("id"), "result": result(method, to, env["result"])}


def stream_response(to, value):
    return result("SendStreamingMessage", to, value)


def run(req):
    kind, to, value = req["kind"], req["to"], req["input"]
    if kind in ENTITIES:
        return entity(kind, to, value)
    if kind == "stream-response":
        return stream_response(to, value)
    if kind == "request":
        return request(to, value)
    if kind in ("response", "event"):
        return response(req["method"], to, value)
    raise KeyError(f"no oracle for kind {kind}")


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = {"ok": run(json.loads(line))}
        except Exception as e:  # the oracle reports, the Rust test decides
            out = {"err": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
