"""Memory with consent through real servers (SPEC §11): with ``memory.mode: confirm`` a
background update writes nothing until a proposal is accepted; ``pseudoclaude/memory/proposals``
and ``pseudoclaude/memory/review`` (accept, edited accept, reject, stale, unknown id);
``pseudoclaude/memoryProposals`` when the queue changes, after ``initialized`` in a second
server process (a restart) and when another process changes the queue; ``memory/show``
health; and the CLI's ``memory proposals|review`` with their exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    INVALID_PARAMS,
    MEMORY_PROPOSALS,
    MEMORY_PROPOSALS_CHANGED,
    MEMORY_REMEMBER,
    MEMORY_REVIEW,
    MEMORY_SHOW,
    REQUEST_FAILED,
    RUN,
)
from pseudoclaude.fake_model import FakeModelServer

pytestmark = pytest.mark.timeout(240)

SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]
BUILD = {"action": "create", "level": "project", "type": "project_knowledge", "title": "Build",
         "summary": "make build", "content": "Run `make build`."}
PROFILE = {"action": "create", "level": "user", "type": "user_preference",
           "title": "User Profile", "summary": "Go engineer",
           "content": "The user is a Go engineer."}
STYLE = {"action": "update", "level": "project", "filename": "project_knowledge_style.md",
         "summary": "spaces", "content": "Indent with spaces."}


def memory_rule(marker: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The memory update's reply for the run whose prompt contains ``marker``."""
    return {"when": {"has_tools": False, "body_contains": marker},
            "reply": {"text": "Operations: " + json.dumps(ops)}}


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({
        "rules": [memory_rule("RUN-BOTH", [BUILD, PROFILE]), memory_rule("RUN-STYLE", [STYLE]),
                  {"when": {"has_tools": False}, "reply": {"text": "[]"}}],
        "default": {"text": "Done.", "chunks": 1},
    }) as server:
        yield server


@pytest.fixture
def env(env: Any) -> Any:
    """The shared environment, with ``memory.mode: confirm``."""
    options = env.options()
    options["memory"]["mode"] = "confirm"
    env.options = lambda: json.loads(json.dumps(options))
    env.proposals_changed = []
    return env


def watch(client: LanguageClient, env: Any) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = env.proposals_changed

    @client.feature(MEMORY_PROPOSALS_CHANGED)
    def on_proposals(params: Any) -> None:
        seen.append(params)

    return seen


async def run_and_wait(client: LanguageClient, env: Any, prompt: str, status: str) -> None:
    env.events.clear()
    result = await env.call(client, RUN, {"prompt": prompt})
    assert result["stopReason"] == "completed"
    await env.until(lambda: any(e["kind"] == "memory" for e in env.events))
    memory = next(e for e in env.events if e["kind"] == "memory")
    assert memory["status"] == status, memory


def project_notes(env: Any) -> list[str]:
    folder = env.folders[0] / ".PseudoClaude" / "memory"
    return sorted(p.name for p in folder.glob("*.md")) if folder.is_dir() else []


def user_notes(env: Any) -> list[str]:
    folder = env.tmp / "user-memory"
    return sorted(p.name for p in folder.glob("*.md")) if folder.is_dir() else []


