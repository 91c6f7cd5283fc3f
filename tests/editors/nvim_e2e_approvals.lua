-- Diff approvals in a real Neovim (SPEC §11 "Diff approvals"): with `approvals.write = ask` the
-- server sends `pseudoclaude/approve`; the plugin opens a diff split (before | after). `d` denies
-- (the file stays byte-identical), `a` writes, closing the tab denies, a cancelled run closes the
-- split; with `approvals = { diff = false }` the server asks with window/showMessageRequest.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_approvals.lua
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take = h.report, h.step, h.wait_for, h.take
local contains, errors_shown = h.contains, h.errors_shown
local workspace = h.workspace

local client
local NOTES = workspace .. '/notes.txt'
local ORIGINAL = 'one\ntwo\nthree\n'

local function read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data
end

local function tabs()
  return #vim.api.nvim_list_tabpages()
end

--- Start a run and wait for its approval split; returns what the split shows.
local function ask_and_wait(prompt)
  h.forget('PseudoClaudeApprovalShown')
  vim.cmd('PseudoClaudeAsk ' .. prompt)
  local shown = take('PseudoClaudeApprovalShown')
  assert(shown.diff == true, 'not shown as a diff: ' .. vim.inspect(shown))
  local pending = require('pseudoclaude.approvals').pending[1]
  assert(pending and pending.view, 'no pending approval with a view')
  local view = pending.view
  local function side(s)
    return {
      name = vim.api.nvim_buf_get_name(s.buf),
      lines = vim.api.nvim_buf_get_lines(s.buf, 0, -1, false),
      diff = vim.wo[s.win].diff,
      filetype = vim.bo[s.buf].filetype,
      modifiable = vim.bo[s.buf].modifiable,
      winbar = vim.wo[s.win].winbar,
    }
  end
  return {
    params = shown.params,
    view = view,
    left = side(view.left),
    right = side(view.right),
    tab = vim.api.nvim_get_current_tabpage() == view.tab,
    request_id = pending.request_id,
  }
end

step('setup', function()
  local f = assert(io.open(NOTES, 'wb'))
  f:write(ORIGINAL)
  f:close()
  client = h.setup_plugin({ settings = { approvals = { runCommand = 'ask', write = 'ask' } } })
  -- The capability that makes the server send pseudoclaude/approve.
  local exp = client.capabilities.experimental
  assert(exp and exp.pseudoclaude and exp.pseudoclaude.approvals == true, vim.inspect(client.capabilities.experimental))
end)

step('d denies: the file stays byte-identical', function()
  local before_tabs = tabs()
  local s = ask_and_wait('EDIT-NOTES please')
  assert(tabs() == before_tabs + 1 and s.tab, 'the split is not in a new tab')
  assert(s.params.kind == 'write' and s.params.tool == 'edit_file' and s.params.path == 'notes.txt', vim.inspect(s.params))
  assert(type(s.request_id) == 'string' and s.request_id:find('pseudoclaude-approval-', 1, true), tostring(s.request_id))
  assert(vim.endswith(s.left.name, 'pseudoclaude://approve/notes.txt.before'), s.left.name)
  assert(vim.endswith(s.right.name, 'pseudoclaude://approve/notes.txt.after'), s.right.name)
  assert(vim.deep_equal(s.left.lines, { 'one', 'two', 'three' }), vim.inspect(s.left.lines))
  assert(vim.deep_equal(s.right.lines, { 'one', 'TWO', 'three' }), vim.inspect(s.right.lines))
  assert(s.left.diff and s.right.diff, 'diffthis not set')
  local ft = vim.filetype.match({ filename = 'notes.txt' }) or ''
  assert(s.left.filetype == ft and s.right.filetype == ft, s.left.filetype)
  assert(not s.left.modifiable and not s.right.modifiable, 'an approval side is modifiable')
  contains(s.right.winbar, 'a allow once · s allow for this session · d deny', 'hint')
  contains(s.left.winbar, 'before · %<edit_file notes.txt', 'left winbar')
  report.approval_split = { left = s.left, right = s.right }
  -- The card in the transcript says it waits; then `d`.
  vim.api.nvim_feedkeys('d', 'x', false)
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  assert(tabs() == before_tabs, 'the split did not close')
  assert(read(NOTES) == ORIGINAL, 'notes.txt changed: ' .. vim.inspect(read(NOTES)))
  contains(h.transcript_text(), '⊘ edit_file denied: ', 'transcript')
end)

