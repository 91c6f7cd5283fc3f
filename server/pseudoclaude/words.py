"""The words a person reads after a compaction, a preview, an undo or a memory review.

Written once, here: the results of ``pseudoclaude/compact``, ``compact/preview``,
``compact/undo`` and ``memory/review`` carry them as ``message``, the transcript's compaction
and undo items carry them too, and every front end (the editors, ACP, the CLI) shows that line
instead of wording it itself. Plain English, one line, no trailing period games: each is a
sentence. The text views of the context (:func:`describe_context`) and the memory
(:func:`describe_memory`) are here too, for the front ends that show them as text (the CLI,
ACP's ``/context`` and ``/memory``).
"""

from __future__ import annotations

from pseudoclaude.compact.plan import NO_SESSION, NOTHING_TO_SUMMARIZE, WOULD_NOT_SHRINK
from pseudoclaude.events import FactCheck
from pseudoclaude.names import plural as plural  # the counts of every message


def tokens(n: int) -> str:
    """``950``, ``12k``, ``1.2M`` tokens, as the context meter shows them."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if n >= 10_000:
        return f"{round(n / 1000)}k"
    if n >= 1_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return str(n)


def change(before: int, after: int) -> str:
    return f"{tokens(before)} → {tokens(after)} tokens"


PREVIEW_REASONS = {
    NO_SESSION: "there is no conversation yet",
    NOTHING_TO_SUMMARIZE: "everything is in the recent window",
    WOULD_NOT_SHRINK: "a summary would not be smaller than the older messages it would replace",
}
"""Why a preview would summarise nothing, or a compaction summarised nothing, in words."""


def fact_check(check: FactCheck) -> str:
    """``summary checked against 12 facts, 3 carried in by the server``."""
    left = check.missing - check.added
    text = (f"summary checked against {plural(check.checked, 'fact')}, "
            f"{check.added:,} carried in by the server")
    return text + (f", {left:,} not carried (over the budget)" if left > 0 else "")


def compacted(before: int, after: int, offloaded: int, summarized: bool,
              check: FactCheck | None = None, reason: str = "") -> str:
    """After ``pseudoclaude/compact`` (``reason``: why nothing was summarised)."""
    spilled = f", {plural(offloaded, 'tool result')} saved to files" if offloaded else ""
    if summarized:
        checked = f"; {fact_check(check)}" if check is not None and check.checked else ""
        return ("Compacted: the earlier conversation is now a summary "
                f"({change(before, after)}{spilled}){checked}.")
    if reason == WOULD_NOT_SHRINK:
        saved = (f"Saved {plural(offloaded, 'tool result')} to files ({change(before, after)}); "
                 "nothing was summarized" if offloaded else
                 f"Nothing was summarized ({tokens(before)} tokens)")
        return f"{saved}: {PREVIEW_REASONS[reason]}."
    if offloaded:
        return (f"Saved {plural(offloaded, 'tool result')} to files ({change(before, after)}); "
                "nothing older than the recent window to summarize.")
    return (f"Nothing to compact yet ({tokens(before)} tokens): the most recent messages are "
            "always kept as they are.")


def previewed(would_summarize: bool, before: int, after: int, summarized_messages: int,
              kept_messages: int, spill_results: int, spill_bytes: int,
              reason: str = "") -> str:
    """After ``pseudoclaude/compact/preview`` (nothing was changed)."""
    spill = (f"; {plural(spill_results, 'tool result')} ({plural(spill_bytes, 'byte')}) "
             "would be saved to files" if spill_results else "")
    if not would_summarize:
        why = PREVIEW_REASONS.get(reason, reason or "nothing is older than the recent window")
        return (f"Nothing would be summarized: {why} ({tokens(before)} tokens{spill}).")
    return (f"Would summarize the {plural(summarized_messages, 'oldest message')} and keep the "
            f"{plural(kept_messages, 'newest message')} as they are: about "
            f"{change(before, after)}{spill}.")


def undone(restored: bool, before: int, after: int, message_count: int,
           reason: str = "") -> str:
    """After ``pseudoclaude/compact/undo``."""
    if not restored:
        return f"Nothing to undo: {reason or 'no compaction left to undo'}."
    return (f"Undone: what the last compaction summarized is back "
            f"({plural(message_count, 'message')}, {change(before, after)}).")


def reviewed(decision: str, applied: bool, level: str, filename: str) -> str:
    """After ``pseudoclaude/memory/review``."""
    where = f"{level} memory" if level else "memory"
    if decision == "reject":
        return f"Rejected the proposed change to {filename} ({where} is unchanged)."
    if applied:
        return f"Accepted: {filename} is written to {where}."
    return f"Accepted: {filename} needed no change in {where}."


def summarized_away(messages: int, kept: int) -> str:
    """The transcript's compaction item."""
    return (f"The earlier conversation was summarized: {plural(messages, 'message')} replaced "
            f"by a summary, {plural(kept, 'recent message')} kept as they were.")


