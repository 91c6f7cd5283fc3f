"""The token estimate and its anchor on the provider's usage (SPEC §4)."""

from __future__ import annotations

from pseudoclaude.compact.estimate import Anchor, estimate_messages
from pseudoclaude.llm.types import Message, ToolResult, Usage


def test_estimate_and_anchor() -> None:
    assert estimate_messages([Message(role="user", content="hello")]) == 3  # ceil(9 / 3.5)
    tool = Message(role="user", tool_result=ToolResult("c1", "read_file", "abc", False))
    assert estimate_messages([tool]) == 7  # user 4 + c1 2 + read_file 9 + abc 3 + false 5
    assert Anchor.from_usage(Usage(10, 20, 30, 40), 3) == Anchor(100, 3)
    assert Anchor.from_usage(Usage(), 3) is None
