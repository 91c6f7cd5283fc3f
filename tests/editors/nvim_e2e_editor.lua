-- The agent lives in the editor, in a real Neovim against the real server: every file buffer of
-- the folder is attached (one loaded before the client started, one without a filetype), so the
-- server syncs them; the agent reads a buffer's unsaved text and its edit of that buffer comes as
-- workspace/applyEdit: the buffer changes, stays modified, the file on disk does not, and `u`
-- takes the edit back in one step. The diagnostics set with vim.diagnostic reach the model
-- through get_diagnostics (pseudoclaude/diagnostics), the pseudoclaude clients' own left out;
-- :checkhealth says so.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_editor.lua
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take = h.report, h.step, h.wait_for, h.take
local contains = h.contains
local workspace = h.workspace

local client
local APP = workspace .. '/app.py'
local LIB = workspace .. '/lib.py'
local NOTES = workspace .. '/NOTES'

local function read(path)
  local f = assert(io.open(path, 'rb'))
  local data = f:read('*a')
  f:close()
  return data
end

local function attached(bufnr)
  return vim.lsp.get_clients({ name = 'pseudoclaude', bufnr = bufnr })[1] ~= nil
end

local function lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

local edits = {}
vim.api.nvim_create_autocmd('User', {
  pattern = 'PseudoClaudeEdit',
  callback = function(ev)
    edits[#edits + 1] = ev.data
  end,
})
local asked = {}
vim.api.nvim_create_autocmd('User', {
  pattern = 'PseudoClaudeDiagnostics',
  callback = function(ev)
    asked[#asked + 1] = ev.data
  end,
})

local app_buf, app_text

step('setup: every file buffer of the folder is attached', function()
  app_text = read(APP)
  -- Loaded before the client started (and before `filetype on`: no FileType for it).
  local lib = vim.fn.bufadd(LIB)
  vim.fn.bufload(lib)
  vim.bo[lib].buflisted = true
  client = h.setup_plugin()
  local exp = client.capabilities.experimental.pseudoclaude
  assert(exp.diagnostics == true and exp.approvals == true, vim.inspect(exp))
  assert(client.capabilities.workspace.workspaceEdit.documentChanges == true, 'documentChanges')
  assert(client.server_capabilities.textDocumentSync, 'the server does not sync documents')
  wait_for('lib.py (loaded before the client) to be attached', function()
    return attached(lib)
  end)
  vim.cmd.edit(vim.fn.fnameescape(NOTES))
  assert(vim.bo.filetype == '', 'NOTES has a filetype: ' .. vim.bo.filetype)
  local notes = vim.api.nvim_get_current_buf()
  wait_for('NOTES (no filetype) to be attached', function()
    return attached(notes)
  end)
  vim.cmd.edit(vim.fn.fnameescape(APP))
  app_buf = vim.api.nvim_get_current_buf()
  wait_for('app.py to be attached', function()
    return attached(app_buf)
  end)
  assert(#vim.lsp.get_clients({ name = 'pseudoclaude' }) == 1, 'more than one client')
  report.attached = { lib = attached(lib), notes = attached(notes), app = attached(app_buf) }
end)

step('the agent edits an unsaved buffer: in the buffer, undoable, the disk untouched', function()
  -- An unsaved change typed by hand: the line the agent edits exists only in the buffer.
  vim.api.nvim_feedkeys('ggO# TODO: say hello to the world' .. vim.keycode('<Esc>'), 'x', false)
  assert(vim.bo[app_buf].modified, 'not modified')
  local before = lines(app_buf)
  assert(before[1] == '# TODO: say hello to the world', vim.inspect(before))
  -- Neovim sends its didChange debounced: wait a little so that the server has it.
  vim.wait(400)
  h.forget('PseudoClaudeRunDone')
  vim.cmd('PseudoClaudeAsk EDIT-UNSAVED please')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil and done.result.stopReason == 'completed', vim.inspect(done))
  contains(h.transcript_text(), '✓ edit_file', 'transcript')
  local after = lines(app_buf)
  report.after_edit = after
  assert(after[1] == '# DONE: said hello to the world', vim.inspect(after))
  assert(vim.deep_equal(vim.list_slice(after, 2), vim.list_slice(before, 2)), 'other lines changed')
  assert(vim.bo[app_buf].modified, 'the buffer is not modified any more')
  assert(read(APP) == app_text, 'app.py changed on disk: ' .. read(APP))
  assert(#edits == 1 and edits[1].applied == true, vim.inspect(edits))
  report.edits = edits
  -- `u` in the buffer's window takes the agent's edit back, and only that.
  local win = vim.fn.bufwinid(app_buf)
  assert(win ~= -1, 'app.py is not shown')
  vim.api.nvim_set_current_win(win)
  vim.cmd('stopinsert')
  vim.api.nvim_feedkeys('u', 'x', false)
  local undone = lines(app_buf)
  report.after_undo = undone
  assert(vim.deep_equal(undone, before), 'u did not take the edit back in one step: ' .. vim.inspect(undone))
  assert(vim.bo[app_buf].modified, 'the unsaved change is gone')
  assert(read(APP) == app_text, 'app.py changed on disk')
end)

step('diagnostics set with vim.diagnostic reach the model (get_diagnostics)', function()
  local ns = vim.api.nvim_create_namespace('testlint')
  vim.diagnostic.set(ns, app_buf, {
    { lnum = 4, col = 4, end_lnum = 4, end_col = 9, severity = vim.diagnostic.severity.WARN,
      message = 'greet is never called', source = 'testlint' },
  })
  local readme = vim.fn.bufnr(workspace .. '/README.md')
  vim.diagnostic.set(ns, readme, {
    { lnum = 0, col = 2, severity = vim.diagnostic.severity.ERROR, message = 'heading too short', source = 'testlint' },
  })
  -- What a pseudoclaude client published is left out.
  local own = vim.lsp.diagnostic.get_namespace(client.id, false)
  vim.diagnostic.set(own, app_buf, { { lnum = 0, col = 0, severity = 1, message = 'from pseudoclaude itself' } })
  h.forget('PseudoClaudeRunDone')
  vim.cmd('PseudoClaudeAsk CHECK-DIAGNOSTICS please')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil and done.result.stopReason == 'completed', vim.inspect(done))
  contains(h.transcript_text(), '✓ get_diagnostics', 'transcript')
  assert(#asked >= 1, 'the server did not ask for diagnostics')
  report.diagnostics_asked = asked
end)

step(':checkhealth pseudoclaude: the buffer attached, documents synced, diagnostics answered', function()
  vim.api.nvim_set_current_win(vim.fn.bufwinid(app_buf))
  vim.cmd('checkhealth pseudoclaude')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  contains(text, 'Editor (unsaved buffers, diagnostics) ~', 'section')
  contains(text, 'the server syncs open documents', 'sync')
  contains(text, 'app.py is attached to the pseudoclaude client', 'attached')
  contains(text, 'the agent can ask for the diagnostics vim.diagnostic shows', 'diagnostics')
  vim.cmd('tabclose')
end)

step('stop', function()
  h.no_errors()
  h.stop(client)
end)

h.done('nvim editor e2e')
