"""The custom requests (SPEC §8): typed params in, call the workspace, typed result out.

Each handler is ``async (workspace, params) -> result`` over the shapes of
:mod:`pseudoclaude.api.protocol`. Nothing here imports pygls: the server registers
:data:`HANDLERS` as requests and ``workspace/executeCommand`` commands, and the CLI calls the
same handlers for its ``--json`` output, so both print the same objects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import msgspec
from msgspec import UNSET
from msgspec.structs import asdict

from pseudoclaude import words
from pseudoclaude.agent.approvals import SimpleDecision
from pseudoclaude.agent.runner import RunOutcome
from pseudoclaude.api import commands, views
from pseudoclaude.api import protocol as p
from pseudoclaude.compact import CompactOutcome
from pseudoclaude.compact.plan import UndoOutcome
from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.memory import MemoryStoreError
from pseudoclaude.memory.index import MAX_BYTES, MAX_LINES
from pseudoclaude.rewind import TurnOutOfRange
from pseudoclaude.session import LATEST, SessionInfo, SessionNotFound
from pseudoclaude.session.listing import rfc3339
from pseudoclaude.workspace import (
    NEW,
    PermissionsError,
    SandboxStatus,
    Workspace,
    WorkspaceError,
)
from pseudoclaude.workspace.hooks import HookInfo

Handler = Callable[[Workspace, Any], Awaitable[p.Wire]]


class RequestFailed(PseudoClaudeError):
    """The request was valid but could not be served (-32803)."""


def uri(path: Path | str) -> str:
    return Path(path).resolve().as_uri()


async def run(ws: Workspace, params: p.RunParams) -> p.RunResult:
    context = None if params.context is None or params.context.is_empty() else params.context
    session_id, result = await ws.run(params.prompt, _session(ws, params.session_id), context)
    return run_result(session_id, result)


def run_result(session_id: str, result: RunOutcome) -> p.RunResult:
    return p.RunResult(
        session_id=session_id, stop_reason=result.stop_reason, text=result.text,
        iterations=result.iterations,
        usage=p.RunUsage(input_tokens=result.usage.input_tokens,
                      output_tokens=result.usage.output_tokens),
        error=result.error if result.error else UNSET)


def _session(ws: Workspace, session_id: str | None) -> str | None:
    """A session the request names, checked: one of this folder's (``latest`` resolves
    later), else InvalidParams naming ``sessionId``."""
    if session_id in (None, "", LATEST, NEW):
        return session_id
    assert session_id is not None
    try:
        return ws.check_session(session_id)
    except SessionNotFound as exc:
        raise p.ParamError("sessionId", str(exc)) from None


async def compact(ws: Workspace, params: p.CompactParams) -> p.CompactResult:
    return compact_result(await ws.compact(params.instructions or "",
                                           _session(ws, params.session_id)))


def compact_result(r: CompactOutcome) -> p.CompactResult:
    return p.CompactResult(
        **asdict(r), message=words.compacted(r.before_tokens, r.after_tokens, r.offloaded,
                                             r.summarized, r.fact_check, r.reason or ""))


async def compact_preview(ws: Workspace, params: p.CompactParams) -> p.CompactPreviewResult:
    plan = await ws.compact_preview(params.instructions or "",
                                    _session(ws, params.session_id))
    return p.CompactPreviewResult(
        **asdict(plan),
        message=words.previewed(plan.would_summarize, plan.before_tokens,
                                plan.estimated_after_tokens, plan.summarized_messages,
                                plan.kept_messages, plan.spill.results, plan.spill.bytes,
                                plan.reason or ""))


async def compact_undo(ws: Workspace, params: p.SessionParams) -> p.UndoResult:
    return undo_result(await ws.undo_compact(_session(ws, params.session_id)))


def undo_result(u: UndoOutcome) -> p.UndoResult:
    return p.UndoResult(**asdict(u), message=words.undone(
        u.restored, u.before_tokens, u.after_tokens, u.message_count, u.reason or ""))


def context_now(ws: Workspace, params: p.SessionParams) -> p.ContextResult:
    session_id = _session(ws, params.session_id)
    return p.ContextResult(**asdict(ws.context(session_id)),
                           session_id=session_id or ws.session_id,
                           checkpoints=ws.checkpoint_status(),
                           ignored_settings=[
                               p.IgnoredSetting(key=i.key, value=i.value, reason=i.reason)
                               for i in ws.ignored_settings()],
                           mode=cast(p.PermissionMode, ws.mode_of(session_id)),
                           sandbox=sandbox_state(ws.sandbox_state()))


def sandbox_state(status: SandboxStatus | None) -> p.SandboxState:
    """The sandbox as the wire says it (``None``: not checked yet)."""
    if status is None:
        return p.SandboxState(enabled=False, reason="being checked")
    return p.SandboxState(enabled=status.enabled,
                          reason=status.reason if status.reason else UNSET)


async def context(ws: Workspace, params: p.SessionParams) -> p.ContextResult:
    await asyncio.to_thread(ws.permissions.sandbox_status)  # probed once, off the loop
    await ws.discover_window()  # a local server's window, asked once
    return context_now(ws, params)


def context_usage(workspace: str, ws: Workspace) -> p.ContextUsageParams:
    """The ``pseudoclaude/contextUsage`` notification of a workspace."""
    state = ws.context()
    return p.ContextUsageParams(
        workspace=workspace, session_id=ws.session_id, estimated_tokens=state.estimated_tokens,
        context_window=state.context_window,
        auto_compact_threshold=state.auto_compact_threshold, breakdown=state.breakdown)


async def memory_show(ws: Workspace, params: p.EmptyParams) -> p.MemoryShowResult:
    view = await ws.memory_view()
    return p.MemoryShowResult(index=view.index, truncated=view.truncated, stores=[
        p.MemoryStore(level=cast(p.MemoryLevel, store.level), dir=str(store.dir),
                      index_uri=uri(store.index_path),
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
        removed = await ws.forget(params.level, params.filename)
    except MemoryStoreError as exc:  # a bad level, type, file name or a refused note
        raise p.ParamError(exc.field or "", str(exc)) from None
    return p.ForgetResult(removed=removed)


async def memory_proposals(ws: Workspace, params: p.EmptyParams) -> p.ProposalsResult:
    return p.ProposalsResult(proposals=[x.shown() for x in await ws.proposals()])


async def memory_review(ws: Workspace, params: p.ReviewParams) -> p.ReviewResult:
    """A stale proposal fails (``ProposalStale``: RequestFailed); an unknown id or an unusable
    edited text is a bad param."""
    try:
        reviewed = await ws.review(params.id, params.decision, params.content)
    except MemoryStoreError as exc:  # an unknown id, an edited text that cannot be a note
        raise p.ParamError(exc.field or "", str(exc)) from None
    return p.ReviewResult(applied=reviewed.applied, filename=reviewed.filename,
                          message=words.reviewed(params.decision, reviewed.applied,
                                                 reviewed.level, reviewed.filename))


def session_summary(info: SessionInfo, active: str | None, running: bool = False,
                    worktree: str | None = None) -> p.SessionSummary:
    return p.SessionSummary(
        id=info.id, title=info.title, created_at=rfc3339(info.created),
        updated_at=rfc3339(info.updated), message_count=info.message_count, bytes=info.bytes,
        model=info.model, active=info.id == active, running=running, worktree=worktree,
        answered=info.answered)


async def sessions_list(ws: Workspace, params: p.EmptyParams) -> p.SessionsListResult:
    active = ws.session_id
    branches = await ws.worktree_branches()
    return p.SessionsListResult(sessions=[
        session_summary(s, active, running, branches.get(s.id))
        for s, running in await ws.session_list()])


async def sessions_resume(ws: Workspace, params: p.ResumeParams) -> p.ResumeResult:
    info = await ws.resume(_session(ws, params.session_id) or params.session_id)
    return p.ResumeResult(session_id=info.session_id, message_count=info.message_count,
                          bad_lines=info.bad_lines, repaired=info.repaired)


async def sessions_new(ws: Workspace, params: p.NewSessionParams) -> p.NewSessionResult:
    session_id = await ws.new_session(worktree=params.worktree)
    worktree = ws.worktree_of(session_id)
    return p.NewSessionResult(session_id=session_id, worktree=None if worktree is None else
                              p.WorktreeInfo(path=str(worktree.path), branch=worktree.branch,
                                             base=worktree.base))


async def worktree_status(ws: Workspace, params: p.WorktreeParams
                          ) -> p.WorktreeStatusResult:
    session_id, status = await ws.worktree_status(_session(ws, params.session_id),
                                                  params.agent_id)
    return p.WorktreeStatusResult(
        session_id=session_id, path=str(status.path), branch=status.branch, base=status.base,
        files=[p.WorktreeFile(path=f.path, action=f.action) for f in status.files],
        message=status.message)


async def worktree_apply(ws: Workspace, params: p.WorktreeParams) -> p.WorktreeApplyResult:
    session_id, result = await ws.worktree_apply(_session(ws, params.session_id),
                                                 params.agent_id)
    return p.WorktreeApplyResult(session_id=session_id, applied=result.applied,
                                 conflicts=result.conflicts, message=result.message)


async def worktree_remove(ws: Workspace, params: p.WorktreeRemoveParams
                          ) -> p.WorktreeRemoveResult:
    session_id = await ws.worktree_remove(_session(ws, params.session_id), params.force,
                                          params.agent_id)
    return p.WorktreeRemoveResult(
        session_id=session_id,
        message=f"removed the worktree of sub-agent {params.agent_id} and its branch"
        if params.agent_id else f"removed the worktree of session {session_id} and its "
        "branch; the session goes on in the folder itself")


async def sessions_messages(ws: Workspace, params: p.MessagesParams) -> p.MessagesResult:
    page = await ws.transcript(_session(ws, params.session_id), params.offset, params.limit,
                               agent_id=params.agent_id)
    return p.MessagesResult(session_id=page.session_id, total=page.total,
                            items=page.items)  # type: ignore[arg-type]  # Item is their base


def slash_commands_now(ws: Workspace, params: p.EmptyParams) -> p.CommandsResult:
    """The commands, and the skills as last read."""
    return commands.listing(ws.skills.cached().skills)


async def slash_commands(ws: Workspace, params: p.EmptyParams) -> p.CommandsResult:
    """The commands, and the skills read now."""
    return commands.listing((await asyncio.to_thread(ws.skills.scan)).skills)


async def sessions_turns(ws: Workspace, params: p.TurnsParams) -> p.TurnsResult:
    return p.TurnsResult(turns=await ws.turns(_session(ws, params.session_id)))


def _turn_checked(error: TurnOutOfRange) -> p.ParamError:
    """A turn out of range: InvalidParams naming ``turn``."""
    return p.ParamError("turn", error.detail)


async def rewind_preview(ws: Workspace, params: p.RewindPreviewParams
                         ) -> p.RewindPreviewResult:
    try:
        planned = await ws.rewind_preview(params.turn, params.mode,
                                          _session(ws, params.session_id))
    except TurnOutOfRange as exc:
        raise _turn_checked(exc) from None
    return p.RewindPreviewResult(**asdict(planned.preview()))


async def rewind(ws: Workspace, params: p.RewindParams) -> p.RewindResult:
    try:
        done = await ws.rewind(params.turn, params.mode, force=params.force,
                               session_id=_session(ws, params.session_id))
    except TurnOutOfRange as exc:
        raise _turn_checked(exc) from None
    return p.RewindResult(**asdict(done))


async def rewind_file(ws: Workspace, params: p.RewindFileParams) -> p.RewindFileResult:
    try:
        current, restored = await ws.rewind_file(params.turn, params.path,
                                                 _session(ws, params.session_id))
    except TurnOutOfRange as exc:
        raise _turn_checked(exc) from None
    except KeyError:
        raise p.ParamError("path", f"{params.path!r} is not one of the files a rewind to "
                                   f"before prompt {params.turn} restores") from None
    binary = not all(_text(x) for x in (current, restored))
    return p.RewindFileResult(path=params.path, binary=binary,
                              current=None if current is None else "" if binary
                              else current.decode(),
                              restored=None if restored is None else "" if binary
                              else restored.decode())


def _text(data: bytes | None) -> bool:
    if data is None:
        return True
    if b"\0" in data:
        return False
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


async def sessions_fork(ws: Workspace, params: p.ForkParams) -> p.ForkResult:
    try:
        return p.ForkResult(session_id=await ws.fork(_session(ws, params.session_id),
                                                    params.turn))
    except TurnOutOfRange as exc:
        raise _turn_checked(exc) from None


async def mcp_list(ws: Workspace, params: p.EmptyParams) -> p.McpListResult:
    return p.McpListResult(servers=await ws.mcp_servers())


_DECISIONS: dict[str, SimpleDecision] = {"allowOnce": "allow_once",
                                         "allowSession": "allow_session",
                                         "allowAlways": "allow_session", "deny": "deny"}


async def mcp_approve(ws: Workspace, params: p.McpApproveParams) -> p.McpServerResult:
    server = await ws.mcp.manager.approve(params.server, _DECISIONS[params.decision]) \
        if await ws.mcp.knows(params.server) else None
    if server is None:
        raise p.ParamError("server", f"no MCP server named {params.server!r} in this folder")
    return p.McpServerResult(server=server)


async def mcp_restart(ws: Workspace, params: p.McpServerParams) -> p.McpServerResult:
    server = await ws.mcp.manager.restart(params.server) \
        if await ws.mcp.knows(params.server) else None
    if server is None:
        raise p.ParamError("server", f"no MCP server named {params.server!r} in this folder")
    return p.McpServerResult(server=server)


async def mode(ws: Workspace, params: p.ModeParams) -> p.ModeResult:
    try:
        message = await ws.set_mode(params.mode, _session(ws, params.session_id))
    except PermissionsError as exc:
        raise RequestFailed(str(exc)) from None
    return p.ModeResult(mode=cast(p.PermissionMode, params.mode), message=message)


async def permissions(ws: Workspace, params: p.SessionParams) -> p.PermissionsResult:
    engine = await ws.permission_engine(_session(ws, params.session_id))
    waiting = await asyncio.to_thread(ws.permissions.waiting)
    status = await asyncio.to_thread(ws.permissions.sandbox_status)
    return p.PermissionsResult(
        mode=engine.mode, modes=ws.permissions.modes(),
        rules=[p.PermissionRule(rule=r["rule"], decision=cast(p.PermissionDecision,
                                                                r["decision"]),
                                source=cast(p.PermissionSource, r["source"]))
               for r in engine.listing()],
        problems=list(engine.problems), sandbox=sandbox_state(status),
        waiting=[ws.permissions.shown(w.path) for w in waiting])


async def permissions_check(ws: Workspace, params: p.PermissionsCheckParams
                            ) -> p.PermissionsCheckResult:
    verdict = await ws.check_permission(params.tool, params.arguments,
                                        _session(ws, params.session_id))
    return p.PermissionsCheckResult(
        decision=verdict.decision, source=verdict.source, reason=verdict.reason,
        rule=verdict.rule if verdict.rule else UNSET)


async def tasks(ws: Workspace, params: p.SessionParams) -> p.TasksResult:
    session_id, items = await ws.tasks_of(_session(ws, params.session_id))
    return p.TasksResult(session_id=session_id, tasks=[
        p.TaskItem(content=content, status=cast(p.TaskStatus, status))
        for content, status in items])


async def agents_list(ws: Workspace, params: p.SessionParams) -> p.AgentsResult:
    """A session's sub-agents, from their logs (also after a restart)."""
    session_id, records = await ws.agents_of(_session(ws, params.session_id))
    return p.AgentsResult(session_id=session_id, agents=[
        p.AgentInfo(agent_id=r.header.agent_id, name=r.header.name,
                    subagent_type=r.header.subagent_type, description=r.header.description,
                    status=cast(p.AgentStatus, status), started_at=r.header.created,
                    call_id=r.header.call_id,
                    usage=p.AgentUsage(input_tokens=used.input_tokens,
                                       output_tokens=used.output_tokens))
        for r, status, used in records])


