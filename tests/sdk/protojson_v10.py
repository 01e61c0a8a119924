"""Checks that documents parse as strict ProtoJSON of the v1.0 proto, with
the a2a-python 1.x SDK's generated module (`a2a.types.a2a_pb2`, package
lf.a2a.v1) and google.protobuf.json_format: unknown fields, bad enum names,
wrong types all fail. An independent check of what `a2a-compat-proxy gen`
writes for v1.0.

usage: protojson_v10.py KIND [METHOD] < documents.jsonl
KIND: task | message | card | push-body | push-config | request | response | event
METHOD: the v1.0 method a response answers (request envelopes name theirs).
Writes one line per input line: `ok`, or `err <why>`.
"""

import json
import sys

from google.protobuf import json_format
from a2a.types import a2a_pb2 as pb

BARE = {
    "task": pb.Task,
    "message": pb.Message,
    "card": pb.AgentCard,
    "push-body": pb.StreamResponse,
    "push-config": pb.TaskPushNotificationConfig,
}

REQUESTS = {
    "SendMessage": pb.SendMessageRequest,
    "SendStreamingMessage": pb.SendMessageRequest,
    "GetTask": pb.GetTaskRequest,
    "ListTasks": pb.ListTasksRequest,
    "CancelTask": pb.CancelTaskRequest,
    "SubscribeToTask": pb.SubscribeToTaskRequest,
    "CreateTaskPushNotificationConfig": pb.TaskPushNotificationConfig,
    "GetTaskPushNotificationConfig": pb.GetTaskPushNotificationConfigRequest,
    "ListTaskPushNotificationConfigs": pb.ListTaskPushNotificationConfigsRequest,
    "DeleteTaskPushNotificationConfig": pb.DeleteTaskPushNotificationConfigRequest,
    "GetExtendedAgentCard": pb.GetExtendedAgentCardRequest,
}

RESULTS = {
    "SendMessage": pb.SendMessageResponse,
    "SendStreamingMessage": pb.StreamResponse,
    "SubscribeToTask": pb.StreamResponse,
    "GetTask": pb.Task,
    "CancelTask": pb.Task,
    "ListTasks": pb.ListTasksResponse,
    "CreateTaskPushNotificationConfig": pb.TaskPushNotificationConfig,
    "GetTaskPushNotificationConfig": pb.TaskPushNotificationConfig,
    "ListTaskPushNotificationConfigs": pb.ListTaskPushNotificationConfigsResponse,
    "DeleteTaskPushNotificationConfig": None,  # google.protobuf.Empty: null or {}
    "GetExtendedAgentCard": pb.AgentCard,
}


def parse(value, cls):
    if not isinstance(value, dict):
        raise ValueError(f"{cls.DESCRIPTOR.name} must be a JSON object")
    json_format.Parse(json.dumps(value), cls(), ignore_unknown_fields=False)


def envelope(doc):
    if doc.get("jsonrpc") != "2.0":
        raise ValueError("jsonrpc is not 2.0")
    if not isinstance(doc.get("id"), (str, int)) or isinstance(doc.get("id"), bool):
        raise ValueError("id is not a string or an integer")


def check(kind, method, doc):
    if kind in BARE:
        parse(doc, BARE[kind])
    elif kind == "request":
        envelope(doc)
        cls = REQUESTS[doc["method"]]
        parse(doc.get("params", {}), cls)
    elif kind in ("response", "event"):
        envelope(doc)
        m = method or "SendStreamingMessage"
        cls = RESULTS[m]
        if cls is None:
            if doc.get("result") not in (None, {}):
                raise ValueError("a delete result is null or {}")
        else:
            parse(doc["result"], cls)
    else:
        raise KeyError(kind)


def main():
    kind = sys.argv[1]
    method = sys.argv[2] if len(sys.argv) > 2 else None
    for line in sys.stdin:
        try:
            check(kind, method, json.loads(line))
            print("ok")
        except Exception as e:  # reported per line; the test decides
            print(f"err {type(e).__name__}: {e}".replace("\n", " "))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
