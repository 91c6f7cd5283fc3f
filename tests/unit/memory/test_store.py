"""Memory stores on disk: note files, slugs, the index, atomic writes, hand-broken files
(SPEC §5)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from pseudoclaude.memory.index import (
    MAX_BYTES,
    TRUNCATED_MARKER,
    build_index_text,
    delete_lines,
    format_line,
    parse_index,
    upsert_line,
)
from pseudoclaude.memory.notes import (
    cut_utf8,
    derive_title,
    parse_note,
    render_note,
    slugify,
    unsafe_filename,
)
from pseudoclaude.memory.store import HandEditKept, MemoryStoreError, NoteStore


def store(tmp_path: Path, level: str = "project") -> NoteStore:
    return NoteStore(level, tmp_path / level / "memory")


# -- slugs and names -------------------------------------------------------------------------
def test_slug_is_lower_case_and_unicode_aware() -> None:
    assert slugify("Build & Test: the Makefile!") == "build-test-the-makefile"
    assert slugify("  --Hello--  ") == "hello"
    assert slugify("构建 流程") == "构建-流程"
    assert slugify("Ünïcode Straße") == "ünïcode-straße"
    assert slugify("!!!") == "note"
    assert slugify("") == "note"


def test_slug_is_cut_at_80_bytes_on_a_character_boundary() -> None:
    slug = slugify("构" * 100)  # 3 bytes each: 80 is not a multiple of 3
    assert len(slug.encode()) <= 80
    assert slug == "构" * 26
    slug = slugify("a" * 79 + "é" * 5)
    assert slug == "a" * 79  # "é" would need bytes 80 and 81
    assert not slugify("word " * 40).endswith("-")


def test_cut_utf8_never_splits_a_character() -> None:
    data = "aé構😀".encode()
    for limit in range(len(data) + 1):
        cut = cut_utf8(data, limit)
        assert len(cut) <= limit
        cut.decode("utf-8")  # never raises


@pytest.mark.parametrize("name", ["../bad.md", "a/b.md", "a\\b.md", "..md", ".hidden.md",
                                  "MEMORY.md", "note.txt", "", "a\x00.md"])
def test_unsafe_filenames(name: str) -> None:
    assert unsafe_filename(name) is not None


def test_note_path_rejects_traversal(tmp_path: Path) -> None:
    s = store(tmp_path)
    with pytest.raises(MemoryStoreError) as info:
        s.note_path("../bad.md")
    assert info.value.field == "filename"
    assert s.note_path("project_knowledge_build.md") == s.dir / "project_knowledge_build.md"


# -- note format -----------------------------------------------------------------------------
def test_note_round_trip() -> None:
    data = render_note("project_knowledge", 'Say "hi"\nthere', "2025-01-01T00:00:00+00:00",
                       "2025-01-02T00:00:00+00:00", "session s1 turn 2", "  body\n\ntext  ")
    text = data.decode()
    assert text.startswith("---\ntype: project_knowledge\ntitle: \"Say \\\"hi\\\" there\"\n")
    note = parse_note(data, "project_knowledge_x.md")
    assert (note.type, note.title, note.created, note.updated, note.source, note.body) == (
        "project_knowledge", 'Say "hi" there', "2025-01-01T00:00:00+00:00",
        "2025-01-02T00:00:00+00:00", "session s1 turn 2", "body\n\ntext")
    assert note.problem == ""


def test_go_written_note_reads_back() -> None:
    go = (b'---\ntype: user_preference\ntitle: "User Profile"\n'
          b"created: 2025-03-01T10:00:00+08:00\nupdated: 2025-03-01T10:00:00+08:00\n---\n\n"
          b"Go engineer.\n")
    note = parse_note(go, "user_preference_user-profile.md")
    assert (note.type, note.title, note.body, note.problem) == (
        "user_preference", "User Profile", "Go engineer.", "")


@pytest.mark.parametrize("data, problem", [
    (b"just text, no front matter", "no front matter"),
    (b"---\ntype: project_knowledge\ntitle: x\n", "front matter is not closed"),
    (b"\x00\x01\x02binary\xff", "binary content (NUL bytes)"),
    (b"---\ntype: bogus\n---\nbody", "unknown type 'bogus'"),
    (b"---\ntype: project_knowledge\n---\n\xff\xfe", "not valid UTF-8"),
])
def test_broken_notes_parse_with_a_reason(data: bytes, problem: str) -> None:
    note = parse_note(data, "project_knowledge_broken.md")
    assert note.problem == problem
    assert note.type == "project_knowledge"  # from the file name
    assert note.title


def test_derive_title() -> None:
    assert derive_title("  \n# Use tabs\nmore") == "Use tabs"
    long = derive_title("word " * 40)
    assert len(long) <= 61 and long.endswith("…")


# -- index lines -----------------------------------------------------------------------------
def test_index_line_format_and_parse() -> None:
    line = format_line("project_knowledge", "Build", "How to build", "project_knowledge_build.md")
    assert line == "- [project_knowledge] Build — How to build (project_knowledge_build.md)"
    (entry,) = parse_index("# Notes\n" + line + "\nprose\n")
    assert (entry.type, entry.title, entry.summary, entry.filename) == (
        "project_knowledge", "Build", "How to build", "project_knowledge_build.md")
    assert format_line("t", "", "", "f.md") == "- [t] f.md — No summary provided (f.md)"


def test_upsert_and_delete_keep_other_lines() -> None:
    text = "# My notes\n\nhand-written line\n- [a] A — x (a.md)\n"
    text = upsert_line(text, "b.md", "- [b] B — y (b.md)")
    text = upsert_line(text, "a.md", "- [a] A2 — z (a.md)")
    assert text == "# My notes\n\nhand-written line\n- [a] A2 — z (a.md)\n- [b] B — y (b.md)\n"
    text = delete_lines(text + "- [a] dup — (a.md)\n", "a.md")
    assert text == "# My notes\n\nhand-written line\n- [b] B — y (b.md)\n"
    assert delete_lines("- [b] B — y (b.md)\n", "b.md") == ""
    # a file name that is a suffix of another is not confused with it
    assert upsert_line("- [x] X — (xa.md)\n", "a.md", "- [a] A — (a.md)").count("\n") == 2


# -- the injected index ----------------------------------------------------------------------
def test_empty_stores_give_an_empty_index() -> None:
    assert build_index_text("", " \n\n ") == build_index_text("", "")
    assert build_index_text("", "").text == ""
    assert not build_index_text("", "").truncated


def test_project_comes_before_user_and_empty_levels_are_omitted() -> None:
    both = build_index_text("- [p] P — x (p.md)\n", "- [u] U — y (u.md)\n").text
    assert both == ("## Project Memory\n- [p] P — x (p.md)\n\n"
                    "## User Memory\n- [u] U — y (u.md)")
    assert build_index_text("", "- [u] U — (u.md)").text == "## User Memory\n- [u] U — (u.md)"
    assert "User Memory" not in build_index_text("- [p] P — (p.md)", "").text


def test_205_lines_are_truncated() -> None:
    project = "\n".join(f"- [project_knowledge] note {i} — s (n{i}.md)" for i in range(205))
    index = build_index_text(project, "- [u] user — (u.md)")
    assert index.truncated
    lines = index.text.split("\n")
    assert lines[-1] == TRUNCATED_MARKER
    assert len(lines) == 201  # 200 lines, then the marker
    assert lines[0] == "## Project Memory"
    assert "User Memory" not in index.text  # user memory is what gets cut


def test_byte_cut_inside_a_multibyte_character_is_valid_utf8() -> None:
    # "## Project Memory\n" is 18 bytes; 3-byte characters make byte 25,600 fall inside one
    project = "构" * 9000  # one line, 27,000 bytes
    index = build_index_text(project, "")
    assert index.truncated
    body = index.text.removesuffix("\n" + TRUNCATED_MARKER)
    data = body.encode("utf-8")
    assert len(data) <= MAX_BYTES
    assert len(data) > MAX_BYTES - 3
    data.decode("utf-8")
    assert body.endswith("构")


def test_index_without_truncation_is_untouched() -> None:
    index = build_index_text("a\r\nb\x00c", "")
    assert index.text == "## Project Memory\na\nbc" and not index.truncated


# -- store operations ------------------------------------------------------------------------
def test_create_writes_note_and_index_line(tmp_path: Path) -> None:
    s = store(tmp_path)
    change = s.create("project_knowledge", "Build", "Run make build.", summary="How to build",
                      slug="build", source="session s turn 1")
    assert change.filename == "project_knowledge_build.md"
    assert (s.dir / "project_knowledge_build.md").is_file()
    index = s.index_path.read_text()
    assert "[project_knowledge] Build" in index
    assert index == ("- [project_knowledge] Build — How to build "
                     "(project_knowledge_build.md)\n")
    note = s.read_note("project_knowledge_build.md")
    assert note is not None and note.body == "Run make build." and note.source == (
        "session s turn 1")
    assert stat.S_IMODE(os.stat(s.dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(s.index_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(change.path).st_mode) == 0o600
    assert not [n for n in os.listdir(s.dir) if n.startswith(".")]  # no temp files left


def test_two_chinese_titles_give_two_files(tmp_path: Path) -> None:
    s = store(tmp_path)
    a = s.create("project_knowledge", "构建流程", "用 make 构建。")
    b = s.create("project_knowledge", "测试流程", "用 pytest 测试。")
    assert a.filename != b.filename
    assert a.filename == "project_knowledge_构建流程.md"
    assert {n.filename for n in s.list_notes()} == {a.filename, b.filename}


def test_create_never_overwrites(tmp_path: Path) -> None:
    s = store(tmp_path)
    first = s.create("project_knowledge", "Build", "one", slug="build")
    second = s.create("project_knowledge", "Build steps", "two", slug="build")
    third = s.create("project_knowledge", "Build again", "three", slug="build")
    assert [first.filename, second.filename, third.filename] == [
        "project_knowledge_build.md", "project_knowledge_build-2.md",
        "project_knowledge_build-3.md"]
    assert "one" in first.path.read_text()
    # a file somebody put there by hand is not overwritten either
    (s.dir / "user_preference_x.md").write_text("mine")
    other = NoteStore("project", s.dir).create("user_preference", "X", "new")
    assert other.filename == "user_preference_x-2.md"
    assert (s.dir / "user_preference_x.md").read_text() == "mine"


def test_create_with_an_existing_title_updates_that_note(tmp_path: Path) -> None:
    s = store(tmp_path)
    first = s.create("project_knowledge", "Build", "old body", slug="build")
    created = s.read_note(first.filename)
    assert created is not None
    again = s.create("reference_material", "  build ", "new body", slug="other")
    assert again.action == "update" and again.filename == first.filename
    note = s.read_note(first.filename)
    assert note is not None
    assert (note.type, note.body, note.created) == ("reference_material", "new body",
                                                    created.created)
    assert len(s.list_notes()) == 1
    assert "[reference_material] build" in s.index_path.read_text()


def test_update_keeps_filename_and_may_change_type_and_title(tmp_path: Path) -> None:
    s = store(tmp_path)
    made = s.create("project_knowledge", "Build", "body", summary="sum")
    change = s.update(made.filename, "new", note_type="reference_material", title="Building")
    assert change.filename == made.filename
    assert s.index_path.read_text() == (
        f"- [reference_material] Building — sum ({made.filename})\n")
    with pytest.raises(MemoryStoreError, match="no note"):
        s.update("project_knowledge_missing.md", "x")
    with pytest.raises(MemoryStoreError):
        s.update("../bad.md", "x")


def test_delete_removes_file_and_line(tmp_path: Path) -> None:
    s = store(tmp_path)
    keep = s.create("project_knowledge", "Keep", "k")
    gone = s.create("project_knowledge", "Gone", "g")
    change = s.delete(gone.filename)
    assert change is not None and change.action == "delete"
    assert not gone.path.exists()
    assert gone.filename not in s.index_path.read_text()
    assert keep.filename in s.index_path.read_text()
    assert s.delete(gone.filename) is None


def test_index_edit_racing_a_write_is_merged(tmp_path: Path) -> None:
    """The writer re-reads MEMORY.md before its rename: a line added by hand in between is
    kept, and the change is flagged as having met a hand edit."""
    s = store(tmp_path)
    s.create("project_knowledge", "First", "one")
    edits = iter(["- [project_knowledge] Hand — typed by hand (hand.md)\n"])

    def hand_edit(path: Path) -> None:
        if path.name == "MEMORY.md":
            line = next(edits, None)
            if line is not None:
                with open(path, "a", encoding="utf-8") as f:
                    f.write(line)

    s.before_rename = hand_edit
    change = s.create("project_knowledge", "Second", "two")
    text = s.index_path.read_text()
    assert "(hand.md)" in text and change.filename in text and "First" in text
    assert change.hand_edit


def test_note_edited_during_an_update_keeps_the_hand_edit(tmp_path: Path) -> None:
    s = store(tmp_path)
    made = s.create("project_knowledge", "Note", "original")

    def hand_edit(path: Path) -> None:
        if path.name == made.filename:
            path.write_text("typed by hand")

    s.before_rename = hand_edit
    with pytest.raises(HandEditKept):
        s.update(made.filename, "from the model")
    assert made.path.read_text() == "typed by hand"


# -- hand-broken files -----------------------------------------------------------------------
def test_broken_note_is_listed_and_repaired_on_update(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    s = store(tmp_path)
    s.ensure()
    (s.dir / "project_knowledge_broken.md").write_bytes(b"no front matter here")
    (s.dir / "project_knowledge_binary.md").write_bytes(b"\x00\xff\xfe" * 100)
    with caplog.at_level(logging.WARNING, "pseudoclaude.memory"):
        notes = {n.filename: n for n in s.list_notes()}
    assert notes["project_knowledge_broken.md"].type == "project_knowledge"
    assert "project_knowledge_binary.md" in notes
    assert "no front matter" in caplog.text and "binary" in caplog.text
    s.update("project_knowledge_broken.md", "fixed body", title="Fixed")
    note = s.read_note("project_knowledge_broken.md")
    assert note is not None and note.problem == "" and note.title == "Fixed"
    assert note.created  # a fresh created stamp when the old one was unreadable


def test_binary_and_huge_index_never_crash(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.ensure()
    broken = b"- [a] A \xff\xfe\x00 (a.md)\n" + b"\x00" * 1000
    s.index_path.write_bytes(broken)
    text = s.read_index()
    index = build_index_text(text, "")
    assert "\x00" not in index.text and "(a.md)" not in index.text  # ignored
    index.text.encode("utf-8")
    change = s.create("project_knowledge", "After", "works")  # writing still works
    assert s.index_path.read_bytes() == broken  # the broken index is left as it is
    assert f"After — works ({change.filename})" in s.read_index()  # rebuilt from the notes
    s.delete(change.filename)
    assert s.index_path.read_bytes() == broken and s.read_index() == ""
    # 10 MB of index: read bounded for the prompt, still editable
    big = ("- [project_knowledge] filler — " + "x" * 90 + " (f.md)\n") * 80_000
    s.index_path.write_text(big)
    assert os.path.getsize(s.index_path) > 10_000_000
    index = build_index_text(s.read_index(), "")
    assert index.truncated and len(index.text.encode()) <= MAX_BYTES + 20
    change = s.create("project_knowledge", "Tail", "tail note")
    assert s.index_path.read_text().endswith(f"({change.filename})\n")
    assert len(s.list_notes()) >= 2


def test_index_line_with_unsafe_filename_is_skipped(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.ensure()
    s.index_path.write_text("- [x] evil — (../../etc/passwd.md)\n- [y] ok — (ok.md)\n")
    assert [n.filename for n in s.list_notes()] == ["ok.md"]


def test_unknown_level_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemoryStoreError) as info:
        NoteStore("team", tmp_path)
    assert info.value.field == "level"
