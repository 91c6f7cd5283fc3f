"""The skills' tools in a session's registry: ``load_skill`` (offered in plan mode, runs
unasked, marks the skill loaded, its ``tools.json`` tools offered from then on, judged as the
command they run), ``install_skill`` (asked every time, never covered by "allow for this
session"), and what the permission engine says of them in each mode."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.agent.skills import SessionSkills
from pseudoclaude.agent.tools import ToolRegistry
from pseudoclaude.llm.types import ToolCall
from pseudoclaude.permissions import Approvals, Call, PermissionEngine
from pseudoclaude.skills import discover, roots, shown_path
from support import policy_gate

SKILL = "---\nname: lint\ndescription: Lint the code.\n---\nRun the linter on $ARGUMENTS.\n"
SCRIPT = ("#!/bin/sh\nprintf 'args: '; cat; "
          "printf '\\ndir: %s cwd: %s' \"$CLAUDE_SKILL_DIR\" \"$PWD\"\n")


class Approver:
    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.answers.pop(0)


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    ws, user = tmp_path / "ws", tmp_path / "user"
    skill = ws / ".PseudoClaude" / "skills" / "lint"
    skill.mkdir(parents=True)
    user.mkdir()
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "run.sh").write_text(SCRIPT)
    (skill / "run.sh").chmod(0o755)
    (skill / "tools.json").write_text(json.dumps({"tools": [{
        "name": "lint_now", "description": "Lint now.", "command": ["run.sh", "--fast"],
        "input_schema": {"type": "object", "required": ["path"],
                         "properties": {"path": {"type": "string"}}}}]}))
    return ws, user


def registry(ws: Path, user: Path, loaded: tuple[str, ...] = ()) -> ToolRegistry:
    def scan() -> Any:
        return discover(roots(ws, user), shown_path(ws))

    tools = ToolRegistry(ws)
    tools.set_skills(SessionSkills(scan, scan(), load=lambda: loaded, session_id="S",
                                   workspace=ws.resolve(), install_dir=user / "skills"))
    return tools


def names(tools: ToolRegistry) -> list[str]:
    return [spec.name for spec in tools.specs()]


def test_load_skill_loads_and_brings_the_skills_tools(folders: tuple[Path, Path]) -> None:
    tools = registry(*folders)
    assert "load_skill" in names(tools) and "install_skill" in names(tools)
    assert "lint_now" not in names(tools)
    tools.set_plan(True)  # plan mode: load_skill still offered, install_skill not
    assert "load_skill" in names(tools) and "install_skill" not in names(tools)
    tools.set_plan(False)
    result = asyncio.run(tools.execute(ToolCall("c1", "load_skill", {"name": "lint"})))
    envelope = json.loads(result.content)
    assert envelope["ok"], envelope
    assert envelope["content"].startswith('<skill name="lint">\nSkill folder (its other files '
                                          'are there): .PseudoClaude/skills/lint\n')
    assert "Run the linter on .\n</skill>\n\nloaded skill \"lint\" (1 specialized tool " \
        "registered: lint_now)" in envelope["content"]
    assert envelope["metadata"] == {"skill": "lint", "source": "workspace", "tools": ["lint_now"]}
    assert "lint_now" in names(tools)
    [spec] = [s for s in tools.specs() if s.name == "lint_now"]
    assert spec.input_schema["required"] == ["path"]
    tools.set_plan(True)
    assert "lint_now" not in names(tools)  # it runs a command: not in plan mode


def test_unknown_and_user_only_skills(folders: tuple[Path, Path]) -> None:
    ws, user = folders
    (user / "skills" / "deploy").mkdir(parents=True)
    (user / "skills" / "deploy" / "SKILL.md").write_text(
        "---\ndescription: Deploy.\ndisable-model-invocation: true\n---\nDeploy it.\n")
    tools = registry(ws, user)
    for name, words in (("nope", 'unknown skill "nope"'), ("deploy", "run by the user only")):
        envelope = json.loads(asyncio.run(tools.execute(
            ToolCall("c", "load_skill", {"name": name}))).content)
        assert envelope["error_type"] == "unknown_skill" and words in envelope["error"]
        assert "commit, lint, review, test" in envelope["error"]


def test_a_skill_tool_runs_its_program_with_the_arguments_on_stdin(
        folders: tuple[Path, Path]) -> None:
    ws, user = folders
    tools = registry(ws, user, loaded=("lint",))  # loaded before (its log says so)
    tools._skills.loaded()  # type: ignore[union-attr]  # what the session does off the loop
    call = ToolCall("c2", "lint_now", {"path": "src/a.py"})
    judged = tools.as_command(call)
    program = str(ws / ".PseudoClaude" / "skills" / "lint" / "run.sh")
    assert (judged.name, judged.arguments) == ("run_command",
                                               {"command": program, "args": ["--fast"]})
    assert tools.approval_class("lint_now") == "runCommand"
    preview = asyncio.run(tools.prepare(call))
    assert preview.command == f"{program} --fast" and preview.cwd == str(ws.resolve())
    envelope = json.loads(asyncio.run(tools.execute(call)).content)
    assert envelope["ok"], envelope
    assert envelope["content"] == (f'args: {{"path": "src/a.py"}}\ndir: '
                                   f"{ws / '.PseudoClaude' / 'skills' / 'lint'} cwd: "
                                   f"{ws.resolve()}")
    assert envelope["metadata"]["skill"] == "lint"
    missing = json.loads(asyncio.run(tools.execute(ToolCall("c3", "lint_now", {}))).content)
    assert missing["error_type"] == "invalid_arguments" and "`path`" in missing["error"]
    assert tools.as_command(ToolCall("c4", "read_file", {"path": "a"})).name == "read_file"


def test_the_engine_on_install_skill_and_load_skill(tmp_path: Path) -> None:
    engine = PermissionEngine(tmp_path, approvals=Approvals(write="allow"))
    for mode, install in (("default", "ask"), ("acceptEdits", "ask"), ("strict", "ask"),
                          ("plan", "deny")):
        engine.set_mode(mode)
        assert engine.check(Call("install_skill", {"source": "x.zip"})).decision == install
        assert engine.check(Call("load_skill", {"name": "x"})).decision == "allow"
    bypass = PermissionEngine(tmp_path, allow_bypass=True)
    bypass.set_mode("bypassPermissions")
    assert bypass.check(Call("install_skill", {"source": "x.zip"})).decision == "allow"


def test_install_skill_is_asked_every_time(tmp_path: Path) -> None:
    approver = Approver("allow_session", "allow_session", "allow_session", "allow_once")
    gate = policy_gate(Approvals(write="ask"), approver, tmp_path)
    install = ToolCall("i1", "install_skill", {"source": "x.zip"})
    write = ToolCall("w1", "write_file", {"path": "a.txt", "content": "x"})
    assert asyncio.run(gate.check(install, "write")) is None
    assert asyncio.run(gate.check(install, "write")) is None  # asked again
    assert asyncio.run(gate.check(write, "write")) is None  # writes are not covered either
    assert asyncio.run(gate.check(write, "write")) is None  # (this one was: for the session)
    assert asyncio.run(gate.check(install, "write")) is None  # asked again
    assert [r.tool for r in approver.requests] == ["install_skill", "install_skill",
                                                   "write_file", "install_skill"]
    assert approver.requests[0].rule is None  # no "always allow" to offer


def test_install_skill_shows_where_and_what_then_installs(folders: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    ws, user = folders
    source = tmp_path / "pkg" / "notes"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_text("---\ndescription: Take notes.\n---\nWrite notes.\n")
    tools = registry(ws, user)
    call = ToolCall("i1", "install_skill", {"source": str(source)})
    preview = asyncio.run(tools.prepare(call))
    assert preview.path is not None and preview.path.endswith("user/skills/notes")
    assert preview.before == "" and preview.after is not None
    assert "--- SKILL.md ---\n---\ndescription: Take notes." in preview.after
    assert not (user / "skills").exists()  # nothing before the approval
    envelope = json.loads(asyncio.run(tools.execute(call, preview)).content)
    assert envelope["ok"], envelope
    assert (user / "skills" / "notes" / "SKILL.md").is_file()
    assert tools._skills.current.get("notes") is not None  # type: ignore[union-attr]
    again = json.loads(asyncio.run(tools.execute(call)).content)
    assert again["error_type"] == "install_failed" and "installed already" in again["error"]
    relative = json.loads(asyncio.run(tools.execute(ToolCall(
        "i2", "install_skill", {"source": "missing.zip"}))).content)
    assert relative["error_type"] == "install_failed"
    assert str(ws / "missing.zip") in relative["error"]
    assert os.listdir(user / "skills") == ["notes"]
