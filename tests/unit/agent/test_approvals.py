"""Approvals: policy, gate, session memory, the terminal approver (SPEC §6, §8)."""

from __future__ import annotations

import asyncio
import io
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.approvals import (
    Answer,
    ApprovalRequest,
    ApprovalUnavailable,
    Decision,
    Denial,
    Gate,
    summarize,
)
from pseudoclaude.cli.approver import TerminalApprover
from pseudoclaude.llm.types import ToolCall
from pseudoclaude.mcp.naming import model_name
from pseudoclaude.permissions import Approvals, PermissionsError
from support import policy_gate

SERVER = Path(__file__).resolve().parents[3] / "server"
RUN = ToolCall("r1", "run_command", {"command": "git", "args": ["status", "--short"]})
WRITE = ToolCall("w1", "write_file", {"path": "a.txt", "content": "héllo"})
EDIT = ToolCall("e1", "edit_file", {"path": "a.txt", "old_text": "a", "new_text": "b"})
READ = ToolCall("x1", "read_file", {"path": "a.txt"})


class ScriptedApprover:
    """Answers from a script and records what it was asked."""

    def __init__(self, *answers: Decision | Answer | BaseException | None) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Decision | Answer | None:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        await asyncio.sleep(0)
        return answer


def check(gate: Gate, call: ToolCall, approval_class: Any) -> str | None:
    return reason(asyncio.run(gate.check(call, approval_class)))


def reason(denial: Denial | None) -> str | None:
    return None if denial is None else denial.reason


def test_allow_and_deny_never_ask() -> None:
    approver = ScriptedApprover()
    gate = policy_gate(Approvals(run_command="allow", write="deny"), approver)
    assert check(gate, RUN, "runCommand") is None
    reason = check(gate, WRITE, "write")
    assert reason is not None and "approvals.write" in reason and "deny" in reason
    assert check(gate, READ, "none") is None
    assert approver.requests == []


def test_read_only_tools_are_never_gated() -> None:
    gate = policy_gate(Approvals(run_command="deny", write="deny"), ScriptedApprover())
    assert check(gate, READ, "none") is None


def test_ask_once_asks_every_time() -> None:
    approver = ScriptedApprover("allow_once", "allow_once", "deny")
    gate = policy_gate(Approvals(run_command="ask"), approver)
    assert check(gate, RUN, "runCommand") is None
    assert check(gate, RUN, "runCommand") is None
    reason = check(gate, RUN, "runCommand")
    assert reason == "run_command was denied by the user"
    assert len(approver.requests) == 3
    request = approver.requests[0]
    assert request.tool == "run_command" and request.arguments == RUN.arguments
    assert request.summary == "run_command: git status --short"
    assert request.approval_class == "runCommand" and request.call_id == "r1"


def test_allow_for_the_session_is_remembered_per_class() -> None:
    approver = ScriptedApprover("allow_session", "allow_once")
    gate = policy_gate(Approvals(run_command="ask", write="ask"), approver)

    async def scenario() -> list[str | None]:
        return [reason(await gate.check(WRITE, "write")),
                reason(await gate.check(EDIT, "write")),
                reason(await gate.check(WRITE, "write")),
                reason(await gate.check(RUN, "runCommand"))]

    assert asyncio.run(scenario()) == [None, None, None, None]
    assert [r.tool for r in approver.requests] == ["write_file", "run_command"]
    gate.reset()
    approver.answers.append("deny")
    assert check(gate, WRITE, "write") == "write_file was denied by the user"


def mcp_call(server: str, tool: str, call_id: str) -> tuple[ToolCall, tuple[str, str]]:
    """A call of MCP tool ``tool`` of ``server`` as the runner checks it: the model's name
    for the tool, and ``(server, tool)``."""
    return ToolCall(call_id, model_name(server, tool), {"q": call_id}), (server, tool)


def test_allow_for_the_session_of_an_mcp_tool_covers_that_tool_only() -> None:
    approver = ScriptedApprover("allow_session", "allow_once", "allow_once", "deny")
    gate = policy_gate(Approvals(mcp="ask"), approver)
    search, search_again = mcp_call("docs", "search", "1"), mcp_call("docs", "search", "2")
    other_tool = mcp_call("docs", "delete", "3")
    other_server = mcp_call("wiki", "search", "4")

    async def scenario() -> list[str | None]:
        return [reason(await gate.check(call, "mcp", mcp=mcp))
                for call, mcp in (search, search_again, other_tool, other_server, other_server)]

    results = asyncio.run(scenario())
    assert results[:4] == [None, None, None, None]
    assert results[4] == f"{model_name('wiki', 'search')} was denied by the user"
    # asked for the first search, then for each call of another tool (never remembered)
    assert [(r.server, r.tool, r.call_id) for r in approver.requests] == [
        ("docs", "search", "1"), ("docs", "delete", "3"), ("wiki", "search", "4"),
        ("wiki", "search", "4")]


