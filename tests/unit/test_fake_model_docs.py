"""docs/fake-model.md documents every key the fake model's script reads, and its examples are
scripts the fake model accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pseudoclaude.fake_model import Script
from pseudoclaude.fake_model.errors import ERRORS
from pseudoclaude.fake_model.script import REPLY_KEYS, SCRIPT_KEYS, WHEN_KEYS

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDE = (DOCS / "fake-model.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("key", sorted(SCRIPT_KEYS | WHEN_KEYS | set(REPLY_KEYS) | set(ERRORS)
                                       | {"when", "reply", "times"}))
def test_every_key_is_in_a_table_row_of_its_own(key: str) -> None:
    assert re.search(rf"^\| `{key}`", GUIDE, re.MULTILINE) or f"`{key}`:" in GUIDE, key


def test_every_json_example_is_a_valid_script() -> None:
    examples = re.findall(r"```json\n(.*?)```", GUIDE, re.DOTALL)
    assert len(examples) >= 2
    for example in examples:
        Script(json.loads(example))


def test_the_testing_guide_links_it() -> None:
    assert "(fake-model.md)" in (DOCS / "testing.md").read_text(encoding="utf-8")
