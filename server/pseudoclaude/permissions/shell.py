"""A command line split into the simple commands it runs, as rules see them.

The line is parsed with tree-sitter's bash grammar (``tree-sitter-bash``): lists (``&&``, ``||``,
``;``, ``&``, new lines), pipelines, subshells ``( )``, groups ``{ ;}``, ``if``/``for``/
``while``/``case``, function bodies, command substitutions ``$(…)`` and backticks (re-parsed from
their unescaped text, as the shell does), process substitutions, here-documents (their
substitutions), and redirections, which are kept out of the command text (output redirections
are listed for the dangerous-command list).

Each simple command is then looked through its wrappers: leading ``VAR=x`` assignments, ``env
[options] [VAR=x]…``, ``timeout``, ``nice``, ``nohup``, ``time``, ``xargs [options]``,
``command``, ``exec``, ``coproc``; ``sudo``/``doas`` (the elevated command must be allowed as
such *and* the command it runs); ``sh``/``bash``/``zsh``/``dash``/``ksh``/``ash`` ``-c
script``, ``eval`` and ``trap`` (the script is parsed in turn); ``find … -exec|-execdir|-ok|
-okdir cmd …`` (the executed command is a part too; ``-delete`` counts as an ``rm`` for deny
rules).

A :class:`Part` holds the words of the command that runs (what allow rules must match) and every
form it was written in, outermost first (what deny and ask rules, and the dangerous-command list,
are matched against: ``timeout 5 rm x`` is seen as ``timeout 5 rm x`` and as ``rm x``). A part
whose command cannot be known before it runs (a syntax error, a name that is an expansion, a
shell reading commands from its input) carries a ``problem``: the engine asks about it in every
mode.

The grammar sees an ASCII copy of the line (see :data:`_ASCII_SHADOW`). Parsers are per thread
(a tree-sitter parser is not thread-safe); the grammar is loaded on first use.
"""

from __future__ import annotations

import re
import shlex
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from pseudoclaude.permissions import danger
from pseudoclaude.permissions.words import join_words

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_DEPTH = 8
"""How deeply ``sh -c``, ``eval`` and backticks may nest before a line counts as unparsable."""
MAX_LINE = 100_000
"""Characters of a line parsed; a longer one counts as unparsable."""
_SNIPPET = 80


class Form(NamedTuple):
    """One way a command is seen: its words and its text."""

    words: tuple[str, ...]
    text: str


def form(words: Sequence[str]) -> Form:
    return Form(tuple(words), join_words(words))


@dataclass(frozen=True, slots=True)
class Part:
    """One simple command of a line.

    ``words``: the command that runs, wrappers looked through (what allow rules see);
    ``forms``: every form of it, outermost first, ``words`` among them (what deny and ask rules
    see); ``open_args``: more arguments are added when it runs (``xargs``), so its text is
    matched as if followed by a space; ``problem``: why it cannot be judged (the engine asks).
    """

    words: tuple[str, ...]
    forms: tuple[Form, ...]
    open_args: bool = False
    problem: str | None = None

    @property
    def text(self) -> str:
        """The text of ``words`` (``…`` marks arguments added when it runs)."""
        text = join_words(self.words)
        return text + " …" if self.open_args else text

    def subjects(self) -> tuple[str, ...]:
        """The texts deny and ask rules are matched against."""
        return tuple(dict.fromkeys(self._match(f.text) for f in self.forms))

    def allow_subject(self) -> str:
        """The text allow rules must match."""
        return self._match(join_words(self.words))

    def _match(self, text: str) -> str:
        return text + " " if self.open_args else text


@dataclass
class Parsed:
    """A line's parts, and what the dangerous-command list found on the way."""

    parts: list[Part] = field(default_factory=list)
    dangers: list[str] = field(default_factory=list)
    """Texts found on the dangerous-command list (a fork bomb, a disk overwritten by a
    redirection, an unparsable line's rough search); the parts are checked by the engine."""

    @property
    def problems(self) -> list[str]:
        return [part.problem for part in self.parts if part.problem]


def snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[:_SNIPPET - 1] + "…"


# -- tree-sitter -----------------------------------------------------------------------------

