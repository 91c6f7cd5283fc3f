"""``$/progress`` per session through a real server (pytest-lsp): two runs of one folder at once
each get their own token, and every value (begin, report, end) names its session
(``sessionId`` beside lsprotocol's fields), also for a run of ``new``, whose id the server
learns only once the run has taken its session."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import RUN


def record_progress(client: LanguageClient) -> list[tuple[Any, dict[str, Any]]]:
    """``(token, value)`` of every ``$/progress`` as the server wrote it (pytest-lsp's own
    handler, which keeps lsprotocol's fields only, still runs)."""
    seen: list[tuple[Any, dict[str, Any]]] = []
    features = client.protocol.fm.features
    default = features[types.PROGRESS]

    def record(params: types.ProgressParams) -> Any:
        seen.append((params.token, dict(params.value)))
        return default(params)

    features[types.PROGRESS] = record
    return seen


def sent(record: dict[str, Any]) -> str:
    return json.dumps(record["body"]["messages"])


async def test_two_runs_at_once_each_report_their_own_session(client: LanguageClient,
                                                              env: Any) -> None:
    seen = record_progress(client)
    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt")], "delay": 0.1},
                       {"tool_calls": [env.read_file("README.md")]},
                       {"text": "done"}, {"text": "done"})
    first = asyncio.ensure_future(env.call(client, RUN, {"prompt": "first",
                                                         "sessionId": "new"}))
    await env.until(lambda: any("first" in sent(r) and r["body"].get("tools")
                                for r in env.fake.requests))
    second = await env.call(client, RUN, {"prompt": "second", "sessionId": "new"})
    one = await first
    assert one["sessionId"] != second["sessionId"]
    assert {one["stopReason"], second["stopReason"]} == {"completed"}

    await env.until(lambda: sum(value["kind"] == "end" for _, value in seen) == 2)
    by_token: dict[Any, list[dict[str, Any]]] = {}
    for token, value in seen:
        by_token.setdefault(token, []).append(value)
    sessions: dict[str, list[dict[str, Any]]] = {}
    for values in by_token.values():
        assert [v["kind"] for v in values] == ["begin", "report", "end"], values
        [session_id] = {v["sessionId"] for v in values}  # every value names one session
        sessions[session_id] = values
    assert set(sessions) == {one["sessionId"], second["sessionId"]}  # a token each
    for values in sessions.values():
        begin, report, end = values
        assert begin["title"] == "PseudoClaude: running" and begin["cancellable"] is False
        assert report["message"] == "read_file" and end["message"] == "completed"
    # pytest-lsp's typed view is unchanged: begin first, end last, per token
    for reports in client.progress_reports.values():
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
