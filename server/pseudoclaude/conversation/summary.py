"""The summary message a compaction puts first (Layer 2), and the acknowledgement after it.

A summary is marked explicitly (``Message.summary``, kept in the log's ``replace`` lines).
Logs written before the mark existed are recognised by the boundary reminder the summary
ends with; this is the one place that knows it.
"""

from __future__ import annotations

from pseudoclaude.llm.types import Message

BOUNDARY_REMINDER = (
    "[Context boundary] The summary above replaces the earlier conversation; it is not the "
    "source. Before relying on a detail from it (file contents, exact errors, spilled tool "
    "results), re-read the file, re-run the command or read the saved result."
)
"""The end of every summary message (what the model reads after the summary)."""

ACKNOWLEDGEMENT = (
    "Understood. I have the summary of our earlier work and will re-check files before "
    "relying on details from it. Continuing."
)
"""The assistant message that follows a summary."""


def summary_message(summary: str) -> Message:
    """The message that carries ``summary`` (marked, with the boundary reminder)."""
    return Message(role="user", content=f"{summary}\n\n{BOUNDARY_REMINDER}", summary=True)


def is_summary(message: Message) -> bool:
    """Whether ``message`` is the summary an earlier compaction put first."""
    return message.summary or (message.role == "user" and message.tool_result is None
                               and message.content.endswith(BOUNDARY_REMINDER))


def summary_text(message: Message) -> str:
    """A summary message without the boundary reminder."""
    return message.content.removesuffix(BOUNDARY_REMINDER).rstrip()
