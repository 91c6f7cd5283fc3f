"""What a front end calls around its requests, besides :class:`~pseudoclaude.workspace.Workspace`.

- :func:`on_write`: which session a request turned out to write. A run of ``new`` (or of the
  current session, or of ``latest``) picks its session inside the workspace; a front end that
  reports per session (the LSP server's ``$/progress``) learns it from the callback, called
  once the session is taken for writing and before anything is written. The callback is
  carried by the request's :mod:`contextvars` context, so two requests running at once each
  hear about their own session only.
- :func:`preload_provider`: a provider's SDK imported ahead of the first run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from pseudoclaude.llm.provider import preload

OnWrite = Callable[[str, str], None]
"""``(session id, what writes it)``: ``a run``, ``a compaction``, ``an undo``, ..."""

_on_write: ContextVar[OnWrite | None] = ContextVar("pseudoclaude_on_write", default=None)


@contextlib.contextmanager
def on_write(callback: OnWrite) -> Iterator[None]:
    """Within this block (and the tasks and threads it starts), ``callback`` hears of every
    session that starts being written (:meth:`Session.writing
    <pseudoclaude.workspace.session.Session.writing>`); it runs on the event loop and must not
    block."""
    token = _on_write.set(callback)
    try:
        yield
    finally:
        _on_write.reset(token)


def announce_write(session_id: str, doing: str) -> None:
    """Tell the current request's :func:`on_write` callback, if any (the workspace calls it)."""
    callback = _on_write.get()
    if callback is not None:
        callback(session_id, doing)


async def preload_provider(provider: str | None) -> None:
    """Import a provider's adapter and SDK ahead of the first run, in a worker thread (up to
    ~1.5 s of CPU that the first run then does not wait for); an unknown or no provider: nothing
    to do."""
    await preload(provider)
