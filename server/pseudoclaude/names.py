"""Names of things, once: counted nouns (``1 message``, ``2 messages``) and camelCase ⇄
snake_case (the wire, the settings and the CLI's ``--json`` output are camelCase, Python
snake_case). Pure."""

from __future__ import annotations


def camel(name: str) -> str:
    """``round_bytes`` → ``roundBytes``; ``SESSION_LIST`` (a constant) → ``sessionList``; a name
    without underscores (``baseUrl``) is kept as it is."""
    if name.isupper():
        name = name.lower()
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake(name: str) -> str:
    """``roundBytes`` → ``round_bytes``; an acronym stays one word (``baseURL`` → ``base_url``,
    ``HTTPServer`` → ``http_server``); dots are kept (``compact.roundBytes`` →
    ``compact.round_bytes``)."""
    out: list[str] = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and name[i - 1] not in "._" and (
                not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 message``, ``13 messages``, ``1,024 messages`` (``many``: an irregular plural)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
