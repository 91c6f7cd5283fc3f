"""The Anthropic Messages wire of a reply: the SSE events of a stream and the plain response."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pseudoclaude.fake_model.reply import Reply, next_id, pieces


def anthropic_events(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a Messages API stream for ``reply``."""
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {
        "type": "message_start", "message": {
            "id": f"msg_fake_{next_id()}", "type": "message", "role": "assistant",
            "model": reply.model, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": reply.input, "output_tokens": 1,
                      "cache_read_input_tokens": reply.cache_read,
                      "cache_creation_input_tokens": reply.cache_write}}}),
        ("ping", {"type": "ping"})]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": start}))
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta",
                                                   "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    for t in reply.thinking:
        if "redacted" in t:
            block({"type": "redacted_thinking", "data": t["redacted"]}, [])
        else:
            block({"type": "thinking", "thinking": "", "signature": ""},
                  [{"type": "thinking_delta", "thinking": p} for p in pieces(t["thinking"], 2)]
                  + [{"type": "signature_delta", "signature": t["signature"]}])
    if reply.chunks:
        block({"type": "text", "text": ""},
              [{"type": "text_delta", "text": c} for c in reply.chunks])
    for call in reply.calls:
        block({"type": "tool_use", "id": "toolu_" + call["id"], "name": call["name"],
               "input": {}},
              [{"type": "input_json_delta", "partial_json": p}
               for p in pieces(call["raw"], reply.arg_chunks)])
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": reply.stop, "stop_sequence": None},
                                     "usage": {"output_tokens": reply.output}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_message(reply: Reply) -> dict[str, Any]:
    """The plain (non-streamed) Messages API response for ``reply``."""
    content: list[dict[str, Any]] = []
    for t in reply.thinking:
        content.append({"type": "redacted_thinking", "data": t["redacted"]} if "redacted" in t
                       else {"type": "thinking", "thinking": t["thinking"],
                             "signature": t["signature"]})
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for call in reply.calls:
        content.append({"type": "tool_use", "id": "toolu_" + call["id"], "name": call["name"],
                        "input": call["input"]})
    return {"id": f"msg_fake_{next_id()}", "type": "message", "role": "assistant",
            "model": reply.model, "content": content, "stop_reason": reply.stop,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input, "output_tokens": reply.output,
                      "cache_read_input_tokens": reply.cache_read,
                      "cache_creation_input_tokens": reply.cache_write}}



def frames(reply: Reply) -> Iterator[bytes]:
    """The stream of ``reply`` as SSE frames (``event:`` and ``data:`` lines)."""
    for name, data in anthropic_events(reply):
        yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def error_frame(payload: dict[str, Any]) -> bytes:
    """An in-stream error event."""
    return f"event: error\ndata: {json.dumps(payload)}\n\n".encode()
