from __future__ import annotations

from pathlib import Path

from pseudoclaude.agent.prompt import IDENTITY, RULES, build_system_prompt
from pseudoclaude.agent.tools.registry import default_tools


def test_instructions_from_every_source_in_order(tmp_path: Path) -> None:
    user, ws = tmp_path / "home" / ".PseudoClaude", tmp_path / "ws"
    (ws / ".PseudoClaude").mkdir(parents=True)
    user.mkdir(parents=True)
    (user / "PSEUDOCLAUDE.md").write_text("USER RULE")
    (ws / "PSEUDOCLAUDE.md").write_text("ROOT RULE")
    (ws / ".PseudoClaude" / "PSEUDOCLAUDE.md").write_text("DOT RULE")
    prompt = build_system_prompt(ws, user_dir=user, memory_index="## Project Memory\n- [x] y")
    assert prompt.index("USER RULE") < prompt.index("ROOT RULE") < prompt.index("DOT RULE")
    assert prompt.index("DOT RULE") < prompt.index("## Project Memory")
    assert str(ws) in prompt and "read_file" in prompt


def test_includes_nest_to_depth_five_and_skip_cycles_and_escapes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "PSEUDOCLAUDE.md").write_text("top\n@docs/one.md\n@missing.md\n@../secret.txt\n")
    (tmp_path / "secret.txt").write_text("SECRET KEY")
    (ws / "docs" / "one.md").write_text("one\n@two.md")
    (ws / "docs" / "two.md").write_text("two\n@three.md")
    (ws / "docs" / "three.md").write_text("three\n@four.md")
    (ws / "docs" / "four.md").write_text("four\n@five.md")
    (ws / "docs" / "five.md").write_text("five\n@six.md")
    (ws / "docs" / "six.md").write_text("six\n@one.md")
    prompt = build_system_prompt(ws)
    for word in ("top", "one", "two", "three", "four", "five"):
        assert f"\n{word}" in prompt or prompt.startswith(word)
    assert "\nsix" not in prompt and "nested deeper than 5" in prompt
    assert "missing.md skipped: not found" in prompt
    assert "SECRET KEY" not in prompt and "skipped: outside" in prompt


def test_a_cycle_is_skipped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "PSEUDOCLAUDE.md").write_text("a\n@b.md")
    (ws / "b.md").write_text("b\n@PSEUDOCLAUDE.md")
    prompt = build_system_prompt(ws)
    assert "includes itself" in prompt and prompt.count("\na\n") + prompt.count("\na") >= 1


def test_no_instructions_no_memory(tmp_path: Path) -> None:
    prompt = build_system_prompt(tmp_path)
    assert "Instructions from" not in prompt and "Memory" not in prompt


def test_the_identity_names_no_tool_and_run_command_takes_a_shell_line() -> None:
    identity = IDENTITY.format(workspace="/w")
    assert "the tools you are offered" in identity
    assert not [t.name for t in default_tools() if t.name in identity]  # it would drift
    assert "/bin/sh -c" in RULES and "`args`" in RULES and "no shell;" not in RULES
