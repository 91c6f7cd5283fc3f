"""The custom requests (SPEC §8): parse params, call the workspace, shape the result.

Each method is ``async (workspace, params) -> result`` with camelCase result keys. Nothing here
imports pygls: :mod:`pseudoclaude.lsp.server` registers these as requests and as
``workspace/executeCommand`` commands and turns :class:`ParamError` into ``InvalidParams`` and
:class:`RequestFailed` (and the core's own errors) into ``RequestFailed``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pseudoclaude.lsp.params import ParamError, integer, level, session_ref, string
from pseudoclaude.memory import MemoryStoreError
from pseudoclaude.session.format import message_to_json
from pseudoclaude.session.listing import rfc3339
from pseudoclaude.workspace import Workspace

Method = Callable[[Workspace, dict[str, Any]], Awaitable[Any]]


class RequestFailed(Exception):
    """The request was valid but could not be served (-32803)."""


def _uri(path: Path | str) -> str:
    return Path(path).resolve().as_uri()


async def run(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    prompt = string(params, "prompt", required=True, allow_empty=False)
    assert prompt is not None
    session = session_ref(params, allow_new=True)
    session_id, result = await ws.run(prompt, session)
    out: dict[str, Any] = {
        "sessionId": session_id, "stopReason": result.stop_reason, "text": result.text,
        "iterations": result.iterations,
        "usage": {"inputTokens": result.usage.input_tokens,
                  "outputTokens": result.usage.output_tokens},
    }
    if result.error:
        out["error"] = result.error
    return out


async def compact(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    instructions = string(params, "instructions") or ""
    result = await ws.compact(instructions)
    return {"beforeTokens": result.before_tokens, "afterTokens": result.after_tokens,
            "offloaded": result.offloaded, "summarized": result.summarized}


async def context(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    return ws.context()


async def memory_show(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    view = (await ws.memory.show()).as_dict()
    return {
        "index": view["index"],
        "truncated": view["truncated"],
        "stores": [
            {"level": store["level"], "dir": str(store["dir"]),
             "indexUri": _uri(store["index_path"]),
             "notes": [{"filename": n["filename"], "uri": _uri(n["path"]), "type": n["type"],
                        "title": n["title"], "summary": n["summary"]}
                       for n in store["notes"]]}
            for store in view["stores"]
        ],
    }


async def memory_remember(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    text = string(params, "text", required=True, allow_empty=False)
    where = level(params)
    kind = string(params, "type", allow_empty=False)
    title = string(params, "title", allow_empty=False)
    assert text is not None
    try:
        filename, path = await ws.memory.remember(text, where, kind, title)
    except MemoryStoreError as exc:
        raise ParamError(exc.field or "", str(exc)) from None
    return {"filename": filename, "uri": _uri(path)}


async def memory_forget(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    where = level(params)
    filename = string(params, "filename", required=True, allow_empty=False)
    assert filename is not None
    try:
        removed = await ws.memory.forget(where, filename)
    except MemoryStoreError as exc:
        raise ParamError(exc.field or "", str(exc)) from None
    return {"removed": removed}


async def sessions_list(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    active = ws.session_id
    return {"sessions": [
        {"id": s.id, "title": s.title, "createdAt": rfc3339(s.created),
         "updatedAt": rfc3339(s.updated), "messageCount": s.message_count, "bytes": s.bytes,
         "model": s.model, "active": s.id == active}
        for s in await ws.sessions()
    ]}


async def sessions_resume(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    ref = session_ref(params, required=True)
    assert ref is not None
    info = await ws.resume(ref)
    return {"sessionId": info.session_id, "messageCount": info.message_count,
            "badLines": info.bad_lines, "repaired": info.repaired}


async def sessions_new(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": await ws.new_session()}


async def sessions_messages(ws: Workspace, params: dict[str, Any]) -> dict[str, Any]:
    ref = session_ref(params)
    offset = integer(params, "offset") or 0
    limit = integer(params, "limit", minimum=1)
    _, total, messages = await ws.messages(ref, offset, limit)
    return {"total": total, "messages": [message_to_json(m) for m in messages]}


REQUESTS: dict[str, Method] = {
    "pseudoclaude/run": run,
    "pseudoclaude/compact": compact,
    "pseudoclaude/context": context,
    "pseudoclaude/memory/show": memory_show,
    "pseudoclaude/memory/remember": memory_remember,
    "pseudoclaude/memory/forget": memory_forget,
    "pseudoclaude/sessions/list": sessions_list,
    "pseudoclaude/sessions/resume": sessions_resume,
    "pseudoclaude/sessions/new": sessions_new,
    "pseudoclaude/sessions/messages": sessions_messages,
}
NOTIFICATIONS = ["pseudoclaude/event", "pseudoclaude/memoryChanged", "pseudoclaude/contextUsage"]
LONG_RUNNING = {"pseudoclaude/run": "PseudoClaude: running", "pseudoclaude/compact":
                "PseudoClaude: compacting context"}


def command_name(method: str) -> str:
    """``pseudoclaude/memory/show`` -> ``pseudoclaude.memory.show``."""
    return method.replace("/", ".")
