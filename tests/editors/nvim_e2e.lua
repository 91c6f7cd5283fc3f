-- End to end in a real Neovim: the plugin against the real server and the scripted fake model.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e.lua
-- Environment and helpers: nvim_harness.lua beside this file.
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take = h.report, h.step, h.wait_for, h.take
local transcript_text, contains, notified, errors_shown = h.transcript_text, h.contains, h.notified, h.errors_shown
local selects, workspace = h.selects, h.workspace

local client

step('setup', function()
  client = h.setup_plugin()
  report.statusline_before = require('pseudoclaude').statusline()
end)

local first_session

step('ask', function()
  vim.cmd('PseudoClaudeAsk What is this project?')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, 'run failed: ' .. vim.inspect(done.error))
  local r = done.result
  assert(r.stopReason == 'completed', 'stopReason ' .. tostring(r.stopReason))
  assert(r.iterations == 2, 'iterations ' .. tostring(r.iterations))
  first_session = r.sessionId
  local text = transcript_text()
  contains(text, '━━ You · ' .. vim.fs.basename(workspace) .. ' ━━\nWhat is this project?\n━━ PseudoClaude ━━', 'transcript')
  contains(text, '▸ read_file(path: README.md)', 'transcript')
  contains(text, '✓ read_file · ', 'transcript')
  contains(text, 'I read README.md with read_file.', 'transcript')
  contains(text, '── completed · 2 iterations · ', 'transcript')
  assert(#vim.fn.win_findbuf(vim.fn.bufnr('pseudoclaude://transcript')) == 1, 'transcript window not shown')
  for _, kind in ipairs({ 'text', 'toolCall', 'toolResult', 'usage', 'stop' }) do
    assert(vim.tbl_contains(report.events, kind), 'no ' .. kind .. ' event in ' .. vim.inspect(report.events))
  end
  report.statusline_after_ask = wait_for('the meter to show tokens', function()
    local s = require('pseudoclaude').statusline()
    return s:match('^%d[%d.]*k?/200k$') and s
  end)
  assert(vim.tbl_isempty(errors_shown()), vim.inspect(errors_shown()))
end)

step('approval', function()
  h.answer({ 'Allow once' })
  vim.cmd('PseudoClaudeAsk please run the tests')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, 'run failed: ' .. vim.inspect(done.error))
  local prompt = selects[#selects]
  assert(prompt and prompt.kind == 'pseudoclaude_approval', 'no approval prompt: ' .. vim.inspect(selects))
  contains(prompt.prompt, 'run_command', 'approval prompt')
  assert(vim.deep_equal(prompt.labels, { 'Allow once', 'Allow for this session',
    'Always allow Bash(true:*)', 'Deny' }), vim.inspect(prompt.labels))
  local text = transcript_text()
  contains(text, '▸ run_command(command: true)', 'transcript')
  contains(text, '✓ run_command · ', 'transcript')
  report.approval_prompt = prompt.prompt
end)

step('compact', function()
  -- A second read of the (large) README puts the first run outside the recent window.
  vim.cmd('PseudoClaudeAsk Read the README again')
  local run = take('PseudoClaudeRunDone')
  assert(run.error == nil and run.result.stopReason == 'completed', vim.inspect(run))
  local before = require('pseudoclaude').statusline()
  vim.cmd('PseudoClaudeCompact focus on the README')
  local done = take('PseudoClaudeCompactDone')
  assert(done.error == nil, 'compact failed: ' .. vim.inspect(done.error))
  local r = done.result
  assert(r.summarized == true and r.afterTokens < r.beforeTokens, vim.inspect(r))
  assert(notified('PseudoClaude: Compacted: the earlier conversation is now a summary ('), 'no compact message: ' .. vim.inspect(report.notifications))
  local after = wait_for('the meter to drop', function()
    local s = require('pseudoclaude').statusline()
    return s ~= before and s:match('^%d[%d.]*k?/200k$') and s
  end)
  report.compact = r
  report.meter_compact = { before = before, after = after }
end)

step('remember', function()
  h.answer({ 'project', 'project_knowledge' })
  vim.cmd('PseudoClaudeRemember The tests run with make test')
  local done = take('PseudoClaudeRemembered')
  assert(done.error == nil, 'remember failed: ' .. vim.inspect(done.error))
  local path = vim.uri_to_fname(done.result.uri)
  assert(vim.fn.filereadable(path) == 1, 'note not written: ' .. path)
  assert(notified('PseudoClaude: remembered in ' .. done.result.filename), 'no remember message')
  report.note = done.result
end)

step('memory', function()
  local before = #selects
  h.answer({ 'Project · [project_knowledge]' })
  vim.cmd('PseudoClaudeMemory')
  local expected = vim.uri_to_fname(report.note.uri)
  wait_for('the note to open', function()
    return vim.api.nvim_buf_get_name(0) == expected
  end)
  local menu = selects[before + 1]
  assert(menu.kind == 'pseudoclaude_memory', vim.inspect(menu))
  assert(menu.labels[1]:find('Memory index as the model sees it', 1, true), vim.inspect(menu.labels))
  local joined = table.concat(menu.labels, '\n')
  contains(joined, 'Project · MEMORY.md', 'memory menu')
  contains(joined, 'Project · [project_knowledge]', 'memory menu')
  report.memory_menu = menu.labels
  -- The index as the model sees it, in a scratch buffer.
  h.answer({ 'Memory index' })
  vim.cmd('PseudoClaudeMemory')
  local index = wait_for('the memory index buffer', function()
    return vim.api.nvim_buf_get_name(0):find('pseudoclaude://memory-index', 1, true)
      and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  end)
  contains(index, '## Project Memory', 'memory index')
  contains(index, report.note.filename, 'memory index')
  vim.cmd.edit(vim.fn.fnameescape(workspace .. '/README.md'))
end)

