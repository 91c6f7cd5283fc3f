"""Firing an event: the hooks it matches run, and their answers make one :class:`Outcome`.

The hooks an event matches (its name, its ``if``, ``only_once`` not spent in the session) run
at the same time; ``async`` ones run in the background and nothing waits for them. Each answer
is read as Claude Code's (:mod:`.answer`) or by its exit status: 0 and its output; 2 a refusal
(on ``PreToolUse`` and ``UserPromptSubmit``; standard error says why) or, after a tool ran,
feedback for the model; anything else a failure. A hook that fails, times out or prints JSON
that does not parse is reported through ``warn`` (one line naming it) and never decides
anything: a blocking hook that fails does not block.

The outcome takes the answers in file order: the first refusal (``deny``), else the first
``ask``, else the first ``allow``; the first ``updatedInput``; every context, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pseudoclaude.hooks.actions import Ran, run_action
from pseudoclaude.hooks.answer import HookAnswer, HookDecision, read_answer
from pseudoclaude.hooks.model import BLOCKING, CONTEXT_FROM_STDOUT, Hook, PromptAction

log = logging.getLogger("pseudoclaude.hooks")

BLOCKED_BY_HOOK = "blocked by hook"
"""The reason of a refusal that says none."""
_SHOWN = 300


@dataclass(frozen=True, slots=True)
class Decided:
    """A hook's decision: ``deny`` (a refusal), ``ask`` or ``allow``, and why."""

    decision: HookDecision
    hook: str
    reason: str

    def message(self) -> str:
        """``[hook <name>] <reason>``: what the model (or the user) reads of a refusal."""
        return f"[hook {self.hook}] {self.reason or BLOCKED_BY_HOOK}"


@dataclass(frozen=True, slots=True)
class Answered:
    """What one hook that ran said."""

    hook: Hook
    decision: HookDecision | None = None
    reason: str = ""
    context: str = ""
    updated_input: dict[str, Any] | None = None


@dataclass
class Outcome:
    """What the hooks of one event decided together (see the module docstring)."""

    decided: Decided | None = None
    updated_input: dict[str, Any] | None = None
    updated_by: str = ""
    contexts: list[tuple[Hook, str]] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    """The hooks that ran (not the background ones), in file order."""

    @property
    def blocked(self) -> Decided | None:
        return self.decided if self.decided is not None and \
            self.decided.decision == "deny" else None


def combine(answers: Sequence[Answered]) -> Outcome:
    outcome = Outcome(ran=[a.hook.name for a in answers])
    for wanted in ("deny", "ask", "allow"):
        first = next((a for a in answers if a.decision == wanted), None)
        if first is not None:
            outcome.decided = Decided(wanted, first.hook.name, first.reason)
            break
    if outcome.blocked is None:
        changed = next((a for a in answers if a.updated_input is not None), None)
        if changed is not None:
            outcome.updated_input, outcome.updated_by = changed.updated_input, changed.hook.name
    outcome.contexts = [(a.hook, a.context) for a in answers if a.context]
    return outcome