_local = threading.local()


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser


_ASCII_SHADOW = bytes(range(0x80)) + b"x" * 0x80
"""The grammar parses a copy of the line with every byte of a non-ASCII character replaced by
``x``: the shell treats such characters as ordinary word characters, and so does the grammar
with ``x``, at the same byte offsets (the texts are taken from the line itself). The grammar's
scanner (tree-sitter-bash 0.25) passes code points to ``isdigit``/``isalpha``, which read out of
bounds, and may crash the process, for code points above 255."""


# -- words -----------------------------------------------------------------------------------

class Word(NamedTuple):
    """A word's value; ``dynamic``: it holds an expansion, so its value is known only when the
    line runs (the value then has the expansion's text); ``pattern``: it may expand to other
    words (an unquoted glob or brace)."""

    value: str
    dynamic: bool = False
    pattern: bool = False


def _unescape_bare(text: str) -> str:
    """Backslashes outside quotes: ``\\<newline>`` vanishes, ``\\x`` is ``x``."""
    return re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text,
                  flags=re.DOTALL)


def _unescape_double(text: str) -> str:
    """Backslashes inside double quotes: only before ``$ ` " \\`` and a new line."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
         "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c(body: str) -> str:
    """The value of ``$'…'``."""
    def one(m: re.Match[str]) -> str:
        s = m.group(1)
        if s[0] in _ANSI:
            return _ANSI[s[0]]
        if s[0] == "x":
            return chr(int(s[1:], 16)) if len(s) > 1 else "\\x"
        if s[0] in "uU":
            return chr(min(int(s[1:], 16), 0x10FFFF)) if len(s) > 1 else "\\" + s
        if s[0] == "c":
            return chr(ord(s[1]) & 0x1F) if len(s) > 1 else "\\c"
        if s[0] in "01234567":
            return chr(int(s, 8) & 0xFF)
        return "\\" + s  # an unknown escape stays as written
    return re.sub(r"\\(x[0-9A-Fa-f]{0,2}|u[0-9A-Fa-f]{0,4}|U[0-9A-Fa-f]{0,8}|[0-7]{1,3}|c.?|.)",
                  one, body, flags=re.DOTALL)


_EXPANSIONS = frozenset({"simple_expansion", "expansion", "command_substitution",
                         "process_substitution", "arithmetic_expansion"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_PATTERN = re.compile(r"(?<!\\)(?:[*?]|\[[^\]]*\]|\{[^{}]*(?:,|\.\.)[^{}]*\})")
"""Unquoted text that may expand to other words: a glob, a brace expansion."""


class _Walker:
    """Collects the parts of one source text (a line, or a script of ``sh -c``)."""

    def __init__(self, out: Parsed, outer: tuple[Form, ...], depth: int) -> None:
        self.out = out
        self.outer = outer
        self.depth = depth
        self.src = b""

    # -- entry -------------------------------------------------------------------------------
    def line(self, text: str, script: bool = False) -> None:
        """Collect the parts of ``text``; ``script``: it is the script of the wrapper last in
        ``outer`` (``sh -c``, ``eval``), which is the part when the script runs nothing."""
        if danger.line_hit(text):
            self.out.dangers.append(text)
        if self.depth > MAX_DEPTH:
            self.problem(text, f"commands nested too deeply: {snippet(text)}")
            return
        if len(text) > MAX_LINE:
            self.problem(text, "the command is too long to be checked")
            return
        try:
            self.src = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no shell line holds one
            self.problem(text, "the command holds characters that are not text")
            return
        if "\0" in text:  # no command line can hold one
            self.problem(text, "the command holds a NUL character")
            return
        tree = _parser().parse(self.src.translate(_ASCII_SHADOW))
        root = tree.root_node
        before = len(self.out.parts)
        if root.has_error:
            bad = _first_error(root)
            shown = self.text(bad) if bad is not None and bad.type == "ERROR" else text
            self.problem(text, f"a part of the command could not be parsed: {snippet(shown)}")
            if danger.rough_hits(text):
                self.out.dangers.append(text)
        self.walk(root)
        if len(self.out.parts) == before and script and self.outer:
            # nothing runs (``sh -c ''``): the wrapper alone is the part
            last = self.outer[-1]
            self.out.parts.append(Part(last.words, self.outer))

    def problem(self, text: str, why: str) -> None:
        self.out.parts.append(Part((), (*self.outer, Form(tuple(text.split()), text)),
                                   problem=why))

    # -- nodes -------------------------------------------------------------------------------
    def text(self, node: Node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def walk(self, node: Node) -> None:
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif kind == "command_substitution" and self.text(node).startswith("`"):
            self.backticks(node)
        elif kind in _REDIRECTS:
            self.redirect(node)
        else:
            for child in node.children:
                self.walk(child)

    def backticks(self, node: Node) -> None:
        """A backtick substitution's text, unescaped as the shell does, parsed anew (the
        grammar does not see nested backticks)."""
        body = self.text(node)[1:]
        body = body[:-1] if body.endswith("`") else body
        inside_quotes = node.parent is not None and node.parent.type == "string"
        chars = r'[\\`$"]' if inside_quotes else r"[\\`$]"
        body = re.sub(r"\\(" + chars + ")", r"\1", body)
        self.sub(self.outer, self.depth + 1).line(body)

    def sub(self, outer: tuple[Form, ...], depth: int) -> _Walker:
        return _Walker(self.out, outer, depth)

    def redirect(self, node: Node) -> None:
        operator = ""
        for child in node.children:
            if not child.is_named:
                operator += child.type
            elif node.type == "file_redirect" and child.type != "file_descriptor" \
                    and ">" in operator:
                target = self.word(child).value
                if danger.redirect_hit(target):
                    self.out.dangers.append(f"{operator} {target}")
            self.walk(child)

    def declaration(self, node: Node) -> None:
        words: list[Word] = []
        for child in node.children:
            if child.type in _REDIRECTS:
                self.redirect(child)
                continue
            words.append(Word(self.text(child)) if not child.is_named else self.word(child))
            self.walk_inside(child)
        if words:
            self.out.parts.append(Part(tuple(w.value for w in words),
                                       (*self.outer, form([w.value for w in words]))))

    def walk_inside(self, node: Node) -> None:
        """The commands inside a word (substitutions)."""
        if node.type in ("command_substitution", "process_substitution"):
            self.walk(node)
            return
        for child in node.children:
            self.walk_inside(child)

    def command(self, node: Node) -> None:
        assignments: list[str] = []
        words: list[Word] = []
        for child in node.children:
            kind = child.type
            if kind in _REDIRECTS:
                self.redirect(child)
                continue
            if kind == "variable_assignment" and not words:
                assignments.append(self.text(child))
            elif kind == "command_name":
                words.append(self.word(child.children[0]) if child.children
                              else Word(self.text(child)))
            elif kind == "comment":
                continue
            else:
                words.append(self.word(child) if child.is_named else Word(self.text(child)))
            self.walk_inside(child)
        if not words:
            return
        outer = self.outer
        if assignments:
            outer = (*outer, form([*assignments, *(w.value for w in words)]))
        self.expand(words, outer)

    def word(self, node: Node) -> Word:
        kind = node.type
        text = self.text(node)
        if kind == "word":
            return Word(_unescape_bare(text), pattern=bool(_PATTERN.search(text)))
        if kind == "number":
            return Word(text)
        if kind == "raw_string":
            return Word(text[1:-1])
        if kind == "ansi_c_string":
            return Word(_ansi_c(text[2:-1]))
        if kind in ("string", "translated_string"):
            return self.pieces(node, node.start_byte + (2 if kind == "translated_string" else 1),
                               node.end_byte - 1, _unescape_double)
        if kind == "concatenation":
            return self.pieces(node, node.start_byte, node.end_byte, _unescape_bare)
        if kind in _EXPANSIONS:
            return Word(text, dynamic=True)
        if kind == "brace_expression":
            return Word(text, pattern=True)
        return Word(text, dynamic=True)

    def pieces(self, node: Node, start: int, end: int,
               literal: Callable[[str], str]) -> Word:
        """A word made of pieces: literal text between the named children, and their values."""
        values: list[str] = []
        bare: list[str] = []  # the unquoted text, where globs and braces expand
        dynamic = pattern = False
        pos = start
        for child in node.children:
            if not child.is_named or child.end_byte <= start or child.start_byte >= end:
                continue
            if child.start_byte > pos:
                gap = self.src[pos:child.start_byte].decode("utf-8", "replace")
                values.append(literal(gap))
                bare.append(gap)
            if child.type == "string_content":
                values.append(literal(self.text(child)))
                bare.append("_")
            else:
                piece = self.word(child)
                values.append(piece.value)
                bare.append(self.text(child) if child.type == "word" else "_")
                dynamic |= piece.dynamic
                pattern |= piece.pattern
            pos = child.end_byte
        if end > pos:
            gap = self.src[pos:end].decode("utf-8", "replace")
            values.append(literal(gap))
            bare.append(gap)
        if node.type == "concatenation" and _PATTERN.search("".join(bare)):
            pattern = True
        return Word("".join(values), dynamic, pattern)

    # -- wrappers ----------------------------------------------------------------------------
    def expand(self, words: list[Word], outer: tuple[Form, ...], open_args: bool = False
               ) -> None:
        """Look through the wrappers of the simple command ``words`` and add its parts."""
        forms = (*outer, form([w.value for w in words]))
        while True:
            head = words[0]
            if head.dynamic or head.pattern:
                self.out.parts.append(Part(
                    (), forms, open_args,
                    f"the command's name is only known when it runs: {snippet(head.value)}"))
                return
            name = head.value.rsplit("/", 1)[-1]
            if "/" in head.value and name:
                forms = (*forms, form([name, *(w.value for w in words[1:])]))
            values = [w.value for w in words[1:]]
            if name in _ELEVATING:
                self.out.parts.append(Part(tuple(w.value for w in words), forms, open_args))
            unwrap = _TRANSPARENT.get(name) or _ELEVATING.get(name)
            if unwrap is not None:
                try:
                    start = unwrap(values)
                except _Opaque as exc:
                    self.out.parts.append(Part((), forms, open_args, str(exc)))
                    return
                if isinstance(start, tuple):  # env -S "words": the words, then the rest
                    index, split = start
                    words = [Word(v) for v in split] + words[1 + index:]
                elif start is not None and start < len(values):
                    words = words[1 + start:]
                else:
                    start = None
                if start is not None and words:
                    open_args = open_args or name == "xargs"
                    forms = (*forms, form([w.value for w in words]))
                    continue
                if name in _ELEVATING:
                    return  # ``sudo -s``: the elevated part alone
            if (name in _SHELLS or name in ("eval", "trap")) and self.script(name, words, forms):
                return
            if name == "find":
                forms = self.find(words, forms)
            self.out.parts.append(Part(tuple(w.value for w in words), forms, open_args))
            return

    def script(self, name: str, words: list[Word], forms: tuple[Form, ...]) -> bool:
        """``sh -c script``, ``eval words…`` and ``trap script signals…``: their script parsed
        in turn; True when done."""
        args = words[1:]
        if name == "trap":
            if len(args) < 2 or args[0].value.startswith("-"):
                return False  # a listing, or a reset (``trap - INT``)
            args = args[:1]
        if name in ("eval", "trap"):
            if any(w.dynamic for w in args):
                self.out.parts.append(Part((), forms, problem=f"{name} of a text only known "
                                                              "when it runs"))
            else:
                self.sub(forms, self.depth + 1).line(" ".join(w.value for w in args), True)
            return True
        found = _shell_script([w.value for w in args])
        if found is None:
            return False
        if found < 0:
            self.out.parts.append(Part((), forms, problem=f"{name} reads the commands it runs "
                                                          "from its input"))
            return True
        script = args[found]
        if script.dynamic:
            self.out.parts.append(Part((), forms, problem=f"{name} -c runs a text only known "
                                                          f"when it runs: {snippet(script.value)}"))
        else:
            self.sub(forms, self.depth + 1).line(script.value, True)
        return True

    def find(self, words: list[Word], forms: tuple[Form, ...]) -> tuple[Form, ...]:
        """``-exec cmd … ;`` of ``find``: the command is a part too; ``-delete``: the forms of
        ``find`` get an ``rm {}``."""
        i = 1
        while i < len(words):
            value = words[i].value
            if value in ("-exec", "-execdir", "-ok", "-okdir"):
                end = i + 1
                while end < len(words) and words[end].value not in (";", "+"):
                    end += 1
                if end > i + 1:
                    self.expand(words[i + 1:end], forms)
                i = end + 1
                continue
            if value == "-delete" and form(["rm", "{}"]) not in forms:
                forms = (*forms, form(["rm", "{}"]))
            i += 1
        return forms


def _first_error(node: Node) -> Node | None:
    if node.type == "ERROR" or node.is_missing:
        return node
    for child in node.children:
        if child.has_error or child.is_missing or child.type == "ERROR":
            found = _first_error(child)
            if found is not None:
                return found
    return None


# -- wrapper options -------------------------------------------------------------------------

class _Opaque(Exception):
    """A wrapper whose options cannot be understood (the part asks)."""


def _options(args: Sequence[str], with_value: str, flags: str, long_value: Sequence[str] = (),
             long_flags: Sequence[str] = (), what: str = "", attached: str = "") -> int:
    """The index of the first argument after the options of a wrapper: short options
    (``with_value`` take a value, attached or next; ``attached`` an optional value, attached
    only; ``flags`` take none; clusters allowed),
    long ones (``--x=v`` or ``--x v`` for ``long_value``), ``--`` ends them. An option it does
    not know raises :class:`_Opaque`."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return i + 1
        if not arg.startswith("-") or arg == "-":
            return i
        if arg.startswith("--"):
            key = arg[2:].split("=", 1)[0]
            if key in long_value:
                i += 1 if "=" in arg else 2
                continue
            if key in long_flags:
                i += 1
                continue
            raise _Opaque(f"an option of {what} is not understood: {snippet(arg)}")
        j = 1
        while j < len(arg):
            letter = arg[j]
            if letter in with_value:
                if j == len(arg) - 1:
                    i += 1  # the value is the next argument
                break
            if letter in attached:
                break
            if letter not in flags:
                raise _Opaque(f"an option of {what} is not understood: {snippet(arg)}")
            j += 1
        i += 1
    return i


