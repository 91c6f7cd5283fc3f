"""Permission engine and sandbox benchmark: what deciding a tool call, and sandboxing a command,
cost each call.

1. **Decision time**, in process: a :class:`~pseudoclaude.permissions.PermissionEngine` with
   200 rules spread over the ``local``, ``project``, ``user`` and ``settings`` sources — 120
   command allow prefix rules (``Bash(git status:*)``, ``Bash(npm run build:*)``, ...), 37
   command deny rules (``Bash(rm:*)``, ``Bash(curl:*)``, a few globs and regular expressions),
   20 command ask rules and 23 file rules (``Read(secrets/**)``, ``Read(**/.env)``,
   ``Edit(=src/*.py)``, ...) — timed on
   ``check`` of a ``run_command`` line of 20 simple commands (``&&``, ``||``, ``|``, ``;``, a
   subshell, a ``$( … )``, an ``sh -c '…'``), of a one-command line, and of a ``read_file``.
   Each ``check`` is the whole path: the line parsed with tree-sitter's bash grammar, every
   part matched against the rules (the 20-part line is allowed, so every part is matched
   against every deny, ask and allow rule it could meet: the slowest outcome). ``parse only``
   is the parsing alone. Warmed up first; median, 99th percentile and mean of ``--calls``
   calls, in microseconds. The target: a 20-part line against 200 rules decided in under 1 ms
   (median); the bench prints PASS or FAIL and exits with status 1 when it is missed.
2. **Sandbox start-up**: ``/bin/true`` started ``--runs`` times with :func:`subprocess.run`,
   directly and wrapped in the sandbox's ``bwrap`` vector
   (:meth:`pseudoclaude.sandbox.Sandbox.command`, run in this checkout, no network),
   interleaved; median and 95th percentile of each, in milliseconds, and the difference.
   Skipped, with the reason, when the sandbox cannot run here.

Prints a table and writes ``bench/out/permissions_bench.json`` (``--json``: prints it instead
of the table). ``--quick``: fewer samples (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pseudoclaude.permissions import (
    Call,
    PermissionEngine,
    Rule,
    RuleSet,
    RuleSource,
    parse_rule,
)
from pseudoclaude.permissions.shell import parse_line
from pseudoclaude.sandbox import Sandbox, probe

OUT = Path(__file__).resolve().parent / "out"
ROOT = Path(__file__).resolve().parents[1]
TARGET_US = 1000.0
"""The 20-part line against 200 rules: median decision time under 1 ms."""

LINE_20 = ("cd web && npm ci --no-audit && npm run build | tee build.log; "
           "git status --short && git diff --stat | head -n 20; "
           'echo "built $(git rev-parse --short HEAD)" && '
           "sh -c 'npm test -- --ci && npm run lint'; "
           "(cd ../server && make test) || grep -rn TODO src | sort | uniq -c | wc -l; "
           "ls -la dist && cat package.json | jq -r .version")
LINE_1 = "git status --short"

# -- the rules ---------------------------------------------------------------------------------

_SUBCOMMANDS = {
    "git": ["status", "diff", "log", "show", "branch", "fetch", "add", "commit", "stash",
            "checkout", "switch", "rev-parse", "blame", "grep", "ls-files", "remote", "tag",
            "describe", "merge-base", "shortlog"],
    "npm": ["run build", "run lint", "run test", "run dev", "run format", "run typecheck",
            "test", "ci", "ls", "outdated", "view", "pack"],
    "pnpm": ["install", "run build", "run test", "run lint", "list", "why"],
    "yarn": ["install", "build", "test", "lint", "why", "info"],
    "cargo": ["build", "check", "test", "clippy", "fmt", "doc", "tree", "metadata", "bench",
              "run"],
    "go": ["build", "test", "vet", "fmt", "list", "mod tidy", "mod download", "env",
           "version", "generate"],
    "make": ["test", "lint", "build", "check", "docs", "bench"],
    "uv": ["run pytest", "run ruff", "run mypy", "sync", "lock", "pip list", "tree"],
    "python3": ["-m pytest", "-m mypy", "-m ruff", "-m build", "-m pip list"],
    "docker": ["ps", "images", "logs", "inspect", "compose ps", "compose logs"],
    "kubectl": ["get", "describe", "logs", "top"],
    "gh": ["pr view", "pr list", "pr diff", "issue view", "issue list", "run list",
           "run view"],
    "terraform": ["plan", "validate", "fmt", "show"],
    "poetry": ["run pytest", "show", "check"],
    "bundle": ["exec rspec", "exec rubocop"],
    "mvn": ["test", "verify"],
    "gradle": ["test", "build"],
}
"""``Bash(<program> <subcommand>:*)`` allow rules: the first 109, with the 11 one-word ones
below, make the 120 command allow rules."""
_ONE_WORD = ["ls", "cat", "head", "tee", "sort", "uniq", "wc", "jq", "grep", "echo", "cd"]
"""One-word allow prefixes (``Bash(ls:*)``)."""
COMMAND_ALLOW = 120

DENY = [
    "Bash(rm:*)", "Bash(rmdir:*)", "Bash(shred:*)", "Bash(dd:*)", "Bash(mkfs:*)",
    "Bash(sudo:*)", "Bash(doas:*)", "Bash(su:*)", "Bash(chmod:*)", "Bash(chown:*)",
    "Bash(curl:*)", "Bash(wget:*)", "Bash(nc:*)", "Bash(ncat:*)", "Bash(ssh:*)", "Bash(scp:*)",
    "Bash(rsync:*)", "Bash(git push --force:*)", "Bash(git push -f:*)",
    "Bash(git reset --hard:*)", "Bash(git clean:*)", "Bash(git filter-branch:*)",
    "Bash(npm publish:*)", "Bash(cargo publish:*)", "Bash(twine upload:*)",
    "Bash(docker run --privileged:*)", "Bash(kubectl delete:*)", "Bash(terraform apply:*)",
    "Bash(terraform destroy:*)", "Bash(shutdown:*)", "Bash(reboot:*)", "Bash(killall:*)",
    "Bash(pkill:*)", "Bash(* --no-verify*)", "Bash(*id_rsa*)", "Bash(~^aws\\s+iam\\b)",
    "Bash(~\\bsecrets?/)", "Read(**/.env)", "Read(**/*.pem)", "Edit(.git/**)",
]
ASK = [
    "Bash(git push:*)", "Bash(git rebase:*)", "Bash(git merge:*)", "Bash(git cherry-pick:*)",
    "Bash(git tag -d:*)", "Bash(npm install:*)", "Bash(npm uninstall:*)", "Bash(pip install:*)",
    "Bash(uv add:*)", "Bash(cargo install:*)", "Bash(go install:*)", "Bash(docker build:*)",
    "Bash(docker compose up:*)", "Bash(kubectl apply:*)", "Bash(gh pr merge:*)",
    "Bash(gh release create:*)", "Bash(mv:*)", "Bash(cp -r:*)", "Bash(* > /etc/*)",
    "Bash(~^python3? -c)",
]
FILE_RULES = {
    "deny": ["Read(secrets/**)", "Read(**/credentials.json)", "Write(secrets/**)",
             "Edit(secrets/**)", "Grep(secrets)", "Glob(secrets/**)"],
    "ask": ["Edit(=src/*.py)", "Edit(package.json)", "Edit(**/Dockerfile)",
            "Write(.github/**)", "Edit(.github/**)", "Write(=Makefile)"],
    "allow": ["Read(src/**)", "Read(docs/**)", "Read(tests/**)", "Read(*.md)",
              "Edit(docs/**)", "Edit(tests/**)", "Write(build/**)", "Grep"],
}
SOURCES: tuple[RuleSource, ...] = ("local", "project", "user", "settings")


def rule_texts() -> dict[str, list[str]]:
    """200 rules: 120 command allow, 37 command deny, 20 command ask, 23 file rules."""
    two = [f"Bash({prog} {sub}:*)" for prog, subs in _SUBCOMMANDS.items() for sub in subs]
    allow = two[:COMMAND_ALLOW - len(_ONE_WORD)] + [f"Bash({prog}:*)" for prog in _ONE_WORD]
    return {"allow": allow + FILE_RULES["allow"], "ask": ASK + FILE_RULES["ask"],
            "deny": DENY + FILE_RULES["deny"]}


def rule_sets() -> tuple[list[RuleSet], int]:
    """The rules, dealt round-robin over the four sources (as several files add up: the rules
    a line needs are spread over all of them)."""
    dealt: dict[RuleSource, dict[str, list[Rule]]] = {s: {"allow": [], "ask": [], "deny": []}
                                                      for s in SOURCES}
    count = 0
    for decision, texts in rule_texts().items():
        for i, text in enumerate(texts):
            dealt[SOURCES[i % len(SOURCES)]][decision].append(parse_rule(text))
            count += 1
    sets = [RuleSet(source, f"bench {source}", allow=tuple(d["allow"]), ask=tuple(d["ask"]),
                    deny=tuple(d["deny"])) for source, d in dealt.items()]
    return sets, count


# -- measuring ---------------------------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_us(action: Callable[[], object], calls: int, warmup: int) -> dict[str, float]:
    for _ in range(warmup):
        action()
    samples: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        start = clock()
        action()
        samples.append((clock() - start) / 1000)
    return {"median_us": round(statistics.median(samples), 1),
            "p99_us": round(percentile(samples, 0.99), 1),
            "mean_us": round(statistics.fmean(samples), 1)}


def engine_part(calls: int, warmup: int) -> dict[str, Any]:
    workspace = Path(tempfile.mkdtemp(prefix="permissions-bench-"))
    try:
        (workspace / "src").mkdir()
        (workspace / "src" / "app.py").write_text("print('hello')\n")
        sets, count = rule_sets()
        engine = PermissionEngine(workspace, sets, mode="default")
        long_call = Call("run_command", {"command": LINE_20})
        short_call = Call("run_command", {"command": LINE_1})
        file_call = Call("read_file", {"path": "src/app.py"})
        start = time.perf_counter()
        verdict = engine.check(long_call)  # the first call loads the bash grammar
        cold_ms = (time.perf_counter() - start) * 1000
        assert count == 200, f"{count} rules"
        parts = len(parse_line(LINE_20).parts)
        assert parts == 20, f"the long line has {parts} parts"
        assert verdict.decision == "allow", verdict
        assert engine.check(short_call).decision == "allow"
        assert engine.check(file_call).decision == "allow"
        rows = {
            "20 parts, 200 rules": time_us(lambda: engine.check(long_call), calls, warmup),
            "parse only, 20 parts": time_us(lambda: parse_line(LINE_20), calls, warmup),
            "1 part, 200 rules": time_us(lambda: engine.check(short_call), calls, warmup),
            "read_file, 200 rules": time_us(lambda: engine.check(file_call), calls, warmup),
        }
        return {"rules": count, "parts": parts, "calls": calls, "warmup": warmup,
                "cold_first_check_ms": round(cold_ms, 1), "verdict": verdict.reason,
                "rows": rows}
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def run_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, start_new_session=True, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def sandbox_part(runs: int) -> dict[str, Any]:
    status = probe()
    if not status.enabled:
        return {"skipped": status.reason or "the sandbox cannot run here"}
    sandbox = Sandbox(True)
    direct = ["/bin/true"]
    wrapped = sandbox.command(direct, ROOT)
    build_us = time_us(lambda: sandbox.command(direct, ROOT), 100, 10)["median_us"]
    for _ in range(3):  # warm up: page cache, the empty file of hidden paths
        run_ms(direct)
        run_ms(wrapped)
    plain: list[float] = []
    boxed: list[float] = []
    for _ in range(runs):  # interleaved, so a busy moment costs both alike
        plain.append(run_ms(direct))
        boxed.append(run_ms(wrapped))
    version = subprocess.run([status.bwrap or "bwrap", "--version"], capture_output=True,
                             text=True, check=False).stdout.strip()
    rows = {name: {"median_ms": round(statistics.median(values), 2),
                   "p95_ms": round(percentile(values, 0.95), 2)}
            for name, values in (("direct", plain), ("sandboxed", boxed))}
    return {"runs": runs, "bwrap": version, "argv_words": len(wrapped),
            "build_argv_us": round(build_us, 1), "rows": rows,
            "overhead_median_ms": round(rows["sandboxed"]["median_ms"]
                                        - rows["direct"]["median_ms"], 2),
            "overhead_p95_ms": round(rows["sandboxed"]["p95_ms"] - rows["direct"]["p95_ms"], 2)}


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def print_table(result: dict[str, Any]) -> None:
    engine = result["engine"]
    print(f"permission engine: {engine['rules']} rules, {engine['calls']:,} calls after "
          f"{engine['warmup']:,} warm-up (microseconds)")
    print(f"{'call':<24} {'median':>9} {'p99':>9} {'mean':>9}")
    for name, row in engine["rows"].items():
        print(f"{name:<24} {row['median_us']:>9} {row['p99_us']:>9} {row['mean_us']:>9}")
    print(f"first check of the process (grammar loaded): {engine['cold_first_check_ms']} ms")
    long = engine["rows"]["20 parts, 200 rules"]["median_us"]
    verdict = "PASS" if long < TARGET_US else "FAIL"
    print(f"{verdict}: 20 parts, 200 rules: median {long} us (target < {TARGET_US:.0f} us)")
    print()
    sandbox = result["sandbox"]
    if "skipped" in sandbox:
        print(f"sandbox start-up: skipped, the sandbox cannot run here: {sandbox['skipped']}")
        return
    print(f"sandbox start-up: /bin/true, {sandbox['runs']} runs each, interleaved "
          f"({sandbox['bwrap']}; its argv of {sandbox['argv_words']} words built in "
          f"{sandbox['build_argv_us']} us, median) (milliseconds)")
    print(f"{'':<24} {'median':>9} {'p95':>9}")
    for name, row in sandbox["rows"].items():
        print(f"{name:<24} {row['median_ms']:>9} {row['p95_ms']:>9}")
    print(f"{'sandbox overhead':<24} {sandbox['overhead_median_ms']:>9} "
          f"{sandbox['overhead_p95_ms']:>9}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000,
                        help="timed engine calls per row (default 5000)")
    parser.add_argument("--runs", type=int, default=50,
                        help="runs of /bin/true each, direct and sandboxed (default 50)")
    parser.add_argument("--quick", action="store_true",
                        help="500 calls and 10 runs: a smoke run")
    parser.add_argument("--json", action="store_true",
                        help="print the results as JSON instead of the table")
    args = parser.parse_args()
    calls, runs = (500, 10) if args.quick else (args.calls, args.runs)
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average": load_average()},
        "engine": engine_part(calls, warmup=max(50, calls // 10)),
        "sandbox": sandbox_part(runs),
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "permissions_bench.json").write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    long = result["engine"]["rows"]["20 parts, 200 rules"]["median_us"]
    if long >= TARGET_US:
        print(f"permission engine: 20 parts, 200 rules: median {long} us, over the "
              f"{TARGET_US:.0f} us target", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
