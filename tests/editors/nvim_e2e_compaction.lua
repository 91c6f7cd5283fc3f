-- End to end in a real Neovim: :PseudoClaudeContext, :PseudoClaudePreview and :PseudoClaudeUndo
-- against the real server (its `pseudoclaude/compact/preview`, `pseudoclaude/compact/undo` and the
-- context `breakdown`, SPEC §11) and the scripted fake model.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_compaction.lua
-- Environment and helpers: nvim_harness.lua beside this file.
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take, contains = h.report, h.step, h.wait_for, h.take, h.contains
local workspace = h.workspace
local name = vim.fs.basename(workspace)

local client, session_id
local protocol, context

--- `pseudoclaude/context` now, straight from the server.
local function context_now()
  local resp = client:request_sync(protocol.requests.context, { workspace = vim.uri_from_fname(workspace) }, 10000)
  assert(resp and resp.result, 'context: ' .. vim.inspect(resp))
  return resp.result
end

local function log_bytes()
  local path = vim.fs.joinpath(workspace, '.PseudoClaude', 'sessions', session_id, 'conversation.jsonl')
  local f = assert(io.open(path, 'rb'), 'no log at ' .. path)
  local data = f:read('*a')
  f:close()
  return data
end

local function shown_errors()
  return vim.tbl_isempty(h.errors_shown()) or error('errors shown: ' .. vim.inspect(h.errors_shown()), 2)
end

step('setup', function()
  client = h.setup_plugin()
  protocol, context = require('pseudoclaude.protocol'), require('pseudoclaude.context')
end)

step('two runs fill the context', function()
  -- A second read of the (large) README puts the first run outside the recent window.
  for _, prompt in ipairs({ 'What is this project?', 'Read the README again' }) do
    vim.cmd('PseudoClaudeAsk ' .. prompt)
    local done = take('PseudoClaudeRunDone')
    assert(done.error == nil and done.result.stopReason == 'completed', vim.inspect(done))
    session_id = done.result.sessionId
  end
  shown_errors()
end)

step(':PseudoClaudeContext shows the breakdown', function()
  local c = context_now()
  local b = assert(c.breakdown, 'the context result has no breakdown')
  local sum = 0
  for _, key in ipairs(protocol.breakdown_categories) do
    assert(type(b[key]) == 'number' and b[key] >= 0, key .. ': ' .. vim.inspect(b[key]))
    sum = sum + b[key]
  end
  assert(sum == c.estimatedTokens, string.format('categories add up to %d, estimate %d', sum, c.estimatedTokens))
  assert(b.messages > 0 and b.toolResults + b.spilled > 0 and b.system > 0, vim.inspect(b))
  assert(b.free == math.max(0, c.contextWindow - c.estimatedTokens), 'free ' .. b.free)
  local before = vim.api.nvim_get_current_win()
  vim.cmd('PseudoClaudeContext')
  local float = wait_for('the context float', function()
    return context.float
  end)
  assert(vim.api.nvim_get_current_win() == float.win, 'the float is not entered')
  local lines = vim.api.nvim_buf_get_lines(float.buf, 0, -1, false)
  assert(vim.deep_equal(lines, context.breakdown_lines(c)), vim.inspect(lines))
  local text = table.concat(lines, '\n')
  for _, label in ipairs({ 'System', 'Rules', 'Memory', 'Tools', 'Summary', 'Messages', 'Tool calls',
    'Tool results', 'Spilled', 'Free', 'Reserved' }) do
    contains(text, '\n' .. label .. ' ', 'breakdown float')
  end
  contains(text, '█', 'a bar')
  report.breakdown_float = lines
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'x', false)
  assert(not vim.api.nvim_win_is_valid(float.win), '<Esc> did not close the float')
  assert(vim.api.nvim_get_current_win() == before, 'back in the window before')
end)

local messages_before, preview

