"""Skills through a real language server (SPEC §13 "Hooks and skills"): the list (names and
descriptions only) in the system prompt; ``pseudoclaude/skills/list`` with each skill's source
and the problems of a malformed one; a ``.claude/skills/<name>/SKILL.md`` written as Claude
Code documents it loads unchanged; ``load_skill`` marks it loaded (also after a restart) and
counts under the breakdown's ``skills``; ``/review src`` sends the skill's instructions; the
chats' ``/`` list has the skills; ``install_skill`` asks first and refuses a bad package; a
skill's ``tools.json`` tool is asked like a command."""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, RUN, SKILLS_LIST, SLASH_COMMANDS

pytestmark = pytest.mark.timeout(180)

CATEGORIES = ("system", "rules", "memory", "skills", "tools", "summary", "messages", "toolCalls",
              "toolResults", "spilled")
CLAUDE_SKILL = """\
---
name: explain-code
description: Explains code with visual diagrams and analogies. Use when explaining how code \
works, teaching about a codebase, or when the user asks "how does this work?"
argument-hint: [file]
allowed-tools: Read, Grep
---

When explaining code, always include:

1. **Start with an analogy**: Compare the code to something from everyday life
2. **Draw a diagram**: Use ASCII art to show the flow, structure, or relationships

Explain $ARGUMENTS (or the code the user pointed at). EXPLAIN-BODY-MARKER
"""


def runs(env: Any) -> list[dict[str, Any]]:
    """The model requests of runs (a memory update's have no tools)."""
    return [r for r in env.fake.requests if r["body"].get("tools")]


def system_of(request: dict[str, Any]) -> str:
    return str(request["body"]["system"][0]["text"])


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def run(client: LanguageClient, env: Any, prompt: str, *turns: dict[str, Any],
              **params: Any) -> dict[str, Any]:
    env.fake.add_turns(*turns)
    result = await env.call(client, RUN, {"prompt": prompt, **params})
    assert result["stopReason"] == "completed", result
    return dict(result)


def checked(context: dict[str, Any]) -> dict[str, Any]:
    b = context["breakdown"]
    assert set(CATEGORIES) | {"free", "reserved"} == set(b)
    assert sum(b[c] for c in CATEGORIES) == context["estimatedTokens"], b
    return dict(b)


async def listed(client: LanguageClient, env: Any, **params: Any) -> dict[str, dict[str, Any]]:
    result = await env.call(client, SKILLS_LIST, params)
    return {s["name"]: s for s in result["skills"]}


async def test_the_list_the_sources_and_a_claude_code_skill(client: LanguageClient,
                                                            env: Any) -> None:
    ws = env.folders[0]
    write(ws / ".claude" / "skills" / "explain-code" / "SKILL.md", CLAUDE_SKILL)
    write(ws / ".agents" / "skills" / "shared" / "SKILL.md",
          "---\nname: shared\ndescription: Shared by several tools.\n---\nShared body.\n")
    write(ws / ".PseudoClaude" / "skills" / "review.md",  # the folder's own wins over built-in
          "---\nname: review\ndescription: Review as this project does.\n---\nOur review.\n")
    write(env.tmp / "skills" / "mine" / "SKILL.md",  # the user folder: memory.userDir's parent
          "---\ndescription: My own skill.\n---\nMine.\n")
    write(ws / ".PseudoClaude" / "skills" / "broken" / "SKILL.md",
          "---\nname: broken\ndescription: [not closed\n---\nbody\n")
    await run(client, env, "hello", {"text": "hi"})
    system = system_of(runs(env)[-1])
    assert ("Available Skills\nOnly names and short descriptions are listed here. When you "
            "need a skill's full SOP, call the load_skill system tool by name.\n") in system
    assert ("- explain-code: Explains code with visual diagrams and analogies. Use when "
            'explaining how code works, teaching about a codebase, or when the user asks "how '
            'does this work?"') in system
    assert "- review: Review as this project does." in system
    assert "EXPLAIN-BODY-MARKER" not in system and "Our review." not in system  # names only
    assert "load_skill" in [t["name"] for t in runs(env)[-1]["body"]["tools"]]

    result = await env.call(client, SKILLS_LIST, {})
    skills = {s["name"]: s for s in result["skills"]}
    assert {n: s["source"] for n, s in skills.items()} == {
        "commit": "builtin", "explain-code": "claude", "mine": "user", "review": "workspace",
        "shared": "agents", "test": "builtin"}
    explain = skills["explain-code"]
    assert explain["path"] == ".claude/skills/explain-code/SKILL.md"
    assert (explain["hint"], explain["loaded"], explain["model"], explain["command"]) == (
        "[file]", False, True, True)
    [problem] = result["problems"]
    assert (problem["path"], problem["line"], problem["source"]) == (
        ".PseudoClaude/skills/broken/SKILL.md", 3, "workspace")
    assert "not valid YAML" in problem["message"]

    commands = {c["name"]: c for c in (await env.call(client, SLASH_COMMANDS))["commands"]}
    assert commands["explain-code"]["skill"] is True
    assert commands["explain-code"]["hint"] == "[file]"
    assert "skill" not in commands["compact"]


