"""``update_tasks`` input checks and the reminder blocks (SPEC §13 "Plan, then act")."""

from __future__ import annotations

import pytest

from pseudoclaude.agent.reminders import OPEN, plan_reminder, tasks_reminder
from pseudoclaude.agent.tools.base import ToolError
from pseudoclaude.agent.tools.plan import MAX_TASKS, parse_tasks, render_tasks
from pseudoclaude.llm.anthropic import to_anthropic_messages
from pseudoclaude.llm.types import Message


def test_tasks_are_checked_item_by_item() -> None:
    assert parse_tasks([{"content": " a  b ", "status": "pending"}]) == [("a b", "pending")]
    with pytest.raises(ToolError, match=r"`tasks\[1\]\.status` must be one of pending"):
        parse_tasks([{"content": "a", "status": "pending"}, {"content": "b", "status": "done"}])
    with pytest.raises(ToolError, match=r"`tasks\[0\]\.content` must be a non-empty string"):
        parse_tasks([{"content": " ", "status": "pending"}])
    with pytest.raises(ToolError, match=r"`tasks\[0\]` must be an object"):
        parse_tasks(["a"])
    with pytest.raises(ToolError, match=f"at most {MAX_TASKS} tasks"):
        parse_tasks([{"content": str(i), "status": "pending"} for i in range(MAX_TASKS + 1)])


def test_the_reminders() -> None:
    assert render_tasks([("a", "completed"), ("b", "in_progress"), ("c", "pending")]) == \
        "- [x] a\n- [~] b\n- [ ] c"
    full = [r for r in (1, 5, 9) if "You are in plan mode" in plan_reminder(r)]
    assert full == [1, 5, 9] and "Still in plan mode" in plan_reminder(2)
    assert all(plan_reminder(r).startswith(OPEN) for r in range(1, 10))
    assert tasks_reminder([("a", "pending")]).startswith(OPEN)


def test_a_trailing_reminder_stays_after_the_cache_breakpoint() -> None:
    turns = to_anthropic_messages([Message(role="user", content="hello"),
                                   Message(role="user", content=plan_reminder(1))])
    blocks = turns[-1]["content"]
    assert blocks[0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in blocks[-1] and blocks[-1]["text"].startswith(OPEN)
