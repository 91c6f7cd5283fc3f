"""The fake model's prompt-cache simulation: what a provider bills as cache reads and writes.

With ``"cache": true`` in the script, the usage of every reply (unless the reply scripts its own
``usage.input``) comes from this simulation instead of a guess, so tests and benches see the
cache numbers a real provider would report for the same requests.

Anthropic (explicit breakpoints, as the Messages API documents them):

- the prompt is a sequence of blocks in the API's prefix order: each tool, the system blocks,
  then every content block of every message (a message's role is part of its first block);
- a block marked ``cache_control`` is a breakpoint; for each breakpoint the cache is looked up
  at that block and up to 19 blocks before it, and the longest prefix found is read
  (``cache_read_input_tokens``);
- every breakpoint after the read point writes its prefix (``cache_creation_input_tokens``:
  the tokens from the read point to the last breakpoint); the rest is ``input_tokens``;
- a prefix under :data:`MIN_CACHEABLE` tokens is never written; entries never expire here (a
  bench session runs in seconds, well inside the 5-minute lifetime).

OpenAI (automatic): a prompt of :data:`MIN_CACHEABLE` tokens or more reads the longest prefix,
at block boundaries, that an earlier request of the same model sent, rounded down to
1,024 + a multiple of 128 tokens (``prompt_tokens_details.cached_tokens``); every prompt's
prefixes are stored.

Caches are per model. Tokens are the canonical JSON bytes of the blocks ÷ 3.5, rounded up.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from typing import Any

from pseudoclaude.fake_model.tokens import BYTES_PER_TOKEN

MIN_CACHEABLE = 1_024
"""The shortest prefix a provider caches, in tokens (Anthropic's Sonnet and Opus, OpenAI)."""
LOOKBACK_BLOCKS = 20
"""How many blocks, the breakpoint's own included, Anthropic searches for an earlier entry."""
OPENAI_INCREMENT = 128


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """One request's prompt, billed: ``input`` (uncached), ``read`` and ``write`` tokens."""

    input: int
    read: int
    write: int

    @property
    def prompt(self) -> int:
        return self.input + self.read + self.write


@dataclass(frozen=True, slots=True)
class Prefix:
    """A prompt's blocks: each one's cumulative key (the model and every block up to it) and
    cumulative tokens, and the indexes of the breakpoints."""

    keys: list[str]
    tokens: list[int]
    breakpoints: list[int]


def _canonical(block: Any) -> bytes:
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, ensure_ascii=False, sort_keys=True,
                      separators=(",", ":")).encode("utf-8", "surrogatepass")


def _blocks(body: dict[str, Any]) -> list[tuple[bytes, bool]]:
    """The prompt as ``(canonical bytes, is a breakpoint)`` blocks, in prefix order."""
    out: list[tuple[bytes, bool]] = []

    def add(block: Any, prefix: bytes = b"") -> None:
        marked = isinstance(block, dict) and "cache_control" in block
        out.append((prefix + _canonical(block), marked))

    for tool in body.get("tools") or []:
        add(tool, b"tool:")
    system = body.get("system")
    if isinstance(system, str):
        if system:
            add({"type": "text", "text": system}, b"system:")
    else:
        for block in system or []:
            add(block, b"system:")
    for message in body.get("messages") or []:
        role = str(message.get("role", "")).encode()
        content = message.get("content")
        extra = {k: v for k, v in message.items() if k not in ("role", "content")}
        if content is None or isinstance(content, str):
            add({"text": content or "", **extra}, b"msg:" + role + b":")
            continue
        for i, block in enumerate(content):
            add(block, (b"msg:" + role + b":") if i == 0 else b"")
        if extra:  # an OpenAI message's tool_calls, tool_call_id, name
            add(extra)
    return out


def prefix_of(body: dict[str, Any]) -> Prefix:
    model = str(body.get("model") or "")
    digest = hashlib.sha256(model.encode())
    size = 0
    keys: list[str] = []
    tokens: list[int] = []
    breakpoints: list[int] = []
    for i, (data, marked) in enumerate(_blocks(body)):
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
        size += len(data)
        keys.append(digest.copy().hexdigest())
        tokens.append(math.ceil(size / BYTES_PER_TOKEN))
        if marked:
            breakpoints.append(i)
    return Prefix(keys, tokens, breakpoints)


class PrefixCache:
    """The entries written so far (a prefix key -> its tokens), shared by both wire formats
    (the model is part of every key), thread-safe."""

    def __init__(self) -> None:
        self._entries: dict[str, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def anthropic(self, body: dict[str, Any]) -> CacheUsage:
        p = prefix_of(body)
        total = p.tokens[-1] if p.tokens else 0
        with self._lock:
            hit = -1  # the last block of the longest prefix read (-1: none)
            for b in p.breakpoints:
                for k in range(b, max(-1, b - LOOKBACK_BLOCKS), -1):
                    if p.keys[k] in self._entries:
                        hit = max(hit, k)
                        break
            read = p.tokens[hit] if hit >= 0 else 0
            covered = hit
            for b in p.breakpoints:
                if b > hit and p.tokens[b] >= MIN_CACHEABLE:
                    self._entries[p.keys[b]] = p.tokens[b]
                    covered = max(covered, b)
        written = (p.tokens[covered] if covered >= 0 else 0) - read
        return CacheUsage(input=total - read - written, read=read, write=written)

    def openai(self, body: dict[str, Any]) -> CacheUsage:
        p = prefix_of(body)
        total = p.tokens[-1] if p.tokens else 0
        with self._lock:
            seen = next((p.tokens[k] for k in range(len(p.keys) - 1, -1, -1)
                         if p.keys[k] in self._entries), 0)
            for key, tokens in zip(p.keys, p.tokens, strict=True):
                self._entries[key] = tokens
        cached = 0
        if total >= MIN_CACHEABLE and seen >= MIN_CACHEABLE:
            cached = MIN_CACHEABLE + (seen - MIN_CACHEABLE) // OPENAI_INCREMENT * OPENAI_INCREMENT
        return CacheUsage(input=total - cached, read=cached, write=0)

    def bill(self, protocol: str, body: dict[str, Any]) -> CacheUsage:
        return self.anthropic(body) if protocol == "anthropic" else self.openai(body)