async def test_load_skill_loads_it_and_counts_under_skills(client: LanguageClient,
                                                           env: Any) -> None:
    ws = env.folders[0]
    write(ws / ".claude" / "skills" / "explain-code" / "SKILL.md", CLAUDE_SKILL)
    await run(client, env, "hello", {"text": "hi"})
    before = checked(await env.call(client, CONTEXT, {}))
    assert before["skills"] > 0 and before["toolResults"] == 0  # the list alone

    await run(client, env, "explain the notes", call("load_skill", name="explain-code"),
              {"text": "Here is an analogy."})
    [loaded] = [e for e in env.envelopes() if e["tool"] == "load_skill"]
    assert loaded["ok"], loaded
    assert loaded["content"].startswith('<skill name="explain-code">\n'
                                        "Skill folder (its other files are there): "
                                        ".claude/skills/explain-code\n"
                                        "Allowed tools for this skill: Read, Grep\n")
    assert "Explain  (or the code the user pointed at). EXPLAIN-BODY-MARKER" in \
        loaded["content"]  # $ARGUMENTS is empty
    assert loaded["metadata"]["skill"] == "explain-code"
    after = checked(await env.call(client, CONTEXT, {}))
    assert after["toolResults"] == 0  # the load_skill result is a skill, not a tool result
    assert after["skills"] > before["skills"] + 50
    skills = await listed(client, env)
    assert skills["explain-code"]["loaded"] and not skills["review"]["loaded"]

    # another server (a restart) knows it from the session's log
    other = await env.second_server()
    try:
        again = await listed(other, env, sessionId="latest")
        assert again["explain-code"]["loaded"] and not again["commit"]["loaded"]
    finally:
        await other.shutdown_session()

    # a skill the user alone may run is not listed to the model, nor loadable
    write(ws / ".PseudoClaude" / "skills" / "deploy" / "SKILL.md",
          "---\ndescription: Deploy.\ndisable-model-invocation: true\n---\nDeploy.\n")
    await run(client, env, "deploy", call("load_skill", name="deploy"), {"text": "no"})
    assert "- deploy:" not in system_of(runs(env)[-1])
    refused = [e for e in env.envelopes() if e["tool"] == "load_skill"][-1]
    assert refused["error_type"] == "unknown_skill" and "by the user only" in refused["error"]


async def test_a_skill_command_sends_its_instructions(client: LanguageClient,
                                                      env: Any) -> None:
    result = await run(client, env, "/review src", {"text": "Must fix: nothing."})
    [request] = runs(env)[-1:]
    prompt = request["body"]["messages"][-1]
    text = prompt["content"] if isinstance(prompt["content"], str) else "".join(
        part.get("text", "") for part in prompt["content"])
    assert text.startswith('/review src\n\n<skill name="review">\n')
    assert "Review the code named here: src\n" in text and text.endswith("</skill>")
    skills = await listed(client, env)
    assert skills["review"]["loaded"] and not skills["commit"]["loaded"]
    b = checked(await env.call(client, CONTEXT, {}))
    assert b["skills"] > 300  # the list and the review prompt
    items = await env.items(client, {"sessionId": result["sessionId"]})
    [user] = [i for i in items if i["kind"] == "user"]
    assert user["text"].startswith("/review src\n\n<skill name=\"review\">")
    # a /word that is no skill is a prompt as it is
    await run(client, env, "/nothing here", {"text": "ok"})
    last = runs(env)[-1]["body"]["messages"][-1]
    assert "/nothing here" in json.dumps(last) and "<skill" not in json.dumps(last)


