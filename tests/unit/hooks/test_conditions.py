"""A hook's ``if``: glob, exact, regex and not over payload fields read as text."""

from __future__ import annotations

import pytest

from pseudoclaude.hooks.conditions import ConditionError, field_text, parse_condition

PAYLOAD = {"tool_name": "run_command", "is_error": False, "iter": 3,
           "tool_input": {"command": "git push origin main", "args": ["a", "b"],
                          "path": "src/app/config.json"}}


def holds(condition: dict[str, object]) -> bool:
    return parse_condition(condition).holds(PAYLOAD)


def test_field_text_reads_dotted_paths_as_text() -> None:
    assert field_text(PAYLOAD, "tool_input.command") == "git push origin main"
    assert field_text(PAYLOAD, "is_error") == "false"
    assert field_text(PAYLOAD, "iter") == "3"
    assert field_text(PAYLOAD, "tool_input.args") == '["a","b"]'
    assert field_text(PAYLOAD, "tool_input.args.1") == "b"
    assert field_text(PAYLOAD, "tool_input.missing") == ""
    assert field_text(PAYLOAD, "nothing.at.all") == ""


def test_match_types() -> None:
    def one(match: object, field: str = "tool_input.command") -> bool:
        return holds({"all_of": [{"field": field, "match": match}]})

    assert one({"type": "glob", "value": "git *"})
    assert one("git push*")  # a bare text is a glob
    assert one({"value": "*/config.json"}, "tool_input.path")  # glob by default; * crosses /
    assert not one({"type": "glob", "value": "git"})
    assert one({"type": "exact", "value": "run_command"}, "tool_name")
    assert not one({"type": "exact", "value": "run"}, "tool_name")
    assert one({"type": "regex", "value": r"push\s+origin"})  # found anywhere
    assert not one({"type": "regex", "value": r"^push"})
    assert one({"type": "not", "inner": {"type": "regex", "value": "rm -rf"}})
    assert not one({"type": "not", "inner": {"type": "glob", "value": "git *"}})
    assert one({"type": "exact", "value": False}, "is_error")


def test_all_of_and_any_of() -> None:
    yes = {"field": "tool_name", "match": {"type": "exact", "value": "run_command"}}
    no = {"field": "tool_name", "match": {"type": "exact", "value": "read_file"}}
    assert holds({"all_of": [yes, yes]}) and not holds({"all_of": [yes, no]})
    assert holds({"any_of": [no, yes]}) and not holds({"any_of": [no, no]})


@pytest.mark.parametrize(("condition", "says"), [
    ({"all_of": [], }, "at least one test"),
    ({"all_of": [{"field": "a", "match": "x"}], "any_of": [{"field": "a", "match": "x"}]},
     "both all_of and any_of"),
    ({"none_of": []}, "must contain all_of or any_of"),
    ("text", "must be a mapping"),
    ({"all_of": [{"match": "x"}]}, "has no field"),
    ({"all_of": [{"field": "a"}]}, "has no match"),
    ({"all_of": [{"field": "a", "match": {"type": "fuzzy", "value": "x"}}]},
     "unknown match type"),
    ({"all_of": [{"field": "a", "match": {"type": "not"}}]}, "needs an inner match"),
    ({"all_of": [{"field": "a", "match": {"type": "regex", "value": "("}}]}, "invalid regex"),
])
def test_what_cannot_be_read_says_why(condition: object, says: str) -> None:
    with pytest.raises(ConditionError, match=says):
        parse_condition(condition)
