"""Stale writes are refused, through real server processes (pytest-lsp): a session that read a
file another session of the same server changed meanwhile is refused its write, naming that
session; what a session read is known again after a restart (from its log, even once the read
was summarized away), and a change made outside it since is refused."""

from __future__ import annotations

import asyncio
import json
import shlex
from typing import Any

from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import COMPACT, RUN, SESSIONS_RESUME


def edit(old: str, new: str) -> dict[str, Any]:
    return {"name": "edit_file", "arguments": {"path": "notes.txt", "old_text": old,
                                               "new_text": new}}


def last_edit(env: Any, session_id: str) -> dict[str, Any]:
    """The envelope of the session's last ``edit_file`` result (from its log)."""
    envelopes = [e for e in env.envelopes(session_id) if e["tool"] == "edit_file"]
    return envelopes[-1]


async def test_a_write_after_another_session_changed_the_file_names_it(
        client: LanguageClient, env: Any) -> None:
    """A reads notes.txt, then waits in a command; meanwhile B (same server, same folder)
    reads and edits it; A's edit after its command is refused naming B, and nothing is
    written; once A reads it again, its edit goes through."""
    notes = env.folders[0] / "notes.txt"
    waiting, go = env.tmp / "a-is-waiting", env.tmp / "b-is-done"
    script = f"touch {shlex.quote(str(waiting))}; while [ ! -e {shlex.quote(str(go))} ]; " \
             "do sleep 0.05; done"
    env.fake.add_turns(
        {"tool_calls": [env.read_file("notes.txt"),  # A
                        {"name": "run_command", "arguments": {"command": "sh",
                                                              "args": ["-c", script]}}]},
        {"tool_calls": [env.read_file("notes.txt"), edit("beta", "BETA")]},  # B
        {"text": "B edited it."},  # B
        {"tool_calls": [edit("alpha", "ALPHA")]},  # A, after its command
        {"text": "A could not."},  # A
    )
    a_run = asyncio.ensure_future(env.call(client, RUN, {"prompt": "A: read, wait, edit",
                                                         "sessionId": "new"}))
    await env.until(waiting.exists, what="A to read and wait")
    b = await env.call(client, RUN, {"prompt": "B: read and edit", "sessionId": "new"})
    assert b["stopReason"] == "completed" and notes.read_text() == "alpha\nBETA\n"
    go.touch()
    a = await asyncio.wait_for(a_run, 60)
    assert a["stopReason"] == "completed" and a["sessionId"] != b["sessionId"]
    refused = last_edit(env, a["sessionId"])
    assert refused["ok"] is False and refused["error_type"] == "stale"
    assert b["sessionId"] in refused["error"] and "Read it again" in refused["error"]
    assert notes.read_text() == "alpha\nBETA\n"  # B's edit stands
    assert last_edit(env, b["sessionId"])["ok"]

    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt"), edit("alpha", "ALPHA")]},
                       {"text": "A read it again and edited it."})
    again = await env.call(client, RUN, {"prompt": "A: read it again",
                                         "sessionId": a["sessionId"]})
    assert again["stopReason"] == "completed" and last_edit(env, a["sessionId"])["ok"]
    assert notes.read_text() == "ALPHA\nBETA\n"


async def test_a_read_is_known_after_a_restart_and_an_outside_change_is_not(
        client: LanguageClient, env: Any) -> None:
    """Server 1 reads notes.txt, then the history is summarized (the read leaves the
    conversation); server 2 (a restart) resumes the session and edits the file without reading
    it again: allowed. After the user changes the file on disk, the next edit is refused."""
    notes = env.folders[0] / "notes.txt"
    env.fake.script.rules.insert(0, {"when": {"summary": True},
                                     "reply": {"text": "<summary>the gist</summary>"},
                                     "times": None})
    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt")]}, {"text": "read it"},
                       *({"text": f"answer {i} " + "x" * 20_000} for i in range(6)))
    sid = (await env.call(client, RUN, {"prompt": "read the notes"}))["sessionId"]
    for i in range(6):
        await env.call(client, RUN, {"prompt": f"question {i}"})
    compacted = await env.call(client, COMPACT, {})
    assert compacted["summarized"]
    assert not any(e["tool"] == "read_file" for e in env.envelopes(sid))  # summarized away

    other = await env.second_server()
    try:
        await env.call(other, SESSIONS_RESUME, {"sessionId": sid})
        env.fake.add_turns({"tool_calls": [edit("beta", "BETA")]}, {"text": "edited"})
        done = await env.call(other, RUN, {"prompt": "edit without reading", "sessionId": sid})
        assert done["stopReason"] == "completed"
        assert last_edit(env, sid)["ok"], last_edit(env, sid)
        assert notes.read_text() == "alpha\nBETA\n"

        notes.write_text("alpha\nBETA\nthe user's line\n")  # outside the session
        env.fake.add_turns({"tool_calls": [edit("alpha", "ALPHA")]}, {"text": "refused"})
        await env.call(other, RUN, {"prompt": "edit again", "sessionId": sid})
        refused = last_edit(env, sid)
        assert refused["error_type"] == "stale", json.dumps(refused)
        assert "changed outside this session" in refused["error"]
        assert notes.read_text() == "alpha\nBETA\nthe user's line\n"
    finally:
        await other.shutdown_session()