step('new session', function()
  vim.cmd('PseudoClaudeNew')
  wait_for('the new session note', function()
    return transcript_text():find('· new session ', 1, true)
  end)
  local ctx = take('PseudoClaudeContext')
  assert(ctx.sessionId ~= first_session, 'still in the first session')
end)

step('sessions and resume', function()
  local before = #selects
  h.answer({ 'What is this project?' })
  vim.cmd('PseudoClaudeSessions')
  local done = take('PseudoClaudeResumed')
  assert(done.error == nil, 'resume failed: ' .. vim.inspect(done.error))
  assert(done.result.sessionId == first_session, vim.inspect(done.result))
  assert(done.result.messageCount >= 4, vim.inspect(done.result))
  local menu = selects[before + 1]
  assert(menu.kind == 'pseudoclaude_session', vim.inspect(menu))
  local label
  for _, l in ipairs(menu.labels) do
    if l:find('What is this project?', 1, true) then
      label = l
    end
  end
  assert(label and label:find('messages', 1, true) and label:find('claude', 1, true), vim.inspect(menu.labels))
  report.session_menu = menu.labels
  -- (after the compaction, the history starts with the summary; the last question is recent)
  wait_for('the history replay', function()
    return transcript_text():find('You: Read the README again', 1, true)
  end)
  contains(transcript_text(), '· resumed session ' .. first_session, 'transcript')
  -- And by name, with `latest`.
  vim.cmd('PseudoClaudeResume latest')
  local again = take('PseudoClaudeResumed')
  assert(again.error == nil and again.result.sessionId == first_session, vim.inspect(again))
end)

step('a failed request shows its message', function()
  vim.cmd('PseudoClaudeResume 20000101-000000-dead')
  local done = take('PseudoClaudeResumed')
  assert(done.error ~= nil, 'resuming a missing session succeeded')
  local shown = errors_shown()
  assert(#shown == 1 and shown[1]:find('^PseudoClaude: Resume failed: .+'), vim.inspect(shown))
  report.error_shown = shown[1]
end)

step('context', function()
  local before = vim.api.nvim_get_current_win()
  vim.cmd('PseudoClaudeContext')
  local float = wait_for('the context float', function()
    return require('pseudoclaude.context').float
  end)
  local text = table.concat(vim.api.nvim_buf_get_lines(float.buf, 0, -1, false), '\n')
  contains(text, 'of 200,000 tokens', 'context float')
  contains(text, 'Auto-compact at 167,000 tokens', 'context float')
  contains(vim.api.nvim_win_get_config(float.win).title[1][1], vim.fs.basename(workspace), 'float title')
  vim.api.nvim_feedkeys('q', 'x', false)
  assert(not vim.api.nvim_win_is_valid(float.win), 'q did not close the float')
  assert(vim.api.nvim_get_current_win() == before, 'back in the window before')
end)

step('cancel', function()
  vim.cmd('PseudoClaudeAsk a slow question')
  wait_for('the run to start', function()
    return next(require('pseudoclaude').runs) ~= nil
  end)
  wait_for('the model request', function()
    return vim.tbl_contains(report.events, 'text') and transcript_text():find('Thinking slowly', 1, true)
  end)
  vim.cmd('PseudoClaudeCancel')
  local done = take('PseudoClaudeRunDone')
  assert(done.error and done.error.code == -32800, 'not cancelled: ' .. vim.inspect(done))
  contains(transcript_text(), '── canceled ──', 'transcript')
  assert(next(require('pseudoclaude').runs) == nil, 'run still registered')
  assert(not require('pseudoclaude').statusline():find('…', 1, true), 'meter still busy')
end)

step('statusline', function()
  report.statusline_final = require('pseudoclaude').statusline()
  assert(report.statusline_final:match('^%d[%d.]*k?/200k$'), report.statusline_final)
  assert(#errors_shown() == 1, vim.inspect(errors_shown()))
end)

step('server exits during a run', function()
  vim.cmd('PseudoClaudeAsk a slow question, again')
  wait_for('the run to stream', function()
    local text = transcript_text()
    local _, count = text:gsub('Thinking slowly', '')
    return count >= 2
  end)
  local children = vim.system({ 'pgrep', '-P', tostring(vim.fn.getpid()) }, { text = true }):wait()
  local killed = 0
  for pid in (children.stdout or ''):gmatch('%d+') do
    vim.uv.kill(tonumber(pid), 'sigkill')
    killed = killed + 1
  end
  assert(killed == 1, 'expected one server process, found ' .. killed .. ': ' .. tostring(children.stdout))
  local done = take('PseudoClaudeRunDone')
  assert(done.error and done.error.message:find('the server exited', 1, true), vim.inspect(done))
  contains(transcript_text(), '── failed: the server exited (signal 9) during the run ──', 'transcript')
  assert(next(require('pseudoclaude').runs) == nil, 'run still registered')
  local shown = errors_shown()
  assert(shown[#shown]:find('PseudoClaude: Ask failed: the server exited', 1, true), vim.inspect(shown))
end)

step('stop', function()
  h.stop(client)
end)

h.done('nvim e2e')
