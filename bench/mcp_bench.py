"""MCP start-up benchmark: what configured MCP servers cost a server's start and first run.

Samples alternate between the two configurations, two seconds apart. Each sample is a real
``python -m pseudoclaude lsp`` over stdio (the plain client of ``bench/lsp_bench.py``: a
response is timed as soon as its frame is read), one workspace folder, a private ``HOME``, the
scripted fake model in this process. Two configurations, ``--spawns`` fresh servers each: no
MCP server, and three stdio MCP servers in the ``mcp.servers`` setting
(``tests/fixtures/mcp/echo_server.py``, a real server of the official SDK: 13 tools each).

Measured per server: spawn to the ``initialize`` answer; ``initialized`` to the first
``pseudoclaude/context`` answer; ``pseudoclaude/mcp/list`` (the servers are configured, none
started: servers start lazily, when a run first needs their tools); and the first run (a
one-turn answer), which is where three servers start (concurrently, each within
``mcp.startTimeout``) — and the listing after it (every server ``ready``).

Prints a table and writes ``bench/out/mcp_bench.json``. The target: ``initialize`` with three
servers is not slower than without (medians within the noise of the machine, 10 %).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_bench import MEMORY_REPLY, OUT, SERVER, PlainClient, server_env
from pseudoclaude.fake_model import FakeModelServer

QUIET = 2.0
"""Seconds between two samples: the last server's MCP servers have exited by then."""
ECHO = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mcp" / "echo_server.py"


def options(tmp: Path, base_url: str, servers: int) -> dict[str, Any]:
    return {"provider": "anthropic", "apiKey": "sk-bench-0123456789", "baseUrl": base_url,
            "maxRetries": 0, "memory": {"enabled": False},
            "mcp": {"servers": {f"echo{i}": {"command": sys.executable, "args": [str(ECHO)]}
                                for i in range(servers)}}}


def sample(tmp: Path, fake: FakeModelServer, servers: int, n: int) -> dict[str, float]:
    folder = tmp / f"ws-{servers}-{n}"
    folder.mkdir()
    (folder / "README.md").write_text("# bench\n")
    home = tmp / f"home-{servers}-{n}"
    home.mkdir()
    with open(tmp / "server.log", "ab") as log:
        client = PlainClient(SERVER, server_env(home), folder, log)
        try:
            initialize = client.start(folder, options(tmp, fake.base_url, servers))
            context, _ = client.request("pseudoclaude/context", {})
            listing_time, listing = client.request("pseudoclaude/mcp/list", {})
            fake.add_turns({"text": "hello"})
            run_time, result = client.request("pseudoclaude/run", {"prompt": "hi"})
            assert result["stopReason"] == "completed", result
            _, after = client.request("pseudoclaude/mcp/list", {})
            ready = sum(s["status"] == "ready" for s in after["servers"])
            assert ready == servers, after
            assert len(listing["servers"]) == servers
        finally:
            client.close()
    return {"initialize": initialize, "context": context, "mcp_list": listing_time,
            "first_run": run_time}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spawns", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    rows: dict[str, dict[str, float]] = {}
    try:
        samples: dict[int, list[dict[str, float]]] = {0: [], 3: []}
        with FakeModelServer({"rules": [MEMORY_REPLY]}) as fake:
            for n in range(args.spawns):  # interleaved, each after the last one's servers quit
                for servers in samples:
                    samples[servers].append(sample(tmp, fake, servers, n))
                    time.sleep(QUIET)
        for servers, taken in samples.items():
            rows[str(servers)] = {key: round(statistics.median(s[key] for s in taken) * 1000, 1)
                                  for key in taken[0]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'MCP servers':>12} {'initialize':>11} {'context':>9} {'mcp/list':>9} "
          f"{'first run':>10}   (medians of {args.spawns}, ms)")
    for servers, row in rows.items():
        print(f"{servers:>12} {row['initialize']:>11} {row['context']:>9} "
              f"{row['mcp_list']:>9} {row['first_run']:>10}")
    OUT.mkdir(exist_ok=True)
    (OUT / "mcp_bench.json").write_text(json.dumps(rows, indent=2) + "\n")
    none, three = rows["0"]["initialize"], rows["3"]["initialize"]
    if three > none * 1.10 + 5:
        print(f"initialize with three MCP servers: {three} ms, without: {none} ms",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