def undo_item(restored: int) -> str:
    """The transcript's undo item."""
    return (f"The last compaction was undone: {plural(restored, 'message')} are back in the "
            "conversation." if restored != 1 else
            "The last compaction was undone: 1 message is back in the conversation.")


REWOUND = "The conversation was rewound."
REPLACED = "The conversation was replaced."

REPLACE_NOTICES = {
    "repair": "The session was repaired after an interruption (unfinished tool calls were "
              "closed or dropped).",
    "clear": "The conversation was cleared.",
    "import": "The conversation was replaced by an imported one.",
    "fork": "Forked from another session: the conversation up to here comes from it.",
}
"""The transcript's notice for a ``replace`` of another reason."""


REWIND_WRITES_ONLY = ("Only the agent's own file writes are restored: without the git command, "
                      "what its commands changed was not checkpointed.")


def rewind_preview(turn: int, mode: str, files: int, conflicts: int, dropped: int) -> str:
    """The line a rewind preview shows."""
    parts = []
    if mode in ("code", "both"):
        parts.append(f"{plural(files, 'file')} back to before prompt {turn}"
                     + (f" ({plural(conflicts, 'conflict')}: changed outside the agent, left "
                        "alone unless forced)" if conflicts else ""))
    if mode in ("conversation", "both"):
        parts.append(f"the conversation back to before prompt {turn} "
                     f"({plural(dropped, 'message')} taken back)")
    return "Rewind would take " + " and ".join(parts) + "." if parts else "Nothing to rewind."


def rewound(turn: int, mode: str, restored: int, conflicts: int, messages: int) -> str:
    """The line a rewind's result shows."""
    parts = []
    if mode in ("code", "both"):
        parts.append(f"{plural(restored, 'file')} restored"
                     + (f", {plural(conflicts, 'conflict')} left alone" if conflicts else ""))
    if mode in ("conversation", "both"):
        parts.append(f"the conversation is back to before prompt {turn} "
                     f"({plural(messages, 'message')})")
    return f"Rewound to before prompt {turn}: " + "; ".join(parts) + "."


def settings_ignored(name: str, *, declined: bool) -> str:
    """Why a setting of the folder's own settings file is not applied."""
    if declined:
        return (f"you declined this folder's {name}; asked again after a restart or when the "
                "file changes")
    return f"waits for your approval of this folder's {name}"


def settings_not_applied(name: str, keys: str, why: str) -> str:
    """The warning when the folder's own settings could not be asked about."""
    return (f"this folder's {name} was not applied ({keys}): it waits for your approval and "
            f"there is {why}; approve it with `pseudoclaude permissions approve` in the folder")


MODE_MEANINGS = {
    "strict": "every tool asks first",
    "default": "edits and commands follow your approval settings",
    "acceptEdits": "edits run without asking; commands still ask",
    "plan": "only reading tools run until you approve a plan",
    "bypassPermissions": "nothing asks; deny rules and the dangerous-command list still hold",
}
"""What each permission mode does, in one phrase (pickers, messages)."""


def mode_set(mode: str, was: str) -> str:
    """After a session's mode changed (or did not)."""
    meaning = MODE_MEANINGS.get(mode, "")
    if mode == was:
        return f"already in {mode} mode: {meaning}"
    return f"{mode} mode: {meaning}"


def mode_next(mode: str) -> str:
    """A mode chosen before any session exists."""
    return f"the next session starts in {mode} mode: {MODE_MEANINGS.get(mode, '')}"
