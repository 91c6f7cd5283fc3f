"""``pseudoclaude demo``: the whole flow, driven as an editor drives it (SPEC §9).

On a copy of ``sample-workspace`` (package data, next to this module): start the scripted
model on loopback (or, with ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY`` set and no
``--offline``, the real provider), start the real server over stdio, then initialize, run a
task that reads files (one result is large enough to be spilled to a file), compact, show
memory, list sessions; stop the server, start a second one, resume the session and continue
it. Every notification is printed as a
readable transcript.

Each step checks what it shows: a run that did not complete, a summary that is not the one the
scripted model wrote (or none), a scripted reply that was not the one the step asked for (the
fake model's "no scripted reply left"), a server that fails or dies. The demo stops at the first
such step with one line on stderr (``pseudoclaude demo: step N failed: ...``) and exit code 1.
With the real provider the checks are the ones that do not depend on what the model says.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from pseudoclaude.agent.tools.base import MAX_CONTENT_BYTES
from pseudoclaude.api import protocol as p
from pseudoclaude.config import API_KEY_ENV
from pseudoclaude.fake_model import FakeModelServer, request_facts
from pseudoclaude.words import plural

# Package data (pyproject.toml [tool.setuptools.package-data]): there in a checkout and a wheel.
SAMPLE = Path(__file__).resolve().parent / "sample-workspace"
PROMPT = ("Which greenhouses are out of range? Look at the code and the data, run the "
          "monitor, and tell me.")
FOLLOW_UP = "Remind me what we found, in one sentence."
SHUTDOWN_SECONDS = 30
WINDOW = 16_000
"""The context window the demo runs with: small, so that this short session has an old part to
summarise at step 4 (the recent window kept verbatim is a share of the window), yet large
enough that step 2 stays under the automatic compaction and step 4's summary fits one
cache-friendly request. It works from about 13,000 to 20,500 tokens today; 16,000 leaves room
on both sides for the system prompt, the tools and the paths to grow or shrink."""
"""How long a server may take to shut down (it drains a memory update) before it is told
to exit."""
BREAKDOWN = ("system", "rules", "memory", "skills", "tools", "summary", "messages", "toolCalls",
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


ANSWER = ("The allowed range is 12-28 C (src/thresholds.py). ",
          "Running the monitor on the 2,000 readings shows two greenhouses out ",
          "of range: **south** averages 29.5 C (too hot) and **west** 11.0 C ",
          "(too cold); north (18.0 C) and east (21.0 C) are fine. The latest ",
          "readings (the file's last 200 lines) say the same.")
"""Step 2's answer, as the scripted model streams it."""
RECAP = ("We found that south (29.5 C) and west (11.0 C) are out of the ", "12-28 C range.")
"""Step 8's answer."""
MEMORY_TITLE = "Temperature range"
LATEST = 1802
"""The first line of the latest readings step 2 reads (the last 200 lines of the data): the
recent part of the conversation that compaction keeps."""


def summary_body(text: str) -> str:
    """What a summary reply's ``<summary>`` block holds (what the server stores)."""
    start, end = text.find("<summary>"), text.rfind("</summary>")
    return text[start + len("<summary>"):end].strip() if 0 <= start < end else text.strip()


def script() -> dict[str, Any]:
    """What the scripted model answers, turn by turn.

    The rules answer the side requests: a compaction's summary request (``summary``: the
    transcript form with its own system prompt, or the cache-friendly form that repeats the
    conversation and ends with the summary instruction) and the memory updates. The turns are
    the agent's own requests, one per model call of steps 2 and 8.
    """
    return {
        "rules": [
            {"when": {"summary": True}, "reply": {"text": SUMMARY}},
            {"when": {"system_contains": "long-term memory"},
             "reply": {"text": json.dumps(MEMORY_OPS)}, "times": 1},
            {"when": {"system_contains": "long-term memory"}, "reply": {"text": "[]"}},
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
            {"text": "And the latest readings, to see whether that still holds.",
             "tool_calls": [{"name": "read_file", "arguments": {
                 "path": "data/readings.csv", "offset": LATEST, "limit": 2001 - LATEST + 1}}]},
            {"text": list(ANSWER)},
            {"text": list(RECAP)},
        ],
    }