def test_allow_for_the_session_follows_the_server_not_the_model_name() -> None:
    # "a.b" and "a_b" get the same model name when only one of them is configured at a time
    # (mcp/naming.py): a server renamed in the settings mid-session, then one added with the
    # other spelling, must not inherit the first one's "allow for this session".
    first, second = mcp_call("a.b", "run", "1"), mcp_call("a_b", "run", "2")
    assert first[0].name == second[0].name
    approver = ScriptedApprover("allow_session", "deny")
    gate = policy_gate(Approvals(mcp="ask"), approver)

    async def scenario() -> list[str | None]:
        return [reason(await gate.check(call, "mcp", mcp=mcp)) for call, mcp in (first, second)]

    assert asyncio.run(scenario()) == [None, "mcp__a_b__run was denied by the user"]
    assert [r.server for r in approver.requests] == ["a.b", "a_b"]


def test_concurrent_checks_ask_once() -> None:
    approver = ScriptedApprover("allow_session")
    gate = policy_gate(Approvals(write="ask"), approver)

    async def scenario() -> list[str | None]:
        return list(await asyncio.gather(*(gate.check(WRITE, "write") for _ in range(3))))

    assert asyncio.run(scenario()) == [None, None, None]
    assert len(approver.requests) == 1


def test_dismissed_and_failed_asks_are_denials() -> None:
    approver = ScriptedApprover(None, ApprovalUnavailable("the editor cannot ask"),
                                RuntimeError("connection lost"))
    gate = policy_gate(Approvals(), approver)
    assert "dismissed" in (check(gate, RUN, "runCommand") or "")
    assert check(gate, RUN, "runCommand") == "the editor cannot ask"
    reason = check(gate, RUN, "runCommand")
    assert reason is not None and "connection lost" in reason
    assert gate.allowed_for_session == set()


def test_cancellation_propagates() -> None:
    gate = policy_gate(Approvals(), ScriptedApprover(asyncio.CancelledError()))
    with pytest.raises(asyncio.CancelledError):
        check(gate, RUN, "runCommand")


def test_approvals_validate_their_values() -> None:
    with pytest.raises(PermissionsError, match=r"approvals\.runCommand"):
        Approvals(run_command="sometimes")  # type: ignore[arg-type]


def test_summaries() -> None:
    assert summarize(WRITE) == "write_file: a.txt (6 bytes)"
    assert summarize(EDIT) == "edit_file: a.txt"
    assert summarize(ToolCall("1", "run_command", {"command": "rm", "args": ["-rf", "my dir"]})
                     ) == "run_command: rm -rf 'my dir'"
    assert summarize(ToolCall("1", "run_command", "{broken")) == 'run_command: "{broken"'
    long = summarize(ToolCall("1", "run_command", {"command": "echo", "args": ["x" * 1000]}))
    assert len(long) <= 300 and long.endswith("…")


# -- TerminalApprover ----------------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "decision"), [
    ("o\n", "allow_once"), ("yes\n", "allow_once"), ("s\n", "allow_session"),
    ("d\n", "deny"), ("\n", "deny"), ("what\nS\n", "allow_session"),
    ("x\ny\n", "allow_once"), ("x\nx\nx\no\n", "deny"), ("", None),
])
def test_terminal_answers(typed: str, decision: Decision | None) -> None:
    output = io.StringIO()
    approver = TerminalApprover((io.StringIO(typed), output))
    request = ApprovalRequest("run_command", RUN.arguments, summarize(RUN), "runCommand")
    assert asyncio.run(approver.ask(request)) == decision
    shown = output.getvalue()
    assert "run_command: git status --short" in shown
    assert '"args":["status","--short"]' in shown
    assert "[o]nce / [s]ession / [d]eny" in shown


@pytest.mark.parametrize(("typed", "answer"), [
    ("a\n", "allow_always"), ("Always\n", "allow_always"), ("s\n", "allow_session"),
    ("d use git diff instead\n", Answer("deny", "use git diff instead")),
    ("d  \n", "deny"),
])
def test_terminal_answers_with_a_rule(typed: str, answer: Decision | Answer) -> None:
    output = io.StringIO()
    approver = TerminalApprover((io.StringIO(typed), output))
    request = ApprovalRequest("run_command", RUN.arguments, summarize(RUN), "runCommand",
                              rule="Bash(git status:*)")
    assert asyncio.run(approver.ask(request)) == answer
    shown = output.getvalue()
    assert ("  [a]lways adds the rule Bash(git status:*) to "
            ".PseudoClaude/permissions.local.yaml\n") in shown
    assert "Allow? [o]nce / [s]ession / [a]lways / [d]eny: " in shown


def test_always_is_not_offered_without_a_rule() -> None:
    output = io.StringIO()
    approver = TerminalApprover((io.StringIO("a\no\n"), output))
    request = ApprovalRequest("run_command", RUN.arguments, summarize(RUN), "runCommand")
    assert asyncio.run(approver.ask(request)) == "allow_once"
    shown = output.getvalue()
    assert "[a]lways" not in shown
    assert "Please answer o, s or d (d and a message tells the agent why).\n" in shown


