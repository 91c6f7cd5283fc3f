"""The dangerous-command list: refused in every mode, whatever the rules allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from pseudoclaude.permissions import Call, PermissionEngine, RuleSet, parse_rule
from pseudoclaude.permissions.danger import rough_hits

HITS = [
    "rm -rf /",
    "rm -fr ~",
    "rm -r -f /",
    "rm -R -f /",
    "rm --recursive --force /",
    "rm -rf /*",
    "rm -rf ~/",
    "rm -rf $HOME",
    'rm -rf "$HOME"',
    "rm -rf ${HOME}",
    "rm -rf -- /usr",
    "rm -rf /usr/",
    "rm -rf /usr/local/bin",
    "rm -rf /etc /tmp/x",
    "rm -rf /home/alice",
    "rm -rf /Users/alice",
    "rm -rf /var",
    "rm -rf /private",
    "rm / -rf",
    "rm -r /",
    "/bin/rm -rf /",
    'sh -c "rm -rf /"',
    "bash -c 'cd /tmp && rm -rf /'",
    "sudo rm -rf /",
    "timeout 5 rm -rf /",
    "env FOO=1 rm -rf ~",
    "echo ok && rm -rf /",
    "echo $(rm -rf /)",
    "dd if=/dev/zero of=/dev/sda",
    "dd if=/dev/zero of=/dev/disk2 bs=1m",
    "dd if=x of=/dev/nvme0n1",
    "dd if=x of=/dev/mapper/root",
    "mkfs.ext4 /dev/sda1",
    "mkfs -t ext4 /dev/sdb",
    "mke2fs /dev/vda1",
    "newfs_hfs /dev/disk3",
    "format C:",
    "diskutil eraseDisk JHFS+ Untitled disk2",
    ":(){ :|:& };:",
    "bomb(){ bomb|bomb& };bomb",
    "echo x > /dev/disk0",
    "cat img >> /dev/sdb",
    "chmod -R 777 /",
    "chown -R nobody /",
    "find / -name '*.log' -delete",
    "find / -exec rm -f {} \\;",
]
MISSES = [
    "rm -rf ./build",
    "rm -rf build/bin",
    "rm -rf node_modules",
    "rm -rf /tmp/build",
    "rm -f /etc/hosts.bak",
    "rm /",
    "rm -rf ~/projects/old",
    "dd if=input of=output.img",
    "dd if=/dev/sda of=backup.img",
    "mkfs.ext4 disk.img",
    "echo x > /dev/null",
    "chmod -R 755 ./dist",
    "chmod 777 /",
    "find . -delete",
    "find /tmp/x -delete",
    'echo "rm -rf /"',
    "git rm -rf /",
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("danger")


def engine(tmp_path: Path, mode: str = "bypassPermissions") -> PermissionEngine:
    rules = RuleSet("user", "user", allow=(parse_rule("Bash"),))
    return PermissionEngine(tmp_path, [rules], mode=mode, allow_bypass=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("line", HITS)
@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
def test_hits_are_refused_even_when_everything_is_allowed(ws: Path, line: str,
                                                            mode: str) -> None:
    verdict = engine(ws, mode).check(Call("run_command", {"command": line}))
    assert (verdict.decision, verdict.source) == ("deny", "blacklist"), verdict
    assert verdict.reason.startswith("command matches the dangerous-command list: ")


@pytest.mark.parametrize("line", MISSES)
def test_misses_follow_the_rules(ws: Path, line: str) -> None:
    verdict = engine(ws).check(Call("run_command", {"command": line}))
    assert verdict.decision == "allow", verdict


def test_the_reason_names_the_part() -> None:
    verdict = PermissionEngine("/").check(Call("run_command", {"command": 'sh -c "rm -rf /"'}))
    assert verdict.reason == "command matches the dangerous-command list: rm -rf /"


def test_args_form_is_checked_too(ws: Path) -> None:
    check = engine(ws).check
    assert check(Call("run_command", {"command": "rm", "args": ["-rf", "/"]})).decision == "deny"
    assert check(Call("run_command", {"command": "sh", "args": ["-c", "rm -rf ~"]})).decision \
        == "deny"
    assert check(Call("run_command", {"command": "rm", "args": ["-rf", "build"]})).decision \
        == "allow"


@pytest.mark.parametrize("line", [
    'rm -rf / "unterminated',
    'echo "rm -rf /',
    "dd if=/dev/zero of=/dev/sda 'oops",
    "echo x > /dev/sda (",
    ":(){ :|:& };: '",
])
def test_lines_that_cannot_be_parsed_are_searched_roughly(ws: Path, line: str) -> None:
    assert rough_hits(line)
    verdict = engine(ws).check(Call("run_command", {"command": line}))
    assert (verdict.decision, verdict.source) == ("deny", "blacklist")


@pytest.mark.parametrize("line", ["rm -rf {/tmp/x,/}", "rm -rf /{usr,tmp}", "rm -{r,f} /"])
def test_brace_expansions_are_expanded(ws: Path, line: str) -> None:
    assert engine(ws).check(Call("run_command", {"command": line})).source == "blacklist"