class DemoFailed(Exception):
    """A step did not do what the demo says it does; the message is the line the user reads."""


class Checks:
    """What each step must have done; :meth:`expect` stops the demo at the first miss.

    ``fake`` (offline): the scripted model, whose recorded requests say whether each one got
    the reply the script meant for it.
    """

    def __init__(self, fake: FakeModelServer | None, show: Transcript) -> None:
        self.fake = fake
        self.show = show
        self.step = 0
        self._requests = 0
        self._problems = 0

    @property
    def offline(self) -> bool:
        return self.fake is not None

    def begin(self, step: int, title: str) -> None:
        self.done()
        self.step = step
        print(f"\n== {step}. {title}" if step > 1 else f"== {step}. {title}", flush=True)

    def fail(self, why: str) -> NoReturn:
        raise DemoFailed(f"step {self.step} failed: {why}")

    def expect(self, ok: bool, why: str) -> None:
        if not ok:
            self.fail(why)

    def failing(self) -> bool:
        """Whether a problem was reported since the last :meth:`done`."""
        return len(self.show.problems) > self._problems

    def done(self) -> None:
        """The end of a step: no error was reported, every model request was scripted."""
        problems = self.show.problems[self._problems:]
        self._problems = len(self.show.problems)
        self.expect(not problems, problems[0] if problems else "")
        if self.fake is None:
            return
        records = self.fake.requests
        for record in records[self._requests:]:
            self.expect(record["reply"] != "default",
                        "the scripted model had no reply left for a request "
                        f"({_describe(record)}): the demo's script does not match what the "
                        "server asks the model")
        self._requests = len(records)

    def script_used_up(self, turns: int) -> None:
        assert self.fake is not None
        used = sum(str(r["reply"]).startswith("turn ") for r in self.fake.requests)
        self.expect(used == turns, f"the agent made {used} model calls; the script has {turns}")


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (a request body's texts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _describe(record: dict[str, Any]) -> str:
    facts = request_facts(str(record["protocol"]), record["body"])
    kind = ("a summary request" if facts["summary"]
            else "a request with tools" if facts["has_tools"] else "a request without tools")
    last = " ".join(str(facts["last_user"]).split())[:60]
    return f"{kind}, last user message {last!r}"


class Transcript:
    """Prints notifications as they arrive, and keeps the problems they report."""

    def __init__(self, folder: Path | None = None, strict: bool = False) -> None:
        self.mid_line = False
        self.folder = folder
        self.strict = strict
        """Offline: a warning is a problem too (the scripted model never needs a retry)."""
        self.reading = 0
        """The size of the file the last ``read_file`` call asked for."""
        self.problems: list[str] = []
        """What went wrong, one line each: error events, failed tools and memory updates."""

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
            if params["isError"] and self.strict:
                self.problems.append(f"the {params['name']} call failed: "
                                     f"{params.get('error') or params.get('display') or '?'}")
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
            if params["status"] == "failed":
                self.problems.append(f"the memory update failed: {params.get('error') or '?'}")
        elif kind in ("warning", "error"):
            self.line(f"   [{kind}] {params['message']}")
            if kind == "error" or self.strict:
                self.problems.append(params["message"])
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
    try:
        result = await client.initialize_async(types.InitializeParams(
            process_id=os.getpid(), root_uri=folder.as_uri(),
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(configuration=False)),
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
            initialization_options=options))
    except (JsonRpcException, RuntimeError) as exc:
        await stop_server(client)
        raise DemoFailed(f"the server did not start: {_one_line(exc)}") from exc
    client.initialized(types.InitializedParams())
    experimental = result.capabilities.experimental or {}
    requests = experimental.get("pseudoclaude", {}).get("requests", [])
    name = result.server_info.name if result.server_info else "?"
    show.line(f"   started {name}; it offers {len(requests)} custom requests")
    return client


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    """The result of ``method``; an error answer (or a server that died) is a failure."""
    try:
        return await client.protocol.send_request_async(method, params)
    except (JsonRpcException, RuntimeError) as exc:
        raise DemoFailed(f"{method} failed: {_one_line(exc)}") from exc


