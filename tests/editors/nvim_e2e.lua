-- End to end in a real Neovim: the plugin against the real server and the scripted fake model.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e.lua
-- Environment: PC_PLUGIN (editors/nvim), PC_WORKSPACE (a folder with README.md), PC_PYTHON (a
-- Python with the pseudoclaude package), PC_BASE_URL (the fake model), PC_REPORT (a JSON file
-- written at the end), PC_TIMEOUT_MS (per step).
local env = vim.env
local plugin, workspace = assert(env.PC_PLUGIN), assert(env.PC_WORKSPACE)
local python, base_url = assert(env.PC_PYTHON), assert(env.PC_BASE_URL)
local report_path = assert(env.PC_REPORT)
local TIMEOUT = tonumber(env.PC_TIMEOUT_MS or '') or 90000

local report = { steps = {}, notifications = {}, events = {} }
local step_name = 'start'

local function write_report(ok, err)
  report.ok = ok
  report.error = err
  report.failed_step = not ok and step_name or nil
  report.transcript = vim.api.nvim_buf_is_valid(vim.fn.bufnr('pseudoclaude://transcript'))
      and vim.api.nvim_buf_get_lines(vim.fn.bufnr('pseudoclaude://transcript'), 0, -1, false)
    or {}
  local f = assert(io.open(report_path, 'w'))
  f:write(vim.json.encode(report))
  f:close()
end