async def test_confirm_mode_writes_nothing_until_accepted(client: LanguageClient,
                                                          env: Any) -> None:
    seen = watch(client, env)
    assert (await env.call(client, MEMORY_PROPOSALS)) == {"proposals": []}
    await run_and_wait(client, env, "RUN-BOTH: I am a Go engineer; how do I build?", "proposed")
    memory = next(e for e in env.events if e["kind"] == "memory")
    assert [(c["action"], c["level"], c["filename"]) for c in memory["changes"]] == [
        ("create", "project", "project_knowledge_build.md"),
        ("create", "user", "user_preference_user-profile.md")]
    assert project_notes(env) == [] and user_notes(env) == []
    shown = await env.call(client, MEMORY_SHOW)
    assert shown["index"] == "" and shown["health"] == {
        "lines": 0, "bytes": 0, "maxLines": 200, "maxBytes": 25_600}
    await env.until(lambda: seen)
    workspace = env.folders[0].as_uri()
    assert seen[-1] == {"workspace": workspace, "count": 2}

    listed = (await env.call(client, MEMORY_PROPOSALS))["proposals"]
    assert [p["filename"] for p in listed] == ["project_knowledge_build.md",
                                               "user_preference_user-profile.md"]
    build = listed[0]
    assert set(build) == {"id", "createdAt", "sessionId", "action", "level", "type", "title",
                          "summary", "filename", "before", "after"}
    assert (build["action"], build["before"], build["summary"]) == ("create", "", "make build")
    assert build["after"].startswith("---\ntype: project_knowledge\n")
    assert f'source: "{build["sessionId"]} turn 1"' in build["after"]

    env.memory_changed.clear()
    accepted = await env.call(client, MEMORY_REVIEW, {"id": build["id"], "decision": "accept"})
    assert accepted == {"applied": True, "filename": "project_knowledge_build.md",
                        "message": "Accepted: project_knowledge_build.md is written to "
                                   "project memory."}
    assert project_notes(env) == ["MEMORY.md", "project_knowledge_build.md"]
    assert "Run `make build`." in (env.folders[0] / ".PseudoClaude" / "memory" /
                                   "project_knowledge_build.md").read_text()
    await env.until(lambda: any(m["source"] == "review" for m in env.memory_changed))
    await env.until(lambda: seen[-1]["count"] == 1)
    shown = await env.call(client, MEMORY_SHOW)
    assert "Build — make build" in shown["index"]
    assert shown["health"]["lines"] == 2 and shown["health"]["bytes"] == len(
        shown["index"].encode())
    assert user_notes(env) == []  # the user-level proposal still waits


async def test_edited_accept_reject_stale_and_unknown_id(client: LanguageClient,
                                                         env: Any) -> None:
    seen = watch(client, env)
    await run_and_wait(client, env, "RUN-BOTH: remember me", "proposed")
    build, profile = (await env.call(client, MEMORY_PROPOSALS))["proposals"]
    # edited accept: a body without front matter gets the proposal's front matter
    edited = await env.call(client, MEMORY_REVIEW, {"id": profile["id"], "decision": "accept",
                                                    "content": "A Go and Rust engineer."})
    assert edited["applied"]
    text = (env.tmp / "user-memory" / "user_preference_user-profile.md").read_text()
    assert 'title: "User Profile"' in text and "A Go and Rust engineer." in text
    assert "Go engineer." not in text.replace("Go and Rust engineer.", "")
    # reject: nothing written, the proposal is gone
    rejected = await env.call(client, MEMORY_REVIEW, {"id": build["id"], "decision": "reject"})
    assert rejected == {"applied": False, "filename": "project_knowledge_build.md",
                        "message": "Rejected the proposed change to project_knowledge_build.md "
                                   "(project memory is unchanged)."}
    assert project_notes(env) == []
    await env.until(lambda: seen and seen[-1]["count"] == 0)
    # stale: the note changed by hand after the proposal was made
    await env.call(client, MEMORY_REMEMBER, {"text": "Indent with tabs.", "level": "project",
                                             "title": "Style"})
    await run_and_wait(client, env, "RUN-STYLE: spaces please", "proposed")
    (style,) = (await env.call(client, MEMORY_PROPOSALS))["proposals"]
    assert style["action"] == "update" and "tabs" in style["before"] and "spaces" in \
        style["after"]
    note = env.folders[0] / ".PseudoClaude" / "memory" / "project_knowledge_style.md"
    note.write_text(note.read_text().replace("tabs", "tabs (by hand)"))
    with pytest.raises(JsonRpcException) as stale:
        await env.call(client, MEMORY_REVIEW, {"id": style["id"], "decision": "accept"})
    assert stale.value.code == REQUEST_FAILED and "stale" in stale.value.message
    assert "(by hand)" in note.read_text()
    assert [p["id"] for p in (await env.call(client, MEMORY_PROPOSALS))["proposals"]] == [
        style["id"]]
    # an unknown id, a bad decision
    for params, field in (({"id": "20990101-000000-00000000", "decision": "accept"}, "id"),
                          ({"id": style["id"], "decision": "maybe"}, "decision")):
        with pytest.raises(JsonRpcException) as bad:
            await env.call(client, MEMORY_REVIEW, params)
        assert bad.value.code == INVALID_PARAMS and field in bad.value.message
    assert (await env.call(client, MEMORY_REVIEW, {"id": style["id"],
                                                   "decision": "reject"}))["applied"] is False


