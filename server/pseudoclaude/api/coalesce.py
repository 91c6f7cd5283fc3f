"""Streamed text deltas merged into fewer ``pseudoclaude/event`` notifications.

A fast model streams hundreds of ``text`` deltas a second. Sent one notification each, they keep
the server's event loop (which encodes and writes every one) and the editor (which decodes every
one) busy, and a read-only request waits behind them. :class:`TextCoalescer` holds the deltas of
each stream (a workspace, a session, a sub-agent) and hands them out merged: the deltas held for
a stream become one ``text`` event of the same shape whose ``delta`` is their concatenation, in
order.
Every client appends a delta to the text it shows (VS Code's chat and transcript, Neovim's
chat and transcript), so the merged event shows the same text.

The front end's side of the contract (:class:`pseudoclaude.lsp.server.PseudoClaudeServer`):

- a delta whose :meth:`~TextCoalescer.add` returns 0 is due now: flush;
- otherwise flush when the returned delay has passed (one timer at a time);
- flush before it sends anything else (another event such as ``toolCall`` or ``stop``, a
  response, a log message), so nothing overtakes text emitted before it.

The policy is a throttle: text that arrives after ``window`` seconds without a flush goes out at
once (a slowly streaming model is not delayed at all), later text waits for the end of the window
(at most one text notification per stream per ``window`` while a model streams fast).
Nothing here imports pygls: the clock is a parameter and the caller owns the timer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

WINDOW = 0.016
"""Seconds: at most one text notification per stream per window (a 60 Hz frame) while a model
streams fast; editors render no faster."""

_Stream = tuple[Any, Any, Any]


class TextCoalescer:
    """``text`` event params held per stream, merged when taken."""

    def __init__(self, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self._clock = clock
        # per stream, in the order of its first held delta: the first params, the deltas
        self._held: dict[_Stream, tuple[dict[str, Any], list[str]]] = {}
        self._last_flush = float("-inf")

    @property
    def pending(self) -> bool:
        """Whether any text is held."""
        return bool(self._held)

    def add(self, params: dict[str, Any]) -> float:
        """Hold the params of one ``text`` event (``{workspace?, sessionId, kind, delta}``);
        the seconds until the held text is due (0: flush now)."""
        stream = (params.get("workspace"), params.get("sessionId"), params.get("agentId"))
        held = self._held.get(stream)
        if held is None:
            self._held[stream] = (params, [params["delta"]])
        else:
            held[1].append(params["delta"])
        return max(0.0, self._last_flush + self.window - self._clock())

    def take(self) -> list[dict[str, Any]]:
        """Every held stream as one ``text`` event (its deltas joined), in the order of each
        stream's first held delta; nothing is held afterwards."""
        if not self._held:
            return []
        self._last_flush = self._clock()
        merged = [params if len(deltas) == 1 else {**params, "delta": "".join(deltas)}
                  for params, deltas in self._held.values()]
        self._held.clear()
        return merged
