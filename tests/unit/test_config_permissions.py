"""The permission engine's and the sandbox's settings (``permissions.*``, ``sandbox.*``): their
defaults and checks, ``permissions.allowBypass`` from the user's settings only, and a
workspace's own ``.PseudoClaude/config.yaml``: what narrows applies at once, what widens waits
for the user's approval of the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from pseudoclaude import config
from pseudoclaude.config import (
    ConfigError,
    PermissionSettings,
    SandboxSettings,
    Settings,
    load_settings,
    remember_approval,
)

KEY = "sk-ant-the-users-own-key-0123456789"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


def write(root: Path, data: Any) -> Path:
    path = root / ".PseudoClaude" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def load(dirs: tuple[Path, Path], overrides: dict[str, Any] | None = None) -> Settings:
    home, ws = dirs
    return load_settings(ws, overrides, home=home, env={"ANTHROPIC_API_KEY": KEY})


def asked(s: Settings) -> list[str]:
    return [a.key for a in s.pending.asked] if s.pending is not None else []


# -- the keys ----------------------------------------------------------------------------------


def test_defaults(dirs: tuple[Path, Path]) -> None:
    for s in (Settings(), load(dirs)):
        assert s.permissions == PermissionSettings(allow=(), ask=(), deny=(), default_mode=None,
                                                   allow_bypass=False)
        assert s.sandbox == SandboxSettings(enabled="auto", network=False, hide=(),
                                            auto_allow=True)
        assert s.pending is None


def test_nested_dotted_and_snake_case_forms(dirs: tuple[Path, Path]) -> None:
    home, _ws = dirs
    write(home, {"permissions": {"allow": ["Bash(npm run test:*)"], "ask": ["Bash(git push:*)"],
                                 "deny": [" Read(.env) "], "defaultMode": "acceptedits",
                                 "allowBypass": True},
                 "sandbox": {"enabled": False, "network": "true", "hide": ["~/secrets"],
                             "autoAllow": False}})
    s = load(dirs)
    assert s.permissions == PermissionSettings(
        allow=("Bash(npm run test:*)",), ask=("Bash(git push:*)",), deny=("Read(.env)",),
        default_mode="acceptEdits", allow_bypass=True)  # the mode as the engine spells it
    assert s.sandbox == SandboxSettings(enabled=False, network=True, hide=("~/secrets",),
                                        auto_allow=False)
    assert s.unknown_keys == ()

    write(home, {"permissions.defaultMode": "plan", "permissions.allow_bypass": "yes",
                 "sandbox.enabled": "true", "sandbox.auto_allow": "off",
                 "pseudoclaude": {"sandbox": {"hide": ["/srv/keys"]}}})
    s = load(dirs)
    assert (s.permissions.default_mode, s.permissions.allow_bypass) == ("plan", True)
    assert (s.sandbox.enabled, s.sandbox.auto_allow, s.sandbox.hide) == (True, False,
                                                                          ("/srv/keys",))
    assert load(dirs, {"sandbox": {"enabled": "AUTO"}}).sandbox.enabled == "auto"


def test_the_lists_add_up_across_the_layers(dirs: tuple[Path, Path]) -> None:
    """A later layer adds rules and hidden paths; it never removes the user's."""
    home, _ws = dirs
    write(home, {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls)"]},
                 "sandbox": {"hide": ["~/a"]}})
    s = load(dirs, {"permissions": {"deny": ["Read(.env)", "Bash(rm:*)"], "allow": []},
                    "sandbox.hide": ["~/b"]})
    assert s.permissions.deny == ("Bash(rm:*)", "Read(.env)")  # in order, each once
    assert s.permissions.allow == ("Bash(ls)",)
    assert s.sandbox.hide == ("~/a", "~/b")