async def test_proposals_survive_a_restart_and_other_processes_are_noticed(
        client: LanguageClient, env: Any) -> None:
    seen = watch(client, env)
    await run_and_wait(client, env, "RUN-BOTH: first", "proposed")
    before = (await env.call(client, MEMORY_PROPOSALS))["proposals"]
    await env.until(lambda: seen and seen[-1]["count"] == 2)

    seen_after: list[dict[str, Any]] = []
    other = await env.second_server("neovim", {MEMORY_PROPOSALS_CHANGED: seen_after.append})
    try:
        await env.until(lambda: seen_after)  # pending at start: announced after initialized
        assert seen_after[0] == {"workspace": env.folders[0].as_uri(), "count": 2}
        assert (await env.call(other, MEMORY_PROPOSALS))["proposals"] == before
        accepted = await env.call(other, MEMORY_REVIEW, {"id": before[0]["id"],
                                                         "decision": "accept"})
        assert accepted["applied"]
        # the first server notices the other process's change of the queue
        await env.until(lambda: seen[-1]["count"] == 1)
        assert [p["id"] for p in (await env.call(client, MEMORY_PROPOSALS))["proposals"]] == [
            before[1]["id"]]
        assert "Build" in (await env.call(client, MEMORY_SHOW))["index"]
        with pytest.raises(JsonRpcException) as gone:  # accepted elsewhere: unknown here
            await env.call(client, MEMORY_REVIEW, {"id": before[0]["id"], "decision": "accept"})
        assert gone.value.code == INVALID_PARAMS
    finally:
        await other.shutdown_session()


# -- the CLI -----------------------------------------------------------------------------------


def cli(env: Any, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC", "OPENAI"))}
    clean["HOME"] = str(env.tmp / "cli-home")
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace",
                           str(env.folders[0])], capture_output=True, text=True, timeout=120,
                          env=clean, input=stdin)


def one_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    return json.loads(lines[0])


async def test_cli_proposals_and_review(client: LanguageClient, env: Any) -> None:
    config = env.folders[0] / ".PseudoClaude" / "config.yaml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(yaml.safe_dump(env.options()))
    await run_and_wait(client, env, "RUN-BOTH: for the CLI", "proposed")
    lsp = await env.call(client, MEMORY_PROPOSALS)
    assert one_json(cli(env, "memory", "proposals", "--json")) == lsp
    table = cli(env, "memory", "proposals")
    assert table.returncode == 0
    build, profile = lsp["proposals"]
    assert build["id"] in table.stdout and "+Run `make build`." in table.stdout

    body = env.tmp / "edited.md"
    body.write_text("Edited through the CLI.\n")
    reviewed = one_json(cli(env, "memory", "review", build["id"], "accept", "--content",
                            str(body), "--json"))
    assert {k: reviewed[k] for k in ("applied", "filename")} == {
        "applied": True, "filename": build["filename"]} and reviewed["message"]
    assert "Edited through the CLI." in (env.folders[0] / ".PseudoClaude" / "memory" /
                                         build["filename"]).read_text()
    rejected = cli(env, "memory", "review", profile["id"], "reject")
    assert rejected.returncode == 0 and rejected.stdout.startswith("Rejected the proposed change")
    assert one_json(cli(env, "memory", "proposals", "--json")) == {"proposals": []}
    assert "no memory proposals" in cli(env, "memory", "proposals").stdout

    unknown = cli(env, "memory", "review", profile["id"], "accept")
    assert unknown.returncode == 1 and len(unknown.stderr.splitlines()) == 1
    assert "no pending memory proposal" in unknown.stderr
    usage = cli(env, "memory", "review", profile["id"], "reject", "--content", str(body))
    assert usage.returncode == 2 and "--content" in usage.stderr

    await env.call(client, MEMORY_REMEMBER, {"text": "Indent with tabs.", "level": "project",
                                             "title": "Style"})
    await run_and_wait(client, env, "RUN-STYLE: spaces", "proposed")
    (style,) = (await env.call(client, MEMORY_PROPOSALS))["proposals"]
    note = env.folders[0] / ".PseudoClaude" / "memory" / "project_knowledge_style.md"
    note.write_text(note.read_text() + "\nA hand edit.\n")
    stale = cli(env, "memory", "review", style["id"], "accept", "--json")
    assert stale.returncode == 1 and stale.stdout == ""
    assert len(stale.stderr.splitlines()) == 1 and "stale" in stale.stderr
    assert "A hand edit." in note.read_text()
    shown = one_json(cli(env, "memory", "show", "--json"))
    assert shown["health"]["maxLines"] == 200 and shown["health"]["lines"] == 3
