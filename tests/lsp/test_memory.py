"""``pseudoclaude/memory/show|remember|forget`` through a real server (SPEC §8), and the
``pseudoclaude/memoryChanged`` notification for the server's writes and for hand edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import MEMORY_FORGET, MEMORY_REMEMBER, MEMORY_SHOW


async def test_memory_remember_show_forget_and_hand_edit(client: LanguageClient,
                                                         env: Any) -> None:
    remembered = await env.call(client, MEMORY_REMEMBER,
                                {"text": "The build uses make.", "level": "project",
                                 "title": "Build tool"})
    assert remembered["filename"] == "project_knowledge_build-tool.md"
    path = Path(remembered["uri"].removeprefix("file://"))
    assert path.is_file() and "The build uses make." in path.read_text()
    await env.until(lambda: any(m["source"] == "remember" for m in env.memory_changed))
    shown = await env.call(client, MEMORY_SHOW)
    assert "## Project Memory" in shown["index"] and "Build tool" in shown["index"]
    assert not shown["truncated"]
    project = next(s for s in shown["stores"] if s["level"] == "project")
    assert project["indexUri"].endswith("/memory/MEMORY.md")
    assert project["notes"][0]["filename"] == remembered["filename"]
    assert project["notes"][0]["uri"] == remembered["uri"]
    index = Path(project["indexUri"].removeprefix("file://"))
    index.write_text(index.read_text() + "- [user_preference] Tabs — by hand (x.md)\n")
    await env.until(lambda: any(m["source"] == "hand-edit" for m in env.memory_changed))
    changed = next(m for m in env.memory_changed if m["source"] == "hand-edit")
    assert changed["level"] == "project" and changed["workspace"] == env.folders[0].as_uri()
    assert "by hand" in (await env.call(client, MEMORY_SHOW))["index"]
    forgotten = await env.call(client, MEMORY_FORGET,
                               {"level": "project", "filename": remembered["filename"]})
    assert forgotten == {"removed": True} and not path.exists()
    again = await env.call(client, MEMORY_FORGET,
                           {"level": "project", "filename": remembered["filename"]})
    assert again == {"removed": False}
