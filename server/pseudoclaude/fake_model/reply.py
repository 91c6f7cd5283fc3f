"""A scripted reply normalised (:class:`Reply`): the content both wire formats are generated
from, and the stream pieces text and arguments are cut into."""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

from pseudoclaude.fake_model.cache import CacheUsage

ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens",
                  "content_filter": "refusal"}

_ids = itertools.count(1)


def next_id() -> int:
    """The next number of the ids the fake model makes up (calls, messages, completions)."""
    return next(_ids)


def pieces(text: str, count: int) -> list[str]:
    count = max(1, min(count, len(text)))
    size = -(-len(text) // count)
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class Reply:
    """A normalised reply: the content both wire formats are generated from."""

    def __init__(self, spec: dict[str, Any], body: dict[str, Any],
                 cache: CacheUsage | None = None) -> None:
        text = spec.get("text", "")
        self.chunks = [str(t) for t in text] if isinstance(text, list) else (
            pieces(text, int(spec.get("chunks", 3))) if text else [])
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
            self.calls.append({"id": call.get("id") or f"fake_{next_id()}",
                               "name": call["name"], "raw": raw,
                               "input": args if isinstance(args, dict) else {}})
        stop = str(spec.get("stop_reason") or ("tool_use" if self.calls else "end_turn"))
        self.stop = ANTHROPIC_STOP.get(stop, stop)
        usage = spec.get("usage") or {}
        if cache is not None and "input" not in usage:  # the simulation's bill
            usage = {**usage, "input": cache.input, "cache_read": cache.read,
                     "cache_write": cache.write}
        self.input = int(usage.get("input", max(1, len(json.dumps(body)) // 4)))
        self.output = int(usage.get("output", max(1, len(self.text) // 4 + 5 * len(self.calls))))
        self.cache_read = int(usage.get("cache_read", 0))
        self.cache_write = int(usage.get("cache_write", 0))
        self.model = str(body.get("model") or "fake-model")
