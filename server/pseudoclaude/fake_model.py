"""``pseudoclaude fake-model``: a scripted model server on 127.0.0.1 for tests and offline demos.

It speaks both wire formats the providers use, plain and streamed:

- ``POST /v1/messages`` (Anthropic Messages API; SSE ``message_start`` … ``message_stop`` with
  ``thinking_delta``/``signature_delta`` and ``input_json_delta`` in several fragments);
- ``POST /v1/chat/completions`` (OpenAI Chat Completions; ``data:`` chunks, tool-call argument
  fragments, a usage chunk when ``stream_options.include_usage``, ``[DONE]``).

Both paths are also served without the ``/v1`` prefix, so one base URL
(``http://127.0.0.1:PORT``) works for both SDKs. ``GET /_requests`` returns every request
recorded so far; ``POST /_script`` replaces the script (same JSON as ``--script``). Requests
are recorded without their headers (so never with an API key).

Script (a JSON file, or the same structure as a Python object; a bare list means ``turns``;
the ``#`` comments below are for illustration only)::

    {
      "rules": [                        # checked first, in order, on every request
        {"when": {"has_tools": false},  # e.g. compaction and memory calls
         "reply": {"text": "<summary>...</summary>"}, "times": 1}
      ],
      "turns": [                        # then consumed one per request, in order
        {"thinking": "Let me look.", "tool_calls": [{"name": "read_file",
                                                     "arguments": {"path": "a.py"}}]},
        {"error": "rate_limit"},
        {"text": ["Hel", "lo"], "usage": {"input": 120, "output": 5, "cache_read": 100}}
      ],
      "default": {"text": "..."},      # when no rule matches and no turn is left
      "limit": {"max_tokens": 30000}    # optional: the provider's real context window
    }

``when`` conditions (all must hold): ``last_user_contains`` (text of the last user message),
``system_contains``, ``body_contains`` (anywhere in the request JSON), ``has_tools`` (bool),
``last_is_tool_result`` (bool), ``protocol`` (``anthropic``/``openai``). ``times`` limits how
often a rule answers (unlimited without it).

``limit`` (``{"max_tokens": N}``, N a whole number >= 1) is a "provider limit" mode: every
request whose prompt is larger than N tokens is answered, before any rule or turn is looked at
(none is consumed), with the provider's real prompt-too-long error, HTTP 400 — Anthropic
``{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long:
X tokens > N maximum"}}``, OpenAI ``{"error": {"type": "invalid_request_error", "code":
"context_length_exceeded", "message": "This model's maximum context length is N tokens.
However, your messages resulted in X tokens. Please reduce the length of the messages."}}``.
The prompt size X is an estimate (:func:`prompt_tokens`): the UTF-8 bytes of the JSON of the
request's ``system``, ``messages`` and ``tools`` (compact separators) ÷ 3.5, rounded up. Such
a request is recorded with ``reply: "limit"`` and ``status: 400``. Through the project's
providers both become :class:`~pseudoclaude.llm.errors.PromptTooLong` whose ``str()`` is
``anthropic API error 400: prompt is too long: X tokens > N maximum`` or ``openai API error
400: This model's maximum context length is N tokens. However, ...``.

The two modes the compaction tests use, as examples::

    {"limit": {"max_tokens": 20000}}   # "provider limit": prompt-too-long above 20,000 tokens
    {"rules": [{"when": {"has_tools": false},            # "bare summary": a summary that
                "reply": {"text": "<summary>Work continues.</summary>"}}]}  # omits everything

Reply keys: ``text`` (a string, or a list of stream chunks), ``chunks`` (split a string into
this many stream pieces, default 3), ``thinking`` (a string, or a list of strings /
``{"thinking", "signature"}`` / ``{"redacted": data}``), ``tool_calls`` (``[{"name",
"arguments": object or raw string, "id"?}]``), ``arg_chunks`` (argument fragments per call,
default 3), ``usage`` (``{"input", "output", "cache_read", "cache_write"}``; ``input`` excludes
cached tokens, the OpenAI ``prompt_tokens`` are ``input + cache_read``), ``stop_reason``
(Anthropic or OpenAI names; default ``tool_use`` with tool calls, else ``end_turn``),
failures: ``error`` (``rate_limit`` 429, ``overloaded`` 529 / OpenAI 503, ``server_error``
500, ``prompt_too_long`` 400, ``auth`` 401, or ``{"status", "type", "message", "code"}``),
``retry_after`` (seconds, sent as a header with ``error``), ``error_after`` (send ``error``
as an in-stream error event after this many events instead of an HTTP status),
``cut_after`` (close the connection after this many stream events: a stream cut mid-way),
``stall`` (seconds to go silent) after ``stall_after`` events (default 0), ``delay`` (seconds
before each event), ``omit_done`` / ``omit_usage`` / ``omit_finish`` (OpenAI: end without
``[DONE]`` / the usage chunk / a ``finish_reason``, as some compatible servers do).

When the script is exhausted the :data:`DEFAULT_REPLY` answers (a short text).
:data:`DEMO_SCRIPT` (the CLI's default) drives an offline demo: the first request with tools
gets a ``read_file`` call for ``README.md``; a request whose last message is a tool result
gets a short answer; a request without tools (compaction or memory update) gets a reply that
contains both a ``<summary>`` block and an empty JSON array ``[]``.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import json
import math
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pseudoclaude.llm.provider import Provider

HOST = "127.0.0.1"
DEFAULT_REPLY: dict[str, Any] = {"text": "OK. (fake-model: no scripted reply left)"}
DEMO_SCRIPT: dict[str, Any] = {
    "rules": [
        {"when": {"has_tools": False}, "reply": {"text": (
            "<analysis>Offline demo: nothing to analyse.</analysis>\n<summary>\n"
            "1. Primary request and intent: the user ran the offline demo.\n"
            "2. Key technical concepts: none.\n3. Files and code: README.md was read.\n"
            "4. Errors and fixes: none.\n5. Problem solving: none.\n"
            "6. All user messages: see the recent window.\n7. Pending tasks: none.\n"
            "8. Current work: the demo.\n9. Next step: none.\n</summary>\n"
            "Memory operations: []")}},
        {"when": {"last_is_tool_result": True}, "reply": {
            "text": "I read README.md with read_file. The project keeps visible, resumable "
                    "sessions and Markdown memory; that is all this offline demo does.",
            "usage": {"input": 900, "output": 40, "cache_read": 600}}},
        {"when": {}, "reply": {
            "text": "Let me read the README first.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}],
            "usage": {"input": 700, "output": 30}}},
    ],
}

_NUMBER = (int, float)
_REPLY_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    # key: (accepted JSON types, what to say when it is something else)
    "text": ((str, list), "a string or a list of strings"),
    "chunks": ((int,), "a whole number"),
    "thinking": ((str, list), "a string or a list"),
    "tool_calls": ((list,), "a list"),
    "arg_chunks": ((int,), "a whole number"),
    "usage": ((dict,), "an object"),
    "stop_reason": ((str,), "a string"),
    "error": ((str, dict), "a string or an object"),
    "retry_after": (_NUMBER, "a number"),
    "error_after": ((int,), "a whole number"),
    "cut_after": ((int,), "a whole number"),
    "stall": (_NUMBER, "a number"),
    "stall_after": ((int,), "a whole number"),
    "delay": (_NUMBER, "a number"),
    "omit_done": ((bool,), "true or false"),
    "omit_usage": ((bool,), "true or false"),
    "omit_finish": ((bool,), "true or false"),
}
_WHEN_KEYS = {"last_user_contains", "system_contains", "body_contains", "has_tools",
              "last_is_tool_result", "protocol"}
_OPENAI_STOP = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                "stop_sequence": "stop", "refusal": "content_filter"}
_ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens",
                   "content_filter": "refusal"}

# (status, Anthropic error type, Anthropic message, OpenAI status, OpenAI type, code, message)
_ERRORS: dict[str, tuple[int, str, str, int, str, str | None, str]] = {
    "rate_limit": (429, "rate_limit_error",
                   "Number of request tokens has exceeded your per-minute rate limit",
                   429, "requests", "rate_limit_exceeded",
                   "Rate limit reached for requests per min. Please try again in 1s."),
    "overloaded": (529, "overloaded_error", "Overloaded",
                   503, "server_error", None,
                   "The engine is currently overloaded, please try again later."),
    "server_error": (500, "api_error", "Internal server error",
                     500, "server_error", None,
                     "The server had an error while processing your request."),
    "prompt_too_long": (400, "invalid_request_error",
                        "prompt is too long: 215000 tokens > 200000 maximum",
                        400, "invalid_request_error", "context_length_exceeded",
                        "This model's maximum context length is 128000 tokens. However, your "
                        "messages resulted in 131000 tokens. Please reduce the length of the "
                        "messages."),
    "auth": (401, "authentication_error", "invalid x-api-key",
             401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
}


class ScriptError(ValueError):
    """A malformed script: the message names the offending key."""


BYTES_PER_TOKEN = 3.5


def prompt_tokens(body: dict[str, Any]) -> int:
    """The estimated prompt size of a request (the ``limit`` mode's X): the UTF-8 bytes of the
    JSON of its ``system``, ``messages`` and ``tools`` (compact separators) ÷ 3.5, rounded up.
    """
    prompt = {key: body[key] for key in ("system", "messages", "tools") if key in body}
    size = len(json.dumps(prompt, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"))
    return math.ceil(size / BYTES_PER_TOKEN)


def limit_error(protocol: str, tokens: int, maximum: int) -> tuple[int, dict[str, Any]]:
    """The provider's own prompt-too-long answer (HTTP 400) for a ``tokens``-token prompt."""
    if protocol == "anthropic":
        return 400, {"type": "error", "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {tokens} tokens > {maximum} maximum"}}
    return 400, {"error": {
        "message": f"This model's maximum context length is {maximum} tokens. However, your "
                   f"messages resulted in {tokens} tokens. Please reduce the length of the "
                   "messages.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}


def _check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if not isinstance(limit, dict) or set(limit) != {"max_tokens"}:
        raise ScriptError('fake-model script: limit must be an object {"max_tokens": N}')
    value = limit["max_tokens"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScriptError(f"fake-model script: limit.max_tokens must be a whole number >= 1, "
                          f"got {value!r}"[:160])
    return value


def _list(spec: dict[str, Any], key: str) -> list[Any]:
    value = spec.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScriptError(f"fake-model script: {key} must be a list, got {type(value).__name__}")
    return value


def _check_reply(reply: Any, where: str) -> dict[str, Any]:
    if not isinstance(reply, dict):
        raise ScriptError(f"fake-model script: {where} must be an object")
    unknown = set(reply) - set(_REPLY_KEYS)
    if unknown:
        raise ScriptError(f"fake-model script: {where} has unknown key(s) {sorted(unknown)}")
    for key, value in reply.items():
        kinds, what = _REPLY_KEYS[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise ScriptError(f"fake-model script: {where}.{key} must be {what}, "
                              f"got {type(value).__name__}")
    error = reply.get("error")
    if isinstance(error, str) and error not in _ERRORS:
        raise ScriptError(f"fake-model script: {where}.error must be one of "
                          f"{sorted(_ERRORS)} or an object, got {error!r}")
    for i, call in enumerate(reply.get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ScriptError(f"fake-model script: {where}.tool_calls[{i}] needs a name")
    return reply


class Script:
    """Rules and turns, consumed thread-safely by the server (see the module docstring)."""

    def __init__(self, spec: Any = None) -> None:
        if spec is None:
            spec = {}
        if isinstance(spec, str | Path):
            spec = json.loads(Path(spec).read_text(encoding="utf-8"))
        if isinstance(spec, list):
            spec = {"turns": spec}
        if not isinstance(spec, dict):
            raise ScriptError("fake-model script: expected an object or a list of turns")
        unknown = set(spec) - {"turns", "rules", "default", "limit"}
        if unknown:
            raise ScriptError(f"fake-model script: unknown key(s) {sorted(unknown)}")
        self._lock = threading.Lock()
        self.turns = [_check_reply(t, f"turns[{i}]")
                      for i, t in enumerate(copy.deepcopy(_list(spec, "turns")))]
        self.rules: list[dict[str, Any]] = []
        for i, rule in enumerate(copy.deepcopy(_list(spec, "rules"))):
            if not isinstance(rule, dict) or "reply" not in rule:
                raise ScriptError(f"fake-model script: rules[{i}] must be an object with a "
                                  "reply")
            when = rule.get("when") or {}
            if not isinstance(when, dict) or set(when) - _WHEN_KEYS:
                raise ScriptError(f"fake-model script: rules[{i}].when may only use "
                                  f"{sorted(_WHEN_KEYS)}")
            times = rule.get("times")
            if times is not None and (isinstance(times, bool) or not isinstance(times, int)
                                      or times < 0):
                raise ScriptError(f"fake-model script: rules[{i}].times must be a whole "
                                  f"number >= 0, got {times!r}"[:160])
            _check_reply(rule["reply"], f"rules[{i}].reply")
            self.rules.append({"when": when, "reply": rule["reply"], "times": times})
        self.default = _check_reply(spec.get("default") or DEFAULT_REPLY, "default")
        self.max_tokens = _check_limit(spec.get("limit"))
        """The ``limit`` mode's N (None: no limit)."""
        self._next_turn = 0

    def add_turns(self, *turns: dict[str, Any]) -> None:
        with self._lock:
            self.turns.extend(_check_reply(t, "turn") for t in copy.deepcopy(turns))

    def choose(self, facts: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The reply for a request (``facts`` from :func:`request_facts`) and its origin."""
        with self._lock:
            for i, rule in enumerate(self.rules):
                if rule["times"] is not None and rule["times"] <= 0:
                    continue
                if _matches(rule["when"], facts):
                    if rule["times"] is not None:
                        rule["times"] -= 1
                    return f"rule {i}", copy.deepcopy(rule["reply"])
            if self._next_turn < len(self.turns):
                self._next_turn += 1
                return f"turn {self._next_turn - 1}", copy.deepcopy(self.turns[self._next_turn - 1])
            return "default", copy.deepcopy(self.default)


def _matches(when: dict[str, Any], facts: dict[str, Any]) -> bool:
    for key, expected in when.items():
        if key in ("has_tools", "last_is_tool_result", "protocol"):
            if facts[key] != expected:
                return False
        else:
            field = {"last_user_contains": "last_user", "system_contains": "system",
                     "body_contains": "body"}[key]
            if str(expected) not in facts[field]:
                return False
    return True


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text")
    return ""


def request_facts(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    """What rules can match on: system text, last user text, tools, last message kind."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if protocol == "anthropic":
        system = _text_of(body.get("system"))
    else:
        system = "\n".join(_text_of(m.get("content")) for m in messages
                           if m.get("role") in ("system", "developer"))
    users = [m for m in messages if m.get("role") == "user"]
    last = messages[-1] if messages else {}
    if protocol == "anthropic":
        content = last.get("content")
        last_is_result = last.get("role") == "user" and isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    else:
        last_is_result = last.get("role") == "tool"
    return {
        "protocol": protocol, "system": system,
        "last_user": _text_of(users[-1].get("content")) if users else "",
        "has_tools": bool(body.get("tools")), "last_is_tool_result": last_is_result,
        "body": json.dumps(body, ensure_ascii=False),
    }


def _pieces(text: str, count: int) -> list[str]:
    count = max(1, min(count, len(text)))
    size = -(-len(text) // count)
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class _Reply:
    """A normalised reply: the content both wire formats are generated from."""

    _ids = itertools.count(1)

    def __init__(self, spec: dict[str, Any], body: dict[str, Any]) -> None:
        text = spec.get("text", "")
        self.chunks = [str(t) for t in text] if isinstance(text, list) else (
            _pieces(text, int(spec.get("chunks", 3))) if text else [])
        self.text = "".join(self.chunks)
        thinking = spec.get("thinking") or []
        self.thinking: list[dict[str, str]] = []
        for item in [thinking] if isinstance(thinking, str | dict) else thinking:
            if isinstance(item, str):
                item = {"thinking": item}
            if "redacted" in item:
                self.thinking.append({"redacted": str(item["redacted"])})
            else:
                sig = item.get("signature") or "sig-" + hashlib.sha256(
                    str(item["thinking"]).encode()).hexdigest()[:16]
                self.thinking.append({"thinking": str(item["thinking"]), "signature": sig})
        self.arg_chunks = int(spec.get("arg_chunks", 3))
        self.calls: list[dict[str, Any]] = []
        for call in spec.get("tool_calls") or []:
            args = call.get("arguments", {})
            raw = args if isinstance(args, str) else json.dumps(args)
            self.calls.append({"id": call.get("id") or f"fake_{next(self._ids)}",
                               "name": call["name"], "raw": raw,
                               "input": args if isinstance(args, dict) else {}})
        stop = str(spec.get("stop_reason") or ("tool_use" if self.calls else "end_turn"))
        self.stop = _ANTHROPIC_STOP.get(stop, stop)
        usage = spec.get("usage") or {}
        self.input = int(usage.get("input", max(1, len(json.dumps(body)) // 4)))
        self.output = int(usage.get("output", max(1, len(self.text) // 4 + 5 * len(self.calls))))
        self.cache_read = int(usage.get("cache_read", 0))
        self.cache_write = int(usage.get("cache_write", 0))
        self.model = str(body.get("model") or "fake-model")


def anthropic_events(reply: _Reply) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a Messages API stream for ``reply``."""
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {
        "type": "message_start", "message": {
            "id": f"msg_fake_{next(_Reply._ids)}", "type": "message", "role": "assistant",
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
                  [{"type": "thinking_delta", "thinking": p} for p in _pieces(t["thinking"], 2)]
                  + [{"type": "signature_delta", "signature": t["signature"]}])
    if reply.chunks:
        block({"type": "text", "text": ""},
              [{"type": "text_delta", "text": c} for c in reply.chunks])
    for call in reply.calls:
        block({"type": "tool_use", "id": "toolu_" + call["id"], "name": call["name"],
               "input": {}},
              [{"type": "input_json_delta", "partial_json": p}
               for p in _pieces(call["raw"], reply.arg_chunks)])
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": reply.stop, "stop_sequence": None},
                                     "usage": {"output_tokens": reply.output}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_message(reply: _Reply) -> dict[str, Any]:
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
    return {"id": f"msg_fake_{next(_Reply._ids)}", "type": "message", "role": "assistant",
            "model": reply.model, "content": content, "stop_reason": reply.stop,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input, "output_tokens": reply.output,
                      "cache_read_input_tokens": reply.cache_read,
                      "cache_creation_input_tokens": reply.cache_write}}


def _openai_usage(reply: _Reply) -> dict[str, Any]:
    prompt = reply.input + reply.cache_read
    return {"prompt_tokens": prompt, "completion_tokens": reply.output,
            "total_tokens": prompt + reply.output,
            "prompt_tokens_details": {"cached_tokens": reply.cache_read}}


def openai_chunks(reply: _Reply, include_usage: bool, finish: bool = True
                  ) -> list[dict[str, Any]]:
    """The ``data:`` chunks of a Chat Completions stream for ``reply`` (without ``[DONE]``)."""
    base = {"id": f"chatcmpl-fake{next(_Reply._ids)}", "object": "chat.completion.chunk",
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
                   for p in _pieces(call["raw"], reply.arg_chunks)]
    if finish:
        chunks.append(chunk({}, _OPENAI_STOP.get(reply.stop, reply.stop)))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": _openai_usage(reply)})
    return chunks


def openai_completion(reply: _Reply) -> dict[str, Any]:
    """The plain (non-streamed) Chat Completions response for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [{"id": "call_" + c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["raw"]}}
                                 for c in reply.calls]
    return {"id": f"chatcmpl-fake{next(_Reply._ids)}", "object": "chat.completion",
            "created": int(time.time()), "model": reply.model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": _OPENAI_STOP.get(reply.stop, reply.stop)}],
            "usage": _openai_usage(reply)}


def error_body(protocol: str, error: Any) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body of an injected failure, in the API's own error shape."""
    if isinstance(error, str):
        status, a_type, a_msg, o_status, o_type, code, o_msg = _ERRORS[error]
    else:
        status = o_status = int(error.get("status", 500))
        a_type = o_type = str(error.get("type", "api_error"))
        a_msg = o_msg = str(error.get("message", "injected failure"))
        code = error.get("code")
    if protocol == "anthropic":
        return status, {"type": "error", "error": {"type": a_type, "message": a_msg}}
    return o_status, {"error": {"message": o_msg, "type": o_type, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stdout
        return

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/_requests":
            self.send_json(200, self.server.owner.requests)
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/_script":
            try:
                self.server.owner.script = Script(json.loads(raw or b"{}"))
            except (ValueError, ScriptError) as exc:
                self.send_json(400, {"error": {"message": str(exc)}})
                return
            self.send_json(200, {"ok": True})
            return
        protocol = {"/v1/messages": "anthropic", "/messages": "anthropic",
                    "/v1/chat/completions": "openai", "/chat/completions": "openai"}.get(path)
        if protocol is None:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"type": "invalid_request_error",
                                       "message": "body is not JSON"}})
            return
        self.server.owner.serve(self, protocol, path, body)

    # --- streaming helpers (used by FakeModelServer.serve) ----------------------------------

    def peer_gone(self) -> bool:
        """Whether the client closed its end (EOF waiting on our socket)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True

    def send_chunk(self, data: bytes) -> bool:
        """Write one HTTP chunk; ``False`` when the client is gone."""
        if self.peer_gone():
            return False
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError:
            return False
        return True

    def cut(self) -> None:
        """Close the connection abruptly (no terminating chunk)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FakeModelServer


class FakeModelServer:
    """The scripted model server, on a background thread; a context manager for tests.

    ``base_url`` works for both SDKs (``http://127.0.0.1:PORT``); ``requests`` are the recorded
    requests (``{"id", "path", "protocol", "stream", "body", "reply", "status",
    "disconnected", "completed"}``), oldest first.
    """

    def __init__(self, script: Any = None, *, port: int = 0) -> None:
        self.script = script if isinstance(script, Script) else Script(script)
        self._records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _HTTPServer((HOST, port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._records)

    def add_turns(self, *turns: dict[str, Any]) -> None:
        self.script.add_turns(*turns)

    def provider_source(self, protocol: str = "anthropic", model: str = "fake-model",
                        read_timeout: float = 30.0) -> Callable[[], Awaitable[Provider]]:
        """A provider source (what ``CompactRuntime`` and ``MemoryManager`` take) on this
        server through the real SDK of ``protocol``: created on first use, then reused."""
        from pseudoclaude.config import Secret
        from pseudoclaude.llm.provider import ProviderOptions, create_provider

        cache: list[Provider] = []

        async def source() -> Provider:
            if not cache:
                cache.append(await create_provider(ProviderOptions(
                    provider=protocol, model=model, api_key=Secret("sk-fake-model"),
                    base_url=self.base_url, max_retries=0, read_timeout=read_timeout)))
            return cache[0]

        return source

    def start(self) -> FakeModelServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                            name="fake-model", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool],
                 timeout: float = 5.0) -> bool:
        """Poll ``predicate(requests)`` until it holds (``True``) or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.requests):
                return True
            time.sleep(0.01)
        return predicate(self.requests)

    # --- serving -----------------------------------------------------------------------------

    def _update(self, record: dict[str, Any], **changes: Any) -> None:
        with self._lock:
            record.update(changes)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)

    def serve(self, handler: _Handler, protocol: str, path: str, body: dict[str, Any]) -> None:
        script = self.script
        stream = bool(body.get("stream"))
        if script.max_tokens is not None:
            tokens = prompt_tokens(body)
            if tokens > script.max_tokens:
                status, payload = limit_error(protocol, tokens, script.max_tokens)
                with self._lock:
                    self._records.append({
                        "id": len(self._records), "path": path, "protocol": protocol,
                        "stream": stream, "body": body, "reply": "limit", "status": status,
                        "disconnected": False, "completed": True})
                handler.send_json(status, payload)
                return
        origin, spec = script.choose(request_facts(protocol, body))
        with self._lock:
            record: dict[str, Any] = {
                "id": len(self._records), "path": path, "protocol": protocol, "stream": stream,
                "body": body, "reply": origin, "status": 200, "disconnected": False,
                "completed": False}
            self._records.append(record)
        if spec.get("error") is not None and spec.get("error_after") is None:
            status, payload = error_body(protocol, spec["error"])
            headers = ({"retry-after": str(spec["retry_after"])}
                       if spec.get("retry_after") is not None else None)
            self._sleep(float(spec.get("stall", 0)))
            handler.send_json(status, payload, headers)
            self._update(record, status=status, completed=True)
            return
        reply = _Reply(spec, body)
        if not stream:
            self._sleep(float(spec.get("stall", 0)))
            if spec.get("cut_after") is not None:
                handler.cut()
                self._update(record, status=0)
                return
            handler.send_json(200, anthropic_message(reply) if protocol == "anthropic"
                          else openai_completion(reply))
            self._update(record, completed=True)
            return
        self._stream(handler, protocol, body, spec, reply, record)

    def _frames(self, protocol: str, body: dict[str, Any], spec: dict[str, Any],
                reply: _Reply) -> Iterator[bytes]:
        if protocol == "anthropic":
            for name, data in anthropic_events(reply):
                yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            return
        options = body.get("stream_options") or {}
        include_usage = bool(options.get("include_usage")) and not spec.get("omit_usage")
        for data in openai_chunks(reply, include_usage, not spec.get("omit_finish")):
            yield f"data: {json.dumps(data)}\n\n".encode()
        if not spec.get("omit_done"):
            yield b"data: [DONE]\n\n"

    def _stream(self, handler: _Handler, protocol: str, body: dict[str, Any],
                spec: dict[str, Any], reply: _Reply, record: dict[str, Any]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        cut_after = spec.get("cut_after")
        error_after = spec.get("error_after")
        stall_after = int(spec.get("stall_after", 0))
        delay = float(spec.get("delay", 0))
        for sent, frame in enumerate(self._frames(protocol, body, spec, reply)):
            if sent == stall_after:
                self._sleep(float(spec.get("stall", 0)))
            if cut_after is not None and sent >= int(cut_after):
                handler.cut()
                return
            if error_after is not None and sent >= int(error_after):
                _, payload = error_body(protocol, spec["error"])
                frame = (f"event: error\ndata: {json.dumps(payload)}\n\n" if protocol ==
                         "anthropic" else f"data: {json.dumps(payload)}\n\n").encode()
                handler.send_chunk(frame)
                break
            self._sleep(delay)
            if self._stop.is_set() or not handler.send_chunk(frame):
                self._update(record, disconnected=True)
                return
        else:
            if cut_after is not None:  # cut_after beyond the last event: cut at the end
                handler.cut()
                return
        try:
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            self._update(record, disconnected=True)
            return
        self._update(record, completed=True)


def main(argv: list[str] | None = None) -> int:
    """``pseudoclaude fake-model [--port N] [--script FILE]``: serve until interrupted.

    Prints the base URL (``http://127.0.0.1:PORT``) as the first line on stdout.
    """
    parser = argparse.ArgumentParser(
        prog="pseudoclaude fake-model",
        description="Scripted model server on 127.0.0.1 (Anthropic and OpenAI wire formats).")
    parser.add_argument("--port", type=int, default=0, help="port (0: pick a free one)")
    parser.add_argument("--script", type=Path,
                        help="JSON script of turns/rules (default: the built-in demo script)")
    args = parser.parse_args(argv)
    try:
        script = Script(args.script if args.script else DEMO_SCRIPT)
    except ScriptError as exc:
        print(f"pseudoclaude {exc}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"pseudoclaude fake-model: {args.script} is not valid JSON: {exc}",
              file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as exc:
        print(f"pseudoclaude fake-model: cannot read {args.script}: {exc}", file=sys.stderr)
        return 2
    try:
        server = FakeModelServer(script, port=args.port)
    except OSError as exc:
        print(f"pseudoclaude fake-model: cannot listen on {HOST}:{args.port}: {exc}",
              file=sys.stderr)
        return 1
    done = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        try:
            while not done.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
