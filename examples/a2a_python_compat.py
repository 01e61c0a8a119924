"""The a2a-sdk 1.x Python v0.3 compat converters (a2a.compat.v0_3.conversions)
as a `roundtrip --against` command: JSON Lines in, JSON Lines out, one line
out per line in (the converted document, or {"error": {"message": ...}}).

What to convert comes from the environment `roundtrip` sets: A2A_KIND
(task, message, card, push-config, push-body, request, response, event),
A2A_FROM and A2A_TO (0.3 / 1.0), A2A_METHOD_V10 (responses and events).

v0.3 documents are read and written with the SDK's pydantic v0.3 models
(by_alias, exclude_none); v1.0 documents with its protobuf types and
google.protobuf.json_format (ProtoJSON), as the SDK's own compat transports
do.

  a2a-compat-proxy gen --kind task --version 0.3 --count 1000 \\
    | a2a-compat-proxy roundtrip --kind task --from 0.3 \\
        --against '.venv-v10/bin/python examples/a2a_python_compat.py'
"""

import json
import os
import sys

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.compat.v0_3 import conversions as cv
from a2a.compat.v0_3 import types as t03
from a2a.types import a2a_pb2 as pb

# kind -> (v0.3 model, v1.0 message, to v1.0, to v0.3)
ENTITIES = {
    "task": (t03.Task, pb.Task, cv.to_core_task, cv.to_compat_task),
    "message": (t03.Message, pb.Message, cv.to_core_message, cv.to_compat_message),
    "card": (t03.AgentCard, pb.AgentCard, cv.to_core_agent_card, cv.to_compat_agent_card),
    "push-config": (
        t03.TaskPushNotificationConfig,
        pb.TaskPushNotificationConfig,
        cv.to_core_task_push_notification_config,
        cv.to_compat_task_push_notification_config,
    ),
}

# v1.0 method -> (v0.3 method, v0.3 request model, v1.0 request, to v1.0, to v0.3)
REQUESTS = {
    "SendMessage": ("message/send", t03.SendMessageRequest, pb.SendMessageRequest,
                    cv.to_core_send_message_request, cv.to_compat_send_message_request),
    "SendStreamingMessage": ("message/stream", t03.SendStreamingMessageRequest, pb.SendMessageRequest,
                             cv.to_core_send_message_request, cv.to_compat_send_message_request),
    "GetTask": ("tasks/get", t03.GetTaskRequest, pb.GetTaskRequest,
                cv.to_core_get_task_request, cv.to_compat_get_task_request),
    "CancelTask": ("tasks/cancel", t03.CancelTaskRequest, pb.CancelTaskRequest,
                   cv.to_core_cancel_task_request, cv.to_compat_cancel_task_request),
    "SubscribeToTask": ("tasks/resubscribe", t03.TaskResubscriptionRequest, pb.SubscribeToTaskRequest,
                        cv.to_core_subscribe_to_task_request, cv.to_compat_subscribe_to_task_request),
    "CreateTaskPushNotificationConfig": (
        "tasks/pushNotificationConfig/set", t03.SetTaskPushNotificationConfigRequest,
        pb.TaskPushNotificationConfig,
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
V10_NAME = {v[0]: k for k, v in REQUESTS.items()}


def dump03(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def dump10(msg):
    return MessageToDict(msg, preserving_proto_field_name=False)


def entity(kind, to, doc):
    model, proto, to_v10, to_v03 = ENTITIES[kind]
    if to == "1.0":
        return dump10(to_v10(model.model_validate(doc)))
    return dump03(to_v03(ParseDict(doc, proto())))


def stream(to, result):
    """A stream result (also a push body): the StreamResponse converters."""
    if to == "1.0":
        env = t03.SendStreamingMessageSuccessResponse.model_validate(
            {"jsonrpc": "2.0", "id": 1, "result": result})
        return dump10(cv.to_core_stream_response(env))
    return dump03(cv.to_compat_stream_response(ParseDict(result, pb.StreamResponse()), 1))["result"]


def request(to, env):
    if to == "1.0":
        name = V10_NAME[env["method"]]
        _, model, _, to_v10, _ = REQUESTS[name]
        core = to_v10(model.model_validate(env))
        return {"jsonrpc": "2.0", "id": env.get("id"), "method": name, "params": dump10(core)}
    v03_name, _, proto, _, to_v03 = REQUESTS[env["method"]]
    out = dump03(to_v03(ParseDict(env.get("params") or {}, proto()), env.get("id")))
    out["method"] = v03_name
    return out


def result(method, to, value):
    """The success `result` answering the v1.0-named `method`."""
    if method == "SendMessage":
        if to == "1.0":
            env = t03.SendMessageResponse.model_validate({"jsonrpc": "2.0", "id": 1, "result": value})
            return dump10(cv.to_core_send_message_response(env))
        return dump03(cv.to_compat_send_message_response(
            ParseDict(value, pb.SendMessageResponse()), 1))["result"]
    if method in ("SendStreamingMessage", "SubscribeToTask"):
        return stream(to, value)
    if method in ("GetTask", "CancelTask"):
        return entity("task", to, value)
    if method in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return entity("push-config", to, value)
    if method == "ListTaskPushNotificationConfigs":
        if to == "1.0":
            env = t03.ListTaskPushNotificationConfigResponse.model_validate(
                {"jsonrpc": "2.0", "id": 1, "result": value})
            return dump10(cv.to_core_list_task_push_notification_config_response(env))
        return dump03(cv.to_compat_list_task_push_notification_config_response(
            ParseDict(value, pb.ListTaskPushNotificationConfigsResponse()), 1))["result"]
    if method == "DeleteTaskPushNotificationConfig":
        return None
    if method == "GetExtendedAgentCard":
        return entity("card", to, value)
    raise KeyError(f"no converter for results of {method}")


def convert(kind, to, method, doc):
    if kind in ENTITIES:
        return entity(kind, to, doc)
    if kind == "push-body":
        return stream(to, doc)
    if kind == "request":
        return request(to, doc)
    if kind in ("response", "event"):
        if "result" not in doc:
            raise KeyError("error envelopes have no converter")
        m = method or "SendStreamingMessage"
        return {"jsonrpc": "2.0", "id": doc.get("id"), "result": result(m, to, doc["result"])}
    raise KeyError(f"no converter for kind {kind}")


def main():
    kind, to = os.environ["A2A_KIND"], os.environ["A2A_TO"]
    method = os.environ.get("A2A_METHOD_V10") or None
    for line in sys.stdin:
        try:
            out = convert(kind, to, method, json.loads(line))
        except Exception as e:  # one line's refusal; roundtrip reports it
            out = {"error": {"message": f"{type(e).__name__}: {e}"}}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