async def stop_server(client: LanguageClient) -> None:
    """Shut the server down (it drains its memory update), or make it exit if it cannot."""
    with contextlib.suppress(JsonRpcException, RuntimeError, TimeoutError):
        await asyncio.wait_for(client.shutdown_async(None), SHUTDOWN_SECONDS)
    with contextlib.suppress(OSError, RuntimeError):
        client.exit(None)
    await client.stop()


def describe_log(path: Path) -> str:
    kinds: dict[str, int] = {}
    for line in path.read_bytes().splitlines():
        kind = json.loads(line).get("type", "?")
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(plural(n, k) for k, n in kinds.items())


def _check_run(check: Checks, result: dict[str, Any], expected: str | None) -> None:
    """The run completed with the answer the script meant (``expected``; None: any answer)."""
    if result["stopReason"] == "error":
        check.fail(f"the run failed: {result.get('error') or '(no message)'}")
    check.expect(result["stopReason"] == "completed",
                 f"the run stopped early ({result['stopReason']})")
    check.done()  # no error reported, every model call answered by the script
    if expected is None:
        check.expect(bool(result["text"].strip()), "the run ended without an answer")
    else:
        check.expect(result["text"] == expected,
                     f"the answer is not the scripted one: {result['text'][:100]!r}")


async def _summary(client: LanguageClient, session_id: str) -> str | None:
    """The text of the session's last summary (what the model now sees), if any."""
    items = (await request(client, p.SESSIONS_MESSAGES, {"sessionId": session_id}))["items"]
    texts = [item["text"] for item in items if item["kind"] == "summary"]
    return texts[-1] if texts else None


def _under_tmp(path: Path) -> bool:
    """Whether ``path`` is in the temporary folder (hidden from sandboxed commands)."""
    where = os.path.abspath(path)
    return any(where.startswith(os.path.join(tmp, "")) for tmp in
               {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir()), "/tmp"})