@pytest.mark.parametrize(("data", "message"), [
    ({"permissions": {"allow": "Bash(ls)"}}, "permissions.allow must be a list of non-empty "
                                             "strings, got 'Bash(ls)'"),
    ({"permissions": {"deny": ["Read(.env)", ""]}}, "permissions.deny must be a list of "
                                                    "non-empty strings"),
    ({"permissions.ask": [3]}, "permissions.ask must be a list of non-empty strings, got [3]"),
    ({"permissions": {"defaultMode": "yolo"}}, "permissions.defaultMode must be one of strict, "
                                               "default, acceptEdits, plan, "
                                               "bypassPermissions, got 'yolo'"),
    ({"permissions": {"allowBypass": "sometimes"}}, "permissions.allowBypass must be true or "
                                                    "false"),
    ({"sandbox": {"enabled": "maybe"}}, "sandbox.enabled must be auto, true or false, got "
                                        "'maybe'"),
    ({"sandbox": {"network": 2}}, "sandbox.network must be true or false, got 2"),
    ({"sandbox": {"hide": {"a": 1}}}, "sandbox.hide must be a list of non-empty strings"),
    ({"sandbox": {"autoAllow": "always"}}, "sandbox.autoAllow must be true or false"),
])
def test_a_bad_value_names_the_key_and_the_file(dirs: tuple[Path, Path], data: dict[str, Any],
                                                message: str) -> None:
    path = write(dirs[0], data)
    with pytest.raises(ConfigError) as err:
        load(dirs)
    assert message in str(err.value) and f"(from {path})" in str(err.value)


def test_a_bad_value_in_the_editors_settings_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"sandbox\.enabled must be auto, true or false"):
        load_settings(None, {"sandbox": {"enabled": "sometimes"}}, env={})


def test_the_modes_and_their_rank_are_the_engines() -> None:
    from pseudoclaude.permissions.engine import MODE_RANK, MODES

    assert config.PERMISSIONS_DEFAULT_MODE.check("BYPASSPERMISSIONS") == "bypassPermissions"
    assert tuple(config.KEYS["permissions.defaultMode"].check(m) for m in MODES) == MODES
    assert {m: config._MODE_RANK[m] for m in MODES} == MODE_RANK
    assert config._MODE_RANK[None] == MODE_RANK["default"]


# -- permissions.allowBypass: the user's settings only -----------------------------------------


def test_allow_bypass_from_the_workspace_file_is_ignored(dirs: tuple[Path, Path]) -> None:
    _home, ws = dirs
    write(ws, {"permissions": {"allowBypass": True}})
    s = load(dirs)
    assert s.permissions.allow_bypass is False
    assert s.pending is None and s.unknown_keys == ()  # ignored, and listed nowhere
    assert remember_approval(s) is None  # nothing an approval could make apply
    assert load(dirs).permissions.allow_bypass is False
    write(ws, {"permissions.allowBypass": True, "baseUrl": "http://127.0.0.1:9"})
    s = load(dirs)
    assert s.pending is not None and asked(s) == ["baseUrl"]
    assert remember_approval(s) is not None
    approved = load(dirs)
    assert approved.base_url == "http://127.0.0.1:9"
    assert approved.permissions.allow_bypass is False  # not even once the file is approved


def test_allow_bypass_from_the_user_is_honoured(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home, {"permissions": {"allowBypass": True}})
    write(ws, {"permissions": {"allowBypass": False}})  # the workspace cannot take it back
    assert load(dirs).permissions.allow_bypass is True
    (home / ".PseudoClaude" / "config.yaml").unlink()
    s = load(dirs, {"permissions.allowBypass": True})  # the editor's settings are the user's
    assert s.permissions.allow_bypass is True and s.pending is None


# -- a workspace's own config.yaml ---------------------------------------------------------------


def test_what_only_narrows_applies_at_once(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home, {"permissions": {"allow": ["Bash(ls)", "Bash(make)"], "defaultMode":
                                 "acceptEdits"},
                 "sandbox": {"enabled": False, "network": True, "autoAllow": True}})
    write(ws, {"permissions": {"allow": ["Bash(ls)"], "ask": ["Bash(git push:*)"],
                               "deny": ["Bash(rm:*)"], "defaultMode": "strict"},
               "sandbox": {"enabled": True, "network": False, "autoAllow": False,
                           "hide": ["~/secrets"]}})
    s = load(dirs)
    assert s.pending is None
    assert s.permissions.allow == ("Bash(ls)", "Bash(make)")  # nothing added
    assert (s.permissions.ask, s.permissions.deny) == (("Bash(git push:*)",), ("Bash(rm:*)",))
    assert s.permissions.default_mode == "strict"
    assert s.sandbox == SandboxSettings(enabled=True, network=False, hide=("~/secrets",),
                                        auto_allow=False)


@pytest.mark.parametrize(("mode", "user_mode"), [
    ("default", None), ("plan", None), ("acceptEdits", "acceptEdits"),
    ("acceptEdits", "bypassPermissions"),
])
def test_a_start_mode_not_above_the_users_applies_at_once(
        dirs: tuple[Path, Path], mode: str, user_mode: str | None) -> None:
    home, ws = dirs
    if user_mode:
        write(home, {"permissions": {"defaultMode": user_mode}})
    write(ws, {"permissions": {"defaultMode": mode}})
    s = load(dirs)
    assert s.pending is None and s.permissions.default_mode == mode