def test_a_denial_with_a_message_and_allow_always() -> None:
    remembered: list[str] = []

    async def remember(rule: str) -> None:
        remembered.append(rule)

    approver = ScriptedApprover(Answer("deny", "use  git diff\ninstead"), "allow_always")
    gate = policy_gate(Approvals(), approver, remember=remember)
    assert asyncio.run(gate.check(RUN, "runCommand")) == Denial(
        "run_command was denied by the user: use git diff instead", "user")
    assert check(gate, RUN, "runCommand") is None
    assert remembered == ["Bash(git status:*)"]
    assert [r.rule for r in approver.requests] == ["Bash(git status:*)"] * 2
    assert check(gate, RUN, "runCommand") is None  # the rule holds: not asked again
    assert len(approver.requests) == 2


def test_terminal_with_a_gate() -> None:
    gate = policy_gate(Approvals(), TerminalApprover((io.StringIO("s\n"), io.StringIO())))

    async def scenario() -> list[str | None]:
        return [reason(await gate.check(RUN, "runCommand")),
                reason(await gate.check(RUN, "runCommand"))]

    assert asyncio.run(scenario()) == [None, None]  # the second one was not asked


def test_no_terminal_means_deny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("o\n"))  # not a terminal
    approver = TerminalApprover(tty_path=str(tmp_path / "no-tty"))
    gate = policy_gate(Approvals(run_command="ask", write="ask"), approver)
    assert asyncio.run(gate.check(RUN, "runCommand")) == Denial(
        "no terminal to ask for approval (default mode asks before commands); add a rule such "
        "as Bash(git status:*) to the allow list of .PseudoClaude/permissions.local.yaml, or "
        "run with --mode", "user")
    assert check(gate, WRITE, "write") == (
        "no terminal to ask for approval (default mode asks before edits (approvals.write: "
        "ask)); add a rule such as Write(a.txt) to the allow list of "
        ".PseudoClaude/permissions.local.yaml, or run with --mode")
    # a request with no rule to suggest (and no reason given)
    request = ApprovalRequest("run_command", RUN.arguments, summarize(RUN), "runCommand")
    with pytest.raises(ApprovalUnavailable) as raised:
        asyncio.run(approver.ask(request))
    assert str(raised.value) == ("no terminal to ask for approval (it asks first); run with "
                                 "--mode or change the permission rules")


def test_no_terminal_in_a_detached_process(tmp_path: Path) -> None:
    script = (
        "import asyncio\n"
        "from pseudoclaude.agent.approvals import Gate\n"
        "from pseudoclaude.cli.approver import TerminalApprover\n"
        "from pseudoclaude.llm.types import ToolCall\n"
        "from pseudoclaude.permissions import Approvals, PermissionEngine\n"
        "gate = Gate(PermissionEngine('.', approvals=Approvals()), TerminalApprover())\n"
        "call = ToolCall('1', 'run_command', {'command': 'ls'})\n"
        "print(asyncio.run(gate.check(call, 'runCommand')).reason)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    done = subprocess.run([sys.executable, "-c", script], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=30, env=env, cwd=tmp_path,
                          start_new_session=True)  # no controlling terminal: no /dev/tty
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "no terminal to ask for approval (default mode asks before commands); add a rule such "
        "as Bash(ls:*) to the allow list of .PseudoClaude/permissions.local.yaml, or run with "
        "--mode")


def test_terminal_device_is_opened_for_each_ask() -> None:
    leader, follower = pty.openpty()
    try:
        os.write(leader, b"s\n")
        approver = TerminalApprover(tty_path=os.ttyname(follower))
        request = ApprovalRequest("write_file", WRITE.arguments, summarize(WRITE), "write")
        assert asyncio.run(approver.ask(request)) == "allow_session"
        data = b""
        while b"[d]eny" not in data:  # the echo and the prompt may come in several reads
            data += os.read(leader, 4096)
        shown = data.decode()
        assert "write_file: a.txt (6 bytes)" in shown and "[d]eny" in shown
    finally:
        os.close(leader)
        os.close(follower)


def test_a_plan_is_printed_and_answered_on_the_terminal() -> None:
    request = ApprovalRequest.plan_of("# Plan\n1. change app.py", "c1", "s1")
    for typed, expected in (("e\n", Answer("approve", mode="acceptEdits")),
                            ("a\n", Answer("approve", mode="default")),
                            ("k add a test first\n", Answer("keep_planning", "add a test first")),
                            ("\n", Answer("keep_planning"))):
        output = io.StringIO()
        answer = asyncio.run(TerminalApprover((io.StringIO(typed), output)).ask(request))
        assert answer == expected, typed
        assert "# Plan\n1. change app.py" in output.getvalue()
        assert "[a]pprove / approve and accept [e]dits / [k]eep planning" in output.getvalue()
