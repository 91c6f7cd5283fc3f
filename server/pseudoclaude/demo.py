"""``pseudoclaude demo``: the whole flow, driven as an editor drives it (SPEC §9).

On a copy of ``sample-workspace`` (package data, next to this module): start the scripted
model on loopback (or, with ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY`` set and no
``--offline``, the real provider), start the real server over stdio, then initialize, run a
task that reads files (one result is large enough to be spilled to a file), compact, show
memory, list sessions; stop the server, start a second one, resume the session and continue
it. Every notification is printed as a
readable transcript.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

from pseudoclaude.agent.tools.base import MAX_CONTENT_BYTES
from pseudoclaude.api import protocol as p
from pseudoclaude.config import API_KEY_ENV
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.words import plural

# Package data (pyproject.toml [tool.setuptools.package-data]): there in a checkout and a wheel.
SAMPLE = Path(__file__).resolve().parent / "sample-workspace"
PROMPT = ("Which greenhouses are out of range? Look at the code and the data, run the "
          "monitor, and tell me.")
FOLLOW_UP = "Remind me what we found, in one sentence."
BREAKDOWN = ("system", "rules", "memory", "tools", "summary", "messages", "toolCalls",
             "toolResults", "spilled")

MEMORY_OPS = [{"action": "create", "level": "project", "type": "project_knowledge",
               "title": "Temperature range",
               "summary": "allowed range is 12-28 C, set in src/thresholds.py",
               "content": "The allowed greenhouse temperature range is 12.0-28.0 C "
                          "(`LOW`/`HIGH` in `src/thresholds.py`). Run the monitor with "
                          "`python3 src/monitor.py data/readings.csv`."}]
SUMMARY = ("<analysis>The user asked which greenhouses are out of range.</analysis>\n"
           "<summary>\n1. Request: which greenhouses are out of range.\n2. Concepts: CSV "
           "readings, averages per greenhouse.\n3. Files: src/thresholds.py (12-28 C), "
           "src/monitor.py, data/readings.csv (spilled).\n4. Errors: none.\n5. Solving: ran "
           "the monitor.\n6. User messages: the question above.\n7. Pending: none.\n"
           "8. Current: south and west are out of range.\n9. Next: none.\n</summary>")


def script() -> dict[str, Any]:
    """What the scripted model answers, turn by turn."""
    return {
        "rules": [
            {"when": {"system_contains": "long-term memory"},
             "reply": {"text": json.dumps(MEMORY_OPS)}, "times": 1},
            {"when": {"system_contains": "long-term memory"}, "reply": {"text": "[]"}},
            {"when": {"system_contains": "working summary"}, "reply": {"text": SUMMARY}},
        ],
        "turns": [
            {"text": "Let me look at the project first.",
             "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}},
                            {"name": "read_file", "arguments": {"path": "src/thresholds.py"}},
                            {"name": "read_file", "arguments": {"path": "src/monitor.py"}},
                            {"name": "find_files", "arguments": {"pattern": "**/*.py"}}]},
            {"text": "Now the data.",
             "tool_calls": [{"name": "read_file", "arguments": {"path": "data/readings.csv"}}]},
            {"tool_calls": [{"name": "run_command", "arguments": {
                "command": sys.executable, "args": ["src/monitor.py", "data/readings.csv"]}}]},
            {"text": ["The allowed range is 12-28 C (src/thresholds.py). ",
                      "Running the monitor on the 2,000 readings shows two greenhouses out ",
                      "of range: **south** averages 29.5 C (too hot) and **west** 11.0 C ",
                      "(too cold); north (18.0 C) and east (21.0 C) are fine."]},
            {"text": ["We found that south (29.5 C) and west (11.0 C) are out of the ",
                      "12-28 C range."]},
        ],
    }


class Transcript:
    """Prints notifications as they arrive."""

    def __init__(self, folder: Path | None = None) -> None:
        self.mid_line = False
        self.folder = folder
        self.reading = 0
        """The size of the file the last ``read_file`` call asked for."""

    def file_size(self, params: dict[str, Any]) -> int:
        path = params["arguments"].get("path") if isinstance(params["arguments"], dict) else None
        if self.folder is None or not isinstance(path, str):
            return 0
        try:
            return (self.folder / path).stat().st_size
        except OSError:
            return 0

    def line(self, text: str) -> None:
        if self.mid_line:
            print(flush=True)
            self.mid_line = False
        print(text, flush=True)

    def event(self, params: dict[str, Any]) -> None:
        kind = params.get("kind")
        if kind == "text":
            print(params["delta"], end="", flush=True)
            self.mid_line = True
        elif kind == "toolCall":
            self.line(f"   > {params['name']} {json.dumps(params['arguments'])[:100]}")
            self.reading = self.file_size(params) if params["name"] == "read_file" else 0
        elif kind == "toolResult":
            status = "error" if params["isError"] else "ok"
            self.line(f"     {status}, {plural(params['bytes'], 'byte')}")
            if params["name"] == "read_file" and self.reading > MAX_CONTENT_BYTES:
                self.line(f"     (read_file returns at most {MAX_CONTENT_BYTES // 1024} KiB: this "
                          f"is the start of the {self.reading:,}-byte file, and the result "
                          "says where to read on with offset)")
        elif kind == "compact":
            what = (f"{plural(params['offloaded'], 'large result')} saved to files"
                    if params["layer"] == 1 else "older context summarised")
            self.line(f"   [compact, layer {params['layer']}] {what}: "
                      f"{params['beforeTokens']:,} -> {params['afterTokens']:,} tokens")
        elif kind == "memory":
            changes = ", ".join(f"{c['action']} {c['level']}/{c['filename']}"
                                for c in params.get("changes", [])) or "no change"
            self.line(f"   [memory {params['status']}] {changes} {params.get('error') or ''}")
        elif kind in ("warning", "error"):
            self.line(f"   [{kind}] {params['message']}")
        elif kind == "stop":
            self.line(f"   [stop] {params['stopReason']}")

    def context(self, params: dict[str, Any]) -> None:
        self.line(f"   [context] {params['estimatedTokens']:,} / {params['contextWindow']:,} "
                  f"tokens (auto-compact at {params['autoCompactThreshold']:,})")

    def memory_changed(self, params: dict[str, Any]) -> None:
        self.line(f"   [memoryChanged] {params['level']} memory ({params['source']})")


async def start_server(folder: Path, options: dict[str, Any], show: Transcript,
                       env: dict[str, str]) -> LanguageClient:
    client = LanguageClient("pseudoclaude-demo", "1", converter_factory=get_converter)

    @client.feature(p.EVENT)
    def on_event(params: Any) -> None:
        show.event(params)

    @client.feature(p.CONTEXT_USAGE)
    def on_context(params: Any) -> None:
        show.context(params)

    @client.feature(p.MEMORY_CHANGED)
    def on_memory(params: Any) -> None:
        show.memory_changed(params)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_approval(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        show.line(f"   [approval asked] {params.message.splitlines()[0]} -> Allow once")
        return types.MessageActionItem(title="Allow once")

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        if params.type in (types.MessageType.Error, types.MessageType.Warning):
            show.line(f"   [server log] {params.message}")

    await client.start_io(sys.executable, "-m", "pseudoclaude", "lsp", env=env)
    result = await client.initialize_async(types.InitializeParams(
        process_id=os.getpid(), root_uri=folder.as_uri(),
        capabilities=types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(configuration=False)),
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
        initialization_options=options))
    client.initialized(types.InitializedParams())
    experimental = result.capabilities.experimental or {}
    requests = experimental.get("pseudoclaude", {}).get("requests", [])
    name = result.server_info.name if result.server_info else "?"
    show.line(f"   started {name}; it offers {len(requests)} custom requests")
    return client


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return await client.protocol.send_request_async(method, params)


async def stop_server(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def describe_log(path: Path) -> str:
    kinds: dict[str, int] = {}
    for line in path.read_bytes().splitlines():
        kind = json.loads(line).get("type", "?")
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(plural(n, k) for k, n in kinds.items())


async def demo(root: Path, offline: bool = False) -> int:
    folder = root / "greenhouse"
    show = Transcript(folder)
    shutil.copytree(SAMPLE, folder)
    real = not offline and any(os.environ.get(k) for k in API_KEY_ENV.values())
    env = dict(os.environ) | {"HOME": str(root / "home")}
    if not real:  # never a provider key from the environment (nor the user's config: HOME)
        env = {k: v for k, v in env.items() if k not in API_KEY_ENV.values()}
    # A 5,000-token window, so that this short session has an old part to summarise.
    options: dict[str, Any] = {"memory": {"userDir": str(root / "home" / "user-memory")},
                               "approvals": {"runCommand": "allow"}, "contextWindow": 5_000}
    fake: FakeModelServer | None = None
    if real:
        print("== Using the REAL provider from your environment (ANTHROPIC_API_KEY or "
              "OPENAI_API_KEY is set); --offline (or unsetting it) uses the built-in scripted "
              "model.")
        env["HOME"] = os.environ.get("HOME", env["HOME"])
    else:
        fake = FakeModelServer(script()).start()
        options |= {"provider": "anthropic", "apiKey": "sk-demo-not-a-real-key",
                    "baseUrl": fake.base_url}
        print(f"== Offline: the scripted model answers on {fake.base_url} (127.0.0.1 only)")
    try:
        print(f"== 1. An editor starts the server for {folder}\n"
              "   (settings: contextWindow 5,000 tokens so this short session has an old part "
              "to summarise; approvals.runCommand allow)")
        client = await start_server(folder, options, show, env)

        print(f"\n== 2. pseudoclaude/run: {PROMPT}")
        result = await request(client, p.RUN, {"prompt": PROMPT})
        session_id = result["sessionId"]
        show.line(f"   result: stopReason={result['stopReason']}, "
                  f"{plural(result['iterations'], 'iteration')}, "
                  f"{result['usage']['inputTokens']:,} input tokens, "
                  f"session {session_id}")

        print("\n== 3. pseudoclaude/context (what fills the context)")
        context = await request(client, p.CONTEXT, {})
        show.line(f"   {plural(context['messageCount'], 'message')}, "
                  f"{context['estimatedTokens']:,} "
                  f"estimated tokens of {context['contextWindow']:,}")
        parts = context["breakdown"]
        show.line("   " + ", ".join(f"{name} {parts[name]:,}" for name in BREAKDOWN
                                    if parts[name]) + f"; free {parts['free']:,}")

        print("\n== 4. pseudoclaude/compact/preview, then pseudoclaude/compact "
              "(instructions: keep the findings)")
        plan = await request(client, p.COMPACT_PREVIEW, {"instructions": "keep the findings"})
        show.line(f"   preview: would summarise {plural(plan['summarizedMessages'], 'message')} "
                  f"and keep {plural(plan['keptMessages'], 'message')}, "
                  f"{plan['beforeTokens']:,} -> about "
                  f"{plan['estimatedAfterTokens']:,} tokens (no model call, nothing written)")
        compacted = await request(client, p.COMPACT,
                                  {"instructions": "keep the findings"})
        check = compacted["factCheck"]
        show.line(f"   summarized={compacted['summarized']}: {compacted['beforeTokens']:,} -> "
                  f"{compacted['afterTokens']:,} tokens; the summary was checked against "
                  f"{plural(check['checked'], 'fact')}, {check['added']} carried in by the "
                  "server")

        print("\n== 5. pseudoclaude/memory/show (the memory update ran after the run)")
        for _ in range(100):  # the update runs in the background; give it a moment
            shown = await request(client, p.MEMORY_SHOW, {})
            if shown["index"]:
                break
            await asyncio.sleep(0.1)
        for line in (shown["index"] or "(no memory yet)").splitlines():
            show.line(f"   {line}")

        print("\n== 6. pseudoclaude/sessions/list")
        for s in (await request(client, p.SESSIONS_LIST, {}))["sessions"]:
            show.line(f"   {s['id']}  {s['title'][:50]}  {plural(s['messageCount'], 'message')}, "
                      f"{plural(s['bytes'], 'byte')}{'  (active)' if s['active'] else ''}")
        await stop_server(client)
        show.line("   server stopped (shutdown drained the memory update, closed the log)")

        print("\n== 7. A second server process resumes the session and continues")
        client = await start_server(folder, options, show, env)
        resumed = await request(client, p.SESSIONS_RESUME,
                                {"sessionId": "latest"})
        show.line(f"   resumed {resumed['sessionId']}: {plural(resumed['messageCount'], 'message')}"
                  f", {plural(resumed['badLines'], 'bad line')}, "
                  f"{plural(resumed['repaired'], 'repair')}")
        print(f"\n== 8. pseudoclaude/run: {FOLLOW_UP}")
        result = await request(client, p.RUN, {"prompt": FOLLOW_UP})
        show.line(f"   result: stopReason={result['stopReason']}, same session: "
                  f"{result['sessionId'] == session_id}")
        await stop_server(client)

        data = folder / ".PseudoClaude"
        log = data / "sessions" / session_id / "conversation.jsonl"
        print("\n== Where things are")
        print(f"   session log   {log}\n                 ({describe_log(log)})")
        for spilled in sorted((log.parent / "tool-results").iterdir()):
            print(f"   spilled       {spilled} ({spilled.stat().st_size:,} bytes)")
        for note in sorted((data / "memory").iterdir()):
            print(f"   memory        {note}")
        ok = result["stopReason"] == "completed" and resumed["sessionId"] == session_id
        print("\ndemo: OK" if ok else "\ndemo: FAILED")
        return 0 if ok else 1
    finally:
        if fake is not None:
            fake.stop()


def run_demo(clean: bool = False, offline: bool = False) -> int:
    """Run the demo in a new folder under the system's temp folder; the folder is kept (its
    session log, spilled result and memory are there to look at) unless ``clean``."""
    if not SAMPLE.is_dir():
        print(f"pseudoclaude demo: the sample workspace is missing ({SAMPLE}); reinstall "
              "pseudoclaude-lsp", file=sys.stderr)
        return 1
    root = Path(tempfile.mkdtemp(prefix="pseudoclaude-demo-"))
    try:
        return asyncio.run(demo(root, offline))
    finally:
        if clean:
            shutil.rmtree(root, ignore_errors=True)
            print(f"(removed {root}; without --clean the demo keeps it)")
        else:
            print(f"(kept in {root}; remove it with: rm -rf {root})")
