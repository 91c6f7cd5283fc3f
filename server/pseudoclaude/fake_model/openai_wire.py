"""The OpenAI Chat Completions wire of a reply: the ``data:`` chunks of a stream and the plain
response."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from pseudoclaude.fake_model.reply import Reply, next_id, pieces

OPENAI_STOP = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length",
               "stop_sequence": "stop", "refusal": "content_filter"}


def usage(reply: Reply) -> dict[str, Any]:
    prompt = reply.input + reply.cache_read
    return {"prompt_tokens": prompt, "completion_tokens": reply.output,
            "total_tokens": prompt + reply.output,
            "prompt_tokens_details": {"cached_tokens": reply.cache_read}}


def openai_chunks(reply: Reply, include_usage: bool, finish: bool = True
                  ) -> list[dict[str, Any]]:
    """The ``data:`` chunks of a Chat Completions stream for ``reply`` (without ``[DONE]``)."""
    base = {"id": f"chatcmpl-fake{next_id()}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": reply.model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"reasoning_content": t["thinking"]}) for t in reply.thinking
               if "thinking" in t]
    chunks += [chunk({"content": c}) for c in reply.chunks]
    for i, call in enumerate(reply.calls):
        chunks.append(chunk({"tool_calls": [{"index": i, "id": "call_" + call["id"],
                                             "type": "function", "function": {
                                                 "name": call["name"], "arguments": ""}}]}))
        chunks += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                   for p in pieces(call["raw"], reply.arg_chunks)]
    if finish:
        chunks.append(chunk({}, OPENAI_STOP.get(reply.stop, reply.stop)))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": usage(reply)})
    return chunks


def openai_completion(reply: Reply) -> dict[str, Any]:
    """The plain (non-streamed) Chat Completions response for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [{"id": "call_" + c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["raw"]}}
                                 for c in reply.calls]
    return {"id": f"chatcmpl-fake{next_id()}", "object": "chat.completion",
            "created": int(time.time()), "model": reply.model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": OPENAI_STOP.get(reply.stop, reply.stop)}],
            "usage": usage(reply)}



def frames(reply: Reply, *, include_usage: bool, finish: bool, done: bool) -> Iterator[bytes]:
    """The stream of ``reply`` as ``data:`` frames, ``[DONE]`` last when ``done``."""
    for data in openai_chunks(reply, include_usage, finish):
        yield f"data: {json.dumps(data)}\n\n".encode()
    if done:
        yield b"data: [DONE]\n\n"


def error_frame(payload: dict[str, Any]) -> bytes:
    """An in-stream error chunk."""
    return f"data: {json.dumps(payload)}\n\n".encode()
