"""Skills from the CLI: ``pseudoclaude skills list [--json]`` (each skill with its source,
whether the latest session loaded it, the problems with file and line), and ``pseudoclaude run
"/review src"`` sending the skill's instructions as the terminal's prompt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pseudoclaude.fake_model import FakeModelServer

MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC", "OPENAI"))}
    env["HOME"] = str(tmp_path / "home")
    env["ANTHROPIC_API_KEY"] = "sk-test-cli-skills"
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace",
                           str(tmp_path / "ws")], capture_output=True, text=True, timeout=60,
                          env=env, stdin=subprocess.DEVNULL, start_new_session=True)


def test_skills_list_and_a_skill_run_from_the_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude" / "skills" / "tidy").mkdir(parents=True)
    (ws / ".claude" / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy the imports.\nargument-hint: [path]\n---\n"
        "Tidy the imports of $ARGUMENTS.\n")
    (ws / ".claude" / "skills" / "broken").mkdir()
    (ws / ".claude" / "skills" / "broken" / "SKILL.md").write_text("---\nname: Broken\n---\nx\n")
    (tmp_path / "home" / ".PseudoClaude" / "skills").mkdir(parents=True)
    (tmp_path / "home" / ".PseudoClaude" / "skills" / "mine.md").write_text("Mine: do it.\n")

    listed = cli(tmp_path, "skills", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    result = json.loads(listed.stdout)
    assert result["sessionId"] is None
    assert {s["name"]: (s["source"], s["loaded"]) for s in result["skills"]} == {
        "commit": ("builtin", False), "mine": ("user", False), "review": ("builtin", False),
        "test": ("builtin", False), "tidy": ("claude", False)}
    [problem] = result["problems"]
    assert (problem["path"], problem["line"]) == (".claude/skills/broken/SKILL.md", 2)

    with FakeModelServer({"turns": [{"text": "tidied"}], "rules": [MEMORY]}) as fake:
        done = cli(tmp_path, "run", "--base-url", fake.base_url, "/tidy src/app.py")
        assert done.returncode == 0, done.stderr
        [request] = [r for r in fake.requests if r["body"].get("tools")]
    sent = json.dumps(request["body"]["messages"][-1])
    assert '/tidy src/app.py\\n\\n<skill name=\\"tidy\\">' in sent
    assert "Tidy the imports of src/app.py." in sent

    text = cli(tmp_path, "skills", "list")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert "/tidy [path]  (.claude/skills, loaded)" in lines
    assert "    Tidy the imports." in lines
    assert "/mine  (~/.PseudoClaude/skills)" in lines
    assert "1 problem (these are not loaded):" in lines
    assert any(line.startswith("  .claude/skills/broken/SKILL.md:2: name 'Broken' is not a "
                               "valid skill name") for line in lines), lines
