"""``pseudoclaude/sessions/messages`` through a real server: the transcript items a client
renders (tool calls that failed, were denied or canceled; a summary; what a compaction took
out of context and an undo brought back), the words of the results, and the slash commands."""

from __future__ import annotations

from typing import Any

from pytest_lsp import LanguageClient

from pseudoclaude.api import commands
from pseudoclaude.api.protocol import (
    COMPACT,
    COMPACT_PREVIEW,
    COMPACT_UNDO,
    RUN,
    SESSIONS_MESSAGES,
    SLASH_COMMANDS,
)

SUMMARY = {"when": {"summary": True},
           "reply": {"text": "<summary>The user read files and ran a command.</summary>"},
           "times": None}


async def test_items_show_the_session_as_lived(client: LanguageClient, env: Any) -> None:
    env.fake.script.rules.insert(0, SUMMARY)
    env.approval_answer = "Deny"
    env.fake.add_turns(
        {"text": "Looking.", "tool_calls": [env.read_file("missing.txt")]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "touch",
                                                              "args": ["x"]}}]},
        {"text": "The file is missing and the command was not run."})
    first = await env.call(client, RUN, {"prompt": "read missing.txt then touch x"})
    for i in range(6):  # an old part to summarise
        env.fake.add_turns({"text": f"answer {i} " + "y" * 12_000})
        await env.call(client, RUN, {"prompt": f"question {i}"})
    items = await env.items(client)
    calls = [i for i in items if i["kind"] == "toolCall"]
    assert [(c["name"], c["status"]) for c in calls] == [("read_file", "error"),
                                                         ("run_command", "denied")]
    assert "missing.txt" in calls[0]["error"] and not calls[0]["preview"].startswith("{")
    assert "denied" in calls[1]["error"]
    assert items[0] == {**items[0], "kind": "user", "text": "read missing.txt then touch x",
                        "inContext": True}
    assert all(i["inContext"] for i in items)

    preview = await env.call(client, COMPACT_PREVIEW)
    assert preview["message"].startswith("Would summarize")
    compacted = await env.call(client, COMPACT)
    assert compacted["summarized"] and compacted["message"].startswith("Compacted")
    after = await env.call(client, SESSIONS_MESSAGES, {})
    assert after["sessionId"] == first["sessionId"] and after["total"] == len(after["items"])
    kinds = [i["kind"] for i in after["items"]]
    assert kinds[len(items):] == ["compaction", "summary"]
    assert after["items"][:len(items)] != items  # the old part left the context ...
    assert not after["items"][0]["inContext"] and after["items"][len(items) - 1]["inContext"]
    summary = after["items"][-1]
    assert summary["inContext"] and "read files" in summary["text"]
    assert "Context boundary" not in summary["text"]
    compaction = after["items"][-2]
    assert compaction["summarized"] + compaction["kept"] == len(
        [i for i in items if i["kind"] in ("user", "assistant")]) + 3  # + calls, results
    assert compaction["message"]

    undone = await env.call(client, COMPACT_UNDO)
    assert undone["restored"] and undone["message"].startswith("Undone")
    back = await env.items(client)
    assert [i["kind"] for i in back][-1] == "undo"
    assert all(i["inContext"] for i in back[:len(items)])  # ... and came back, not twice
    assert not back[-2]["inContext"] and back[-2]["kind"] == "summary"
    page = await env.call(client, SESSIONS_MESSAGES, {"offset": 1, "limit": 2})
    assert page["items"] == back[1:3] and page["total"] == len(back)


async def test_latest_names_the_session(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"text": "hello"})
    ran = await env.call(client, RUN, {"prompt": "hi"})
    page = await env.call(client, SESSIONS_MESSAGES, {"sessionId": "latest"})
    assert page["sessionId"] == ran["sessionId"]
    assert [(i["kind"], i["text"]) for i in page["items"]] == [("user", "hi"),
                                                              ("assistant", "hello")]


async def test_slash_commands_are_the_servers_list(client: LanguageClient, env: Any) -> None:
    listed = (await env.call(client, SLASH_COMMANDS))["commands"]
    assert [c["name"] for c in listed] == [c.name for c in commands.COMMANDS] + [
        "commit", "review", "test"]  # then the skills (the built-in ones)
    assert all(c.get("skill") for c in listed[len(commands.COMMANDS):])
    assert {"compact", "undo", "context", "memory", "new"} <= {c["name"] for c in listed}
    compact = next(c for c in listed if c["name"] == "compact")
    assert compact["description"] and compact["hint"]
    assert "hint" not in next(c for c in listed if c["name"] == "undo")