async def _steps(folder: Path, options: dict[str, Any], env: dict[str, str], show: Transcript,
                 check: Checks, spec: dict[str, Any]) -> None:
    offline = check.offline
    check.begin(1, f"An editor starts the server for {folder}\n"
                   f"   (settings: contextWindow {WINDOW:,} tokens so this short session has an "
                   "old part to summarise; approvals.runCommand allow)")
    client = await start_server(folder, options, show, env)
    try:
        check.begin(2, f"pseudoclaude/run: {PROMPT}")
        result = await request(client, p.RUN, {"prompt": PROMPT})
        session_id = result["sessionId"]
        show.line(f"   result: stopReason={result['stopReason']}, "
                  f"{plural(result['iterations'], 'iteration')}, "
                  f"{result['usage']['inputTokens']:,} input tokens, "
                  f"session {session_id}")
        _check_run(check, result, "".join(ANSWER) if offline else None)

        check.begin(3, "pseudoclaude/context (what fills the context)")
        context = await request(client, p.CONTEXT, {})
        show.line(f"   {plural(context['messageCount'], 'message')}, "
                  f"{context['estimatedTokens']:,} "
                  f"estimated tokens of {context['contextWindow']:,}")
        parts = context["breakdown"]
        show.line("   " + ", ".join(f"{name} {parts[name]:,}" for name in BREAKDOWN
                                    if parts[name]) + f"; free {parts['free']:,}")
        check.expect(context["messageCount"] >= 2,
                     f"the session holds {plural(context['messageCount'], 'message')}")
        if offline:
            check.expect(parts["spilled"] > 0, "no large result was saved to a file")

        check.begin(4, "pseudoclaude/compact/preview, then pseudoclaude/compact "
                       "(instructions: keep the findings)")
        plan = await request(client, p.COMPACT_PREVIEW, {"instructions": "keep the findings"})
        show.line(f"   preview: would summarise {plural(plan['summarizedMessages'], 'message')} "
                  f"and keep {plural(plan['keptMessages'], 'message')}, "
                  f"{plan['beforeTokens']:,} -> about "
                  f"{plan['estimatedAfterTokens']:,} tokens (no model call, nothing written)")
        check.expect(plan["summarizedMessages"] > 0 or not offline,
                     "the preview has nothing to summarise")
        compacted = await request(client, p.COMPACT, {"instructions": "keep the findings"})
        fact_check = compacted["factCheck"]
        show.line(f"   summarized={compacted['summarized']}: {compacted['beforeTokens']:,} -> "
                  f"{compacted['afterTokens']:,} tokens; the summary was checked against "
                  f"{plural(fact_check['checked'], 'fact')}, {fact_check['added']} carried in "
                  "by the server")
        if plan["summarizedMessages"] > 0:
            check.expect(compacted["summarized"], f"nothing was summarised: "
                                                  f"{compacted['message']}")
            summary = await _summary(client, session_id) or ""
            check.expect(bool(summary.strip()), "the session has no summary")
            show.line("   the summary the model now sees instead of the older messages:")
            for line in summary.splitlines():
                show.line(f"     | {line}")
            if check.fake is not None and not summary.startswith(summary_body(SUMMARY)):
                asked = [r["reply"] for r in check.fake.requests
                         if request_facts(str(r["protocol"]), r["body"])["summary"]]
                check.fail(f"the stored summary is not the scripted one (the summary request "
                           f"got {asked[-1] if asked else 'no reply'} of the script): "
                           f"{' '.join(summary.split())[:80]!r}")

        check.begin(5, "pseudoclaude/memory/show (the memory update ran after the run)")
        shown = await request(client, p.MEMORY_SHOW, {})
        for _ in range(100):  # the update runs in the background; give it a moment
            if shown["index"] or check.failing():
                break
            await asyncio.sleep(0.1)
            shown = await request(client, p.MEMORY_SHOW, {})
        for line in (shown["index"] or "(no memory yet)").splitlines():
            show.line(f"   {line}")
        if offline:
            check.done()  # a failed update says why
            check.expect(MEMORY_TITLE in shown["index"],
                         f"the memory index does not have the note {MEMORY_TITLE!r}")

        check.begin(6, "pseudoclaude/sessions/list")
        sessions = (await request(client, p.SESSIONS_LIST, {}))["sessions"]
        for s in sessions:
            show.line(f"   {s['id']}  {s['title'][:50]}  {plural(s['messageCount'], 'message')}, "
                      f"{plural(s['bytes'], 'byte')}{'  (active)' if s['active'] else ''}")
        check.expect(any(s["id"] == session_id and s["active"] for s in sessions),
                     f"session {session_id} is not listed as the active one")
    finally:
        await stop_server(client)
    show.line("   server stopped (shutdown drained the memory update, closed the log)")

    check.begin(7, "A second server process resumes the session and continues")
    client = await start_server(folder, options, show, env)
    try:
        resumed = await request(client, p.SESSIONS_RESUME, {"sessionId": "latest"})
        show.line(f"   resumed {resumed['sessionId']}: "
                  f"{plural(resumed['messageCount'], 'message')}, "
                  f"{plural(resumed['badLines'], 'bad line')}, "
                  f"{plural(resumed['repaired'], 'repair')}")
        check.expect(resumed["sessionId"] == session_id,
                     f"resumed {resumed['sessionId']}, not {session_id}")
        check.expect(resumed["badLines"] == 0, f"the session log has "
                                               f"{plural(resumed['badLines'], 'bad line')}")

        check.begin(8, f"pseudoclaude/run: {FOLLOW_UP}")
        result = await request(client, p.RUN, {"prompt": FOLLOW_UP})
        show.line(f"   result: stopReason={result['stopReason']}, same session: "
                  f"{result['sessionId'] == session_id}")
        _check_run(check, result, "".join(RECAP) if offline else None)
        check.expect(result["sessionId"] == session_id,
                     f"the run went to session {result['sessionId']}, not {session_id}")
        if check.fake is not None:  # the model was sent the summary the resumed session holds
            turns = [r for r in check.fake.requests if str(r["reply"]).startswith("turn ")]
            check.expect(bool(turns) and any(summary_body(SUMMARY) in text
                                             for text in _strings(turns[-1]["body"])),
                         "the resumed session did not send its summary to the model")
    finally:
        await stop_server(client)
    check.done()
    if check.fake is not None:
        check.script_used_up(len(spec.get("turns") or []))

    data = folder / ".PseudoClaude"
    log = data / "sessions" / session_id / "conversation.jsonl"
    print("\n== Where things are")
    print(f"   session log   {log}\n                 ({describe_log(log)})")
    spilled_dir = log.parent / "tool-results"
    for spilled in sorted(spilled_dir.iterdir()) if spilled_dir.is_dir() else []:
        print(f"   spilled       {spilled} ({spilled.stat().st_size:,} bytes)")
    memory_dir = data / "memory"
    for note in sorted(memory_dir.iterdir()) if memory_dir.is_dir() else []:
        print(f"   memory        {note}")


