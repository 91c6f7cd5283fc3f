"""A hook's ``if``: which payloads it fires for (docs/hooks.md "Conditions").

::

    if:
      all_of:            # or any_of; exactly one of them, with at least one test
        - {field: tool_name, match: {type: exact, value: write_file}}
        - {field: tool_input.path, match: {type: regex, value: '\\.json$'}}
        - {field: tool_input.command, match: {type: not, inner: {type: glob, value: 'git *'}}}

``field`` is a dotted path into the payload; the value found is compared as text
(:func:`field_text`: booleans ``true``/``false``, objects and lists as JSON, a missing field as
the empty text). ``glob`` (the default) matches the whole text, ``*`` any characters (``/``
included), ``?`` one, ``[...]`` a set; ``exact`` the same text; ``regex`` a regular expression
found anywhere in it (anchor it with ``^…$``); ``not`` the opposite of its ``inner`` match.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

MatchType = Literal["glob", "exact", "regex", "not"]
MATCH_TYPES: tuple[str, ...] = ("glob", "exact", "regex", "not")


class ConditionError(ValueError):
    """An ``if`` that cannot be read; the message says why."""


@dataclass(frozen=True, slots=True)
class Match:
    type: MatchType
    value: str = ""
    inner: Match | None = None
    pattern: re.Pattern[str] | None = None

    def test(self, text: str) -> bool:
        if self.type == "not":
            assert self.inner is not None
            return not self.inner.test(text)
        if self.type == "exact":
            return text == self.value
        if self.type == "regex":
            assert self.pattern is not None
            return self.pattern.search(text) is not None
        return fnmatch.fnmatchcase(text, self.value)


@dataclass(frozen=True, slots=True)
class Test:
    field: str
    match: Match

    def holds(self, payload: Mapping[str, Any]) -> bool:
        return self.match.test(field_text(payload, self.field))


@dataclass(frozen=True, slots=True)
class Condition:
    """``all_of`` (every test holds) or ``any_of`` (one does)."""

    mode: Literal["all_of", "any_of"]
    tests: tuple[Test, ...]

    def holds(self, payload: Mapping[str, Any]) -> bool:
        results = (test.holds(payload) for test in self.tests)
        return all(results) if self.mode == "all_of" else any(results)


def field_text(payload: Mapping[str, Any], dotted: str) -> str:
    """The text of the payload's field ``dotted`` (``tool_input.path``); ``""`` when absent."""
    value: Any = payload
    for part in dotted.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return ""
    return as_text(value)


def as_text(value: Any) -> str:
    """A payload value as conditions and templates see it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      default=str)


def parse_condition(value: Any) -> Condition:
    """An ``if`` mapping as a :class:`Condition`; :class:`ConditionError` saying what is
    wrong."""
    if not isinstance(value, Mapping):
        raise ConditionError("the condition (if) must be a mapping with all_of or any_of")
    modes = [mode for mode in ("all_of", "any_of") if mode in value]
    if len(modes) == 2:
        raise ConditionError("the condition has both all_of and any_of: use one")
    if not modes:
        raise ConditionError("the condition must contain all_of or any_of")
    mode: Literal["all_of", "any_of"] = "all_of" if modes[0] == "all_of" else "any_of"
    entries = value[mode]
    if not isinstance(entries, list) or not entries:
        raise ConditionError(f"the condition must contain at least one test under {mode}")
    return Condition(mode, tuple(_test(entry, index)
                                 for index, entry in enumerate(entries, start=1)))


def _test(entry: Any, index: int) -> Test:
    where = f"test {index} of the condition"
    if not isinstance(entry, Mapping):
        raise ConditionError(f"{where} must be a mapping {{field, match}}")
    field = entry.get("field")
    if not isinstance(field, str) or not field.strip():
        raise ConditionError(f"{where} has no field (a dotted payload path, e.g. tool_name)")
    return Test(field.strip(), _match(entry.get("match"), where))


def _match(value: Any, where: str) -> Match:
    if isinstance(value, str):  # `match: 'src/*'`: a glob
        return Match("glob", value)
    if not isinstance(value, Mapping):
        raise ConditionError(f"{where} has no match ({{type, value}})")
    kind = value.get("type", "glob")
    if kind not in MATCH_TYPES:
        raise ConditionError(f"{where}: unknown match type {kind!r} (one of "
                             f"{', '.join(MATCH_TYPES)})")
    if kind == "not":
        inner = value.get("inner")
        if inner is None:
            raise ConditionError(f"{where}: a not match needs an inner match")
        return Match("not", inner=_match(inner, where))
    text = value.get("value")
    if isinstance(text, bool):
        text = "true" if text else "false"
    elif isinstance(text, int | float):
        text = str(text)
    if not isinstance(text, str):
        raise ConditionError(f"{where}: the {kind} match needs a value")
    if kind == "regex":
        try:
            return Match("regex", text, pattern=re.compile(text))
        except re.error as exc:
            raise ConditionError(f"{where}: invalid regex {text!r}: {exc}") from None
    return Match("exact" if kind == "exact" else "glob", text)
