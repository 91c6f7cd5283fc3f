"""A PreToolUse hook's decision through the permission gate: ``allow`` counts as an allow rule
(deny and ask rules, the dangerous-command list, the workspace boundary and plan mode still
decide first; a mode's ``deny`` gives way, as to a rule); ``ask`` asks even what would run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pseudoclaude.agent.approvals import ApprovalRequest, Gate
from pseudoclaude.hooks import Decided
from pseudoclaude.llm.types import ToolCall
from pseudoclaude.permissions import Approvals, PermissionEngine, RuleSet, parse_rule

ALLOW = Decided("allow", "trusted", "")
ASK = Decided("ask", "audit", "reads are audited")


class Recorder:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        return "allow_once"


def gate(tmp_path: Path, mode: str = "default", **approvals: Any) -> tuple[Gate, Recorder]:
    rules = RuleSet("user", "permissions.yaml", deny=(parse_rule("Bash(rm:*)"),),
                    ask=(parse_rule("Bash(git push:*)"),))
    engine = PermissionEngine(tmp_path, [rules], approvals=Approvals(**approvals))
    if mode != "default":
        engine.set_mode(mode)
    recorder = Recorder()
    return Gate(engine, recorder), recorder


def command(line: str) -> ToolCall:
    return ToolCall("c", "run_command", {"command": line})


async def test_allow_skips_the_modes_question_and_nothing_else(tmp_path: Path) -> None:
    g, asked = gate(tmp_path)
    assert await g.check(command("make build"), "runCommand", hook=ALLOW) is None
    assert asked.asked == []  # default mode would have asked
    assert g.verdict(command("make build"), allowed_by="trusted").source == "hook"
    denied = await g.check(command("rm -f notes.txt"), "runCommand", hook=ALLOW)
    assert denied is not None and denied.rule == "Bash(rm:*)"
    blacklisted = await g.check(command("dd if=/dev/zero of=/dev/sda"), "runCommand", hook=ALLOW)
    assert blacklisted is not None and blacklisted.source == "blacklist"
    outside = await g.check(ToolCall("c", "write_file", {"path": "../x", "content": ""}),
                            "write", hook=ALLOW)
    assert outside is not None and outside.source == "sandbox"
    assert await g.check(command("git push origin"), "runCommand", hook=ALLOW) is None
    assert [r.reason for r in asked.asked] == ["permission rule Bash(git push:*) (user) asks "
                                              "first"]  # an ask rule still asks


async def test_allow_counts_as_a_rule_over_a_modes_deny_but_not_plan_mode(tmp_path: Path
                                                                         ) -> None:
    g, _ = gate(tmp_path, run_command="deny")
    assert await g.check(command("make build"), "runCommand") is not None
    assert await g.check(command("make build"), "runCommand", hook=ALLOW) is None
    plan, _ = gate(tmp_path, mode="plan")
    refused = await plan.check(command("make build"), "runCommand", hook=ALLOW)
    assert refused is not None and refused.error_type == "tool_not_allowed"


async def test_ask_asks_what_would_run_and_keeps_a_refusal(tmp_path: Path) -> None:
    g, asked = gate(tmp_path)
    read = ToolCall("c", "read_file", {"path": "README.md"})
    assert await g.check(read, "none") is None and asked.asked == []
    assert await g.check(read, "none", hook=ASK) is None
    [request] = asked.asked
    assert request.reason == "hook audit asks first: reads are audited"
    assert await g.check(command("rm -f x"), "runCommand", hook=ASK) is not None
    assert len(asked.asked) == 1  # refused by the deny rule: nobody asked