local function step(name, fn)
  step_name = name
  local t0 = vim.uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    write_report(false, err)
    io.stderr:write(string.format('step %q failed: %s\n', name, err))
    os.exit(1)
  end
  report.steps[#report.steps + 1] = { name = name, ms = math.floor((vim.uv.hrtime() - t0) / 1e6) }
end

--- Wait (processing events) until `cond()` is truthy; fail with `what` after the timeout.
local function wait_for(what, cond, timeout)
  local value
  local ok = vim.wait(timeout or TIMEOUT, function()
    value = cond()
    return value ~= nil and value ~= false
  end, 20)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
  return value
end

local function transcript_text()
  local b = vim.fn.bufnr('pseudoclaude://transcript')
  if b < 0 then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
end

local function contains(haystack, needle, what)
  if not haystack:find(needle, 1, true) then
    error(string.format('%s: %q not found in:\n%s', what or 'text', needle, haystack), 2)
  end
end

-- Record what the plugin shows, and answer its prompts from queues.
local selects, select_answers = {}, {}
local inputs = {}
vim.notify = function(msg, level)
  report.notifications[#report.notifications + 1] = { msg = msg, level = level or vim.log.levels.INFO }
end
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  selects[#selects + 1] = { prompt = opts.prompt, kind = opts.kind, labels = labels }
  local pick = table.remove(select_answers, 1)
  assert(pick, 'unexpected vim.ui.select: ' .. tostring(opts.prompt))
  for i, label in ipairs(labels) do
    if label:find(pick, 1, true) then
      return on_choice(items[i], i)
    end
  end
  error(string.format('no item with %q in %s', pick, vim.inspect(labels)))
end
vim.ui.input = function(opts, on_confirm)
  inputs[#inputs + 1] = opts.prompt
  on_confirm(table.remove(select_answers, 1))
end

local function notified(pattern, level)
  for _, n in ipairs(report.notifications) do
    if n.msg:find(pattern, 1, true) and (level == nil or n.level == level) then
      return n
    end
  end
end

local function errors_shown()
  local out = {}
  for _, n in ipairs(report.notifications) do
    if n.level == vim.log.levels.ERROR then
      out[#out + 1] = n.msg
    end
  end
  return out
end

-- Capture the plugin's User events.
local last = {}
for _, pattern in ipairs({ 'PseudoClaudeEvent', 'PseudoClaudeRunDone', 'PseudoClaudeCompactDone',
  'PseudoClaudeRemembered', 'PseudoClaudeResumed', 'PseudoClaudeContext' }) do
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = function(ev)
      last[pattern] = ev.data
      if pattern == 'PseudoClaudeEvent' then
        report.events[#report.events + 1] = ev.data.kind
      end
    end,
  })
end
local function take(pattern)
  return wait_for(pattern, function()
    local v = last[pattern]
    if v ~= nil then
      last[pattern] = nil
    end
    return v
  end)
end

local client

step('setup', function()
  if env.PC_LSP_DEBUG then
    vim.lsp.set_log_level('debug')
  end
  vim.cmd('filetype on')
  vim.opt.rtp:prepend(plugin)
  vim.cmd.runtime('plugin/pseudoclaude.lua')
  vim.o.statusline = "%f %=%{v:lua.require'pseudoclaude'.statusline()}"
  require('pseudoclaude').setup({
    python = python,
    settings = {
      provider = 'anthropic',
      apiKey = 'sk-test',
      baseUrl = base_url,
      approvals = { runCommand = 'ask' },
    },
    transcript = { open = 'vsplit' },
  })
  vim.cmd.edit(vim.fn.fnameescape(workspace .. '/README.md'))
  client = wait_for('the pseudoclaude client to initialize', function()
    local c = vim.lsp.get_clients({ name = 'pseudoclaude', bufnr = 0 })[1]
    return c and c.initialized and c
  end)
  assert(client.root_dir == workspace, 'root_dir ' .. tostring(client.root_dir))
  local exp = client.server_capabilities.experimental
  assert(exp and exp.pseudoclaude and exp.pseudoclaude.version == 1, 'experimental capability missing')
  -- What the server advertises is what protocol.lua names.
  local protocol = require('pseudoclaude.protocol')
  local function sorted(t)
    local out = vim.deepcopy(t)
    table.sort(out)
    return out
  end
  for _, key in ipairs({ 'requests', 'notifications', 'commands' }) do
    local mine = sorted(vim.tbl_values(protocol[key]))
    assert(vim.deep_equal(sorted(exp.pseudoclaude[key]), mine),
      key .. ': server ' .. vim.inspect(sorted(exp.pseudoclaude[key])) .. ', protocol.lua ' .. vim.inspect(mine))
  end
  assert(exp.pseudoclaude.version == protocol.version, 'protocol version')
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
  select_answers = { 'Allow once' }
  vim.cmd('PseudoClaudeAsk please run the tests')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, 'run failed: ' .. vim.inspect(done.error))
  local prompt = selects[#selects]
  assert(prompt and prompt.kind == 'pseudoclaude_approval', 'no approval prompt: ' .. vim.inspect(selects))
  contains(prompt.prompt, 'run_command', 'approval prompt')
  assert(vim.deep_equal(prompt.labels, { 'Allow once', 'Allow for this session', 'Deny' }), vim.inspect(prompt.labels))
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
  assert(notified('PseudoClaude: context compacted ('), 'no compact message: ' .. vim.inspect(report.notifications))
  local after = wait_for('the meter to drop', function()
    local s = require('pseudoclaude').statusline()
    return s ~= before and s:match('^%d[%d.]*k?/200k$') and s
  end)
  report.compact = r
  report.meter_compact = { before = before, after = after }
end)

step('remember', function()
  select_answers = { 'project', 'project_knowledge' }
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
  select_answers = { 'Project · [project_knowledge]' }
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
  select_answers = { 'Memory index' }
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
  select_answers = { 'What is this project?' }
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
  vim.cmd('PseudoClaudeContext')
  local n = wait_for('the context message', function()
    return notified('PseudoClaude (' .. vim.fs.basename(workspace) .. '): ')
  end)
  contains(n.msg, 'of 200,000 tokens', 'context message')
  contains(n.msg, 'auto-compact at 167,000', 'context message')
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
  client:stop()
  wait_for('the client to stop', function()
    return client:is_stopped()
  end, 30000)
end)

write_report(true)
io.stdout:write(string.format('nvim e2e: %d steps passed\n', #report.steps))