async def agents_stop(ws: Workspace, params: p.AgentStopParams) -> p.AgentStopResult:
    """Stop a background sub-agent (a task), as ``task_stop``; waits until it ended."""
    try:
        session_id, status = await ws.stop_agent(_session(ws, params.session_id),
                                                 params.agent_id)
    except WorkspaceError as exc:
        raise RequestFailed(str(exc)) from None
    return p.AgentStopResult(session_id=session_id, agent_id=params.agent_id,
                             status=cast(p.AgentStatus, status))


async def status(ws: Workspace, params: p.SessionParams) -> p.StatusResult:
    """A session at a glance; the sandbox probed first when it has not been yet."""
    await ws.discover_window()  # a local server's window, asked once
    s = await ws.status(_session(ws, params.session_id))
    c, u = s.context, s.usage
    result = p.StatusResult(
        session=s.session_id, mode=cast(p.PermissionMode, s.mode), provider=s.provider,
        model=s.model,
        tokens=p.StatusTokens(
            used=c.estimated_tokens, window=c.context_window,
            auto_compact_threshold=c.auto_compact_threshold,
            billed=None if u is None else p.SessionUsage(
                input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                cache_read_tokens=u.cache_read, cache_write_tokens=u.cache_write)),
        sandbox=sandbox_state(s.sandbox), mcp=s.mcp,
        hooks=[p.StatusHook(name=h.name, event=h.event, source=h.source, status=h.status)
               for h in s.hooks],
        skills=[p.StatusSkill(name=k.name, source=k.source, loaded=k.loaded) for k in s.skills],
        ignored_settings=[p.IgnoredSetting(key=i.key, value=i.value, reason=i.reason)
                          for i in s.ignored_settings])
    return msgspec.structs.replace(result, text=views.render_status(result))


