"""One decision table for every front end: (mode, rules, call) -> decision.

The LSP server (``pseudoclaude/permissions/check``), the CLI (``pseudoclaude permissions check``)
and ACP (a real call, seen from the client) ask the same engine; each front end's test runs
these rows through it. ``rules`` are written as the user's ``permissions.yaml`` (``{allow, ask,
deny}``); a ``source`` of ``rule`` means "the source the rules came from" (``user`` there).
``approvals.*`` stay at their defaults (writes allowed, commands asked) and the sandbox is off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Row:
    name: str
    mode: str
    rules: dict[str, list[str]]
    tool: str
    arguments: dict[str, Any]
    decision: str
    source: str
    rule: str | None = None
    tags: tuple[str, ...] = field(default=())


ROWS = [
    Row("default asks before a command", "default", {}, "run_command",
        {"command": "make test"}, "ask", "mode"),
    Row("default writes without asking", "default", {}, "write_file",
        {"path": "new.txt", "content": "x"}, "allow", "mode"),
    Row("an allow rule lets the command run", "default", {"allow": ["Bash(make test:*)"]},
        "run_command", {"command": "make test -j2"}, "allow", "rule", "Bash(make test:*)"),
    Row("every part of a line must be allowed", "default", {"allow": ["Bash(make test:*)"]},
        "run_command", {"command": "make test && curl example.com"}, "ask", "mode"),
    Row("a deny rule holds through cd and &&", "bypassPermissions", {"deny": ["Bash(rm:*)"]},
        "run_command", {"command": "cd build && rm -rf out"}, "deny", "rule", "Bash(rm:*)"),
    Row("a deny rule holds through sh -c", "default", {"deny": ["Bash(rm:*)"]}, "run_command",
        {"command": "sh -c 'rm -rf out'"}, "deny", "rule", "Bash(rm:*)"),
    Row("a deny rule holds through xargs", "acceptEdits", {"deny": ["Bash(rm:*)"]},
        "run_command", {"command": "find . -name '*.o' | xargs rm"}, "deny", "rule",
        "Bash(rm:*)"),
    Row("an ask rule beats an allow rule", "default",
        {"allow": ["Bash(git:*)"], "ask": ["Bash(git push:*)"]}, "run_command",
        {"command": "git push origin main"}, "ask", "rule", "Bash(git push:*)"),
    Row("strict asks before a read", "strict", {}, "read_file", {"path": "notes.txt"}, "ask",
        "mode"),
    Row("acceptEdits writes without asking", "acceptEdits", {}, "edit_file",
        {"path": "notes.txt", "old_text": "a", "new_text": "b"}, "allow", "mode"),
    Row("plan refuses a write", "plan", {}, "write_file", {"path": "n.txt", "content": "x"},
        "deny", "mode"),
    Row("the dangerous-command list holds in every mode", "bypassPermissions", {},
        "run_command", {"command": "echo hi; rm -rf /"}, "deny", "blacklist"),
    Row("a read deny rule", "default", {"deny": ["Read(.env)"]}, "read_file",
        {"path": ".env"}, "deny", "rule", "Read(.env)"),
    Row("a path outside the workspace", "bypassPermissions", {}, "write_file",
        {"path": "../outside.txt", "content": "x"}, "deny", "sandbox"),
]
"""The rows (a mode of ``bypassPermissions`` needs ``permissions.allowBypass``)."""


def permissions_yaml(row: Row) -> str:
    """The user's ``permissions.yaml`` of a row (named, so two rows never write the same
    bytes)."""
    lines = [f"# {row.name}", "permissions:"]
    for decision in ("allow", "ask", "deny"):
        rules = row.rules.get(decision, [])
        lines.append(f"  {decision}: [{', '.join(repr(r) for r in rules)}]")
    return "\n".join(lines) + "\n"
