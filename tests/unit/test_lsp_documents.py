"""The LSP server's own store of open documents: incremental changes in the client's units, the
text an applied edit made until the client's change arrives, paths to URIs."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lsprotocol import types

from pseudoclaude.lsp.editor import Documents
from pseudoclaude.lsp.positions import position_at


def store(encoding: str = "utf-16") -> Documents:
    server: Any = SimpleNamespace(workspace=SimpleNamespace(position_encoding=encoding))
    return Documents(server)


def open_doc(docs: Documents, uri: str, text: str) -> None:
    docs.opened(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))


def change(docs: Documents, uri: str, version: int,
           *edits: tuple[int, int, int, int, str]) -> None:
    docs.changed(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=a, character=b),
                              end=types.Position(line=c, character=d)), text=t)
            for a, b, c, d, t in edits]))


def test_incremental_changes_in_utf16_units(tmp_path: Path) -> None:
    docs = store()
    uri = (tmp_path / "a.py").as_uri()
    open_doc(docs, uri, "x = '😀'\r\ny = 2\n")
    change(docs, uri, 2, (0, 6, 0, 6, "!"), (1, 4, 1, 5, "3"))  # after the emoji (2 units)
    doc = docs.document(uri)
    assert doc is not None and doc.text == "x = '😀!'\r\ny = 3\n" and doc.version == 2
    assert docs.text((tmp_path / "a.py").resolve()) == doc
    docs.closed(uri)
    assert docs.document(uri) is None and docs.text((tmp_path / "a.py").resolve()) is None


def test_random_typing_matches_a_plain_replacement(tmp_path: Path) -> None:
    rng = random.Random(7)
    docs = store()
    uri = (tmp_path / "b.txt").as_uri()
    text = "".join(rng.choice(["alpha\n", "β\n", "😀 x\n", "\n", "tab\tz\n"]) for _ in range(300))
    open_doc(docs, uri, text)
    for version in range(2, 400):
        a = rng.randrange(len(text) + 1)
        b = min(len(text), a + rng.randrange(5))
        if "\r" in text[a - 1:a + 1]:
            continue
        new = rng.choice(["", "q", "\n", "😀", "new line\n"])
        start, end = position_at(text, a), position_at(text, b)
        change(docs, uri, version, (*start, *end, new))
        text = text[:a] + new + text[b:]
        doc = docs.document(uri)
        assert doc is not None and doc.text == text


def test_an_applied_edit_is_seen_until_the_clients_change_arrives(tmp_path: Path) -> None:
    docs = store()
    uri = (tmp_path / "c.txt").as_uri()
    open_doc(docs, uri, "one\n")
    docs.made(uri, "ONE\n", 1)  # the client answered applyEdit; its didChange is debounced
    assert docs.document(uri) == docs.text((tmp_path / "c.txt").resolve())
    doc = docs.document(uri)
    assert doc is not None and doc.text == "ONE\n"
    change(docs, uri, 2, (0, 0, 0, 3, "ONE"))
    doc = docs.document(uri)
    assert doc is not None and (doc.text, doc.version) == ("ONE\n", 2)
    docs.made(uri, "stale\n", 1)  # an edit's text for a version that moved on is dropped
    doc = docs.document(uri)
    assert doc is not None and doc.text == "ONE\n"