async def skills_list(ws: Workspace, params: p.SessionParams) -> p.SkillsListResult:
    catalog, session_id, loaded = await ws.skill_list(_session(ws, params.session_id))
    shown = ws.skills.shown
    return p.SkillsListResult(
        session_id=session_id,
        skills=[p.SkillEntry(name=s.name, description=s.description, source=s.source,
                             loaded=s.name in loaded, path=shown(s.path),
                             hint=s.argument_hint or UNSET, model=s.model_invocable,
                             command=s.user_invocable, tools=[t.name for t in s.tools])
                for s in catalog.skills],
        problems=[p.SkillProblem(path=k.path, line=k.line, message=k.message,
                                 source=k.source, name=k.name) for k in catalog.problems])


async def hooks_list(ws: Workspace, params: p.EmptyParams) -> p.HooksListResult:
    return _hooks_result(await ws.hook_list())


async def hooks_review(ws: Workspace, params: p.EmptyParams) -> p.HooksListResult:
    """The folder's ``hooks.yaml`` asked again (declined or dismissed before), then the list."""
    return _hooks_result(await ws.review_hooks())


def _hooks_result(hooks: list[HookInfo]) -> p.HooksListResult:
    result = p.HooksListResult(hooks=[
        p.HookEntry(name=h.name, event=h.event, source=cast(p.HookSource, h.source),
                    status=cast(p.HookStatus, h.status), action=h.action,
                    error=h.error if h.error is not None else UNSET)
        for h in hooks])
    return msgspec.structs.replace(result, text=views.describe_hooks(result))


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
    p.SLASH_COMMANDS: slash_commands,
    p.SESSIONS_TURNS: sessions_turns,
    p.REWIND_PREVIEW: rewind_preview,
    p.REWIND: rewind,
    p.REWIND_FILE: rewind_file,
    p.SESSIONS_FORK: sessions_fork,
    p.MCP_LIST: mcp_list,
    p.MCP_APPROVE: mcp_approve,
    p.MCP_RESTART: mcp_restart,
    p.WORKTREE_STATUS: worktree_status,
    p.WORKTREE_APPLY: worktree_apply,
    p.WORKTREE_REMOVE: worktree_remove,
    p.MODE: mode,
    p.PERMISSIONS: permissions,
    p.PERMISSIONS_CHECK: permissions_check,
    p.TASKS: tasks,
    p.AGENTS_LIST: agents_list,
    p.AGENTS_STOP: agents_stop,
    p.STATUS: status,
    p.HOOKS_LIST: hooks_list,
    p.SKILLS_LIST: skills_list,
    p.HOOKS_REVIEW: hooks_review,
}
assert set(HANDLERS) == set(p.REQUESTS) == set(p.PARAMS)

