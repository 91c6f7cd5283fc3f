"""The CLI's approver: it asks on the terminal (SPEC §6, §11 "Diff approvals").

:class:`TerminalApprover` prompts on ``/dev/tty`` (or on stdin/stderr when stdin is a
terminal); with no terminal, it refuses with a reason naming the setting to change. Before
asking to approve a write it prints the change as a unified diff (:func:`unified_diff`;
coloured only on a terminal).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import re
import sys
import threading
from collections.abc import Callable
from typing import IO

from pseudoclaude.workspace import (
    Answer,
    ApprovalRequest,
    ApprovalUnavailable,
    Decision,
    compact_json,
)

DIFF_LINES = 400
"""At most this many lines of a diff are printed on the terminal (the rest is counted)."""
_DIFF_LINE_CHARS = 1000
_NO_NEWLINE = "\\ No newline at end of file"
_STYLES = {"-": "\x1b[31m", "+": "\x1b[32m", "@": "\x1b[36m"}
_HEADER = "\x1b[1m"
_RESET = "\x1b[0m"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def unified_diff(path: str, before: str, after: str, *, colour: bool = False,
                 max_lines: int = DIFF_LINES) -> str:
    """The change from ``before`` to ``after`` as a unified diff (``--- a/path``,
    ``+++ b/path``, three lines of context, git's "\\ No newline at end of file"), safe to
    print: control characters (an escape sequence in a file, a lone ``\\r``) and bidirectional
    overrides are shown as ``\\xNN`` / ``\\uNNNN``, never sent to the terminal. ``colour``
    adds ANSI colours (removed lines red, added green, hunk headers cyan). At most
    ``max_lines`` lines; an identical text says so."""
    name = _printable(path)
    lines = list(difflib.unified_diff(_split(before), _split(after), f"a/{name}",
                                      f"b/{name}"))
    if not lines:
        return "(no change: the file already has exactly this text)\n"
    out: list[str] = []
    for index, line in enumerate(lines):
        if index >= max_lines:
            out.append(f"... {len(lines) - index} more lines of the diff not shown\n")
            break
        header = index < 2
        ended = line.endswith("\n")
        text = _printable(line.rstrip("\n").removesuffix("\r") if ended or header else line)
        if len(text) > _DIFF_LINE_CHARS:
            text = text[:_DIFF_LINE_CHARS] + "…"
        if colour:
            style = _HEADER if header else _STYLES.get(text[:1], "")
            text = f"{style}{text}{_RESET}" if style else text
        out.append(text + "\n")
        if not ended and not header:
            out.append(_NO_NEWLINE + "\n")
    return "".join(out)


def _split(text: str) -> list[str]:
    """Lines with their ``\\n`` (only ``\\n`` ends a line, unlike :meth:`str.splitlines`)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _printable(text: str) -> str:
    """Control characters and bidirectional overrides (which could make the diff read
    differently from what is written) as ``\\xNN`` / ``\\uNNNN``."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _colour(stream: IO[str]) -> bool:
    """Colours only on a terminal, and not when ``NO_COLOR`` is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


_ANSWERS: dict[str, Decision] = {
    "o": "allow_once", "once": "allow_once", "y": "allow_once", "yes": "allow_once",
    "s": "allow_session", "session": "allow_session",
    "a": "allow_always", "always": "allow_always",
    "d": "deny", "deny": "deny", "n": "deny", "no": "deny",
}
_ATTEMPTS = 3

Streams = tuple[IO[str], IO[str]]


def _open_terminal(tty_path: str) -> tuple[Streams | None, Callable[[], None]]:
    """``((input, output), close)`` for the terminal, or ``(None, noop)`` when there is none."""
    try:
        reader = open(tty_path, encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError:
        reader = None
    if reader is not None:
        try:
            writer = open(tty_path, "w", encoding="utf-8", errors="replace")  # noqa: SIM115
        except OSError:
            reader.close()
        else:
            def close() -> None:
                writer.close()
                reader.close()

            return (reader, writer), close
    stdin = sys.stdin
    if stdin is not None and stdin.isatty():
        return (stdin, sys.stderr), lambda: None
    return None, lambda: None


class TerminalApprover:
    """Asks on the terminal: ``[o]nce``, ``[s]ession`` or ``[d]eny`` (empty answer, end of input
    or three unclear answers: deny). A write shows its unified diff first (colours only when
    the output stream is a terminal); a command shows its folder and arguments.

    ``streams`` (input, output) replace the terminal (tests, embedding); otherwise each ask
    opens ``tty_path`` (``/dev/tty``), else uses stdin/stderr when stdin is a terminal, else
    raises :class:`ApprovalUnavailable`: "no terminal to ask for approval; set
    approvals.runCommand to allow" (or ``approvals.write``).

    The blocking prompt runs in a daemon thread, so a cancelled ask (Ctrl-C) never keeps the
    process alive waiting for a line; the abandoned prompt's answer is ignored.
    """

    def __init__(self, streams: Streams | None = None, *, tty_path: str = "/dev/tty") -> None:
        self._streams = streams
        self._tty_path = tty_path

    async def ask(self, request: ApprovalRequest) -> Decision | Answer | None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Decision | Answer | None] = loop.create_future()

        def deliver(result: Decision | Answer | None, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        def work() -> None:
            result: Decision | Answer | None = None
            error: BaseException | None = None
            try:
                result = self._prompt(request)
            except BaseException as exc:  # delivered to the awaiting task
                error = exc
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(deliver, result, error)

        threading.Thread(target=work, name="pseudoclaude-approval", daemon=True).start()
        return await future

    def _prompt(self, request: ApprovalRequest) -> Decision | Answer | None:
        close: Callable[[], None] = lambda: None  # noqa: E731
        streams = self._streams
        if streams is None:
            streams, close = _open_terminal(self._tty_path)
        if streams is None:
            if request.approval_class in ("permissions", "hooks"):
                raise ApprovalUnavailable("no terminal to ask")
            hint = f"add a rule such as {request.rule} to the allow list of " \
                ".PseudoClaude/permissions.local.yaml, or run with --mode" \
                if request.rule else "run with --mode or change the permission rules"
            raise ApprovalUnavailable(
                f"no terminal to ask for approval ({request.reason or 'it asks first'}); "
                f"{hint}")
        reader, writer = streams
        try:
            if request.approval_class == "permissions":
                writer.write(f"\nThis folder's {_printable(request.path or '')} asks "
                             "PseudoClaude to use these settings:\n")
                for rule in request.rules:
                    writer.write(f"  - {_printable(rule)}\n")
                writer.write("Until you allow them, your own settings stand "
                             "(s: remembered for this folder until the file changes).\n")
            elif request.approval_class == "hooks":
                writer.write(f"\nThis folder's {_printable(request.path or '')} has hooks that "
                             "would run on your machine:\n")
                for hook in request.hooks:
                    writer.write(f"  - {_printable(hook.name)} ({hook.event}): "
                                 f"{_printable(hook.action)}\n")
                writer.write("Until you allow them, they do not run "
                             "(s: remembered for this folder until the file changes).\n")
            else:
                writer.write(f"\nPseudoClaude wants to {_printable(request.summary)}\n")
                self._show_change(request, writer)
            if request.approval_class == "plan":
                return self._plan(request, reader, writer)
            always = request.rule is not None and request.approval_class not in ("permissions",
                                                                                 "hooks")
            if always:
                writer.write(f"  [a]lways adds the rule {_printable(request.rule or '')} to "
                             ".PseudoClaude/permissions.local.yaml\n")
            choices = "[o]nce / [s]ession / [a]lways / [d]eny" if always else \
                "[o]nce / [s]ession / [d]eny"
            for _ in range(_ATTEMPTS):
                writer.write(f"Allow? {choices}: ")
                writer.flush()
                line = reader.readline()
                if not line:
                    writer.write("\n")
                    writer.flush()
                    return None  # end of input: dismissed
                answer = line.strip()
                if not answer:
                    return "deny"
                word, _, message = answer.partition(" ")
                decision = _ANSWERS.get(word.lower())
                if decision == "allow_always" and not always:
                    decision = None
                if decision == "deny" and message.strip():
                    return Answer("deny", message.strip())  # "d use pytest -x instead"
                if decision is not None:
                    return decision
                writer.write(f"Please answer {'o, s, a' if always else 'o, s'} or d (d and a "
                             "message tells the agent why).\n")
            return "deny"
        finally:
            close()

    @staticmethod
    def _plan(request: ApprovalRequest, reader: IO[str], writer: IO[str]) -> Answer | None:
        """A plan printed, then: [a]pprove, approve and accept [e]dits, or [k]eep planning
        (``k`` and feedback for the agent)."""
        writer.write("\nPseudoClaude's plan:\n\n")
        writer.write(_printable(request.plan or "") + "\n\n")
        for _ in range(_ATTEMPTS):
            writer.write("Carry it out? [a]pprove / approve and accept [e]dits / "
                         "[k]eep planning (k and what to change): ")
            writer.flush()
            line = reader.readline()
            if not line:
                writer.write("\n")
                writer.flush()
                return None
            word, _, feedback = line.strip().partition(" ")
            word = word.lower()
            if word in ("a", "approve", "y", "yes"):
                return Answer("approve", mode="default")
            if word in ("e", "edits"):
                return Answer("approve", mode="acceptEdits")
            if word in ("k", "keep", "n", "no", ""):
                return Answer("keep_planning", feedback.strip() or None)
            writer.write("Please answer a, e or k.\n")
        return Answer("keep_planning")

    @staticmethod
    def _show_change(request: ApprovalRequest, writer: IO[str]) -> None:
        """A write's unified diff, else a command's folder and the call's arguments."""
        if request.path is not None and request.before is not None \
                and request.after is not None:
            writer.write(unified_diff(request.path, request.before, request.after,
                                      colour=_colour(writer)))
            return
        if request.cwd is not None:
            writer.write(f"  in: {_printable(request.cwd)}\n")
        writer.write(f"  arguments: {compact_json(request.arguments)[:2000]}\n")
