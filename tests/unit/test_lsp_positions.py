"""LSP positions (the LSP server's arithmetic over a document's text): UTF-16, UTF-8 and UTF-32
code units, every line break, clamping."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pseudoclaude.lsp.positions import offset_at, position_at

LINES = st.lists(st.sampled_from(["alpha\n", "beta\n", "gamma", "\r\n", "😀 x\n", "\n",
                                  "δ\r", "tab\there\n"]), max_size=12)


def test_positions_count_utf16_units_and_every_line_break() -> None:
    text = "a😀b\r\nc\rd\n"
    assert position_at(text, 0) == (0, 0)
    assert position_at(text, 2) == (0, 3)  # 😀 is two UTF-16 units
    assert position_at(text, 2, "utf-8") == (0, 5)
    assert position_at(text, 2, "utf-32") == (0, 2)
    assert position_at(text, 5) == (1, 0) and position_at(text, 7) == (2, 0)
    assert position_at(text, len(text)) == (3, 0)
    assert position_at("abc", 3) == (0, 3)  # the end of a last line without a break


@given(LINES, st.data())
def test_offset_at_undoes_position_at(lines: list[str], data: st.DataObject) -> None:
    text = "".join(lines)
    offset = data.draw(st.integers(min_value=0, max_value=len(text)))
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        offset -= 1  # inside a CRLF: no position points there
    for encoding in ("utf-16", "utf-8", "utf-32"):
        line, character = position_at(text, offset, encoding)
        assert offset_at(text, line, character, encoding) == offset


def test_offset_at_clamps_to_the_line_and_the_text() -> None:
    assert offset_at("ab\ncd\n", 0, 99) == 2
    assert offset_at("ab\ncd\n", 9, 0) == 6
