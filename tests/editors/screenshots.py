"""Screenshots of the Neovim plugin for ``editors/media`` (not a test: run it by hand).

``.venv/bin/python tests/editors/screenshots.py [OUT_DIR]`` runs ``nvim_screenshots.lua`` in a
real Neovim with its terminal UI, in a pseudo-terminal of 150x40 (a headless Neovim keeps an 80x24
screen), against the real server and the fake model; the script writes each screen as an HTML
page (every cell with its colours) and Chromium (``/usr/bin/chromium``) renders it to
``nvim-chat.png``, ``nvim-approval.png``, ``nvim-proposal.png``, ``nvim-slash.png`` (the
command menu after ``/``), ``nvim-resumed.png`` (a reopened session after a compaction) and
``nvim-rewind.png`` (the preview of a rewind, a file changed by hand marked) and
``nvim-mcp.png`` (``:PseudoClaudeMcp``: a ready, a failed, a disabled server and a project
server waiting for approval), ``nvim-editor-context.png`` (an unsaved buffer the agent edited,
beside the chat whose prompt shows the selection it goes with), ``nvim-sessions.png`` (two
sessions' chats side by side, both streaming) and ``nvim-worktree.png`` (the status buffer of a
session in a git worktree, beside its chat) in OUT_DIR (default ``editors/media``).

A second Neovim (the script ``PERMISSIONS_LUA`` below, in a folder of its own) makes
``nvim-mode.png`` (the picker of ``:PseudoClaudeMode``: the allowed modes and what each means),
``nvim-approval-always.png`` (a command's approval offering ``Always allow Bash(npm run
test:*)``, asked with Neovim's own ``vim.ui.select``) and ``nvim-permissions.png``
(``:PseudoClaudePermissions``: the mode, the sandbox, the rules by decision and source).
``--permissions`` makes only those three.

A third Neovim (``PLAN_LUA``, in a folder of its own, with test_nvim.py's ``PLAN_RULES``) makes
``nvim-plan.png`` (the plan float of a session in plan mode, after one round of feedback) and
``nvim-tasks.png`` (the task list at the top of the chat once the plan was approved). ``--plan``
makes only those two.

A fourth Neovim (``HOOKS_LUA``, in a folder of its own, with the user's ``hooks.yaml`` and a skill
in ``~/.PseudoClaude/skills``, the folder's own ``.PseudoClaude/hooks.yaml``, declined when the
folder opens, and a skill in ``.claude/skills``) makes ``nvim-hooks.png`` (``:PseudoClaudeHooks``
with the folder's hooks declined and ``a`` to review them), ``nvim-skills.png``
(``:PseudoClaudeSkills``) and ``nvim-status.png`` (``/status`` once ``a`` approved the folder's
hooks). ``--hooks`` makes only those three.

A fifth Neovim (``AGENTS_LUA``, in a folder of its own, with ``AGENT_RULES``) makes
``nvim-subagents.png``: a turn that started two sub-agents, the explore one done (its card
folded: status, tool calls, tokens) and the other one still working (its fold open on its live
tool call and text), and ``nvim-agents.png``: once both ended, ``:PseudoClaudeAgents`` listing
them below the chat. ``--agents`` makes only those two.

All run with ``sandbox.autoAllow: false`` in the user settings (``~/.PseudoClaude/config.yaml`` of
their private HOME): where a sandbox works, a sandboxed command would otherwise run unasked, and
the screenshots show commands asked.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # test_nvim imports the tests' support module

from tests.editors.conftest import Nvim, nvim_binary  # noqa: E402
from tests.editors.test_nvim import (  # noqa: E402
    EDITOR_APP,
    EDITS,
    PLAN_FEEDBACK,
    PLAN_RULES,
    PLUGIN,
    PROPOSALS,
    e2e_script,
    make_workspace,
    tool_rule,
)

from pseudoclaude.fake_model import FakeModelServer  # noqa: E402

APP = EDITOR_APP  # the app of the editor tests


def read_then(rule: dict, path: str) -> dict:
    """``rule`` (one tool call) with a ``read_file`` of ``path`` first: the server refuses an
    edit of a file the session has not read."""
    calls = rule["reply"]["tool_calls"]
    read = {"name": "read_file", "arguments": {"path": path}}
    if read in calls:  # (tool_rule may read before an edit already)
        return rule
    return {**rule, "reply": {**rule["reply"], "tool_calls": [read, *calls]}}


GREETING = read_then(tool_rule("FIX-GREETING", "edit_file",
                               {"path": "app.py", "old_text": 'print("hello")',
                                "new_text": 'print(greet("world"))'}), "app.py")


def call_rules(marker: str, name: str, arguments: dict, answer: str,
               usage: dict | None = None, read: str | None = None) -> list[dict]:
    """A run whose prompt contains ``marker`` calls one tool (after reading ``read``), then
    answers ``answer`` (once)."""
    after = {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": marker},
             "reply": {"text": answer, "usage": usage or {"input": 900, "output": 20}}, "times": 1}
    call = tool_rule(marker, name, arguments)
    return [after, read_then(call, read) if read else call]


# A resumed session with a call of each status and a compaction (nvim-resumed.png): two reads of
# big.txt (~40 KB) leave the earlier runs out of the recent window, so /compact summarizes them.
RESUMED = [
    *call_rules("MISSING-FILE", "read_file", {"path": "notes/todo.md"},
                "There is no notes/todo.md in this project."),
    *call_rules("CLEAN-BUILD", "run_command", {"command": "rm", "args": ["-rf", "build"]},
                "Understood: I left the build folder alone."),
    tool_rule("SLOW-CMD", "run_command", {"command": "sleep", "args": ["30"]}),
    *call_rules("READ-BIG", "read_file", {"path": "big.txt"}, "big.txt lists 800 benchmark lines."),
    *call_rules("AGAIN-BIG", "read_file", {"path": "big.txt"}, "Read it again: nothing changed.",
                {"input": 24000, "output": 60}),
]
# A rewind to before prompt 2 (nvim-rewind.png): prompt 1 adds a test; prompt 2 renames greet in
# app.py and the test, removes docs/usage.md with a command and adds CHANGELOG.md.
TEST_APP = ('from app import greet\n\n\ndef test_greet() -> None:\n'
            '    assert greet("you") == "hello you"\n')
REWIND = [
    *call_rules("ADD-TESTS", "write_file", {"path": "tests/test_app.py", "content": TEST_APP},
                "Added tests/test_app.py with a test for greet."),
    {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": "RENAME-GREET"},
     "reply": {"text": "Renamed greet to welcome, updated the test, removed docs/usage.md and "
                       "noted the change in CHANGELOG.md.",
               "usage": {"input": 1200, "output": 30}}, "times": 1},
    {"when": {"has_tools": True, "last_user_contains": "RENAME-GREET"},
     "reply": {"text": "Renaming.", "usage": {"input": 1100, "output": 40}, "tool_calls": [
         {"name": "read_file", "arguments": {"path": "app.py"}},  # read before it is changed
         {"name": "edit_file", "arguments": {"path": "app.py", "old_text": "def greet(",
                                             "new_text": "def welcome("}},
         {"name": "edit_file", "arguments": {"path": "app.py", "old_text": "print(greet(",
                                             "new_text": "print(welcome("}},
         {"name": "edit_file", "arguments": {"path": "tests/test_app.py",
                                             "old_text": "from app import greet",
                                             "new_text": "from app import welcome"}},
         {"name": "run_command", "arguments": {"command": "rm", "args": ["docs/usage.md"]}},
         {"name": "write_file", "arguments": {"path": "CHANGELOG.md",
                                              "content": "- greet is now welcome\n"}}]}},
]
# The agent edits an unsaved buffer (nvim-editor-context.png): the user added a docstring to
# greet without saving; the agent changes its return line in the buffer.
UNSAVED = call_rules("the greeting friendlier", "edit_file",
                     {"path": "app.py", "old_text": 'return f"hello {name}"',
                      "new_text": 'return f"Hello, {name}!"'},
                     "Done: greet now says \"Hello, {name}!\". The change is in your unsaved "
                     "buffer, not on disk: u undoes it, :w saves it.", read="app.py")
# Two sessions at once, side by side (nvim-sessions.png): each answer streams for a few seconds.
PLAN_PROMPT = "Sketch a plan for the parser tests"
GUIDE_PROMPT = "Outline the user guide"
SESSIONS = [
    {"when": {"has_tools": True, "last_user_contains": PLAN_PROMPT},
     "reply": {"delay": 0.5, "usage": {"input": 1400, "output": 120}, "text": [
         "A plan for the parser tests:\n\n", "1. **Empty input**: ", "an empty tree.\n",
         "2. **One statement**: ", "one node and its span.\n", "3. **Nested blocks**: ",
         "depth and order kept.\n", "4. **Errors**: ", "a bad token and its line.\n",
         "5. **Round trip**: ", "printing gives the source back.\n\n",
         "Then one test per bug fixed, ", "named after the bug."]}},
    {"when": {"has_tools": True, "last_user_contains": GUIDE_PROMPT},
     "reply": {"delay": 0.45, "usage": {"input": 1300, "output": 110}, "text": [
         "An outline of the user guide:\n\n", "- **Installing**: ", "pip, or from a checkout.\n",
         "- **First steps**: ", "parse a file, print its tree.\n", "- **The language**: ",
         "statements, blocks, comments.\n", "- **Errors**: ", "what they say, how to fix them.\n",
         "- **Reference**: ", "every function, with an example.\n\n", "Each page ends with ",
         "a short exercise."]}},
]
# A session in a git worktree of its own (nvim-worktree.png): a new file, an edit of the README and
# a file removed, in the worktree only; :PseudoClaudeWorktree lists them.
RELEASE_PROMPT = "Write down the release steps and link them from the README"
RELEASING = "# Releasing\n\n1. Update CHANGELOG.md.\n2. Tag it: git tag vX.Y.Z.\n3. Push the tag.\n"
README_LINE = "It keeps sessions and memory."
WORKTREE = [
    {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": RELEASE_PROMPT},
     "reply": {"text": "I wrote RELEASING.md and linked it from the README, in the worktree: "
                       ":PseudoClaudeWorktree shows the changes, apply brings them to the folder.",
               "usage": {"input": 1500, "output": 40}}, "times": 1},
    {"when": {"has_tools": True, "last_user_contains": RELEASE_PROMPT},
     "reply": {"text": "Writing the release steps.", "usage": {"input": 1400, "output": 60},
               "tool_calls": [
                   {"name": "write_file",
                    "arguments": {"path": "RELEASING.md", "content": RELEASING}},
                   {"name": "read_file", "arguments": {"path": "README.md"}},
                   {"name": "edit_file", "arguments": {
                       "path": "README.md", "old_text": README_LINE,
                       "new_text": README_LINE + "\n\nSee RELEASING.md to cut a release."}},
                   {"name": "run_command",
                    "arguments": {"command": "rm", "args": ["docs/usage.md"]}}]}},
]
# The permission shots: a command "always allow" can name by a prefix rule, and the user's own
# permission rules (~/.PseudoClaude/permissions.yaml) that :PseudoClaudePermissions lists.
NPM_TEST = [
    {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": "NPM-TEST"},
     "reply": {"text": "The tests ran: see the result above.",
               "usage": {"input": 900, "output": 20}},
     "times": 1},
    tool_rule("NPM-TEST", "run_command", {"command": "npm run test"}),
]
USER_SETTINGS = "sandbox:\n  autoAllow: false\n"
USER_PERMISSIONS = """permissions:
  deny:
    - Bash(rm -rf:*)
    - Read(.env)
  ask:
    - Bash(git push:*)
  allow:
    - Bash(npm run lint:*)
    - Read(docs/**)
"""
PERMISSIONS_LUA = r'''
-- Screenshots of the permission modes (editors/media/nvim-mode.png: the mode picker of
-- :PseudoClaudeMode; nvim-approval-always.png: a command's approval offering "Always allow" its
-- rule; nvim-permissions.png: :PseudoClaudePermissions), made like nvim_screenshots.lua's (its
-- screen-to-HTML part is loaded from it). The two questions are asked with Neovim's own
-- vim.ui.select (inputlist): a timer snaps the screen while the list is shown, then answers it.
local here = @EDITOR_TESTS@
local src = assert(io.open(vim.fs.joinpath(here, 'nvim_screenshots.lua'))):read('*a')
local head = assert(src:match('^(.-_G%.pc_snap = snap\n)'), 'no snap() in nvim_screenshots.lua')
local chunk = '@' .. vim.fs.joinpath(here, 'nvim_screenshots.lua')
local h, snap = assert(load(head .. 'return h, snap', chunk))()
local step, take, wait_for = h.step, h.take, h.wait_for

--- Neovim's own vim.ui.select (runtime/lua/vim/ui.lua): a numbered list, inputlist().
local function builtin_select(items, opts, on_choice, shown)
  local choices = { opts.prompt or 'Select one of:' }
  local format_item = opts.format_item or tostring
  for i, item in ipairs(items) do
    choices[#choices + 1] = string.format('%d: %s', i, format_item(item))
  end
  if shown then
    shown(choices)
  end
  local choice = vim.fn.inputlist(choices)
  if choice < 1 or choice > #items then
    on_choice(nil, nil)
  else
    on_choice(items[choice], choice)
  end
end

--- Snap the screen while a list of `lines` (inputlist) is shown: its rows at the bottom of the
--- screen (drawn over the default grid, which nvim__inspect_cell reads) as the screen shows them,
--- in the message colours ("Type number ..." as a question); no redraw (it would clear the list).
local function snap_list(name, lines)
  local inspect, cmd = vim.api.nvim__inspect_cell, vim.cmd
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / vim.o.columns))
  end
  local top = vim.o.lines - rows
  local function hl(group)
    local g = vim.api.nvim_get_hl(0, { name = group, link = false })
    return { foreground = g.fg, background = g.bg, bold = g.bold }
  end
  local normal, question = hl('MsgArea'), hl('Question')
  if not normal.foreground then
    normal = hl('Normal')
  end
  vim.api.nvim__inspect_cell = function(grid, r, c)
    if grid ~= 1 or r < top then
      return inspect(grid, r, c)
    end
    local start = {}
    for x = 1, math.min(vim.o.columns, 11) do
      start[#start + 1] = vim.fn.screenstring(r + 1, x)
    end
    local text = vim.fn.screenstring(r + 1, c + 1)
    return { text, table.concat(start) == 'Type number' and question or normal }
  end
  vim.cmd = setmetatable({}, { __index = cmd, __call = function(_, c)
    if c ~= 'redraw!' then
      return cmd(c)
    end
  end })
  local ok, err = pcall(snap, name)
  vim.api.nvim__inspect_cell, vim.cmd = inspect, cmd
  assert(ok, err)
end

--- Ask the next vim.ui.select with Neovim's own, snap it as `name` once shown, then answer `keys`.
local function snap_next_select(name, keys)
  local recorded = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    vim.ui.select = recorded
    h.selects[#h.selects + 1] = { prompt = opts.prompt, kind = opts.kind }
    builtin_select(items, opts, on_choice, function(lines)
      lines = vim.list_extend(vim.deepcopy(lines),
        { 'Type number and <Enter> or click with the mouse (q or empty cancels): ' })
      vim.defer_fn(function()
        local ok, err = pcall(snap_list, name, lines)
        if not ok then
          h.report.snap_error = err
        end
        vim.api.nvim_feedkeys(keys, 't', false)
      end, 600)
    end)
  end
end

local last = {}
vim.api.nvim_create_autocmd('User', { pattern = 'PseudoClaudeMode', callback = function(ev)
  last.mode = ev.data
end })

local chat

local function send(text)
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('A' .. text .. '\r', 'x', false)
end

step('setup', function()
  h.setup_plugin({
    settings = { approvals = { runCommand = 'ask', write = 'ask' } },
    chat = { width = 0.55 },
  })
  vim.cmd.edit(vim.fn.fnameescape(h.workspace .. '/app.py'))
  -- The first snap switches Neovim's highlight tables and redraws: before any list is shown.
  snap('nvim-warmup')
  os.remove(vim.fs.joinpath(vim.env.PC_SHOTS, 'nvim-warmup.html'))
  vim.cmd('PseudoClaudeChat')
  chat = wait_for('the chat', function()
    return require('pseudoclaude.chat').get(vim.uri_from_fname(h.workspace))
  end)
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  send('What is this project?')
  take('PseudoClaudeRunDone')
end)

step('mode picker', function()
  last.mode = nil
  snap_next_select('nvim-mode', '3\r')
  vim.cmd('PseudoClaudeMode')
  local d = wait_for('the mode', function()
    return last.mode
  end)
  assert(d.result and d.result.mode == 'acceptEdits', vim.inspect(d))
  assert(h.report.snap_error == nil, h.report.snap_error)
end)

step('approval with always allow', function()
  vim.cmd('stopinsert')
  snap_next_select('nvim-approval-always', '3\r') -- Always allow Bash(npm run test:*)
  h.forget('PseudoClaudeRunDone')
  send('NPM-TEST: run the tests')
  take('PseudoClaudeRunDone')
  assert(h.report.snap_error == nil, h.report.snap_error)
end)

step('permissions', function()
  local shown
  vim.api.nvim_create_autocmd('User', {
    pattern = 'PseudoClaudePermissions',
    once = true,
    callback = function(ev)
      shown = ev.data
    end,
  })
  vim.cmd('PseudoClaudePermissions')
  wait_for('the permissions float', function()
    return shown
  end)
  local text = table.concat(shown.lines or {}, '\n')
  assert(text:find('Bash(npm run test:*)', 1, true), text)
  snap('nvim-permissions')
  vim.api.nvim_feedkeys('q', 'x', false)
end)

h.done('nvim permission screenshots')
vim.cmd('qa!')
'''
PLAN_LUA = r'''
-- Screenshots of plan mode (editors/media/nvim-plan.png: the plan float; nvim-tasks.png: the
-- task list at the top of the chat), made like nvim_screenshots.lua's (its screen-to-HTML part is
-- loaded from it).
local here = @EDITOR_TESTS@
local src = assert(io.open(vim.fs.joinpath(here, 'nvim_screenshots.lua'))):read('*a')
local head = assert(src:match('^(.-_G%.pc_snap = snap\n)'), 'no snap() in nvim_screenshots.lua')
local chunk = '@' .. vim.fs.joinpath(here, 'nvim_screenshots.lua')
local h, snap = assert(load(head .. 'return h, snap', chunk))()
local step, take, wait_for = h.step, h.take, h.wait_for
local ws = vim.uri_from_fname(h.workspace)
local chat

local function chat_lines()
  return vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
end

step('setup', function()
  h.setup_plugin({
    settings = { approvals = { runCommand = 'ask', write = 'ask' } },
    chat = { width = 0.55 },
  })
  vim.cmd.edit(vim.fn.fnameescape(h.workspace .. '/app.py'))
  snap('nvim-warmup')
  os.remove(vim.fs.joinpath(vim.env.PC_SHOTS, 'nvim-warmup.html'))
  vim.cmd('PseudoClaudeChat')
  chat = wait_for('the chat', function()
    return require('pseudoclaude.chat').get(ws)
  end)
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  vim.cmd('PseudoClaudeMode plan')
  wait_for('plan mode', function()
    return require('pseudoclaude.permissions').mode_of(ws, chat.session_id) == 'plan'
  end)
end)

step('plan', function()
  -- The first plan: keep planning, with feedback; the second one is the screenshot.
  h.forget('PseudoClaudeApprovalShown')
  h.forget('PseudoClaudeRunDone')
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('APLAN-TASKS: make the greeting friendlier\r', 'x', false)
  take('PseudoClaudeApprovalShown')
  h.answer({ @FEEDBACK@ })
  vim.api.nvim_feedkeys('k', 'x', false)
  local shown = take('PseudoClaudeApprovalShown')
  assert(shown.plan and vim.api.nvim_get_current_win() == shown.view.win,
    'the plan float is not current')
  vim.wait(300)
  snap('nvim-plan')
  vim.api.nvim_feedkeys('A', 'x', false)
  take('PseudoClaudeRunDone')
end)

step('tasks', function()
  wait_for('the task list', function()
    return chat_lines()[1] == 'Tasks 1/4'
  end)
  vim.cmd('stopinsert')
  local win = vim.fn.win_findbuf(chat.buf)[1]
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  vim.cmd('normal! zt')
  snap('nvim-tasks')
end)

h.done('nvim plan screenshots')
vim.cmd('qa!')
'''
HOOKS_LUA = r'''
-- Screenshots of hooks and skills (editors/media/nvim-hooks.png: :PseudoClaudeHooks with the
-- folder's own hooks declined and `a` to review them; nvim-skills.png: :PseudoClaudeSkills;
-- nvim-status.png: /status once the folder's hooks were approved), made like
-- nvim_screenshots.lua's (its screen-to-HTML part is loaded from it).
local here = @EDITOR_TESTS@
local src = assert(io.open(vim.fs.joinpath(here, 'nvim_screenshots.lua'))):read('*a')
local head = assert(src:match('^(.-_G%.pc_snap = snap\n)'), 'no snap() in nvim_screenshots.lua')
local chunk = '@' .. vim.fs.joinpath(here, 'nvim_screenshots.lua')
local h, snap = assert(load(head .. 'return h, snap', chunk))()
local step, take, wait_for = h.step, h.take, h.wait_for
local ws = vim.uri_from_fname(h.workspace)
local chat

local function float_lines()
  local f = require('pseudoclaude.context').float
  local valid = f and vim.api.nvim_buf_is_valid(f.buf)
  return valid and vim.api.nvim_buf_get_lines(f.buf, 0, -1, false) or nil
end

local function float_with(text)
  return wait_for('a float with ' .. text, function()
    local lines = float_lines()
    return lines and table.concat(lines, '\n'):find(text, 1, true) and lines
  end)
end

step('setup', function()
  -- The folder's own hooks.yaml is asked about when the folder opens: declined.
  h.answer({ 'Deny' })
  h.setup_plugin({ chat = { width = 0.55 } })
  vim.cmd.edit(vim.fn.fnameescape(h.workspace .. '/app.py'))
  snap('nvim-warmup')
  os.remove(vim.fs.joinpath(vim.env.PC_SHOTS, 'nvim-warmup.html'))
  vim.cmd('PseudoClaudeChat')
  chat = wait_for('the chat', function()
    return require('pseudoclaude.chat').get(ws)
  end)
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  wait_for('the hooks question', function()
    return #h.selects > 0
  end)
  h.forget('PseudoClaudeRunDone')
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('AWhat is this project?\r', 'x', false)
  take('PseudoClaudeRunDone')
  vim.cmd('stopinsert')
end)

step('hooks', function()
  vim.cmd('PseudoClaudeHooks')
  local lines = float_with("a review this folder's hooks")
  assert(table.concat(lines, '\n'):find('declined', 1, true), table.concat(lines, '\n'))
  vim.wait(200)
  snap('nvim-hooks')
  h.answer({ 'for this project' })
  vim.api.nvim_feedkeys('a', 'x', false)
  float_with('q or <Esc> closes')
  assert(h.notified("this folder's hooks run now"), 'no notification of the review')
  vim.api.nvim_feedkeys('q', 'x', false)
end)

step('skills', function()
  vim.cmd('PseudoClaudeSkills')
  float_with('/explain-code')
  vim.wait(200)
  snap('nvim-skills')
  vim.api.nvim_feedkeys('q', 'x', false)
end)

step('status', function()
  require('pseudoclaude.chat').submit(chat, '/status')
  float_with('skills')
  vim.wait(200)
  snap('nvim-status')
  vim.api.nvim_feedkeys('q', 'x', false)
end)

h.done('nvim hooks screenshots')
vim.cmd('qa!')
'''
USER_HOOKS = """hooks:
  - name: notify-done
    event: Stop
    action: {type: shell, command: 'date >> ~/.PseudoClaude/runs.log'}
    async: true
  - name: no-secrets
    event: PreToolUse
    if:
      any_of:
        - {field: tool_input.path, match: '*.env'}
        - {field: tool_input.command, match: '*.env*'}
    action: {type: shell, command: 'echo "leave the .env files alone" >&2; exit 2'}
"""
FOLDER_HOOKS = """hooks:
  - name: lint
    event: PostToolUse
    if:
      all_of:
        - {field: tool_name, match: {type: exact, value: edit_file}}
    action: {type: shell, command: npm run lint --silent}
    async: true
  - name: today
    event: UserPromptSubmit
    action: {type: shell, command: 'echo "Today is $(date +%A)."'}
"""
SKILL = """---
name: explain-code
description: Explains code with diagrams and analogies. Use when the user asks how code works.
argument-hint: "[file or symbol]"
---
Explain the code the user names: what it does, then a small ASCII diagram of how the parts
call each other, then one analogy.
"""
USER_SKILL = """---
name: changelog
description: Adds a line to CHANGELOG.md under Unreleased for the change just made.
---
Read CHANGELOG.md and add one line under [Unreleased] that says what changed, for users.
"""
EXPLORE = "You are an explore sub-agent"
GENERAL = "You are a general-purpose sub-agent"
AGENT_RULES = [
    {"when": {"system_contains": EXPLORE, "last_is_tool_result": False},
     "reply": {"text": "Looking for greet.",
               "tool_calls": [{"name": "search_code", "arguments": {"pattern": "def greet"}},
                              {"name": "read_file", "arguments": {"path": "app.py"}}],
               "usage": {"input": 3100, "output": 90}}},
    {"when": {"system_contains": EXPLORE, "last_is_tool_result": True},
     "reply": {"text": "greet(name) is defined in app.py, line 1; main() calls it with 'World'.",
               "usage": {"input": 3900, "output": 60}}},
    {"when": {"system_contains": GENERAL, "last_is_tool_result": False},
     "reply": {"text": "Checking which tests cover greet.",
               "tool_calls": [{"name": "find_files", "arguments": {"pattern": "test_app.py"}}],
               "usage": {"input": 4200, "output": 70}}},
    {"when": {"system_contains": GENERAL, "last_is_tool_result": True},
     "reply": {"text": "No test file yet: greet('World') is only run by main().\nAn empty name "
                       "is not handled either; a test should cover both.",
               "stall_after": 0, "stall": 6, "usage": {"input": 4800, "output": 120}}},
    {"when": {"has_tools": True, "last_user_contains": "AGENTS-DEMO"},
     "reply": {"text": "I'll split this: one sub-agent finds greet, another reviews its tests.",
               "tool_calls": [
                   {"name": "agent", "arguments": {
                       "subagent_type": "explore", "description": "find where greet is defined",
                       "prompt": "Find where greet is defined and who calls it."}},
                   {"name": "agent", "arguments": {
                       "name": "test-reviewer", "description": "review greet's tests",
                       "prompt": "Review the tests of greet: what do they miss?"}}],
               "usage": {"input": 2600, "output": 110}}, "times": 1},
    {"when": {"has_tools": True, "last_is_tool_result": True, "body_contains": "AGENTS-DEMO"},
     "reply": {"text": "greet lives in app.py and has no test yet. Shall I add one for an empty "
                       "name?", "usage": {"input": 3300, "output": 40}}},
]
AGENTS_LUA = r'''
-- Screenshot of sub-agents (editors/media/nvim-subagents.png): the chat of a turn with two
-- sub-agents, one done (folded), one working (its fold open), and :PseudoClaudeAgents below;
-- made like nvim_screenshots.lua's (its screen-to-HTML part is loaded from it).
local here = @EDITOR_TESTS@
local src = assert(io.open(vim.fs.joinpath(here, 'nvim_screenshots.lua'))):read('*a')
local head = assert(src:match('^(.-_G%.pc_snap = snap\n)'), 'no snap() in nvim_screenshots.lua')
local chunk = '@' .. vim.fs.joinpath(here, 'nvim_screenshots.lua')
local h, snap = assert(load(head .. 'return h, snap', chunk))()
local step, take, wait_for = h.step, h.take, h.wait_for
local ws = vim.uri_from_fname(h.workspace)
local chat

step('setup', function()
  h.setup_plugin({ chat = { width = 0.62 } })
  vim.cmd.edit(vim.fn.fnameescape(h.workspace .. '/app.py'))
  snap('nvim-warmup')
  os.remove(vim.fs.joinpath(vim.env.PC_SHOTS, 'nvim-warmup.html'))
  vim.cmd('PseudoClaudeChat')
  chat = wait_for('the chat', function()
    return require('pseudoclaude.chat').get(ws)
  end)
  take('PseudoClaudeChatLoaded')
end)

step('agents', function()
  h.forget('PseudoClaudeRunDone')
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  local ask = 'AGENTS-DEMO: where is greet, and are its tests good enough?'
  vim.api.nvim_feedkeys('A' .. ask .. '\r', 'x', false)
  local function card(kind)
    for _, item in ipairs(chat.items) do
      if item.name == 'agent' and item.agent and type(item.arguments) == 'table'
        and (item.arguments.subagent_type or 'general-purpose') == kind then
        return item
      end
    end
  end
  wait_for('the explore sub-agent done, the other one thinking', function()
    local done, going = card('explore'), card('general-purpose')
    local last = going and going.agent.steps[#going.agent.steps]
    return done and done.agent.status == 'completed' and last and last.kind == 'tool'
      and last.status == 'done'
  end)
  vim.cmd('stopinsert')
  local cw = vim.fn.win_findbuf(chat.buf)[1]
  vim.api.nvim_set_current_win(cw)
  vim.cmd('normal! G')
  vim.wait(300)
  snap('nvim-subagents')
  take('PseudoClaudeRunDone')
end)

step('list', function()
  vim.cmd('PseudoClaudeAgents')
  wait_for('the list', function()
    return vim.api.nvim_buf_get_name(0) == 'pseudoclaude://agents'
  end)
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.wait(300)
  snap('nvim-agents')
end)

h.done('nvim agents screenshots')
vim.cmd('qa!')
'''
BIG = "".join(f"Line {i}: sessions, compaction and memory notes.\n" for i in range(800))
COLUMNS, LINES = 150, 40


def run_in_terminal(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> int:
    """Run ``argv`` in a pseudo-terminal of COLUMNS x LINES (its output is read and dropped);
    its exit status."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: size the terminal, then become Neovim
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    if not os.read(fd, 65536):
                        break
                except OSError:  # the child closed the terminal
                    break
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
        else:
            os.kill(pid, 9)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def user_settings(nvim: Nvim, permissions: str | None = None) -> None:
    """The user's own settings in the private HOME of ``nvim`` (and permission rules)."""
    folder = Path(nvim.env()["HOME"]) / ".PseudoClaude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(USER_SETTINGS)
    if permissions is not None:
        (folder / "permissions.yaml").write_text(permissions)


def run_script(nvim: Nvim, workspace: Path, script: Path, tmp: Path, shots: Path,
               spec: dict[str, Any], timeout: float = 300) -> str | None:
    """Run a screenshots script (``luafile``) in a real terminal against the fake model with
    ``spec``; ``None``, or why it failed (the step and its error, from its report in
    ``tmp``)."""
    report = tmp / "report.json"
    with FakeModelServer(spec) as model:
        env = nvim.env(PC_PLUGIN=str(PLUGIN), PC_WORKSPACE=str(workspace),
                       PC_PYTHON=sys.executable, PC_BASE_URL=model.base_url,
                       PC_REPORT=str(report), PC_TIMEOUT_MS="60000",
                       PC_SHOTS=str(shots), TERM="xterm-256color", COLORTERM="truecolor")
        code = run_in_terminal([nvim.binary, "--clean", "-c", f"luafile {script}"], env,
                               workspace, timeout=timeout)
    if code != 0 or not report.exists() or '"ok":true' not in report.read_text():
        failed = json.loads(report.read_text()) if report.exists() else {}
        return (f"exit {code}: step {failed.get('failed_step')!r} failed: {failed.get('error')}"
                + (report.read_text()[-4000:] if report.exists() else ""))
    return None


def permission_shots(tmp: Path, shots: Path) -> str | None:
    """Run ``PERMISSIONS_LUA`` in a folder of its own; ``None``, or why it failed."""
    workspace = make_workspace(tmp)
    (workspace / "app.py").write_text(APP)
    nvim = Nvim(nvim_binary(), tmp)
    user_settings(nvim, USER_PERMISSIONS)
    script = tmp / "nvim_screenshots_permissions.lua"
    script.write_text(PERMISSIONS_LUA.replace("@EDITOR_TESTS@", json.dumps(str(HERE))))
    return run_script(nvim, workspace, script, tmp, shots, e2e_script(NPM_TEST))


def plan_shots(tmp: Path, shots: Path) -> str | None:
    """Run ``PLAN_LUA`` in a folder of its own; ``None``, or why it failed."""
    workspace = make_workspace(tmp)
    (workspace / "README.md").write_text("# Demo project\n\nIt keeps sessions and memory.\n")
    (workspace / "app.py").write_text(APP)
    nvim = Nvim(nvim_binary(), tmp)
    user_settings(nvim)
    script = tmp / "nvim_screenshots_plan.lua"
    script.write_text(PLAN_LUA.replace("@EDITOR_TESTS@", json.dumps(str(HERE)))
                      .replace("@FEEDBACK@", json.dumps(PLAN_FEEDBACK)))
    return run_script(nvim, workspace, script, tmp, shots, e2e_script(PLAN_RULES))


def hooks_shots(tmp: Path, shots: Path) -> str | None:
    """Run ``HOOKS_LUA`` in a folder of its own (the user's hooks and a skill, the folder's own
    ``hooks.yaml`` and a skill in ``.claude/skills``); ``None``, or why it failed."""
    workspace = make_workspace(tmp)
    (workspace / "app.py").write_text(APP)
    (workspace / ".PseudoClaude").mkdir()
    (workspace / ".PseudoClaude" / "hooks.yaml").write_text(FOLDER_HOOKS)
    (workspace / ".claude" / "skills" / "explain-code").mkdir(parents=True)
    (workspace / ".claude" / "skills" / "explain-code" / "SKILL.md").write_text(SKILL)
    nvim = Nvim(nvim_binary(), tmp)
    user_settings(nvim)
    user = Path(nvim.env()["HOME"]) / ".PseudoClaude"
    (user / "hooks.yaml").write_text(USER_HOOKS)
    (user / "skills").mkdir()
    (user / "skills" / "changelog.md").write_text(USER_SKILL)
    script = tmp / "nvim_screenshots_hooks.lua"
    script.write_text(HOOKS_LUA.replace("@EDITOR_TESTS@", json.dumps(str(HERE))))
    return run_script(nvim, workspace, script, tmp, shots, e2e_script())


def agents_shots(tmp: Path, shots: Path) -> str | None:
    """Run ``AGENTS_LUA`` in a folder of its own; ``None``, or why it failed."""
    workspace = make_workspace(tmp)
    (workspace / "README.md").write_text("# Demo project\n\nIt keeps sessions and memory.\n")
    (workspace / "app.py").write_text(APP)
    nvim = Nvim(nvim_binary(), tmp)
    user_settings(nvim)
    script = tmp / "nvim_screenshots_agents.lua"
    script.write_text(AGENTS_LUA.replace("@EDITOR_TESTS@", json.dumps(str(HERE))))
    return run_script(nvim, workspace, script, tmp, shots, e2e_script(AGENT_RULES))


def main() -> int:
    flags = ("--permissions", "--plan", "--hooks", "--agents")
    args = [a for a in sys.argv[1:] if a not in flags]
    only_permissions = "--permissions" in sys.argv[1:]
    only_plan = "--plan" in sys.argv[1:]
    only_hooks = "--hooks" in sys.argv[1:]
    only_agents = "--agents" in sys.argv[1:]
    out = Path(args[0]) if args else ROOT / "editors" / "media"
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        shots = tmp / "shots"
        shots.mkdir()
        for part in ("permissions", "plan", "hooks", "agents"):
            (tmp / part).mkdir()
        only = only_permissions or only_plan or only_hooks or only_agents
        failure = permission_shots(tmp / "permissions", shots) \
            if only_permissions or not only else None
        if failure is None and (only_plan or not only):
            failure = plan_shots(tmp / "plan", shots)
        if failure is None and (only_hooks or not only):
            failure = hooks_shots(tmp / "hooks", shots)
        if failure is None and (only_agents or not only):
            failure = agents_shots(tmp / "agents", shots)
        if failure:
            print(failure, file=sys.stderr)
            return 1
        if not only and main_shots(tmp, shots):
            return 1
        out.mkdir(parents=True, exist_ok=True)
        for page in sorted(shots.glob("*.html")):
            png = out / (page.stem + ".png")
            subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--window-size={COLUMNS * 9 + 24},{LINES * 19 + 24}",
                 f"--screenshot={png}", page.as_uri()],
                check=True, capture_output=True, timeout=120)
            print(png)
    return 0


def main_shots(tmp: Path, shots: Path) -> int:
    """The screenshots of ``nvim_screenshots.lua`` into ``shots``; 0, or 1 after saying why."""
    workspace = make_workspace(tmp)
    (workspace / "README.md").write_text("# Demo project\n\nIt keeps sessions and memory.\n")
    (workspace / "app.py").write_text(APP)
    (workspace / "big.txt").write_text(BIG)
    (workspace / "docs").mkdir()
    (workspace / "docs" / "usage.md").write_text("# Usage\n\nCall greet(name).\n")
    # A git repository (a session in a worktree needs one), everything committed.
    for args in (["init", "-q"], ["config", "user.email", "shots@example.com"],
                 ["config", "user.name", "Screenshots"], ["add", "."],
                 ["commit", "-q", "-m", "The demo project"]):
        subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)
    nvim = Nvim(nvim_binary(), tmp)
    user_settings(nvim)
    rules = [GREETING, *RESUMED, *UNSAVED, *REWIND, *SESSIONS, *WORKTREE, *EDITS, *PROPOSALS]
    failure = run_script(nvim, workspace, HERE / "nvim_screenshots.lua", tmp, shots,
                         e2e_script(rules), timeout=600)
    if failure:
        print(failure, file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
