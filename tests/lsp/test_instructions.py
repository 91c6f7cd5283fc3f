"""Instruction files through a real server (SPEC §13 "Where users already are"): ``AGENTS.md``,
``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` beside ``PSEUDOCLAUDE.md``, in
their order, with their ``@path`` imports, the same file once; a subfolder's ``AGENTS.md`` or
``CLAUDE.md`` joining the session the first time it reads a file under it, and after a
resume by another server; each file its own entry of ``pseudoclaude/context``'s ``rules``,
whose tokens add up to ``breakdown.rules``; an edited file read again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, RUN, SESSIONS_NEW, SESSIONS_RESUME

pytestmark = pytest.mark.timeout(180)

CATEGORIES = ("system", "rules", "memory", "skills", "tools", "summary", "messages", "toolCalls",
              "toolResults", "spilled")
NOTICE = "(instructions from {} now apply)"


def runs(env: Any) -> list[dict[str, Any]]:
    """The model requests of runs (a memory update's have no tools)."""
    return [r for r in env.fake.requests if r["body"].get("tools")]


def system_of(request: dict[str, Any]) -> str:
    """The system prompt a request carried (its first system block: the cached one)."""
    return str(request["body"]["system"][0]["text"])


async def run(client: LanguageClient, env: Any, prompt: str, *turns: dict[str, Any],
              session: str | None = None) -> list[dict[str, Any]]:
    """Run ``prompt`` on the fake model's ``turns``; the run's model requests."""
    before = len(runs(env))
    env.fake.add_turns(*turns)
    params = {"prompt": prompt, **({"sessionId": session} if session else {})}
    result = await env.call(client, RUN, params)
    assert result["stopReason"] == "completed", result
    return runs(env)[before:]


def rules_of(context: dict[str, Any]) -> list[dict[str, Any]]:
    """The context's instruction files, checked: their tokens add up to ``breakdown.rules``,
    and the breakdown's categories to the estimate."""
    b = context["breakdown"]
    assert sum(b[c] for c in CATEGORIES) == context["estimatedTokens"], b
    rules = list(context["rules"])
    assert all(r["tokens"] > 0 for r in rules), rules
    assert sum(r["tokens"] for r in rules) == b["rules"], (rules, b)
    return rules


def envelope_of(env: Any, path: str, nth: int = -1) -> dict[str, Any]:
    """The ``nth`` read_file envelope of ``path`` in the latest session's log."""
    return [e for e in env.envelopes() if e["tool"] == "read_file"
            and e.get("metadata", {}).get("path") == path][nth]


async def test_every_source_in_order_with_its_tokens(client: LanguageClient, env: Any) -> None:
    ws = env.folders[0]
    user = env.tmp / "PSEUDOCLAUDE.md"  # the user folder: the parent of memory.userDir
    files = {user: "USER RULE", ws / "AGENTS.md": "AGENTS RULE",
             ws / "CLAUDE.md": "CLAUDE RULE", ws / ".claude" / "CLAUDE.md": "DOT CLAUDE RULE",
             ws / "PSEUDOCLAUDE.md": "PSEUDO RULE",
             ws / ".PseudoClaude" / "PSEUDOCLAUDE.md": "DOT PSEUDO RULE",
             ws / "CLAUDE.local.md": "LOCAL RULE " + "personal " * 200}
    for path, text in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text + "\n")
    [request] = await run(client, env, "hello", {"text": "hi"})
    system = system_of(request)
    places = [system.find(f"Instructions from {label}:\n{text}") for label, text in (
        (str(user), "USER RULE"), ("AGENTS.md", "AGENTS RULE"), ("CLAUDE.md", "CLAUDE RULE"),
        (".claude/CLAUDE.md", "DOT CLAUDE RULE"), ("PSEUDOCLAUDE.md", "PSEUDO RULE"),
        (".PseudoClaude/PSEUDOCLAUDE.md", "DOT PSEUDO RULE"), ("CLAUDE.local.md", "LOCAL RULE"))]
    assert -1 not in places and places == sorted(places), places
    # the identity names no tools by hand; the run_command rule says how it runs a line
    assert "/bin/sh -c" in system and "read_file, write_file" not in system

    rules = rules_of(await env.call(client, CONTEXT, {}))
    assert [(r["path"], r["source"]) for r in rules] == [
        (str(user), "user"), ("AGENTS.md", "project"), ("CLAUDE.md", "project"),
        (".claude/CLAUDE.md", "project"), ("PSEUDOCLAUDE.md", "project"),
        (".PseudoClaude/PSEUDOCLAUDE.md", "project"), ("CLAUDE.local.md", "local")]
    local = rules[-1]["tokens"]
    assert all(local > r["tokens"] for r in rules[:-1])  # in proportion to their size


async def test_imports_and_the_same_file_once(client: LanguageClient, env: Any) -> None:
    ws = env.folders[0]
    (ws / "docs").mkdir()
    (ws / "docs" / "style.md").write_text("Tabs, never spaces.\n")
    (env.tmp / "outside.md").write_text("OUTSIDE SECRET\n")
    (ws / "AGENTS.md").write_text("Shared rules.\n@docs/style.md\n@../outside.md\n")
    (ws / "CLAUDE.md").symlink_to("AGENTS.md")  # the common set-up: one file, two names
    (ws / "PSEUDOCLAUDE.md").write_text("Shared rules.\n@docs/style.md\n@../outside.md\n")
    (ws / "CLAUDE.local.md").symlink_to(env.tmp / "outside.md")  # a link out: skipped
    [request] = await run(client, env, "hello", {"text": "hi"})
    system = system_of(request)
    assert system.count("Tabs, never spaces.") == 1
    assert "OUTSIDE SECRET" not in system and "include ../outside.md skipped" in system
    assert "Instructions from CLAUDE.md" not in system
    assert "Instructions from PSEUDOCLAUDE.md" not in system  # the same text again
    rules = rules_of(await env.call(client, CONTEXT, {}))
    assert [(r["path"], r["source"]) for r in rules] == [("AGENTS.md", "project")]


