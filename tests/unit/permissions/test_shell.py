"""A shell line split into the simple commands it runs, wrappers looked through."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from pseudoclaude.permissions import shell
from pseudoclaude.permissions.shell import parse_argv, parse_line


def texts(line: str) -> list[str]:
    """The texts allow rules see, one per part (``!`` marks a part that asks)."""
    return [("!" if part.problem else "") + (part.text or part.forms[-1].text)
            for part in parse_line(line).parts]


def forms(line: str) -> list[list[str]]:
    return [[form.text for form in part.forms] for part in parse_line(line).parts]


@pytest.mark.parametrize(("line", "parts"), [
    ("ls", ["ls"]),
    ("cd x && rm -rf y", ["cd x", "rm -rf y"]),
    ("a || b; c | d & e", ["a", "b", "c", "d", "e"]),
    ("ls\nrm x", ["ls", "rm x"]),
    ("(cd a && rm b)", ["cd a", "rm b"]),
    ("{ rm b; }", ["rm b"]),
    ("echo $(rm x)", ["rm x", 'echo "$(rm x)"']),
    ("echo `rm x`", ["rm x", 'echo "`rm x`"']),
    ("echo \"$(rm x)\"", ["rm x", 'echo "$(rm x)"']),
    ("echo `echo \\`rm y\\``", ["rm y", 'echo "`rm y`"', 'echo "`echo \\\\`rm y\\\\``"']),
    ('echo "a && rm b"', ['echo "a && rm b"']),
    ("echo 'a; rm b'", ['echo "a; rm b"']),
    ("echo a\\;rm b", ["echo a;rm b"]),
    ("if true; then rm x; fi", ["true", "rm x"]),
    ("for f in $(ls); do rm \"$f\"; done", ["ls", "rm $f"]),
    ("while read l; do rm \"$l\"; done < list", ["read l", "rm $l"]),
    ("case $x in a) rm y;; esac", ["rm y"]),
    ("f() { rm x; }; f", ["rm x", "f"]),
    ("a=(1 $(rm q))", ["rm q"]),
    ("X=$(rm y)", ["rm y"]),
    ("cat <(rm x)", ["rm x", 'cat "<(rm x)"']),
    ("echo ${v:-$(rm z)}", ["rm z", 'echo "${v:-$(rm z)}"']),
    ("[[ -f $(rm a) ]]", ["rm a"]),
    ("echo hi > out.txt 2>&1", ["echo hi"]),
    ("> out.txt echo hi", ["echo hi"]),
    ("git log --format=\"%H %s\" | head -1", ['git log "--format=%H %s"', "head -1"]),
    ("\\rm x", ["rm x"]),
    ("r''m x", ["rm x"]),
    ("$'\\x72m' x", ["rm x"]),
    ("echo a \\\nb # comment", ["echo a b"]),
    ("", [""]),
    ("# only a comment", [""]),
    ("X=1", [""]),
])
def test_parts(line: str, parts: list[str]) -> None:
    assert texts(line) == parts


def test_here_documents_run_their_substitutions_but_not_their_text() -> None:
    assert texts("cat <<EOF\nrm -rf x $(rm y)\nEOF") == ["cat", "rm y"]
    assert texts("cat <<'EOF'\n$(rm y)\nEOF") == ["cat"]
    assert texts("cat <<< \"$(rm y)\"") == ["rm y", "cat"]


@pytest.mark.parametrize(("line", "parts"), [
    ("FOO=1 rm x", [["FOO=1 rm x", "rm x"]]),
    ("A=1 B=$(pwd) rm x", [["pwd"], ["A=1 B=$(pwd) rm x", "rm x"]]),
    ("env -i A=1 nice -n 3 nohup rm z",
     [["env -i A=1 nice -n 3 nohup rm z", "nice -n 3 nohup rm z", "nohup rm z", "rm z"]]),
    ("env -u HOME --chdir=/tmp rm x", [["env -u HOME --chdir=/tmp rm x", "rm x"]]),
    ('env -S "rm -rf x" y', [['env -S "rm -rf x" y', "rm -rf x y"]]),
    ("timeout 5 rm x", [["timeout 5 rm x", "rm x"]]),
    ("timeout -s KILL --preserve-status 5 rm x",
     [["timeout -s KILL --preserve-status 5 rm x", "rm x"]]),
    ("nice -10 rm x", [["nice -10 rm x", "rm x"]]),
    ("time -p rm x", [["time -p rm x", "rm x"]]),
    ("command rm x", [["command rm x", "rm x"]]),
    ("exec -a name rm x", [["exec -a name rm x", "rm x"]]),
    ("coproc rm x", [["coproc rm x", "rm x"]]),
    ("/bin/rm -rf y", [["/bin/rm -rf y", "rm -rf y"]]),
    ('sh -c "rm -rf y"', [['sh -c "rm -rf y"', "rm -rf y"]]),
    ("bash -lc 'cd a; rm -r b'", [["bash -lc \"cd a; rm -r b\"", "cd a"],
                                  ["bash -lc \"cd a; rm -r b\"", "rm -r b"]]),
    ("zsh -e -c 'rm x' name arg", [['zsh -e -c "rm x" name arg', "rm x"]]),
    ("sh -c \"sh -c 'rm x'\"", [["sh -c \"sh -c 'rm x'\"", 'sh -c "rm x"', "rm x"]]),
    ('eval "rm x; ls"', [['eval "rm x; ls"', "rm x"], ['eval "rm x; ls"', "ls"]]),
    ('trap "rm x" EXIT', [['trap "rm x" EXIT', "rm x"]]),
    ("find . | xargs rm", [["find ."], ["xargs rm", "rm"]]),
    ("xargs -0 -n1 -I{} rm {}", [["xargs -0 -n1 -I{} rm {}", "rm {}"]]),
    ("sudo rm x", [["sudo rm x"], ["sudo rm x", "rm x"]]),
    ("find . -name '*.o' -exec rm {} \\;",
     [["find . -name *.o -exec rm {} ;", "rm {}"], ["find . -name *.o -exec rm {} ;"]]),
    ("find . -delete", [["find . -delete", "rm {}"]]),
])
def test_wrappers_are_looked_through(line: str, parts: list[list[str]]) -> None:
    assert forms(line) == parts


def test_xargs_commands_get_more_arguments_when_they_run() -> None:
    part = parse_line("find . | xargs rm").parts[1]
    assert part.open_args and part.text == "rm …"
    assert part.allow_subject() == "rm "


@pytest.mark.parametrize(("line", "why"), [
    ('echo "unterminated', 'a part of the command could not be parsed: "unterminated'),
    ("echo 'abc", "a part of the command could not be parsed: 'abc"),
    ("echo $(rm x", "a part of the command could not be parsed: echo $(rm x"),
    ("echo a &&", "a part of the command could not be parsed: echo a &&"),
    ("{rm,-rf,/}", "a part of the command could not be parsed: {rm,-rf,/}"),
    ("$CMD x", "the command's name is only known when it runs: $CMD"),
    ("$(echo rm) x", "the command's name is only known when it runs: $(echo rm)"),
    ("r{m,} x", "the command's name is only known when it runs: r{m,}"),
    ("/bin/r? x", "the command's name is only known when it runs: /bin/r?"),
    ("/bin/r[m] x", "the command's name is only known when it runs: /bin/r[m]"),
    ("sh -c \"$SCRIPT\"", "sh -c runs a text only known when it runs: $SCRIPT"),
    ("eval \"$X\"", "eval of a text only known when it runs"),
    ("echo x | sh", "sh reads the commands it runs from its input"),
    ("bash -s < script", "bash reads the commands it runs from its input"),
    ("cat <<EOF | sh\nrm -rf /\nEOF", "sh reads the commands it runs from its input"),
    ("timeout --bogus 5 rm", "an option of timeout is not understood: --bogus"),
    ("xargs -Z rm", "an option of xargs is not understood: -Z"),
])
def test_what_cannot_be_known_is_a_problem(line: str, why: str) -> None:
    assert why in parse_line(line).problems


def test_a_problem_part_keeps_its_text_for_deny_rules() -> None:
    [bad, *_] = parse_line('rm -rf y "unterminated').parts
    assert bad.problem and bad.forms[-1].text == 'rm -rf y "unterminated'


def test_nesting_too_deep_is_a_problem() -> None:
    assert any("nested too deeply" in p for p in parse_line("eval " * 12 + "rm x").problems)
    assert texts("eval " * 5 + "rm x") == ["rm x"]
    line = "rm x"
    for _ in range(12):
        line = "sh -c " + shlex.quote(line)
    assert "the command is too long to be checked" in parse_line(line).problems
    assert not parse_line("sh -c " + shlex.quote("sh -c 'rm x'")).problems


def test_argv_is_one_part_unless_it_is_a_wrapper() -> None:
    assert [p.text for p in parse_argv(["git", "commit", "-m", "a b"]).parts] == \
        ['git commit -m "a b"']
    assert [p.text for p in parse_argv(["echo", "a && rm b"]).parts] == ['echo "a && rm b"']
    assert [[f.text for f in p.forms] for p in parse_argv(["sh", "-c", "rm x; ls"]).parts] == \
        [['sh -c "rm x; ls"', "rm x"], ['sh -c "rm x; ls"', "ls"]]
    assert parse_argv([]).problems == ["an empty command"]


def test_output_redirections_to_disks_are_found() -> None:
    assert parse_line("echo x > /dev/disk0").dangers == ["> /dev/disk0"]
    assert parse_line("echo x &>/dev/sda").dangers == ["&> /dev/sda"]
    assert parse_line("echo x 2>/dev/null >/tmp/x").dangers == []
    assert parse_line("cat < /dev/sda").dangers == []


def test_the_grammar_only_ever_sees_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    """tree-sitter-bash's scanner reads out of bounds (and may crash the process) on code points
    above 255 after a ``{``: the parser is given an ASCII copy of the line."""
    real = shell._parser()
    seen: list[bytes] = []

    class Watching:
        def parse(self, data: bytes) -> Any:
            seen.append(data)
            return real.parse(data)

    monkeypatch.setattr(shell, "_parser", Watching)
    line = "{\U000e4940 é; echo héllo wörld \U0001f600 | sh -c 'rm ü'"
    assert texts(line)[-2:] == ["echo héllo wörld 😀", "rm ü"]
    assert seen and all(max(data, default=0) < 0x80 for data in seen)
    assert len(seen[0]) == len(line.encode())


@pytest.mark.parametrize(("line", "why"), [
    ("ls\x00rm", "the command holds a NUL character"),
    ("ls \ud800", "the command holds characters that are not text"),
])
def test_lines_no_shell_can_run(line: str, why: str) -> None:
    assert parse_line(line).problems == [why]
