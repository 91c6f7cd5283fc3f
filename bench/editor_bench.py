"""Open documents benchmark: what the editor's typing costs the server.

The server keeps the text of every open document and applies each incremental ``didChange``
(``lsp/editor.Documents``). Two measurements:

1. **One change**, in process: a one-character insertion (typing) into documents of 10 KB,
   100 KB, 1 MB and 5 MB, ASCII and with an emoji on every line (Python stores such text with
   4 bytes a character), by the server's store and by pygls's ``TextDocument`` (which the
   store replaced). Median of ``--changes`` changes, each on the line after the previous
   one's, as typing goes.
2. **Responsiveness while typing**, a real ``python -m pseudoclaude lsp`` over stdio (the
   plain client of ``bench/lsp_bench.py``): a 1 MB document open, ``--keys`` incremental
   changes sent 5 ms apart, and a ``pseudoclaude/context`` request after every tenth; its
   latency against the same requests with no typing.

Prints a table and writes ``bench/out/editor_bench.json``. The target: a keystroke in a 1 MB
document costs under 1 ms, and ``context`` stays within 5 ms of its idle latency (p50).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace import TextDocument

from lsp_bench import (
    PlainClient,
    init_options,
    load_average,
    server_env,
    summary,
)
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.lsp.editor import Documents

SIZES = (10_000, 100_000, 1_000_000, 5_000_000)
LINE = "    total = compute(values, weights) + offset  # a typical line\n"
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]
OUT = Path(__file__).resolve().parent / "out" / "editor_bench.json"


def document(size: int, wide: bool) -> str:
    line = LINE.replace("#", "😀 #") if wide else LINE
    return line * max(1, size // len(line))


class _Server:
    class workspace:  # what Documents reads of the server
        position_encoding = "utf-16"


def change_params(uri: str, version: int, line: int) -> types.DidChangeTextDocumentParams:
    at = types.Position(line=line, character=4)
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=at, end=at), text="x")])


def one_change(size: int, wide: bool, changes: int) -> dict[str, float]:
    text = document(size, wide)
    uri = "file:///bench/doc.py"
    store = Documents(_Server())  # type: ignore[arg-type]
    store.opened(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))
    pygls_doc = TextDocument(uri, text, version=1)
    first = text.count("\n") // 2
    ours: list[float] = []
    theirs: list[float] = []
    for i in range(changes):
        params = change_params(uri, i + 2, first + i)
        started = time.perf_counter()
        store.changed(params)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        pygls_doc.apply_change(params.content_changes[0])
        theirs.append(time.perf_counter() - started)
    kept = store.document(uri)
    assert kept is not None and kept.text == pygls_doc.source  # the same text
    return {"store_ms": statistics.median(ours) * 1000,
            "pygls_ms": statistics.median(theirs) * 1000}


def typing(keys: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pseudoclaude-editor-bench-") as tmp_name, \
            FakeModelServer({"default": {"text": "ok"}}) as fake:
        tmp = Path(tmp_name)
        folder = tmp / "ws"
        folder.mkdir()
        path = folder / "big.py"
        text = document(1_000_000, False)
        path.write_text(text)
        with open(tmp / "server.log", "wb") as log:
            client = PlainClient(SERVER, server_env(tmp / "home"), folder, log)
            try:
                client.start(folder, init_options(tmp, fake.base_url))
                client.notify("textDocument/didOpen", {"textDocument": {
                    "uri": path.as_uri(), "languageId": "python", "version": 1,
                    "text": text}})
                time.sleep(1.0)
                idle = [client.request("pseudoclaude/context", {})[0] for _ in range(50)]
                busy: list[float] = []
                line = text.count("\n") // 2
                for key in range(keys):
                    at = {"line": line, "character": 4 + key % 40}
                    client.notify("textDocument/didChange", {
                        "textDocument": {"uri": path.as_uri(), "version": key + 2},
                        "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]})
                    if key % 10 == 9:
                        busy.append(client.request("pseudoclaude/context", {})[0])
                    time.sleep(0.005)
            finally:
                client.close()
        return {"idle": summary(idle), "typing": summary(busy), "keys": keys}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--keys", type=int, default=500)
    args = parser.parse_args()
    data: dict[str, Any] = {"load_average": load_average(), "changes": []}
    print(f"One change (median of {args.changes}), ms:")
    print(f"{'size':>10} {'text':>6} {'server':>8} {'pygls':>8}")
    for size in SIZES:
        for wide in (False, True):
            row = one_change(size, wide, args.changes)
            data["changes"].append({"size": size, "wide": wide, **row})
            print(f"{size:>10,} {'emoji' if wide else 'ascii':>6} {row['store_ms']:>8.3f} "
                  f"{row['pygls_ms']:>8.3f}")
    result = typing(args.keys)
    data["typing"] = result
    idle, busy = result["idle"], result["typing"]
    print(f"\npseudoclaude/context with a 1 MB document open (ms): idle p50 {idle['p50_ms']:.1f} "
          f"p99 {idle['p99_ms']:.1f}; while {args.keys} keystrokes arrive p50 "
          f"{busy['p50_ms']:.1f} p99 {busy['p99_ms']:.1f}")
    print(f"load average {data['load_average']}")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
