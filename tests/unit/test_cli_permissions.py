"""The permission engine through the CLI, as a user runs it (real processes, no terminal): the
decision table (tests/permission_table.py) through ``pseudoclaude permissions check``, the
listing, ``run --mode``, and a refusal with no terminal to ask on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from permission_table import ROWS, Row, permissions_yaml
from pseudoclaude.fake_model import FakeModelServer

KEY = "sk-ant-the-users-own-key-0123456789"
MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC", "OPENAI"))}
    env |= {"HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": KEY}
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args,
                           "--workspace", str(tmp_path / "ws")],
                          capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL, start_new_session=True)  # no terminal


def user_settings(tmp_path: Path, settings: dict[str, object]) -> Path:
    folder = tmp_path / "home" / ".PseudoClaude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump(settings))
    (tmp_path / "ws").mkdir(exist_ok=True)
    return folder


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_the_decision_table(tmp_path: Path, row: Row) -> None:
    folder = user_settings(tmp_path, {"permissions": {"defaultMode": row.mode,
                                                      "allowBypass": True},
                                      "sandbox": {"enabled": False}})
    (folder / "permissions.yaml").write_text(permissions_yaml(row))
    done = cli(tmp_path, "permissions", "check", row.tool, "--arguments",
               json.dumps(row.arguments), "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["decision"] == row.decision, verdict
    assert verdict["source"] == ("user" if row.source == "rule" else row.source), verdict
    assert verdict.get("rule") == row.rule


def test_the_listing_names_rules_problems_and_the_sandbox(tmp_path: Path) -> None:
    folder = user_settings(tmp_path, {"sandbox": {"enabled": False}})
    (folder / "permissions.yaml").write_text(
        "permissions:\n  allow: ['Bash(npm run test:*)', 'Bsh(ls)']\n  deny: ['Read(.env)']\n")
    done = cli(tmp_path, "permissions")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "mode: default" in out and "sandbox: off (turned off (sandbox.enabled: false)" in out
    assert "  Read(.env)  (user)" in out and "  Bash(npm run test:*)  (user)" in out
    assert 'problem: rule "Bsh(ls)" in ~/.PseudoClaude/permissions.yaml: unknown tool "Bsh"' \
        in out  # named to the user; the other rules still apply


def test_run_in_plan_mode_refuses_a_write_and_without_a_terminal_a_command_is_refused(
        tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "write_file",
                              "arguments": {"path": "new.txt", "content": "x"}}]},
             {"text": "Planned."},
             {"tool_calls": [{"name": "run_command",
                              "arguments": {"command": "make test && echo done"}}]},
             {"text": "Could not run it."}]
    with FakeModelServer({"turns": turns, "rules": [MEMORY]}) as fake:
        user_settings(tmp_path, {"provider": "anthropic", "baseUrl": fake.base_url,
                                 "maxRetries": 0, "sandbox": {"enabled": False}})
        planned = cli(tmp_path, "run", "--mode", "plan", "--json", "write it")
        assert planned.returncode == 0, planned.stderr
        assert not (tmp_path / "ws" / "new.txt").exists()
        results = [json.loads(line) for line in planned.stdout.splitlines()]
        [refused] = [r for r in results if r.get("kind") == "toolResult"]
        assert refused["isError"] and "plan mode" in refused["error"]
        listing = cli(tmp_path, "permissions", "--json")
        assert json.loads(listing.stdout)["mode"] == "plan"  # the session's, from its log
        asked = cli(tmp_path, "run", "--session", "latest", "--mode", "default", "make")
        assert asked.returncode == 0, asked.stderr
        assert "no terminal to ask for approval" in asked.stderr
        assert "Bash(make test:*)" in asked.stderr  # the rule that would let it run
        listing = cli(tmp_path, "permissions", "--json")
        assert json.loads(listing.stdout)["mode"] == "default"


def test_bypass_needs_the_users_setting(tmp_path: Path) -> None:
    user_settings(tmp_path, {"provider": "anthropic", "baseUrl": "http://127.0.0.1:9",
                             "sandbox": {"enabled": False}})
    done = cli(tmp_path, "run", "--mode", "bypassPermissions", "hello")
    assert done.returncode == 1
    assert "permissions.allowBypass" in done.stderr
