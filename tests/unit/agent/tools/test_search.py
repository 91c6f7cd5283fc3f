"""find_files and search_code (SPEC §6)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.tools import MAX_CONTENT_BYTES, ToolRegistry
from pseudoclaude.agent.tools.search import MAX_FIND_RESULTS, MAX_SEARCH_MATCHES, expand_braces


def listing(body: dict[str, Any]) -> list[str]:
    assert body["ok"] is True, body
    return [line for line in body["content"].split("\n") if line and not line.startswith("[")]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    files = {
        "README.md": "# readme\n",
        "setup.py": "import os\n",
        "src/app.py": "def main():\n    print('hello world')\n",
        "src/util/strings.py": "HELLO = 'hello'\nPattern = 'a.b('\n",
        "src/web/page.ts": "export const hello = 1;\n",
        "src/web/page.tsx": "<Hello/>\n",
        "src/web/test_page.ts": "test('hello')\n",
        "docs/guide.md": "Say hello.\r\nBye.\r\n",
        ".git/config": "hello in git\n",
        "node_modules/lib/index.js": "hello from node_modules\n",
        ".venv/lib/site.py": "hello venv\n",
        "src/__pycache__/app.cpython-311.pyc": "hello cache\n",
        ".PseudoClaude/sessions/x.jsonl": "hello session\n",
        ".github/workflows/ci.yml": "name: hello\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "image.png").write_bytes(b"\x89PNG\x00\x00hello")
    return root


# -- find_files ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "expected"), [
    ("**/*.py", ["setup.py", "src/app.py", "src/util/strings.py"]),
    ("*.py", ["setup.py"]),
    ("src/*.py", ["src/app.py"]),
    ("src/**", ["src/app.py", "src/util/strings.py", "src/web/page.ts", "src/web/page.tsx",
                "src/web/test_page.ts"]),
    ("src/**/*.{ts,tsx}", ["src/web/page.ts", "src/web/page.tsx", "src/web/test_page.ts"]),
    ("**/test_*.ts", ["src/web/test_page.ts"]),
    ("src/web/page.ts?", ["src/web/page.tsx"]),
    ("**/[rR]EADME.*", ["README.md"]),
    ("**/[!a-z]*.md", ["README.md"]),
    ("./docs//guide.md", ["docs/guide.md"]),
    ("**/*.yml", [".github/workflows/ci.yml"]),
    ("src/util/", ["src/util/strings.py"]),
    ("node_modules/**/*.js", ["node_modules/lib/index.js"]),  # named explicitly
])
def test_find_files_globs(ws: Path, pattern: str, expected: list[str],
                          call: Callable[..., dict[str, Any]]) -> None:
    body = call(ToolRegistry(ws), "find_files", pattern=pattern)
    assert listing(body) == expected
    assert body["metadata"]["count"] == len(expected)
    assert body["metadata"]["truncated"] is False


def test_find_files_skips_tool_folders(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    found = listing(call(ToolRegistry(ws), "find_files", pattern="**"))
    assert found == sorted(found)
    for skipped in (".git/", "node_modules/", ".venv/", "__pycache__/", ".PseudoClaude/"):
        assert not any(skipped in f for f in found), skipped
    assert "image.png" in found


def test_find_files_absolute_inside_and_no_match(ws: Path,
                                                 call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    assert listing(call(registry, "find_files",
                        pattern=str(ws.resolve()) + "/src/*.py")) == ["src/app.py"]
    body = call(registry, "find_files", pattern="**/*.rs")
    assert body["ok"] is True and body["metadata"]["count"] == 0 and "no files" in body["content"]
    assert call(registry, "find_files", pattern="missing/**")["metadata"]["count"] == 0
    assert call(registry, "find_files", pattern="")["error_type"] == "invalid_arguments"


def test_find_files_is_capped(tmp_path: Path, call: Callable[..., dict[str, Any]]) -> None:
    for i in range(MAX_FIND_RESULTS + 5):
        (tmp_path / f"f{i:05d}.txt").write_text("")
    body = call(ToolRegistry(tmp_path), "find_files", pattern="*.txt")
    files = listing(body)
    assert len(files) == MAX_FIND_RESULTS and files[0] == "f00000.txt"
    assert body["metadata"] == {"pattern": "*.txt", "count": MAX_FIND_RESULTS + 5,
                                "truncated": True}
    assert f"{MAX_FIND_RESULTS} of {MAX_FIND_RESULTS + 5}" in body["content"]


def test_expand_braces() -> None:
    assert expand_braces("a{b,c}d") == ["abd", "acd"]
    assert expand_braces("{x,y{1,2}}") == ["x", "y1", "y2"]
    assert expand_braces("no{brace") == ["no{brace"]
    assert expand_braces("one{x}") == ["one{x}"]


# -- search_code ---------------------------------------------------------------------------------

def test_search_literal_everywhere(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    body = call(ToolRegistry(ws), "search_code", pattern="hello")
    assert listing(body) == [
        ".github/workflows/ci.yml:1: name: hello",
        "docs/guide.md:1: Say hello.",
        "src/app.py:2:     print('hello world')",
        "src/util/strings.py:1: HELLO = 'hello'",
        "src/web/page.ts:1: export const hello = 1;",
        "src/web/test_page.ts:1: test('hello')",
    ]
    meta = body["metadata"]
    assert meta["matches"] == 6 and meta["files"] == 6 and meta["truncated"] is False
    assert meta["skipped_binary"] == 1


def test_search_literal_is_not_a_regex(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    assert listing(call(registry, "search_code", pattern="a.b(")) == [
        "src/util/strings.py:2: Pattern = 'a.b('"]
    body = call(registry, "search_code", pattern="a.b(", regex=True)
    assert body["error_type"] == "invalid_arguments" and "regular expression" in body["error"]


def test_search_regex_and_path(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    assert listing(call(registry, "search_code", pattern=r"^(def|export) \w+",
                        regex=True)) == ["src/app.py:1: def main():",
                                         "src/web/page.ts:1: export const hello = 1;"]
    assert listing(call(registry, "search_code", pattern="hello", path="src/web")) == [
        "src/web/page.ts:1: export const hello = 1;", "src/web/test_page.ts:1: test('hello')"]
    assert listing(call(registry, "search_code", pattern="hello", path="src/app.py")) == [
        "src/app.py:2:     print('hello world')"]
    assert listing(call(registry, "search_code", pattern="hello", path="node_modules")) == [
        "node_modules/lib/index.js:1: hello from node_modules"]
    assert listing(call(registry, "search_code", pattern="Bye.$", regex=True)) == [
        "docs/guide.md:2: Bye."]


def test_search_errors_and_no_match(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    body = call(registry, "search_code", pattern="zzz-nothing")
    assert body["ok"] is True and body["metadata"]["matches"] == 0
    assert "no matches" in body["content"]
    assert call(registry, "search_code", pattern="x", path="nope")["error_type"] == "not_found"
    assert call(registry, "search_code", pattern="")["error_type"] == "invalid_arguments"
    assert call(registry, "search_code", pattern="a\nb")["error_type"] == "invalid_arguments"
    body = call(registry, "search_code", pattern="x", regex="yes")
    assert body["error_type"] == "invalid_arguments" and "`regex`" in body["error"]


def test_search_is_capped(tmp_path: Path, call: Callable[..., dict[str, Any]]) -> None:
    (tmp_path / "many.txt").write_text("match\n" * (MAX_SEARCH_MATCHES + 50))
    (tmp_path / "long.txt").write_text("match " + "y" * 5000 + "\n")
    body = call(ToolRegistry(tmp_path), "search_code", pattern="match")
    lines = listing(body)
    assert len(lines) == MAX_SEARCH_MATCHES
    assert lines[0].startswith("long.txt:1: match yyy") and lines[0].endswith("...")
    assert len(lines[0]) < 400
    assert body["metadata"]["truncated"] is True
    assert len(body["content"].encode()) <= MAX_CONTENT_BYTES
