"""An A2A v0.3 agent on the real a2a-sdk 0.3.x that behaves as the A2A TCK's
v1.0 system under test does: what it does with a message is chosen by the
prefix of the message's `messageId` (`tck-input-required`,
`tck-complete-task`, `tck-stream-001`, ...). The v1.0 TCK suite can then be
run through the proxy against a v0.3 agent and compared with the TCK's own
v1.0 agent (see tests/tck/README.md). Also the v0.3 agent of the relayed
subscription tests (issue #22 item 6): `tck-input-required` leaves a task
idle in input-required, and any later message on it completes it.

Serves JSON-RPC at `/` and HTTP+JSON (REST) at `/v1/...` on one port;
streaming on, push notifications off. Prints `PORT <n>` once listening.

    python sut_v03.py [--port N]   (0 = pick a free one)
"""

import argparse
import asyncio
import socket
import sys

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    InternalError,
    Part,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task
from a2a.utils.errors import ServerError


def text(t):
    return Part(root=TextPart(text=t))


class TckExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        message = context.message
        if message is None:
            return
        mid = message.message_id or ""
        if task is not None and task.status.state.value == "input-required":
            # A follow-up on an idle task completes it.
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.complete(
                new_agent_text_message("Completed after input", task.context_id, task.id)
            )
            return
        if mid.startswith("tck-message-response"):
            await event_queue.enqueue_event(
                new_agent_text_message("Direct message response", message.context_id)
            )
            return
        if mid.startswith("tck-reject-task"):
            raise ServerError(error=InternalError(message="rejected"))
        if task is None:
            task = new_task(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def agent_msg(t):
            return new_agent_text_message(t, task.context_id, task.id)

        if mid.startswith("tck-stream-artifact-chunked"):
            await updater.start_work()
            await updater.add_artifact([text("chunk-1 ")], artifact_id="chunked", append=True)
            await updater.add_artifact(
                [text("chunk-2")], artifact_id="chunked", append=True, last_chunk=True
            )
            await updater.complete()
        elif mid.startswith("test-resubscribe-message-id"):
            await updater.start_work()
            await asyncio.sleep(4)
            await updater.complete()
        elif mid.startswith("tck-stream-artifact-text"):
            await updater.start_work()
            await updater.add_artifact([text("Streamed text content")])
            await updater.complete()
        elif mid.startswith("tck-stream-artifact-file") or mid.startswith("tck-artifact-file-url"):
            await updater.start_work()
            if "url" in mid:
                f = FileWithUri(
                    uri="https://example.com/output.txt", mime_type="text/plain", name="output.txt"
                )
            else:
                f = FileWithBytes(bytes="dGNr", mime_type="text/plain", name="output.txt")
            await updater.add_artifact([Part(root=FilePart(file=f))])
            await updater.complete()
        elif mid.startswith("tck-stream-ordering-001"):
            await updater.start_work()
            await updater.add_artifact([text("Ordered output")])
            await updater.complete()
        elif mid.startswith("tck-input-required"):
            await updater.requires_input()
        elif mid.startswith("tck-complete-task"):
            await updater.complete(agent_msg("Hello from TCK"))
        elif mid.startswith("tck-artifact-text"):
            await updater.add_artifact([text("Generated text content")])
            await updater.complete()
        elif mid.startswith("tck-artifact-file"):
            f = FileWithBytes(bytes="dGNr", mime_type="text/plain", name="output.txt")
            await updater.add_artifact([Part(root=FilePart(file=f))])
            await updater.complete()
        elif mid.startswith("tck-artifact-data"):
            await updater.add_artifact([Part(root=DataPart(data={"key": "value", "count": 42}))])
            await updater.complete()
        elif mid.startswith("tck-stream-001"):
            await updater.start_work()
            await updater.add_artifact([text("Stream hello from TCK")])
            await updater.complete()
        elif mid.startswith("tck-stream-002"):
            await updater.complete()
        elif mid.startswith("tck-stream-003"):
            await updater.start_work()
            await updater.add_artifact([text("Stream task lifecycle")])
            await updater.complete()
        else:
            await updater.complete(agent_msg("Unhandled messageId prefix: " + mid))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="tck-sut-v03",
        description="A2A TCK system under test on a2a-sdk 0.3",
        url=f"{base}/",
        version="1.0.0",
        protocol_version="0.3.0",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(url=f"{base}/", transport="JSONRPC"),
            AgentInterface(url=base, transport="HTTP+JSON"),
        ],
        default_input_modes=["text"],
        default_output_modes=["text"],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        skills=[AgentSkill(id="tck", name="TCK", description="TCK scenarios", tags=["tck"])],
    )
    handler = DefaultRequestHandler(agent_executor=TckExecutor(), task_store=InMemoryTaskStore())
    app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build()
    A2AStarletteApplication(agent_card=card, http_handler=handler).add_routes_to_app(app)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