def _env(args: Sequence[str]) -> int | tuple[int, list[str]] | None:
    i = 0
    split: list[str] | None = None
    while i < len(args):
        arg = args[i]
        if arg in ("-S", "--split-string") or arg.startswith(("-S", "--split-string=")):
            value = arg.split("=", 1)[1] if arg.startswith("--split-string=") else \
                arg[2:] if arg.startswith("-S") and len(arg) > 2 else None
            if value is None:
                if i + 1 >= len(args):
                    raise _Opaque("env -S without a string")
                value, i = args[i + 1], i + 1
            try:
                split = shlex.split(value)
            except ValueError:
                raise _Opaque(f"env -S with a string that cannot be split: {snippet(value)}"
                              ) from None
            i += 1
            break
        if arg == "-" or arg in ("-i", "-0", "-v", "--ignore-environment", "--null", "--debug"):
            i += 1
            continue
        if arg in ("-u", "-C", "--unset", "--chdir"):
            i += 2
            continue
        if arg.startswith(("-u", "-C", "--unset=", "--chdir=", "--default-signal",
                           "--ignore-signal", "--block-signal")):
            i += 1
            continue
        if arg == "--":
            i += 1
            break
        if arg.startswith("-"):
            if re.fullmatch(r"-[i0v]+", arg):
                i += 1
                continue
            raise _Opaque(f"an option of env is not understood: {snippet(arg)}")
        break
    while i < len(args) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", args[i]):
        i += 1
    if split is not None:
        return (i, split) if split or i < len(args) else None
    return i if i < len(args) else None


