"""A sub-agent's log (SPEC §13): its ``agent`` first line, its ``agentStop`` end, and a crash
mid-call that leaves it repairable."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.agents.log import AgentWriter, list_records, load_messages
from pseudoclaude.llm.types import Message, ToolCall
from pseudoclaude.session import SessionStore
from pseudoclaude.session.codec import AgentEntry


def test_a_child_log_is_listed_and_a_crash_mid_call_repairs(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.allocate()
    header = AgentEntry(parent=sid, agent_id="agent-0123abcd", call_id="c1",
                        subagent_type="explore", description="find", created="2026-01-01T00:00:00")
    writer = AgentWriter(store, header, model="m")
    writer.append_message(Message(role="user", content="find it"))
    writer.append_message(Message(role="assistant", content="looking",
                                  tool_calls=[ToolCall("t1", "read_file", {"path": "a"})]))
    writer.close()  # killed here: no result, no agentStop
    [record] = list_records(store, sid)
    assert record.header.agent_id == "agent-0123abcd" and record.status == "running"
    messages = load_messages(record.path)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert not messages[-1].tool_calls  # the dangling call dropped, its text kept
    writer = AgentWriter(store, header, model="m")
    writer.append_stop("completed", 10, 5)
    writer.close()
    [record] = list_records(store, sid)
    assert record.status == "completed" and record.stop is not None
    assert record.stop.output_tokens == 5
