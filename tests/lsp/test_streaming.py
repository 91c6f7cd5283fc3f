"""A streaming run and the rest of the traffic (SPEC §8): text deltas merged without losing or
reordering any, nothing overtaking held text, stdin frames read by the event loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, EVENT, RUN
from pseudoclaude.events import StopEvent, StopReason, TextEvent, ToolCallEvent
from pseudoclaude.lsp.server import PseudoClaudeServer, _StdinProtocol, create_server

URI = "file:///work/folder"


class Frames:
    """A writer that keeps what the server sends, decoded."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        _, _, body = data.partition(b"\r\n\r\n")
        self.messages.append(json.loads(body))

    def close(self) -> None:
        pass

    def events(self) -> list[tuple[str, Any]]:
        """``pseudoclaude/event`` kinds with their delta (text) or name (tool call), and other
        methods as themselves."""
        out: list[tuple[str, Any]] = []
        for message in self.messages:
            params = message.get("params") or {}
            if message.get("method") == EVENT:
                out.append((params["kind"], params.get("delta", params.get("name"))))
            else:
                out.append((str(message.get("method")), None))
        return out


def server_writing_to() -> tuple[PseudoClaudeServer, Frames]:
    server = create_server()
    frames = Frames()
    server.protocol.set_writer(frames)
    return server, frames


async def test_held_text_goes_out_before_the_next_event() -> None:
    server, frames = server_writing_to()
    for delta in ("Hel", "lo, ", "world"):
        server._forward(URI, "s1", TextEvent(delta))
    assert frames.events() == [("text", "Hel")]  # the first at once, the others held
    server._forward(URI, "s1", ToolCallEvent("c1", "read_file", {"path": "a"}))
    server._forward(URI, "s1", TextEvent("!"))
    server._forward(URI, "s1", StopEvent(StopReason.COMPLETED))
    assert frames.events() == [("text", "Hel"), ("text", "lo, world"),
                               ("toolCall", "read_file"), ("text", "!"), ("stop", None)]
    params = frames.messages[1]["params"]
    assert params == {"workspace": URI, "sessionId": "s1", "kind": "text",
                      "delta": "lo, world"}  # the shape of one delta


async def test_held_text_goes_out_before_a_log_message_and_when_the_window_ends() -> None:
    server, frames = server_writing_to()
    server._forward(URI, "s1", TextEvent("a"))
    server._forward(URI, "s1", TextEvent("b"))
    server.window_log_message(types.LogMessageParams(type=types.MessageType.Log,
                                                     message="between"))
    assert frames.events() == [("text", "a"), ("text", "b"), (types.WINDOW_LOG_MESSAGE, None)]
    server._forward(URI, "s1", TextEvent("c"))
    server._forward(URI, "s1", TextEvent("d"))
    assert frames.events()[3:] == []  # held: text went out less than a window ago
    await asyncio.sleep(server.held_text.window * 3)  # the timer flushes them
    assert frames.events()[3:] == [("text", "cd")]
    assert not server.held_text.pending


def frame(message: dict[str, Any], content_type: bool = False) -> bytes:
    body = json.dumps(message).encode()
    extra = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" if content_type else b""
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def test_stdin_frames_cut_anywhere_are_handled_in_order() -> None:
    handled: list[Any] = []
    errors: list[Exception] = []

    class Protocol:
        def structure_message(self, data: dict[str, Any]) -> dict[str, Any]:
            return data

        def handle_message(self, message: dict[str, Any]) -> None:
            handled.append(message["id"])

    reader = _StdinProtocol(Protocol(), lambda exc, kind: errors.append(exc))  # type: ignore[arg-type]
    stream = (frame({"id": 1}) + frame({"id": 2}, content_type=True)
              + b"Content-Length: 5\r\n\r\n{bad}" + b"X-Other: 1\r\n\r\n"
              + b"Content-Length: many\r\n\r\n"
              + frame({"id": 3, "text": "é" * 40}))
    for size in (1, 7, len(stream)):
        handled.clear()
        errors.clear()
        for i in range(0, len(stream), size):
            reader.data_received(stream[i:i + size])
        assert handled == [1, 2, 3] and len(errors) == 1 and not reader.buffer


async def test_a_fast_stream_arrives_merged_whole_and_before_stop(
        client: LanguageClient, env: Any) -> None:
    chunks = [f"chunk {i:03d} " for i in range(400)]
    env.fake.add_turns({"text": chunks})
    run = asyncio.ensure_future(env.call(client, RUN, {"prompt": "stream it"}))
    while not run.done():  # a read-only request is answered while the run streams
        assert "messageCount" in await env.call(client, CONTEXT)
        await asyncio.sleep(0.005)
    result = await run
    assert result["stopReason"] == "completed" and result["text"] == "".join(chunks)
    await env.until(lambda: any(e["kind"] == "stop" for e in env.events))
    kinds = [e["kind"] for e in env.events]
    texts = [e for e in env.events if e["kind"] == "text"]
    assert "".join(e["delta"] for e in texts) == "".join(chunks)
    assert 0 < len(texts) < len(chunks)  # merged
    assert max(i for i, k in enumerate(kinds) if k == "text") < kinds.index("stop")
