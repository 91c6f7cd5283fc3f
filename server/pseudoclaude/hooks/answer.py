"""What a hook answered: Claude Code's JSON on standard output, in either of its forms.

::

    {"decision": "approve" | "allow" | "deny" | "ask" | "block", "reason": "..."}
    {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                            "permissionDecision": "allow" | "deny" | "ask",
                            "permissionDecisionReason": "...",
                            "updatedInput": {...},
                            "additionalContext": "..."},
     "continue": false, "stopReason": "...", "systemMessage": "..."}

``hookSpecificOutput`` wins over the top-level ``decision``/``reason``; ``approve`` is
``allow`` and ``block`` is ``deny``; ``continue: false`` stops what the event is about (with
``stopReason``), like a ``deny``. Output that is not a JSON object is plain text (``plain``);
output that starts like JSON but does not parse is plain text too, marked ``garbled`` (the
caller warns).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

HookDecision = Literal["allow", "deny", "ask"]
_DECISIONS: dict[str, HookDecision] = {"allow": "allow", "approve": "allow", "deny": "deny",
                                       "block": "deny", "ask": "ask"}


@dataclass(frozen=True, slots=True)
class HookAnswer:
    decision: HookDecision | None = None
    reason: str = ""
    context: str = ""
    """``additionalContext``: what the model should read with its next request."""
    updated_input: dict[str, Any] | None = None
    """``updatedInput``: the tool call's arguments instead of the model's."""
    system_message: str = ""
    """``systemMessage``: shown to the user."""
    plain: str = ""
    """Standard output that is not a JSON answer."""
    garbled: bool = False
    """It looked like JSON (``{`` or ``[`` first) and was not a JSON object."""


def read_answer(output: str) -> HookAnswer:
    """A hook's standard output (or an HTTP hook's response body) as its answer."""
    text = output.strip()
    if not text:
        return HookAnswer()
    if text[0] not in "{[":
        return HookAnswer(plain=text)
    try:
        data = json.loads(text)
    except ValueError:
        return HookAnswer(plain=text, garbled=True)
    if not isinstance(data, dict):
        return HookAnswer(plain=text, garbled=True)
    return from_json(data)


def from_json(data: Mapping[str, Any]) -> HookAnswer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    decision = _decision(specific.get("permissionDecision")) or _decision(
        specific.get("decision")) or _decision(data.get("decision"))
    reason = _text(specific.get("permissionDecisionReason")) or _text(data.get("reason"))
    if data.get("continue") is False:
        decision = "deny"
        reason = _text(data.get("stopReason")) or reason
    updated = specific.get("updatedInput", data.get("updatedInput"))
    context = _text(specific.get("additionalContext")) or _text(data.get("additionalContext"))
    return HookAnswer(decision=decision, reason=reason, context=context,
                      updated_input=dict(updated) if isinstance(updated, Mapping) else None,
                      system_message=_text(data.get("systemMessage")))


def _decision(value: Any) -> HookDecision | None:
    return _DECISIONS.get(value.strip().lower()) if isinstance(value, str) else None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