def package(path: Path, members: dict[str, str], link: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


NOTES_SKILL = "---\nname: notes\ndescription: Keep notes.\n---\nWrite notes in NOTES.md.\n"


async def test_install_skill_asks_first(approving: LanguageClient, env: Any) -> None:
    ws = env.folders[0]
    good = package(ws / "notes.zip", {"notes/SKILL.md": NOTES_SKILL, "notes/more.md": "more"})
    env.approve_answer = {"decision": "deny"}
    await run(approving, env, "install it", call("install_skill", source="notes.zip"),
              {"text": "not installed"})
    [asked] = [a for a in env.approve_requests if a["tool"] == "install_skill"]
    assert asked["kind"] == "write" and asked["path"].endswith("skills/notes")
    assert asked["before"] == "" and "--- SKILL.md ---\n" + NOTES_SKILL.rstrip() in asked["after"]
    assert "rule" not in asked
    assert not (env.tmp / "skills").exists()
    assert env.envelopes()[-1]["error_type"] == "permission_denied"

    env.approve_answer = {"decision": "allowSession"}
    await run(approving, env, "install it", call("install_skill", source=str(good)),
              {"text": "installed"})
    assert env.envelopes()[-1]["ok"], env.envelopes()[-1]
    assert sorted(p.name for p in (env.tmp / "skills" / "notes").iterdir()) == [
        "SKILL.md", "more.md"]
    assert (await listed(approving, env))["notes"]["source"] == "user"

    # a package with a link in it: refused before anyone is asked, nothing written
    asked_before = len(env.approve_requests)
    package(ws / "evil.zip", {"evil/SKILL.md": NOTES_SKILL.replace("notes", "evil")},
            link="evil/passwd")
    package(ws / "up.zip", {"up/SKILL.md": NOTES_SKILL.replace("notes", "up"),
                            "up/../../outside.md": "x"})
    for source in ("evil.zip", "up.zip"):
        await run(approving, env, "install", call("install_skill", source=source),
                  {"text": "refused"})
        refused = env.envelopes()[-1]
        assert refused["error_type"] == "install_failed", refused
    assert "a symbolic link" in env.envelopes()[-2]["error"]
    assert "'..'" in env.envelopes()[-1]["error"]
    assert len(env.approve_requests) == asked_before
    assert sorted(p.name for p in (env.tmp / "skills").iterdir()) == ["notes"]
    assert not (env.tmp / "outside.md").exists()


async def test_a_skill_tool_is_asked_like_a_command(approving: LanguageClient,
                                                    env: Any) -> None:
    folder = env.folders[0] / ".PseudoClaude" / "skills" / "count"
    write(folder / "SKILL.md", "---\ndescription: Count words.\n---\nUse count_words.\n")
    script = write(folder / "count.sh", "#!/bin/sh\nprintf 'got '; cat\n")
    script.chmod(0o755)
    write(folder / "tools.json", json.dumps({"tools": [{
        "name": "count_words", "description": "Count the words of a text.",
        "command": ["count.sh"], "input_schema": {"type": "object", "properties": {
            "text": {"type": "string"}}}}]}))
    await run(approving, env, "hello", {"text": "hi"})
    assert "count_words" not in [t["name"] for t in runs(env)[-1]["body"]["tools"]]
    env.approve_answer = {"decision": "allowOnce"}
    await run(approving, env, "count", call("load_skill", name="count"),
              call("count_words", text="a b c"), {"text": "3 words"})
    assert "count_words" in [t["name"] for t in runs(env)[-1]["body"]["tools"]]
    [asked] = [a for a in env.approve_requests if a["kind"] == "runCommand"]
    assert asked["command"] == str(script) and asked["tool"] == "run_command"
    ran = env.envelopes()[-1]
    assert ran["ok"] and ran["content"] == 'got {"text": "a b c"}', ran
    assert ran["metadata"]["skill"] == "count"
