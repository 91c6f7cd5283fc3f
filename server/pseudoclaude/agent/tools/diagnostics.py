"""The editor's diagnostics for the agent (SPEC §12): the ``get_diagnostics`` tool, and the new
problems of a written file added to the write's result.

Both exist only with an editor that answers diagnostics (:attr:`Editor.can_diagnose`; the LSP
client that sets ``experimental.pseudoclaude.diagnostics``): the registry offers
``get_diagnostics`` to the model only then.

``get_diagnostics{paths?}``: the errors, warnings, infos and hints the editor shows (all its
language servers'), for the given files or the whole workspace, one ``path:line: severity:
message (source)`` line each, errors first, at most :data:`MAX_DIAGNOSTICS`. Metadata:
``count`` (all of them), ``errors``, ``warnings``.

After a successful ``write_file``/``edit_file`` (:func:`settle`): the file's diagnostics are
asked before the write and then every :data:`POLL_SECONDS` after it, until they changed and
stayed the same for one more poll, or :data:`SETTLE_SECONDS` passed. The errors and warnings
that are new (:func:`~pseudoclaude.agent.editor.new_problems`) are appended to the result's
content, and listed in ``metadata.diagnostics``; when none came, the result says so.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

import msgspec

from pseudoclaude.agent.editor import SEVERITY_ORDER, Editor, new_problems
from pseudoclaude.agent.tools.base import (
    ApprovalClass,
    Param,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from pseudoclaude.llm.editor import Diagnostic

log = logging.getLogger("pseudoclaude.agent.tools")

MAX_DIAGNOSTICS = 200
SETTLE_SECONDS = 2.0
"""A written file's diagnostics are awaited at most this long."""
POLL_SECONDS = 0.2
ASK_TIMEOUT = 5.0
"""One ``diagnostics`` question to the editor gets this long to be answered."""


async def ask(editor: Editor, paths: list[str] | None) -> list[Diagnostic]:
    """The editor's diagnostics, or :class:`ToolError` when it does not answer in time."""
    try:
        return await asyncio.wait_for(editor.diagnostics(paths), ASK_TIMEOUT)
    except TimeoutError:
        raise ToolError("editor_error", "the editor did not answer with its diagnostics "
                        f"within {ASK_TIMEOUT:g} s") from None


class GetDiagnostics(Tool):
    name: ClassVar[str] = "get_diagnostics"
    description: ClassVar[str] = (
        "The errors and warnings (and infos, hints) the user's editor shows, from all its "
        "language servers, compilers and linters: for the given files, or the whole "
        "workspace. One `path:line: severity: message (source)` line each, errors first. Use "
        "it to check your changes compile and lint cleanly."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("paths", "string_array", "Files to report on, relative to the workspace root. "
              "Default: every file the editor has diagnostics for."),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"
    needs_diagnostics: ClassVar[bool] = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        editor = ctx.editor
        if editor is None or not editor.can_diagnose:
            raise ToolError("unknown_tool", "get_diagnostics: the editor does not report "
                            "diagnostics")
        paths: list[str] | None = None
        if "paths" in args:
            def relative() -> list[str]:
                return [ctx.paths.locate(raw, field="paths", tool=self.name).label
                        for raw in args["paths"]]
            paths = await asyncio.to_thread(relative)
        found = sorted(await ask(editor, paths), key=lambda d: (
            SEVERITY_ORDER.get(d.severity, 9), d.path, d.range.start.line))
        errors = sum(d.severity == "error" for d in found)
        warnings = sum(d.severity == "warning" for d in found)
        where = ", ".join(paths) if paths else "the workspace"
        if not found:
            return ToolOutput(f"the editor reports no problems in {where}",
                              {"count": 0, "errors": 0, "warnings": 0})
        lines = [d.line() for d in found[:MAX_DIAGNOSTICS]]
        if len(found) > MAX_DIAGNOSTICS:
            lines.append(f"[{len(found) - MAX_DIAGNOSTICS} more not shown; name `paths`]")
        return ToolOutput("\n".join(lines), {"count": len(found), "errors": errors,
                                             "warnings": warnings})


async def baseline(editor: Editor, label: str) -> list[Diagnostic] | None:
    """A file's diagnostics before a write (``None``: the editor did not answer)."""
    try:
        return await asyncio.wait_for(editor.diagnostics([label]), SETTLE_SECONDS)
    except Exception as exc:  # CancelledError is a BaseException: it propagates
        log.info("no diagnostics before writing %s: %s", label, exc)
        return None


async def settle(editor: Editor, label: str, before: list[Diagnostic]
                 ) -> tuple[list[Diagnostic], float]:
    """The new errors and warnings of ``label`` once its diagnostics settle after a write, and
    the seconds waited (see the module docstring)."""
    started = time.monotonic()
    deadline = started + SETTLE_SECONDS
    last: list[Diagnostic] | None = None
    changed = False
    while True:
        await asyncio.sleep(POLL_SECONDS)
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            now = await asyncio.wait_for(editor.diagnostics([label]), left)
        except Exception as exc:  # CancelledError propagates
            log.info("no diagnostics after writing %s: %s", label, exc)
            break
        if changed and now == last:
            break
        changed = changed or now != before
        last = now
    return new_problems(before, last or before), time.monotonic() - started


def add_problems(output: ToolOutput, label: str, problems: list[Diagnostic], waited: float
                 ) -> None:
    """Append the new problems of a written file (or that none came) to its result."""
    if problems:
        shown = problems[:MAX_DIAGNOSTICS]
        output.content += (f"\n\nNew problems the editor reports in {label}:\n"
                           + "\n".join(d.line() for d in shown))
    else:
        output.content += (f"\n\nThe editor reports no new errors or warnings in {label} "
                           f"(waited {waited:.1f} s).")
    metadata = output.metadata = dict(output.metadata or {})
    metadata["diagnostics"] = msgspec.to_builtins(problems)