class Dispatcher:
    """Runs hooks (one per workspace): ``warn`` hears every failure, as one line."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self._background: set[asyncio.Task[Any]] = set()

    async def fire(self, hooks: Sequence[Hook], event: str, payload: Mapping[str, Any], *,
                   cwd: Path, spent: set[str] | None = None,
                   warn: Callable[[str], None] | None = None) -> Outcome:
        """Run the hooks of ``event`` that match ``payload``; ``spent``: the ``only_once``
        hooks the session has run (updated); ``warn``: who hears of their failures (default:
        the dispatcher's)."""
        chosen = [h for h in hooks if h.event == event and _matches(h, payload)
                  and not (h.only_once and spent is not None and _key(h) in spent)]
        if not chosen:
            return Outcome()
        if spent is not None:
            spent.update(_key(h) for h in chosen if h.only_once)
        env = _environment(cwd)
        told = warn or self.warn
        for hook in (h for h in chosen if h.run_async):
            self.spawn(self._run_async(hook, event, payload, cwd, env, told))
        waited = [h for h in chosen if not h.run_async]
        ran = await asyncio.gather(*(self._run(h, event, payload, cwd, env) for h in waited))
        for _, said in ran:  # in file order, whichever finished first
            for line in said:
                told(line)
        return combine([answered for answered, _ in ran if answered is not None])

    async def _run(self, hook: Hook, event: str, payload: Mapping[str, Any], cwd: Path,
                   env: Mapping[str, str]) -> tuple[Answered | None, list[str]]:
        """What the hook answered, and the warnings it earned."""
        said: list[str] = []
        try:
            ran = await run_action(hook, payload, cwd=cwd, env=env)
            return _answer(hook, event, ran, said.append), said
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a hook never breaks what fired it
            log.exception("hook %s failed", hook.name)
            return None, [f"hook {hook.name} ({event}) failed: {exc}{_goes_on(event)}"]

    async def _run_async(self, hook: Hook, event: str, payload: Mapping[str, Any], cwd: Path,
                         env: Mapping[str, str], warn: Callable[[str], None]) -> None:
        """An ``async`` hook: its answer is ignored, its warnings are told."""
        for line in (await self._run(hook, event, payload, cwd, env))[1]:
            warn(line)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` in the background (stopped by :meth:`aclose`)."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Stop the background hooks still running (their process groups are killed)."""
        tasks = list(self._background)
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*tasks, return_exceptions=True)


def _answer(hook: Hook, event: str, ran: Ran, warn: Callable[[str], None]) -> Answered | None:
    """What a hook's run means (failures told to ``warn``)."""
    name = hook.name
    if ran.status == "timeout":
        warn(f"hook {name} ({event}) timed out after {hook.timeout:g}s and was "
             f"stopped{_goes_on(event)}")
        return None
    if ran.status == "failed":
        warn(f"hook {name} ({event}) failed: {ran.error}{_goes_on(event)}")
        return None
    if ran.exit_code == 2:
        why = _first(ran.stderr) or _first(ran.stdout)
        if event in BLOCKING:
            return Answered(hook, "deny", ran.stderr.strip() or ran.stdout.strip()
                            or BLOCKED_BY_HOOK)
        if event == "PostToolUse" and ran.stderr.strip():
            return Answered(hook, context=ran.stderr.strip())
        warn(f"hook {name} ({event}) exited with status 2, but {event} cannot be "
             f"blocked" + (f": {why}" if why else ""))
        return None
    if ran.exit_code != 0:
        why = _first(ran.stderr) or _first(ran.stdout)
        warn(f"hook {name} ({event}) failed: exit status {ran.exit_code}"
             + (f": {why}" if why else "") + _goes_on(event))
        return None
    answer = read_answer(ran.stdout) if not isinstance(hook.action, PromptAction) \
        else HookAnswer(plain=ran.stdout)
    if answer.garbled:
        warn(f"hook {name} ({event}) printed output that is not valid JSON: "
             f"{_first(answer.plain)}; it is taken as plain text")
    if answer.system_message:
        warn(f"hook {name}: {answer.system_message}")
    return _interpret(hook, event, answer)


def _interpret(hook: Hook, event: str, answer: HookAnswer) -> Answered:
    plain = answer.plain if (event in CONTEXT_FROM_STDOUT
                             or isinstance(hook.action, PromptAction)) else ""
    context = "\n".join(part for part in (answer.context, plain) if part)
    if event not in BLOCKING:  # a refusal after the fact: its reason is for the model
        if answer.decision == "deny" and answer.reason:
            context = "\n".join(part for part in (context, answer.reason) if part)
        return Answered(hook, context=context)
    decision = answer.decision if event == "PreToolUse" or answer.decision == "deny" else None
    updated = answer.updated_input if event == "PreToolUse" else None
    return Answered(hook, decision, answer.reason, context, updated)


def _matches(hook: Hook, payload: Mapping[str, Any]) -> bool:
    return hook.condition is None or hook.condition.holds(payload)


def _key(hook: Hook) -> str:
    return f"{hook.source}\x00{hook.name}"


def _goes_on(event: str) -> str:
    return "; it did not block" if event in BLOCKING else ""


def _first(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= _SHOWN else line[:_SHOWN - 1] + "…"


def _environment(cwd: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["CLAUDE_PROJECT_DIR"] = env["PSEUDOCLAUDE_PROJECT_DIR"] = str(cwd)
    return env
