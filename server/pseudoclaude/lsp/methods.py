"""The custom requests (SPEC §8): typed params in, call the workspace, typed result out.

Each handler is ``async (workspace, params) -> result`` over the shapes of
:mod:`pseudoclaude.lsp.protocol`. Nothing here imports pygls: the server registers
:data:`HANDLERS` as requests and ``workspace/executeCommand`` commands, and the CLI calls the
same handlers for its ``--json`` output, so both print the same objects.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from msgspec import UNSET

from pseudoclaude.agent.runner import RunResult as RunOutcome
from pseudoclaude.compact.breakdown import Breakdown
from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.lsp import protocol as p
from pseudoclaude.memory import MemoryStoreError
from pseudoclaude.memory.index import MAX_BYTES, MAX_LINES
from pseudoclaude.memory.proposals import Proposal
from pseudoclaude.session import SessionInfo
from pseudoclaude.session.format import message_to_json
from pseudoclaude.session.listing import rfc3339
from pseudoclaude.workspace import Workspace

Handler = Callable[[Workspace, Any], Awaitable[p.Wire]]


class RequestFailed(PseudoClaudeError):
    """The request was valid but could not be served (-32803)."""


def uri(path: Path | str) -> str:
    return Path(path).resolve().as_uri()


async def run(ws: Workspace, params: p.RunParams) -> p.RunResult:
    session_id, result = await ws.run(params.prompt, params.session_id)
    return run_result(session_id, result)


def run_result(session_id: str, result: RunOutcome) -> p.RunResult:
    return p.RunResult(
        session_id=session_id, stop_reason=result.stop_reason, text=result.text,
        iterations=result.iterations,
        usage=p.Usage(input_tokens=result.usage.input_tokens,
                      output_tokens=result.usage.output_tokens),
        error=result.error if result.error else UNSET)


async def compact(ws: Workspace, params: p.CompactParams) -> p.CompactResult:
    result = await ws.compact(params.instructions or "")
    return p.CompactResult(before_tokens=result.before_tokens, after_tokens=result.after_tokens,
                           offloaded=result.offloaded, summarized=result.summarized,
                           fact_check=result.fact_check)


async def compact_preview(ws: Workspace, params: p.CompactParams) -> p.CompactPreviewResult:
    plan = await ws.compact_preview(params.instructions or "")
    return p.CompactPreviewResult(
        would_summarize=plan.would_summarize, before_tokens=plan.before_tokens,
        estimated_after_tokens=plan.estimated_after_tokens,
        summarized_messages=plan.summarized_messages, kept_messages=plan.kept_messages,
        first_kept_index=plan.first_kept_index,
        spill=p.SpillPreview(results=plan.spill_results, bytes=plan.spill_bytes),
        reason=plan.reason or UNSET)


async def compact_undo(ws: Workspace, params: p.EmptyParams) -> p.UndoResult:
    undone = await ws.undo_compact()
    return p.UndoResult(restored=undone.restored, before_tokens=undone.before_tokens,
                        after_tokens=undone.after_tokens, message_count=undone.message_count,
                        reason=undone.reason or UNSET)


def breakdown(b: Breakdown) -> p.Breakdown:
    return p.Breakdown(system=b.system, rules=b.rules, memory=b.memory, tools=b.tools,
                       summary=b.summary, messages=b.messages, tool_calls=b.tool_calls,
                       tool_results=b.tool_results, spilled=b.spilled, free=b.free,
                       reserved=b.reserved)


async def context(ws: Workspace, params: p.EmptyParams) -> p.ContextResult:
    state = ws.context()
    return p.ContextResult(
        session_id=ws.session_id, message_count=state.message_count,
        estimated_tokens=state.estimated_tokens, context_window=state.context_window,
        auto_compact_threshold=state.auto_compact_threshold,
        auto_compact_failures=state.auto_compact_failures,
        auto_compact_tripped=state.auto_compact_tripped, breakdown=breakdown(state.breakdown))


def context_usage(workspace: str, ws: Workspace) -> p.ContextUsageParams:
    """The ``pseudoclaude/contextUsage`` notification of a workspace."""
    state = ws.context()
    return p.ContextUsageParams(
        workspace=workspace, session_id=ws.session_id, estimated_tokens=state.estimated_tokens,
        context_window=state.context_window,
        auto_compact_threshold=state.auto_compact_threshold,
        breakdown=breakdown(state.breakdown))


async def memory_show(ws: Workspace, params: p.EmptyParams) -> p.MemoryShowResult:
    view = await ws.memory.show()
    return p.MemoryShowResult(index=view.index, truncated=view.truncated, stores=[
        p.MemoryStore(level=store.level, dir=str(store.dir), index_uri=uri(store.index_path),
                      notes=[p.MemoryNote(filename=n.filename, uri=uri(n.path), type=n.type,
                                          title=n.title, summary=n.summary)
                             for n in store.notes])
        for store in view.stores],
        health=p.IndexHealth(lines=view.lines, bytes=view.bytes, max_lines=MAX_LINES,
                             max_bytes=MAX_BYTES))


async def memory_remember(ws: Workspace, params: p.RememberParams) -> p.RememberResult:
    try:
        filename, path = await ws.remember(params.text, params.level, params.type,
                                           params.title)
    except MemoryStoreError as exc:  # a bad level, type, file name or a refused note
        raise p.ParamError(exc.field or "", str(exc)) from None
    return p.RememberResult(filename=filename, uri=uri(path))


async def memory_forget(ws: Workspace, params: p.ForgetParams) -> p.ForgetResult:
    try:
        removed = await ws.memory.forget(params.level, params.filename)
    except MemoryStoreError as exc:  # a bad level, type, file name or a refused note
        raise p.ParamError(exc.field or "", str(exc)) from None
    return p.ForgetResult(removed=removed)


def proposal(x: Proposal) -> p.Proposal:
    return p.Proposal(id=x.id, created_at=x.created_at, session_id=x.session_id,
                      action=x.action, level=x.level, type=x.type, title=x.title,
                      summary=x.summary, filename=x.filename, before=x.before, after=x.after)


async def memory_proposals(ws: Workspace, params: p.EmptyParams) -> p.ProposalsResult:
    return p.ProposalsResult(proposals=[proposal(x) for x in await ws.memory.list_proposals()])


async def memory_review(ws: Workspace, params: p.ReviewParams) -> p.ReviewResult:
    """A stale proposal fails (``ProposalStale``: RequestFailed); an unknown id or an unusable
    edited text is a bad param."""
    try:
        reviewed = await ws.memory.review(params.id, params.decision, params.content)
    except MemoryStoreError as exc:  # an unknown id, an edited text that cannot be a note
        raise p.ParamError(exc.field or "", str(exc)) from None
    return p.ReviewResult(applied=reviewed.applied, filename=reviewed.filename)


def session_summary(info: SessionInfo, active: str | None) -> p.SessionSummary:
    return p.SessionSummary(
        id=info.id, title=info.title, created_at=rfc3339(info.created),
        updated_at=rfc3339(info.updated), message_count=info.message_count, bytes=info.bytes,
        model=info.model, active=info.id == active)


async def sessions_list(ws: Workspace, params: p.EmptyParams) -> p.SessionsListResult:
    active = ws.session_id
    return p.SessionsListResult(
        sessions=[session_summary(s, active) for s in await ws.sessions()])


async def sessions_resume(ws: Workspace, params: p.ResumeParams) -> p.ResumeResult:
    info = await ws.resume(params.session_id)
    return p.ResumeResult(session_id=info.session_id, message_count=info.message_count,
                          bad_lines=info.bad_lines, repaired=info.repaired)


async def sessions_new(ws: Workspace, params: p.EmptyParams) -> p.NewSessionResult:
    return p.NewSessionResult(session_id=await ws.new_session())


async def sessions_messages(ws: Workspace, params: p.MessagesParams) -> p.MessagesResult:
    _, total, messages = await ws.messages(params.session_id, params.offset, params.limit)
    return p.MessagesResult(total=total, messages=[message_to_json(m) for m in messages])


HANDLERS: dict[str, Handler] = {
    p.RUN: run,
    p.COMPACT: compact,
    p.COMPACT_PREVIEW: compact_preview,
    p.COMPACT_UNDO: compact_undo,
    p.CONTEXT: context,
    p.MEMORY_SHOW: memory_show,
    p.MEMORY_REMEMBER: memory_remember,
    p.MEMORY_FORGET: memory_forget,
    p.MEMORY_PROPOSALS: memory_proposals,
    p.MEMORY_REVIEW: memory_review,
    p.SESSIONS_LIST: sessions_list,
    p.SESSIONS_RESUME: sessions_resume,
    p.SESSIONS_NEW: sessions_new,
    p.SESSIONS_MESSAGES: sessions_messages,
}
assert set(HANDLERS) == set(p.REQUESTS) == set(p.PARAMS)

LONG_RUNNING = {p.RUN: "PseudoClaude: running", p.COMPACT: "PseudoClaude: compacting context",
                p.COMPACT_UNDO: "PseudoClaude: undoing the last compaction"}
"""Requests that report ``$/progress``, with their titles."""


async def call(ws: Workspace, method: str, params: Any) -> p.Wire:
    """Decode ``params`` (``ParamError`` naming the field) and run the handler of ``method``."""
    return await HANDLERS[method](ws, p.decode_params(p.PARAMS[method], p.as_object(params)))
