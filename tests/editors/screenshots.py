"""Screenshots of the Neovim plugin for ``editors/media`` (not a test: run it by hand).

``.venv/bin/python tests/editors/screenshots.py [OUT_DIR]`` runs ``nvim_screenshots.lua`` in a
real Neovim with its terminal UI, in a pseudo-terminal of 150x40 (a headless Neovim keeps an 80x24
screen), against the real server and the fake model; the script writes each screen as an HTML
page (every cell with its colours) and Chromium (``/usr/bin/chromium``) renders it to
``nvim-chat.png``, ``nvim-approval.png``, ``nvim-proposal.png``, ``nvim-slash.png`` (the
command menu after ``/``), ``nvim-resumed.png`` (a reopened session after a compaction) and
``nvim-rewind.png`` (the preview of a rewind, a file changed by hand marked) and
``nvim-mcp.png`` (``:PseudoClaudeMcp``: a ready, a failed, a disabled server and a project
server waiting for approval), ``nvim-editor-context.png`` (an unsaved buffer the agent edited,
beside the chat whose prompt shows the selection it goes with), ``nvim-sessions.png`` (two
sessions' chats side by side, both streaming) and ``nvim-worktree.png`` (the status buffer of a
session in a git worktree, beside its chat) in OUT_DIR (default ``editors/media``).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # test_nvim imports the tests' support module

from tests.editors.conftest import Nvim, nvim_binary  # noqa: E402
from tests.editors.test_nvim import (  # noqa: E402
    EDITOR_APP,
    EDITS,
    PLUGIN,
    PROPOSALS,
    e2e_script,
    make_workspace,
    tool_rule,
)

from pseudoclaude.fake_model import FakeModelServer  # noqa: E402

APP = EDITOR_APP  # the app of the editor tests


def read_then(rule: dict, path: str) -> dict:
    """``rule`` (one tool call) with a ``read_file`` of ``path`` first: the server refuses an
    edit of a file the session has not read."""
    calls = rule["reply"]["tool_calls"]
    read = {"name": "read_file", "arguments": {"path": path}}
    if read in calls:  # (tool_rule may read before an edit already)
        return rule
    return {**rule, "reply": {**rule["reply"], "tool_calls": [read, *calls]}}


GREETING = read_then(tool_rule("FIX-GREETING", "edit_file",
                               {"path": "app.py", "old_text": 'print("hello")',
                                "new_text": 'print(greet("world"))'}), "app.py")


def call_rules(marker: str, name: str, arguments: dict, answer: str,
               usage: dict | None = None, read: str | None = None) -> list[dict]:
    """A run whose prompt contains ``marker`` calls one tool (after reading ``read``), then
    answers ``answer`` (once)."""
    after = {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": marker},
             "reply": {"text": answer, "usage": usage or {"input": 900, "output": 20}}, "times": 1}
    call = tool_rule(marker, name, arguments)
    return [after, read_then(call, read) if read else call]


# A resumed session with a call of each status and a compaction (nvim-resumed.png): two reads of
# big.txt (~40 KB) leave the earlier runs out of the recent window, so /compact summarizes them.
RESUMED = [
    *call_rules("MISSING-FILE", "read_file", {"path": "notes/todo.md"},
                "There is no notes/todo.md in this project."),
    *call_rules("CLEAN-BUILD", "run_command", {"command": "rm", "args": ["-rf", "build"]},
                "Understood: I left the build folder alone."),
    tool_rule("SLOW-CMD", "run_command", {"command": "sleep", "args": ["30"]}),
    *call_rules("READ-BIG", "read_file", {"path": "big.txt"}, "big.txt lists 800 benchmark lines."),
    *call_rules("AGAIN-BIG", "read_file", {"path": "big.txt"}, "Read it again: nothing changed.",
                {"input": 24000, "output": 60}),
]
# A rewind to before prompt 2 (nvim-rewind.png): prompt 1 adds a test; prompt 2 renames greet in
# app.py and the test, removes docs/usage.md with a command and adds CHANGELOG.md.
TEST_APP = ('from app import greet\n\n\ndef test_greet() -> None:\n'
            '    assert greet("you") == "hello you"\n')
REWIND = [
    *call_rules("ADD-TESTS", "write_file", {"path": "tests/test_app.py", "content": TEST_APP},
                "Added tests/test_app.py with a test for greet."),
    {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": "RENAME-GREET"},
     "reply": {"text": "Renamed greet to welcome, updated the test, removed docs/usage.md and "
                       "noted the change in CHANGELOG.md.",
               "usage": {"input": 1200, "output": 30}}, "times": 1},
    {"when": {"has_tools": True, "last_user_contains": "RENAME-GREET"},
     "reply": {"text": "Renaming.", "usage": {"input": 1100, "output": 40}, "tool_calls": [
         {"name": "read_file", "arguments": {"path": "app.py"}},  # read before it is changed
         {"name": "edit_file", "arguments": {"path": "app.py", "old_text": "def greet(",
                                             "new_text": "def welcome("}},
         {"name": "edit_file", "arguments": {"path": "app.py", "old_text": "print(greet(",
                                             "new_text": "print(welcome("}},
         {"name": "edit_file", "arguments": {"path": "tests/test_app.py",
                                             "old_text": "from app import greet",
                                             "new_text": "from app import welcome"}},
         {"name": "run_command", "arguments": {"command": "rm", "args": ["docs/usage.md"]}},
         {"name": "write_file", "arguments": {"path": "CHANGELOG.md",
                                              "content": "- greet is now welcome\n"}}]}},
]
# The agent edits an unsaved buffer (nvim-editor-context.png): the user added a docstring to
# greet without saving; the agent changes its return line in the buffer.
UNSAVED = call_rules("the greeting friendlier", "edit_file",
                     {"path": "app.py", "old_text": 'return f"hello {name}"',
                      "new_text": 'return f"Hello, {name}!"'},
                     "Done: greet now says \"Hello, {name}!\". The change is in your unsaved "
                     "buffer, not on disk: u undoes it, :w saves it.", read="app.py")
# Two sessions at once, side by side (nvim-sessions.png): each answer streams for a few seconds.
PLAN_PROMPT = "Sketch a plan for the parser tests"
GUIDE_PROMPT = "Outline the user guide"
SESSIONS = [
    {"when": {"has_tools": True, "last_user_contains": PLAN_PROMPT},
     "reply": {"delay": 0.5, "usage": {"input": 1400, "output": 120}, "text": [
         "A plan for the parser tests:\n\n", "1. **Empty input**: ", "an empty tree.\n",
         "2. **One statement**: ", "one node and its span.\n", "3. **Nested blocks**: ",
         "depth and order kept.\n", "4. **Errors**: ", "a bad token and its line.\n",
         "5. **Round trip**: ", "printing gives the source back.\n\n",
         "Then one test per bug fixed, ", "named after the bug."]}},
    {"when": {"has_tools": True, "last_user_contains": GUIDE_PROMPT},
     "reply": {"delay": 0.45, "usage": {"input": 1300, "output": 110}, "text": [
         "An outline of the user guide:\n\n", "- **Installing**: ", "pip, or from a checkout.\n",
         "- **First steps**: ", "parse a file, print its tree.\n", "- **The language**: ",
         "statements, blocks, comments.\n", "- **Errors**: ", "what they say, how to fix them.\n",
         "- **Reference**: ", "every function, with an example.\n\n", "Each page ends with ",
         "a short exercise."]}},
]
# A session in a git worktree of its own (nvim-worktree.png): a new file, an edit of the README and
# a file removed, in the worktree only; :PseudoClaudeWorktree lists them.
RELEASE_PROMPT = "Write down the release steps and link them from the README"
RELEASING = "# Releasing\n\n1. Update CHANGELOG.md.\n2. Tag it: git tag vX.Y.Z.\n3. Push the tag.\n"
README_LINE = "It keeps sessions and memory."
WORKTREE = [
    {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": RELEASE_PROMPT},
     "reply": {"text": "I wrote RELEASING.md and linked it from the README, in the worktree: "
                       ":PseudoClaudeWorktree shows the changes, apply brings them to the folder.",
               "usage": {"input": 1500, "output": 40}}, "times": 1},
    {"when": {"has_tools": True, "last_user_contains": RELEASE_PROMPT},
     "reply": {"text": "Writing the release steps.", "usage": {"input": 1400, "output": 60},
               "tool_calls": [
                   {"name": "write_file",
                    "arguments": {"path": "RELEASING.md", "content": RELEASING}},
                   {"name": "read_file", "arguments": {"path": "README.md"}},
                   {"name": "edit_file", "arguments": {
                       "path": "README.md", "old_text": README_LINE,
                       "new_text": README_LINE + "\n\nSee RELEASING.md to cut a release."}},
                   {"name": "run_command",
                    "arguments": {"command": "rm", "args": ["docs/usage.md"]}}]}},
]
BIG = "".join(f"Line {i}: sessions, compaction and memory notes.\n" for i in range(800))
COLUMNS, LINES = 150, 40


def run_in_terminal(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> int:
    """Run ``argv`` in a pseudo-terminal of COLUMNS x LINES (its output is read and dropped);
    its exit status."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: size the terminal, then become Neovim
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    if not os.read(fd, 65536):
                        break
                except OSError:  # the child closed the terminal
                    break
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
        else:
            os.kill(pid, 9)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "editors" / "media"
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        workspace = make_workspace(tmp)
        (workspace / "README.md").write_text("# Demo project\n\nIt keeps sessions and memory.\n")
        (workspace / "app.py").write_text(APP)
        (workspace / "big.txt").write_text(BIG)
        (workspace / "docs").mkdir()
        (workspace / "docs" / "usage.md").write_text("# Usage\n\nCall greet(name).\n")
        # A git repository (a session in a worktree needs one), everything committed.
        for args in (["init", "-q"], ["config", "user.email", "shots@example.com"],
                     ["config", "user.name", "Screenshots"], ["add", "."],
                     ["commit", "-q", "-m", "The demo project"]):
            subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)
        shots = tmp / "shots"
        shots.mkdir()
        nvim = Nvim(nvim_binary(), tmp)
        rules = [GREETING, *RESUMED, *UNSAVED, *REWIND, *SESSIONS, *WORKTREE, *EDITS, *PROPOSALS]
        with FakeModelServer(e2e_script(rules)) as model:
            env = nvim.env(PC_PLUGIN=str(PLUGIN), PC_WORKSPACE=str(workspace),
                           PC_PYTHON=sys.executable, PC_BASE_URL=model.base_url,
                           PC_REPORT=str(tmp / "report.json"), PC_TIMEOUT_MS="60000",
                           PC_SHOTS=str(shots), TERM="xterm-256color", COLORTERM="truecolor")
            script = HERE / "nvim_screenshots.lua"
            code = run_in_terminal([nvim.binary, "--clean", "-c", f"luafile {script}"], env,
                                   workspace, timeout=600)
        report = tmp / "report.json"
        if code != 0 or not report.exists() or '"ok":true' not in report.read_text():
            failed = json.loads(report.read_text()) if report.exists() else {}
            print(f"exit {code}: step {failed.get('failed_step')!r} failed: {failed.get('error')}",
                  report.read_text()[-4000:] if report.exists() else "", file=sys.stderr)
            return 1
        out.mkdir(parents=True, exist_ok=True)
        for page in sorted(shots.glob("*.html")):
            png = out / (page.stem + ".png")
            subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--window-size={COLUMNS * 9 + 24},{LINES * 19 + 24}",
                 f"--screenshot={png}", page.as_uri()],
                check=True, capture_output=True, timeout=120)
            print(png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