def _timeout(args: Sequence[str]) -> int | None:
    i = _options(args, "sk", "v", ("signal", "kill-after"), ("foreground", "preserve-status",
                                                             "verbose"), "timeout")
    return i + 1 if i < len(args) else None  # the duration, then the command


def _nice(args: Sequence[str]) -> int | None:
    if args and re.fullmatch(r"-\d+", args[0]):
        return 1
    return _options(args, "n", "", ("adjustment",), (), "nice")


def _time(args: Sequence[str]) -> int | None:
    return _options(args, "fo", "apqv", ("format", "output"),
                    ("append", "portability", "verbose", "quiet"), "time")


def _command(args: Sequence[str]) -> int | None:
    if any(arg in ("-v", "-V") or re.fullmatch(r"-p?[vV]p?", arg) for arg in args[:2]):
        return None  # a look-up, not a run
    return _options(args, "", "p", (), (), "command")


def _exec(args: Sequence[str]) -> int | None:
    return _options(args, "a", "cl", (), (), "exec")


def _xargs(args: Sequence[str]) -> int | None:
    return _options(args, "adEILnPs", "0prtxo",
                    ("arg-file", "delimiter", "max-args", "max-procs", "max-chars",
                     "process-slot-var", "eof", "replace", "max-lines"),
                    ("null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty",
                     "show-limits"), "xargs", attached="eil")