async def demo(root: Path, offline: bool = False, spec: dict[str, Any] | None = None) -> int:
    """The demo in ``root``: 0 when every step did what it shows, else 1 (the step and why on
    stderr). ``spec``: the scripted model's script (default :func:`script`)."""
    folder = root / "greenhouse"
    shutil.copytree(SAMPLE, folder)
    real = not offline and any(os.environ.get(k) for k in API_KEY_ENV.values())
    show = Transcript(folder, strict=not real)
    env = dict(os.environ) | {"HOME": str(root / "home")}
    if not real:  # never a provider key from the environment (nor the user's config: HOME)
        env = {k: v for k, v in env.items() if k not in API_KEY_ENV.values()}
    options: dict[str, Any] = {"memory": {"userDir": str(root / "home" / "user-memory")},
                               "approvals": {"runCommand": "allow"}, "contextWindow": WINDOW}
    # The monitor runs with this Python, which a sandboxed command cannot find when it is
    # installed under the host's /tmp (the sandbox's /tmp is private); and the requests must be
    # the same size wherever the demo runs: no sandbox.
    options["sandbox"] = {"enabled": False}
    fake: FakeModelServer | None = None
    spec = script() if spec is None else spec
    if real:
        print("== Using the REAL provider from your environment (ANTHROPIC_API_KEY or "
              "OPENAI_API_KEY is set); --offline (or unsetting it) uses the built-in scripted "
              "model.")
        env["HOME"] = os.environ.get("HOME", env["HOME"])
    else:
        fake = FakeModelServer(spec).start()
        options |= {"provider": "anthropic", "apiKey": "sk-demo-not-a-real-key",
                    "baseUrl": fake.base_url}
        print(f"== Offline: the scripted model answers on {fake.base_url} (127.0.0.1 only)")
    check = Checks(fake, show)
    try:
        await _steps(folder, options, env, show, check, spec)
    except DemoFailed as failed:
        show.line("\ndemo: FAILED")
        hint = (" (with the provider from your environment; `pseudoclaude demo --offline` uses "
                "the built-in scripted model)" if real else "")
        print(f"pseudoclaude demo: {failed}{hint}", file=sys.stderr, flush=True)
        return 1
    finally:
        if fake is not None:
            fake.stop()
    print("\ndemo: OK", flush=True)
    return 0


def run_demo(clean: bool = False, offline: bool = False,
             spec: dict[str, Any] | None = None) -> int:
    """Run the demo in a new folder under the system's temp folder; the folder is kept (its
    session log, spilled result and memory are there to look at) unless ``clean``."""
    if not SAMPLE.is_dir():
        print(f"pseudoclaude demo: the sample workspace is missing ({SAMPLE}); reinstall "
              "pseudoclaude-lsp", file=sys.stderr)
        return 1
    root = Path(tempfile.mkdtemp(prefix="pseudoclaude-demo-"))
    try:
        return asyncio.run(demo(root, offline, spec))
    finally:
        if clean:
            shutil.rmtree(root, ignore_errors=True)
            print(f"(removed {root}; without --clean the demo keeps it)")
        else:
            print(f"(kept in {root}; remove it with: rm -rf {root})")
