"""Instruction files (pseudoclaude.agent.instructions): the order of the sources, the same file
or text once, links out of the workspace skipped, the nested files a read joins, their note
within the read's content limit, and what a session's log says was joined."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path, PurePosixPath

from pseudoclaude.agent.instructions import (
    NestedInstructions,
    instruction_files,
    load_instructions,
    logged_nested,
    user_label,
)
from pseudoclaude.agent.prompt import SEPARATOR, system_prompt_parts
from pseudoclaude.agent.tools import MAX_CONTENT_BYTES, ToolRegistry
from pseudoclaude.api.protocol import RuleFile
from pseudoclaude.api.views import rules_table
from pseudoclaude.compact.breakdown import RuleSize, rule_files
from pseudoclaude.llm.types import ToolCall, ToolResult


def test_the_sources_in_order(tmp_path: Path) -> None:
    files = instruction_files(Path("/w"), Path("/u"), ["a/AGENTS.md"])
    assert [(str(f.path), f.source) for f in files] == [
        ("/u/PSEUDOCLAUDE.md", "user"), ("/w/AGENTS.md", "project"), ("/w/CLAUDE.md", "project"),
        ("/w/.claude/CLAUDE.md", "project"), ("/w/PSEUDOCLAUDE.md", "project"),
        ("/w/.PseudoClaude/PSEUDOCLAUDE.md", "project"), ("/w/a/AGENTS.md", "nested"),
        ("/w/CLAUDE.local.md", "local")]
    assert user_label(Path.home() / ".PseudoClaude" / "PSEUDOCLAUDE.md") == \
        "~/.PseudoClaude/PSEUDOCLAUDE.md"
    assert user_label(Path("/elsewhere/PSEUDOCLAUDE.md")) == "/elsewhere/PSEUDOCLAUDE.md"


def test_each_file_and_each_text_once_and_no_link_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("shared\n")
    (ws / "CLAUDE.md").symlink_to("AGENTS.md")
    (ws / "PSEUDOCLAUDE.md").write_text("  shared  \n")  # the same text, stripped
    (tmp_path / "secret.txt").write_text("SECRET")
    (ws / "CLAUDE.local.md").symlink_to(tmp_path / "secret.txt")
    loaded = load_instructions(instruction_files(ws, None))
    assert [(i.label, i.source, i.text) for i in loaded] == [("AGENTS.md", "project", "shared")]


def test_the_prompt_counts_each_file_with_its_separator(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("root rules")
    (ws / "sub" / "AGENTS.md").write_text("sub rules ü")
    (ws / "CLAUDE.local.md").write_text("mine")
    prompt = system_prompt_parts(ws, nested=["sub/AGENTS.md"], memory_index="- [a](a.md)")
    sizes = prompt.rule_sizes()
    assert [(s.path, s.source) for s in sizes] == [
        ("AGENTS.md", "project"), ("sub/AGENTS.md", "nested"), ("CLAUDE.local.md", "local")]
    block = SEPARATOR + "Instructions from sub/AGENTS.md:\nsub rules ü"
    assert sizes[1].bytes == len(block.encode())
    assert sum(prompt.sizes()) == len(prompt.text.encode())
    assert prompt.text.index("root rules") < prompt.text.index("sub rules") \
        < prompt.text.index("mine") < prompt.text.index("[a](a.md)")


def test_a_read_joins_each_folder_once_outermost_first(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("root")
    (ws / "a" / "CLAUDE.md").write_text("a")
    (ws / "a" / "b" / "AGENTS.md").write_text("b")
    (ws / "a" / "b" / "CLAUDE.md").symlink_to("AGENTS.md")  # the same file: once
    (ws / "a" / "AGENTS.md").symlink_to(ws / "AGENTS.md")  # the root's: already there
    nested = NestedInstructions(lambda: [])
    waiting = nested.waiting(ws, PurePosixPath("a/b/c.py"))
    assert waiting == ["a/CLAUDE.md", "a/b/AGENTS.md"]
    assert nested.join(waiting) == waiting
    assert nested.waiting(ws, PurePosixPath("a/b/d.py")) == []
    assert nested.join(["a/CLAUDE.md"]) == []  # another read got there first
    assert nested.waiting(ws, PurePosixPath("top.py")) == []  # the root's own are not nested


def test_the_log_says_which_joined(tmp_path: Path) -> None:
    def read(metadata: dict[str, object], error: bool = False) -> ToolResult:
        body = {"ok": not error, "tool": "read_file", "content": "", "metadata": metadata}
        return ToolResult("c", "read_file", json.dumps(body), error)

    results = [read({"instructions": ["a/AGENTS.md"]}), read({"instructions": ["../x/AGENTS.md",
                                                                            "AGENTS.md"]}),
               read({"instructions": ["b/CLAUDE.md", "a/AGENTS.md"]}),
               read({"instructions": ["c/AGENTS.md"]}, error=True),
               ToolResult("c", "read_file", "not json", False)]
    assert logged_nested(results) == ["a/AGENTS.md", "b/CLAUDE.md"]
    loaded = NestedInstructions(lambda: logged_nested(results))
    assert loaded.joined() == ["a/AGENTS.md", "b/CLAUDE.md"]


def test_the_note_fits_in_a_full_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "AGENTS.md").write_text("rules")
    (ws / "sub" / "big.txt").write_text(("x" * 99 + "\n") * 2000)  # 200 kB
    registry = ToolRegistry(ws)
    registry.set_instructions(NestedInstructions())
    result = asyncio.run(registry.execute(ToolCall("c1", "read_file", {"path": "sub/big.txt"})))
    body = json.loads(result.content)
    content = body["content"]
    assert len(content.encode()) <= MAX_CONTENT_BYTES
    assert content.endswith("...[truncated]\n\n(instructions from sub/AGENTS.md now apply)")
    metadata = body["metadata"]
    assert metadata["instructions"] == ["sub/AGENTS.md"] and metadata["truncated"] is True
    lines = content.split("...[truncated]")[0]
    assert lines.count("\n") == metadata["lines"] == metadata["next_offset"] - 1
    again = json.loads(asyncio.run(registry.execute(
        ToolCall("c2", "read_file", {"path": "sub/big.txt", "offset": metadata["next_offset"]}
                 ))).content)
    assert "instructions" not in again["metadata"] and "now apply" not in again["content"]


def test_the_files_share_the_rules_tokens_and_the_view_lists_them() -> None:
    sizes = [RuleSize("AGENTS.md", "project", 300), RuleSize("sub/CLAUDE.md", "nested", 100),
             RuleSize("CLAUDE.local.md", "local", 1)]
    files = rule_files(sizes, 41)
    assert [f.tokens for f in files] == [31, 10, 0] and sum(f.tokens for f in files) == 41
    assert rule_files([], 0) == []
    assert rules_table([RuleFile(path="AGENTS.md", tokens=1234, source="project"),
                        RuleFile(path="sub/CLAUDE.md", tokens=5, source="nested")]) == [
        "instructions  tokens  source",
        "AGENTS.md      1,234  project",
        "sub/CLAUDE.md      5  nested"]
