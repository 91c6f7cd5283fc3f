from __future__ import annotations

import threading

import pytest

from pseudoclaude.conversation import Conversation, Hooks, Offload
from pseudoclaude.llm.types import Message, ToolCall, ToolResult


def test_order_roles_and_copies() -> None:
    c = Conversation()
    c.add_user("hello")
    c.add_assistant("hi", [ToolCall("c1", "read_file", {"path": "a"})])
    c.add_tool_result(ToolResult("c1", "read_file", "A"))
    out = c.messages()
    assert [m.role for m in out] == ["user", "assistant", "user"]
    assert out[2].tool_result == ToolResult("c1", "read_file", "A")
    out[1].tool_calls[0].arguments["path"] = "mutated"
    out.append(Message(role="user", content="extra"))
    assert c.messages()[1].tool_calls[0].arguments == {"path": "a"}
    assert len(c) == 3


def test_initial_messages_and_replace_are_copied() -> None:
    source = [Message(role="user", tool_calls=[], content="a")]
    c = Conversation(source)
    source[0].content = "changed"
    assert c.messages()[0].content == "a"
    new = [Message(role="assistant", content="b")]
    c.replace("compact", new)
    new[0].content = "changed"
    assert c.messages() == [Message(role="assistant", content="b")]


def test_replace_rejects_unknown_reason() -> None:
    with pytest.raises(ValueError, match="unknown replace reason"):
        Conversation().replace("snapshot", [])


def test_hooks_receive_copies_in_order() -> None:
    seen: list[tuple[str, object]] = []
    hooks = Hooks(
        on_append=lambda m: seen.append(("append", m)),
        on_replace=lambda r, ms, turn: seen.append(("replace", (r, ms))),
        on_offload=lambda os_, keep: seen.append(("offload", (os_, keep))),
    )
    c = Conversation(hooks=hooks)
    c.add_user("hello")
    c.replace("compact", [Message(role="user", content="summary")])
    c.apply_offloads([], ["k1"])
    assert [k for k, _ in seen] == ["append", "replace", "offload"]
    appended = seen[0][1]
    assert isinstance(appended, Message)
    appended.content = "mutated by hook"
    assert c.messages()[0].content == "summary"


def test_hooks_run_after_the_state_lock_is_released() -> None:
    """A hook may read the conversation, and readers are not blocked by a slow hook."""
    entered = threading.Event()
    release = threading.Event()
    c = Conversation()

    def slow_hook(message: Message) -> None:
        assert len(c) == 1  # reading from inside the hook does not deadlock
        entered.set()
        release.wait(5)

    c.set_hooks(Hooks(on_append=slow_hook))
    writer = threading.Thread(target=c.add_user, args=("hello",))
    writer.start()
    assert entered.wait(5)
    assert [m.content for m in c.messages()] == ["hello"]  # answered while the hook waits
    release.set()
    writer.join(5)


def test_concurrent_appends_reach_hooks_in_list_order() -> None:
    logged: list[str] = []
    c = Conversation(hooks=Hooks(on_append=lambda m: logged.append(m.content)))

    def worker(n: int) -> None:
        for i in range(200):
            c.add_user(f"{n}-{i}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert logged == [m.content for m in c.messages()]
    assert len(logged) == 800


def test_apply_offloads_rewrites_matching_results() -> None:
    c = Conversation()
    c.add_assistant("", [ToolCall("c1", "read_file"), ToolCall("c2", "read_file")])
    c.add_tool_result(ToolResult("c1", "read_file", "x" * 100))
    c.add_tool_result(ToolResult("c2", "read_file", "y" * 100))
    changed = c.apply_offloads([Offload("c1", "tool-results/c1.txt", 100, "PREVIEW")], ["c2"])
    assert changed == 1
    contents = [m.tool_result.content for m in c.messages() if m.tool_result]
    assert contents == ["PREVIEW", "y" * 100]
    assert c.apply_offloads([Offload("c1", "p", 100, "PREVIEW")]) == 0  # already applied


def test_text_that_is_not_unicode_is_cleaned_on_the_way_in() -> None:
    logged: list[Message] = []
    c = Conversation(hooks=Hooks(on_append=logged.append))
    c.append(Message(role="assistant", content="bad \udcff",
                     tool_calls=[ToolCall("c1", "write_file", {"content": "x\ud800y"})]))
    c.add_tool_result(ToolResult("c1", "write_file", "out \udfff"))
    stored = c.messages()
    assert stored[0].content == "bad \ufffd"
    assert stored[0].tool_calls[0].arguments == {"content": "x\ufffdy"}
    assert stored[1].tool_result is not None and stored[1].tool_result.content == "out \ufffd"
    assert logged == stored  # the log gets exactly what the model will be sent
    c.replace("compact", [Message(role="user", content="\ud83d")])
    assert c.messages()[0].content == "\ufffd"
