"""The fake model's script: rules and turns, their checks (each failure a one-line
:class:`ScriptError` naming the key), and the facts of a request that rules match on."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

from pseudoclaude.compact.layer2 import CACHED_SUMMARY_MARKER, SUMMARY_SYSTEM
from pseudoclaude.fake_model.errors import ERRORS

DEFAULT_REPLY: dict[str, Any] = {"text": "OK. (fake-model: no scripted reply left)"}
_DEMO_SIDE_REPLY: dict[str, Any] = {"text": (
    "<analysis>Offline demo: nothing to analyse.</analysis>\n<summary>\n"
    "1. Primary request and intent: the user ran the offline demo.\n"
    "2. Key technical concepts: none.\n3. Files and code: README.md was read.\n"
    "4. Errors and fixes: none.\n5. Problem solving: none.\n"
    "6. All user messages: see the recent window.\n7. Pending tasks: none.\n"
    "8. Current work: the demo.\n9. Next step: none.\n</summary>\n"
    "Memory operations: []")}
"""The demo's summaries and memory updates: a summary and an empty list of operations."""
DEMO_SCRIPT: dict[str, Any] = {
    "rules": [
        {"when": {"summary": True}, "reply": _DEMO_SIDE_REPLY},
        {"when": {"has_tools": False}, "reply": _DEMO_SIDE_REPLY},
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
REPLY_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
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
    "hold": ((str,), "a string (the name FakeModelServer.release takes)"),
    "omit_done": ((bool,), "true or false"),
    "omit_usage": ((bool,), "true or false"),
    "omit_finish": ((bool,), "true or false"),
}
"""The keys of a reply (``turns``, ``rules[].reply``, ``default``)."""
WHEN_KEYS = {"last_user_contains", "system_contains", "body_contains", "has_tools",
             "last_is_tool_result", "protocol", "summary"}
"""The conditions of a rule's ``when``."""
SCRIPT_KEYS = {"turns", "rules", "default", "limit", "cache", "local"}
"""The keys of a script."""
LOCAL_KEYS = {"props": "/props", "models": "/v1/models", "show": "/api/show"}
"""The ``local`` mode's keys: what a local server answers at these paths (llama.cpp, vLLM,
Ollama); a path without one answers 404."""


class ScriptError(ValueError):
    """A malformed script: the message names the offending key."""



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


def _check_local(local: Any) -> dict[str, Any]:
    if local is None:
        return {}
    if not isinstance(local, dict) or set(local) - set(LOCAL_KEYS):
        raise ScriptError(f"fake-model script: local must be an object with keys from "
                          f"{sorted(LOCAL_KEYS)}")
    for key, value in local.items():
        if not isinstance(value, dict):
            raise ScriptError(f"fake-model script: local.{key} must be an object (the JSON "
                              f"{LOCAL_KEYS[key]} answers), got {type(value).__name__}")
    return {LOCAL_KEYS[key]: value for key, value in local.items()}


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
    unknown = set(reply) - set(REPLY_KEYS)
    if unknown:
        raise ScriptError(f"fake-model script: {where} has unknown key(s) {sorted(unknown)}")
    for key, value in reply.items():
        kinds, what = REPLY_KEYS[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise ScriptError(f"fake-model script: {where}.{key} must be {what}, "
                              f"got {type(value).__name__}")
    error = reply.get("error")
    if reply.get("error_after") is not None and error is None:
        raise ScriptError(f"fake-model script: {where}.error_after needs an error to send")
    if isinstance(error, str) and error not in ERRORS:
        raise ScriptError(f"fake-model script: {where}.error must be one of "
                          f"{sorted(ERRORS)} or an object, got {error!r}")
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
        unknown = set(spec) - SCRIPT_KEYS
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
            if not isinstance(when, dict) or set(when) - WHEN_KEYS:
                raise ScriptError(f"fake-model script: rules[{i}].when may only use "
                                  f"{sorted(WHEN_KEYS)}")
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
        cache = spec.get("cache", False)
        if not isinstance(cache, bool):
            raise ScriptError(f"fake-model script: cache must be true or false, got {cache!r}"
                              [:160])
        self.cache = cache
        """Bill prompts through the prefix-cache simulation (:mod:`.cache`)."""
        self.local = _check_local(spec.get("local"))
        """The ``local`` mode: path → the JSON answered there (a local server's facts)."""
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
        if key in ("has_tools", "last_is_tool_result", "protocol", "summary"):
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
    last_user = _text_of(users[-1].get("content")) if users else ""
    return {
        "protocol": protocol, "system": system, "last_user": last_user,
        "has_tools": bool(body.get("tools")), "last_is_tool_result": last_is_result,
        "summary": system == SUMMARY_SYSTEM or CACHED_SUMMARY_MARKER in last_user,
        "body": json.dumps(body, ensure_ascii=False),
    }