def _nohup(args: Sequence[str]) -> int | None:
    return _options(args, "", "", (), (), "nohup")


def _coproc(args: Sequence[str]) -> int | None:
    return 0


def _sudo(args: Sequence[str]) -> int | None:
    return _options(args, "uUgpChDrtT", "AbEeHiKklnPSsvB",
                    ("user", "group", "prompt", "close-from", "host", "chdir", "role", "type",
                     "other-user", "command-timeout", "chroot"),
                    ("preserve-env", "login", "non-interactive", "shell", "stdin",
                     "set-home", "background", "reset-timestamp", "bell", "remove-timestamp",
                     "askpass", "edit", "list", "validate", "version", "help"), "sudo")


def _doas(args: Sequence[str]) -> int | None:
    return _options(args, "uC", "ns", (), (), "doas")


_Unwrap = Callable[[Sequence[str]], "int | tuple[int, list[str]] | None"]
_TRANSPARENT: dict[str, _Unwrap] = {
    "env": _env, "timeout": _timeout, "nice": _nice, "nohup": _nohup, "time": _time,
    "command": _command, "exec": _exec, "xargs": _xargs, "coproc": _coproc,
}
"""Wrappers looked through: allow rules see the command they run."""
_ELEVATING: dict[str, _Unwrap] = {"sudo": _sudo, "doas": _doas}
"""Wrappers that change who runs the command: the whole and the command both must be
allowed."""
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash"})
_SHELL_LONG_VALUE = frozenset({"--rcfile", "--init-file"})