step(':PseudoClaudePreview, then Cancel: nothing changes', function()
  messages_before = context_now().messageCount
  local log = log_bytes()
  local asked = #h.selects
  h.answer({ 'Cancel' })
  vim.cmd('PseudoClaudePreview only a preview, never sent')
  local shown = take('PseudoClaudePreview')
  assert(shown.error == nil, 'preview failed: ' .. vim.inspect(shown.error))
  local p = shown.result
  assert(p.wouldSummarize == true, vim.inspect(p))
  assert(p.summarizedMessages > 0 and p.keptMessages > 0, vim.inspect(p))
  assert(p.summarizedMessages + p.keptMessages == messages_before, vim.inspect({ p, messages_before }))
  assert(p.estimatedAfterTokens < p.beforeTokens, vim.inspect(p))
  local prompt = h.selects[asked + 1]
  assert(prompt and prompt.kind == 'pseudoclaude_compact', vim.inspect(h.selects))
  assert(vim.deep_equal(prompt.labels, { 'Compact', 'Cancel' }), vim.inspect(prompt.labels))
  assert(prompt.prompt == 'Compact the context of ' .. name .. '?', prompt.prompt)
  assert(context.float == nil, 'the preview float stayed open')
  vim.wait(300)
  assert(log_bytes() == log, 'the preview changed the log')
  assert(not h.notified('PseudoClaude: compacting'), 'Cancel compacted')
  assert(context_now().messageCount == messages_before, 'the conversation changed')
  report.preview = p
  shown_errors()
end)

step(':PseudoClaudePreview, then Compact: compacts as previewed, with the fact check', function()
  h.answer({ 'Compact' })
  vim.cmd('PseudoClaudePreview focus on the README')
  preview = take('PseudoClaudePreview').result
  assert(preview and preview.wouldSummarize, vim.inspect(preview))
  local done = take('PseudoClaudeCompactDone')
  assert(done.error == nil, 'compact failed: ' .. vim.inspect(done.error))
  local r = done.result
  assert(r.summarized == true and r.afterTokens < r.beforeTokens, vim.inspect(r))
  assert(type(r.factCheck) == 'table' and r.factCheck.checked >= 1, 'fact check: ' .. vim.inspect(r.factCheck))
  local n = h.notified('PseudoClaude: Compacted: the earlier conversation is now a summary (')
  assert(n, 'no compact message: ' .. vim.inspect(report.notifications))
  contains(n.msg, '; summary checked', 'compact message')
  assert(n.msg == 'PseudoClaude: ' .. r.message, 'not the server\'s message: ' .. n.msg)
  -- SPEC §11: a compaction after a preview keeps exactly keptMessages after its summary pair.
  local after = context_now()
  assert(after.messageCount == preview.keptMessages + 2,
    string.format('%d messages after compacting, preview kept %d', after.messageCount, preview.keptMessages))
  assert(after.breakdown.summary > 0, 'no summary in the breakdown: ' .. vim.inspect(after.breakdown))
  report.compact = r
  shown_errors()
end)

step(':PseudoClaudeUndo restores the summarized messages', function()
  vim.cmd('PseudoClaudeUndo')
  local done = take('PseudoClaudeUndoDone')
  assert(done.error == nil, 'undo failed: ' .. vim.inspect(done.error))
  local r = done.result
  assert(r.restored == true, vim.inspect(r))
  assert(r.messageCount == messages_before, string.format('%d messages after undo, %d before', r.messageCount, messages_before))
  assert(r.afterTokens > r.beforeTokens, vim.inspect(r))
  assert(h.notified('PseudoClaude: ' .. r.message), vim.inspect(report.notifications))
  contains(h.transcript_text(), '· ' .. r.message, 'transcript')
  local c = context_now()
  assert(c.messageCount == messages_before and c.breakdown.summary == 0, vim.inspect(c))
  report.undo = r
  shown_errors()
end)

step(':PseudoClaudeUndo with nothing left says why', function()
  vim.cmd('PseudoClaudeUndo')
  local done = take('PseudoClaudeUndoDone')
  assert(done.error == nil, 'undo failed: ' .. vim.inspect(done.error))
  assert(done.result.restored == false and type(done.result.reason) == 'string', vim.inspect(done.result))
  local n = h.notified('PseudoClaude: Nothing to undo: ')
  assert(n and n.msg:find(done.result.reason, 1, true), vim.inspect(report.notifications))
  report.undo_again = done.result
  shown_errors()
end)

step('stop', function()
  h.stop(client)
end)

h.done('nvim compaction e2e')
