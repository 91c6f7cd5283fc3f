"""Replay equals the live conversation after any mix of appends, offloads and replaces."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pseudoclaude.conversation import Offload
from pseudoclaude.llm.types import Message, ThinkingBlock, ToolCall, ToolResult
from pseudoclaude.session import SessionStore, new_session, replay_file

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
call_ids = st.sampled_from(["c1", "c2", "c3", "call/4", "tool-result-0"])
json_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | text
arguments = st.dictionaries(text, json_scalars, max_size=3) | text
tool_calls = st.lists(st.builds(ToolCall, call_ids, text, arguments), max_size=3)
thinking = st.lists(st.builds(ThinkingBlock, text, text, text), max_size=2)
messages = st.one_of(
    st.builds(Message, st.just("user"), text),
    st.builds(Message, st.just("assistant"), text, tool_calls, st.none(), thinking),
    st.builds(lambda r: Message(role="user", tool_result=r),
              st.builds(ToolResult, call_ids, text, text, st.booleans())),
)
ops = st.lists(st.one_of(
    st.tuples(st.just("append"), messages),
    st.tuples(st.just("replace"), st.lists(messages, max_size=5)),
    st.tuples(st.just("offload"), st.lists(st.builds(
        Offload, call_ids, text, st.integers(0, 10**7), text), max_size=2),
        st.lists(call_ids, max_size=2)),
), max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_replay_equals_live_conversation(operations: list[tuple]) -> None:  # type: ignore[type-arg]
    root = Path(tempfile.mkdtemp())
    try:
        opened = new_session(SessionStore(root / ".PseudoClaude"), model="m")
        conversation = opened.conversation
        ledger: dict[str, Offload] = {}
        kept: set[str] = set()
        for op in operations:
            if op[0] == "append":
                conversation.append(op[1])
            elif op[0] == "replace":
                conversation.replace("compact", op[1])
                ledger, kept = {}, set()
            else:
                offloads, keep = op[1], op[2]
                if not offloads and not keep:
                    continue
                conversation.apply_offloads(offloads, keep)
                for o in offloads:
                    ledger[o.call_id] = o
                    kept.discard(o.call_id)
                kept.update(keep)
        opened.writer.close()
        log = opened.writer.path
        if not log.exists():
            assert conversation.messages() == []
            return
        for fast in (True, False):
            replay = replay_file(log, fast=fast)
            assert replay.bad_lines == 0
            assert replay.messages == conversation.messages()
            assert replay.offloads == ledger
            assert replay.kept == kept
    finally:
        shutil.rmtree(root)