IMMEDIATE: dict[str, Callable[[Workspace, Any], p.Wire]] = {
    p.CONTEXT: context_now,
    p.SLASH_COMMANDS: slash_commands_now,
}
"""Read-only requests that never wait (no file, no thread, no lock): the LSP server answers
them in the event-loop turn that reads them, so a streaming run never delays them by more than
one turn (:func:`call_now`; :data:`HANDLERS` has the same answers, awaited)."""
assert set(IMMEDIATE) <= set(HANDLERS)

LONG_RUNNING = {p.RUN: "PseudoClaude: running", p.COMPACT: "PseudoClaude: compacting context",
                p.COMPACT_UNDO: "PseudoClaude: undoing the last compaction"}
"""Requests that report ``$/progress``, with their titles."""


async def call(ws: Workspace, method: str, params: Any) -> p.Wire:
    """Decode ``params`` (``ParamError`` naming the field) and run the handler of ``method``."""
    return await HANDLERS[method](ws, p.decode_params(p.PARAMS[method], p.as_object(params)))


def call_now(ws: Workspace, method: str, params: Any) -> p.Wire:
    """:func:`call` for a request of :data:`IMMEDIATE`, without awaiting."""
    return IMMEDIATE[method](ws, p.decode_params(p.PARAMS[method], p.as_object(params)))