step('a writes', function()
  local s = ask_and_wait('EDIT-NOTES again')
  assert(s.tab, 'not in the split')
  vim.api.nvim_feedkeys('a', 'x', false)
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  assert(read(NOTES) == 'one\nTWO\nthree\n', 'notes.txt: ' .. vim.inspect(read(NOTES)))
  contains(h.transcript_text(), '✓ edit_file · ', 'transcript')
end)

step('a new file: empty left side, filetype from the path; closing the tab denies', function()
  local before_tabs = tabs()
  local s = ask_and_wait('NEW-FILE please')
  assert(s.params.tool == 'write_file' and s.params.before == '', vim.inspect(s.params))
  assert(vim.deep_equal(s.left.lines, { '' }), vim.inspect(s.left.lines))
  assert(vim.deep_equal(s.right.lines, { 'def main():', '    print("hi")' }), vim.inspect(s.right.lines))
  assert(s.right.filetype == 'python', s.right.filetype)
  contains(s.left.winbar, 'hello.py (new file)', 'left winbar')
  vim.cmd('tabclose')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  assert(tabs() == before_tabs, 'tabs left: ' .. tabs())
  assert(read(workspace .. '/hello.py') == nil, 'hello.py was written')
  local decided = take('PseudoClaudeApproval')
  assert(decided.decision == 'deny', vim.inspect(decided))
end)

step('a cancelled run closes the split (the server cancels its request)', function()
  local before_tabs = tabs()
  local s = ask_and_wait('EDIT-BACK once more')
  assert(s.tab, 'not in the split')
  h.forget('PseudoClaudeApproval')
  vim.cmd('PseudoClaudeCancel')
  local decided = take('PseudoClaudeApproval')
  assert(decided.cancelled == true and decided.decision == nil, vim.inspect(decided))
  local done = take('PseudoClaudeRunDone')
  assert(done.error and done.error.code == -32800, 'not cancelled: ' .. vim.inspect(done))
  wait_for('the split to close', function()
    return tabs() == before_tabs
  end)
  assert(#require('pseudoclaude.approvals').pending == 0, 'still pending')
  assert(read(NOTES) == 'one\nTWO\nthree\n', 'notes.txt changed')
end)

step('s allows writes for the session: the next write is not asked', function()
  local s = ask_and_wait('EDIT-BACK please')
  assert(s.tab, 'not in the split')
  h.forget('PseudoClaudeApprovalShown')
  vim.api.nvim_feedkeys('s', 'x', false)
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  assert(read(NOTES) == ORIGINAL, 'notes.txt: ' .. vim.inspect(read(NOTES)))
  vim.cmd('PseudoClaudeAsk EDIT-NOTES without asking')
  local again = take('PseudoClaudeRunDone')
  assert(again.error == nil, vim.inspect(again))
  assert(read(NOTES) == 'one\nTWO\nthree\n', 'notes.txt: ' .. vim.inspect(read(NOTES)))
end)

step('a command is asked with vim.ui.select', function()
  local before = #h.selects
  h.answer({ 'Deny' })
  vim.cmd('PseudoClaudeAsk please run the tests')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  local prompt = h.selects[before + 1]
  assert(prompt and prompt.kind == 'pseudoclaude_approval', vim.inspect(h.selects))
  contains(prompt.prompt, 'run_command wants to run: true (in ' .. workspace, 'command prompt')
  assert(vim.deep_equal(prompt.labels, { 'Allow once', 'Allow for this session',
    'Always allow Bash(true:*)', 'Deny' }), vim.inspect(prompt.labels))
  contains(h.transcript_text(), '⊘ run_command denied: ', 'transcript')
end)

step('approvals.diff = false: window/showMessageRequest', function()
  h.stop(client)
  client = h.setup_plugin({ settings = { approvals = { runCommand = 'ask', write = 'ask' } }, approvals = { diff = false } })
  local exp = client.capabilities.experimental
  assert(exp.pseudoclaude.approvals == false, vim.inspect(exp))
  local before, before_tabs = #h.selects, tabs()
  h.answer({ 'Deny' })
  vim.cmd('PseudoClaudeAsk EDIT-BACK please')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  local prompt = h.selects[before + 1]
  assert(prompt and prompt.kind == 'pseudoclaude_approval', vim.inspect(h.selects))
  contains(prompt.prompt, 'PseudoClaude wants to use edit_file', 'showMessageRequest prompt')
  assert(tabs() == before_tabs, 'a split opened')
  assert(read(NOTES) == 'one\nTWO\nthree\n', 'notes.txt changed')
end)

step('stop', function()
  assert(vim.tbl_isempty(errors_shown()), vim.inspect(errors_shown()))
  h.stop(client)
end)

h.done('nvim approvals e2e')