@pytest.mark.parametrize(("user", "theirs", "key", "standing", "line"), [
    ({}, {"permissions": {"allow": ["Bash(curl:*)"]}}, "permissions.allow", (),
     "permissions.allow: Bash(curl:*) (calls matching these rules would run without asking)"),
    ({"permissions": {"allow": ["Bash(ls)"]}},
     {"permissions": {"allow": ["Bash(ls)", "Bash(curl:*)", "Edit(**)"]}}, "permissions.allow",
     ("Bash(ls)",), "permissions.allow: Bash(curl:*), Edit(**) (calls matching these rules "
                    "would run without asking)"),
    ({}, {"permissions": {"defaultMode": "acceptEdits"}}, "permissions.defaultMode", None,
     "permissions.defaultMode: acceptEdits (sessions would start in acceptEdits mode)"),
    ({}, {"permissions": {"defaultMode": "bypassPermissions"}}, "permissions.defaultMode", None,
     "permissions.defaultMode: bypassPermissions (sessions would start in bypassPermissions "
     "mode)"),
    ({"permissions": {"defaultMode": "strict"}}, {"permissions.defaultMode": "default"},
     "permissions.defaultMode", "strict",
     "permissions.defaultMode: default (sessions would start in default mode)"),
    ({}, {"sandbox": {"enabled": False}}, "sandbox.enabled", "auto",
     "sandbox.enabled: false (commands could run outside the sandbox)"),
    ({"sandbox": {"enabled": True}}, {"sandbox": {"enabled": "auto"}}, "sandbox.enabled", True,
     "sandbox.enabled: auto (commands could run outside the sandbox)"),
    ({}, {"sandbox": {"network": True}}, "sandbox.network", False,
     "sandbox.network: true (sandboxed commands would reach the network)"),
    ({"sandbox": {"autoAllow": False}}, {"sandbox.autoAllow": "true"}, "sandbox.autoAllow",
     False, "sandbox.autoAllow: true (sandboxed commands would run without asking)"),
])
def test_what_widens_waits_until_the_file_is_approved(
        dirs: tuple[Path, Path], user: dict[str, Any], theirs: dict[str, Any], key: str,
        standing: Any, line: str) -> None:
    home, ws = dirs
    if user:
        write(home, user)
    write(ws, theirs)
    s = load(dirs)
    assert s.pending is not None and asked(s) == [key]
    assert s.pending.lines() == [line]
    assert config._value(s, key) == standing  # the user's value stands meanwhile
    wanted = config._value(s.pending.approved, key)
    assert wanted != standing
    assert remember_approval(s) is not None
    approved = load(dirs)
    assert approved.pending is None and config._value(approved, key) == wanted


def test_what_narrows_applies_while_what_widens_waits(dirs: tuple[Path, Path]) -> None:
    _home, ws = dirs
    write(ws, {"permissions": {"allow": ["Bash(curl:*)"], "deny": ["Bash(rm:*)"],
                               "defaultMode": "bypassPermissions"},
               "sandbox": {"enabled": False, "network": True, "hide": ["~/secrets"]},
               "approvals": {"runCommand": "allow"}})
    s = load(dirs)
    assert asked(s) == ["approvals.runCommand", "permissions.allow", "permissions.defaultMode",
                        "sandbox.enabled", "sandbox.network"]
    assert s.permissions == PermissionSettings(deny=("Bash(rm:*)",))
    assert s.sandbox == SandboxSettings(hide=("~/secrets",))
    assert s.approvals.run_command == "ask"
    assert remember_approval(s) is not None
    s = load(dirs)
    assert s.pending is None
    assert s.permissions == PermissionSettings(allow=("Bash(curl:*)",), deny=("Bash(rm:*)",),
                                               default_mode="bypassPermissions")
    assert s.sandbox == SandboxSettings(enabled=False, network=True, hide=("~/secrets",))


def test_the_users_editor_settings_are_never_held(dirs: tuple[Path, Path]) -> None:
    s = load(dirs, {"permissions": {"allow": ["Bash(curl:*)"], "defaultMode": "acceptEdits"},
                    "sandbox": {"enabled": False, "network": True}})
    assert s.pending is None
    assert (s.permissions.allow, s.permissions.default_mode) == (("Bash(curl:*)",),
                                                                 "acceptEdits")
    assert (s.sandbox.enabled, s.sandbox.network) == (False, True)