async def test_a_subfolder_joins_at_its_first_read_and_stays(client: LanguageClient,
                                                             env: Any) -> None:
    ws = env.folders[0]
    (ws / "sub" / "deeper").mkdir(parents=True)
    (ws / "sub" / "AGENTS.md").write_text("SUB RULE: run make check in sub.\n")
    (ws / "sub" / "deeper" / "CLAUDE.md").write_text("DEEPER RULE\n")
    (ws / "sub" / "x.py").write_text("x = 1\n")
    (ws / "sub" / "deeper" / "y.py").write_text("y = 2")
    (ws / "AGENTS.md").write_text("ROOT RULE\n")

    first = await run(client, env, "look at x", {"tool_calls": [env.read_file("sub/x.py")]},
                      {"text": "x is 1"})
    read = envelope_of(env, "sub/x.py")
    assert read["content"] == "x = 1\n\n" + NOTICE.format("sub/AGENTS.md")
    assert read["metadata"]["instructions"] == ["sub/AGENTS.md"]
    assert "SUB RULE" not in system_of(first[0])  # not before the read
    assert "SUB RULE" in system_of(first[1])  # the same run's next request has it
    second = await run(client, env, "and again",
                       {"tool_calls": [env.read_file("sub/x.py"),
                                       env.read_file("sub/deeper/y.py")]},
                       {"text": "done"})
    assert "SUB RULE" in system_of(second[0]) and "DEEPER RULE" not in system_of(second[0])
    again = envelope_of(env, "sub/x.py")
    assert again["content"] == "x = 1\n" and "instructions" not in again["metadata"]
    deeper = envelope_of(env, "sub/deeper/y.py")  # only the deeper folder's is new
    assert deeper["content"] == "y = 2\n\n" + NOTICE.format("sub/deeper/CLAUDE.md")
    assert deeper["metadata"]["instructions"] == ["sub/deeper/CLAUDE.md"]
    [third] = await run(client, env, "go on", {"text": "ok"})
    system = system_of(third)
    assert system.index("ROOT RULE") < system.index("Instructions from sub/AGENTS.md:\nSUB RULE")
    assert system.index("SUB RULE") < system.index("Instructions from sub/deeper/CLAUDE.md")
    context = await env.call(client, CONTEXT, {})
    sid = context["sessionId"]
    assert [(r["path"], r["source"]) for r in rules_of(context)] == [
        ("AGENTS.md", "project"), ("sub/AGENTS.md", "nested"),
        ("sub/deeper/CLAUDE.md", "nested")]

    # another session has not read under sub: its prompt has the root's file only
    await env.call(client, SESSIONS_NEW, {})
    [other] = await run(client, env, "unrelated", {"text": "fine"})
    assert "ROOT RULE" in system_of(other) and "SUB RULE" not in system_of(other)

    # a restarted server resuming the session knows them from its log
    restarted = await env.second_server()
    try:
        from_log = await env.call(restarted, CONTEXT, {"sessionId": sid})  # not open there
        assert [r["path"] for r in rules_of(from_log)] == [
            "AGENTS.md", "sub/AGENTS.md", "sub/deeper/CLAUDE.md"]
        resumed = await env.call(restarted, SESSIONS_RESUME, {"sessionId": sid})
        assert resumed["sessionId"] == sid
        context = await env.call(restarted, CONTEXT, {})
        assert [(r["path"], r["source"]) for r in rules_of(context)] == [
            (r["path"], r["source"]) for r in from_log["rules"]]
        after = (await run(restarted, env, "after the restart",
                           {"tool_calls": [env.read_file("sub/x.py")]}, {"text": "same"}))[0]
        assert "SUB RULE" in system_of(after) and "DEEPER RULE" in system_of(after)
        log = env.envelopes(sid)
        assert "instructions" not in log[-1]["metadata"]  # not joined a second time
    finally:
        await restarted.shutdown_session()


async def test_an_edited_file_is_read_again(client: LanguageClient, env: Any) -> None:
    ws = env.folders[0]
    (ws / "AGENTS.md").write_text("FIRST VERSION\n")
    [before] = await run(client, env, "one", {"text": "a"})
    small = rules_of(await env.call(client, CONTEXT, {}))
    (ws / "AGENTS.md").write_text("SECOND VERSION " + "with much more to say " * 100 + "\n")
    [after] = await run(client, env, "two", {"text": "b"})
    assert "FIRST VERSION" in system_of(before)
    assert "SECOND VERSION" in system_of(after) and "FIRST VERSION" not in system_of(after)
    large = rules_of(await env.call(client, CONTEXT, {}))
    assert [r["path"] for r in large] == ["AGENTS.md"] and large[0]["tokens"] > small[0]["tokens"]
    (ws / "AGENTS.md").unlink()
    [gone] = await run(client, env, "three", {"text": "c"})
    assert "SECOND VERSION" not in system_of(gone)
    assert rules_of(await env.call(client, CONTEXT, {})) == []
    assert json.dumps(gone["body"]["system"]).count("Instructions from") == 0

