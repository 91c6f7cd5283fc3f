"""The MCP thread: one daemon thread running its own asyncio event loop, where every MCP
session lives.

The caller's loop never runs MCP code: :meth:`LoopThread.run` schedules a coroutine on the MCP
loop (``asyncio.run_coroutine_threadsafe``) and awaits it from the caller's loop
(``asyncio.wrap_future``). Cancelling the awaiting task cancels the coroutine on the MCP loop.
The thread starts on the first :meth:`~LoopThread.submit` (nothing runs before something is
needed) and ends with :meth:`~LoopThread.stop`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger("pseudoclaude.mcp")
T = TypeVar("T")


class LoopClosed(RuntimeError):
    """The MCP thread was stopped."""


class LoopThread:
    """The MCP thread (see the module docstring). Thread-safe."""

    def __init__(self, name: str = "pseudoclaude-mcp") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The MCP loop (started if needed)."""
        with self._lock:
            if self._stopped:
                raise LoopClosed("the MCP thread is stopped")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(target=self._main, args=(loop, ready), name=self._name,
                                          daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    @property
    def started(self) -> bool:
        return self._loop is not None

    def in_thread(self) -> bool:
        """Whether the caller runs on the MCP thread."""
        return self._thread is not None and threading.current_thread() is self._thread

    @staticmethod
    def _main(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                _cancel_all(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the MCP loop (from any other thread)."""
        try:
            loop = self.loop
        except LoopClosed:
            coro.close()
            raise
        return asyncio.run_coroutine_threadsafe(coro, loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the MCP loop and await it from the caller's loop; cancelling the
        caller cancels ``coro``."""
        return await asyncio.wrap_future(self.submit(coro))

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback`` on the MCP thread soon (nothing when it is stopped)."""
        with contextlib.suppress(LoopClosed, RuntimeError):
            self.loop.call_soon_threadsafe(callback, *args)

    def stop(self, timeout: float = 2.0) -> None:
        """End the thread: pending tasks are cancelled. Waits at most ``timeout`` seconds."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        if thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                log.warning("the MCP thread did not end within %.1f s", timeout)


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=1.0))
