"""The one base of expected failures.

Every failure a user can cause or fix (bad settings, a busy workspace, an unknown session, a
provider error, a memory store refusing a note, ...) derives from :class:`PseudoClaudeError`;
its message is one line for the user. Front ends catch this one type (plus ``OSError`` for
the disk): the LSP server answers ``RequestFailed`` with the message, the CLI prints it and
exits 1. Anything else is a bug and is reported as one.
"""

from __future__ import annotations


class PseudoClaudeError(Exception):
    """An expected failure; ``str(error)`` is a one-line message for the user."""


def one_line(exc: BaseException) -> str:
    """The error's message on one line (whitespace collapsed; its type when it has none)."""
    return " ".join((str(exc).strip() or type(exc).__name__).split())


EXPECTED_ERRORS: tuple[type[Exception], ...] = (PseudoClaudeError, OSError)
"""What a front end reports as a plain failure (not an internal error)."""