def _shell_script(args: Sequence[str]) -> int | None:
    """For a shell's arguments: the index of the ``-c`` script, ``-1`` when it reads its
    commands from its input, ``None`` when it runs a script file (an ordinary part)."""
    command = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in ("-o", "+o", "-O", "+O") or arg in _SHELL_LONG_VALUE:
            i += 2
            continue
        if arg.startswith("--"):
            i += 1
            continue
        if len(arg) > 1 and arg[0] in "-+" and arg != "-":
            if "c" in arg[1:] and arg[0] == "-":
                command = True
            if "s" in arg[1:] and arg[0] == "-":
                return -1
            i += 1
            continue
        break
    if command:
        return i if i < len(args) else -1
    if i < len(args) and args[i] != "-":
        return None
    return -1


# -- entry points ----------------------------------------------------------------------------

def parse_line(line: str) -> Parsed:
    """The parts of a shell line (run with ``/bin/sh -c``)."""
    out = Parsed()
    _Walker(out, (), 0).line(line)
    if not out.parts:  # nothing runs: an empty line, a comment, an assignment
        out.parts.append(Part((), (Form((), ""),)))
    return out


def parse_argv(argv: Sequence[str]) -> Parsed:
    """The parts of a command run without a shell: the program and its arguments (one part,
    unless it is itself a wrapper or a shell)."""
    out = Parsed()
    if not argv:
        out.parts.append(Part((), (Form((), ""),), problem="an empty command"))
        return out
    _Walker(out, (), 0).expand([Word(arg) for arg in argv], ())
    return out
