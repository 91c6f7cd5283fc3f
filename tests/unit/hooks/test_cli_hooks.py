"""Hooks from the CLI: the same hooks fire for ``pseudoclaude run`` (a session's start and
end, a refused prompt: exit 1, nothing sent), ``pseudoclaude hooks list`` shows them and
``pseudoclaude hooks approve`` lets a folder's own ``hooks.yaml`` run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml  # type: ignore[import-untyped]

from pseudoclaude.fake_model import FakeModelServer

MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC", "OPENAI"))}
    env["HOME"] = str(tmp_path / "home")
    env["ANTHROPIC_API_KEY"] = "sk-test-cli-hooks"
    (tmp_path / "ws").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace",
                           str(tmp_path / "ws")], capture_output=True, text=True, timeout=60,
                          env=env, stdin=subprocess.DEVNULL, start_new_session=True)


def user_hooks(tmp_path: Path, *hooks: dict[str, object]) -> None:
    folder = tmp_path / "home" / ".PseudoClaude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hooks.yaml").write_text(yaml.safe_dump({"hooks": list(hooks)}))


def test_run_fires_the_sessions_hooks_and_a_refusal_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    user_hooks(tmp_path,
               *({"name": f"record-{e}", "event": e,
                  "action": {"type": "shell", "command": f"cat >> {out}"}}
                 for e in ("SessionStart", "Stop", "SessionEnd")),
               {"name": "guard", "event": "UserPromptSubmit",
                "if": {"all_of": [{"field": "prompt", "match": "*forbidden*"}]},
                "action": {"type": "shell", "command": "echo 'not that' >&2; exit 2"}})
    with FakeModelServer({"turns": [{"text": "hello"}], "rules": [MEMORY]}) as fake:
        refused = cli(tmp_path, "run", "--base-url", fake.base_url, "do the forbidden thing")
        assert refused.returncode == 1, refused.stderr
        assert "[hook guard] not that" in refused.stderr
        assert fake.requests == []
        done = cli(tmp_path, "run", "--base-url", fake.base_url, "say hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello\n"
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["hook_event_name"] for e in events] == [  # the refused prompt's session, then
        "SessionStart", "SessionEnd", "SessionStart", "Stop", "SessionEnd"]  # the other's
    assert events[1]["reason"] == events[4]["reason"] == "exit"
    assert events[3]["stop_reason"] == "completed"
    assert events[2]["session_id"] == events[3]["session_id"] != events[0]["session_id"]


def test_hooks_list(tmp_path: Path) -> None:
    user_hooks(tmp_path, {"name": "notify", "event": "Stop",
                          "action": {"type": "shell", "command": "true"}})
    project = tmp_path / "ws" / ".PseudoClaude"
    project.mkdir(parents=True)
    (project / "hooks.yaml").write_text(
        "hooks:\n  - name: lint\n    event: PostToolUse\n"
        "    action: {type: shell, command: npm run lint}\n  - name: bad\n    event: Nope\n"
        "    action: {type: shell, command: 'true'}\n")
    listed = cli(tmp_path, "hooks", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    hooks = json.loads(listed.stdout)["hooks"]
    assert [(h["name"], h["source"], h["status"]) for h in hooks] == [
        ("notify", "user", "active"), ("lint", "workspace", "needsApproval"),
        ("bad", "workspace", "invalid")]
    assert hooks[2]["error"].startswith(f'{project / "hooks.yaml"}:6: unknown event "Nope"')
    shown = cli(tmp_path, "hooks", "list")
    assert shown.returncode == 0 and shown.stderr == ""
    assert "Stop:\n  notify  shell: true  (~/.PseudoClaude/hooks.yaml): runs" in shown.stdout
    assert "lint  shell: npm run lint  (.PseudoClaude/hooks.yaml): waits for your approval" \
        in shown.stdout


def test_hooks_approve_lets_the_folders_file_run_until_it_changes(tmp_path: Path) -> None:
    nothing = cli(tmp_path, "hooks", "approve")
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout == "nothing waits for an approval in this folder's " \
        ".PseudoClaude/hooks.yaml\n"
    project = tmp_path / "ws" / ".PseudoClaude"
    project.mkdir(parents=True)
    hooks = project / "hooks.yaml"
    hooks.write_text("hooks:\n  - name: lint\n    event: PostToolUse\n"
                     "    action: {type: shell, command: npm run lint}\n")
    approved = cli(tmp_path, "hooks", "approve")
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == "approved this folder's .PseudoClaude/hooks.yaml (until it " \
        "changes): lint\n"
    listed = json.loads(cli(tmp_path, "hooks", "list", "--json").stdout)["hooks"]
    assert [(h["name"], h["status"]) for h in listed] == [("lint", "active")]
    hooks.write_text(hooks.read_text() + "# edited\n")
    listed = json.loads(cli(tmp_path, "hooks", "list", "--json").stdout)["hooks"]
    assert [(h["name"], h["status"]) for h in listed] == [("lint", "needsApproval")]
    again = cli(tmp_path, "hooks", "approve", "--json")
    assert [(h["name"], h["status"]) for h in json.loads(again.stdout)["hooks"]] == \
        [("lint", "active")]
