-- Unit checks of the Neovim plugin's pure parts (formatting, meter, transcript rendering,
-- pickers, config), run by test_nvim.py as `nvim --headless --clean -l nvim_unit.lua PLUGIN_DIR`.
local plugin = assert(_G.arg[1], 'usage: nvim -l nvim_unit.lua PLUGIN_DIR')
vim.opt.rtp:prepend(plugin)

local passed, failed = 0, 0
local function test(name, fn)
  local ok, err = pcall(fn)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write(string.format('FAIL %s: %s\n', name, err))
  end
end
local function eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format('%s: got %s, want %s', what or 'value', vim.inspect(got), vim.inspect(want)), 2)
  end
end

local fmt = require('pseudoclaude.format')
local meter = require('pseudoclaude.meter')
local transcript = require('pseudoclaude.transcript')
local config = require('pseudoclaude.config')
local pc = require('pseudoclaude')
local handlers = require('pseudoclaude.handlers')

test('format.tokens', function()
  eq(fmt.tokens(12000), '12k')
  eq(fmt.tokens(200000), '200k')
  eq(fmt.tokens(850), '850')
  eq(fmt.tokens(1500), '1.5k')
  eq(fmt.tokens(1000), '1k')
  eq(fmt.tokens(999600), '1M')
  eq(fmt.tokens(1200000), '1.2M')
  eq(fmt.tokens(-1), '?')
end)

test('format.count, plural, bytes', function()
  eq(fmt.count(167000), '167,000')
  eq(fmt.count(999), '999')
  eq(fmt.count(1234567), '1,234,567')
  eq(fmt.plural(1, 'message'), '1 message')
  eq(fmt.plural(3, 'message'), '3 messages')
  eq(fmt.bytes(512), '512 B')
  eq(fmt.bytes(4300), '4.2 KB')
end)

test('format.age and parse_time', function()
  local now = fmt.parse_time('2025-06-10T12:00:00Z')
  eq(now, 1749556800, 'epoch')
  eq(fmt.parse_time('2025-06-10T14:00:00+02:00'), now, 'offset')
  eq(fmt.age('2025-06-10T11:59:30Z', now), 'just now')
  eq(fmt.age('2025-06-10T11:55:00.123456Z', now), '5 min ago')
  eq(fmt.age('2025-06-10T09:00:00+00:00', now), '3 h ago')
  eq(fmt.age('2025-06-09T10:00:00Z', now), 'yesterday')
  eq(fmt.age('2024-02-29T12:00:00Z', now), '467 days ago')
  eq(fmt.age('nonsense', now), 'nonsense')
end)

test('format.one_line and arguments', function()
  eq(fmt.one_line('a\n  b\tc', 10), 'a b c')
  eq(fmt.one_line('abcdefghij', 5), 'abcd…')
  eq(fmt.arguments({ path = 'README.md' }), 'path: README.md')
  eq(fmt.arguments({ command = 'make', args = { 'test' } }), 'args: ["test"], command: make')
  eq(fmt.arguments('{bad json'), '{bad json')
  eq(fmt.arguments(nil), '')
  eq(fmt.basename('file:///tmp/my%20proj/'), 'my proj')
end)

test('meter text and levels', function()
  local ws = 'file:///w'
  eq(meter.text(ws), 'PseudoClaude')
  meter.usage({ workspace = ws, sessionId = 's', estimatedTokens = 12000, contextWindow = 200000, autoCompactThreshold = 167000 })
  eq(meter.text(ws), '12k/200k')
  eq(meter.level(meter.get(ws)), 'normal')
  meter.usage({ workspace = ws .. '/', sessionId = 's', estimatedTokens = 150000, contextWindow = 200000, autoCompactThreshold = 167000 })
  eq(meter.level(meter.get(ws)), 'warning')
  meter.context(ws, { sessionId = 's', messageCount = 9, estimatedTokens = 170000, contextWindow = 200000,
    autoCompactThreshold = 167000, autoCompactFailures = 3, autoCompactTripped = true })
  eq(meter.text(ws), '! 170k/200k')
  eq(meter.level(meter.get(ws)), 'error')
  meter.usage({ workspace = ws, sessionId = 's', estimatedTokens = 171000, contextWindow = 200000, autoCompactThreshold = 167000 })
  eq(meter.get(ws).autoCompactTripped, true, 'breaker kept for the same session')
  meter.set_running(ws, true)
  eq(meter.text(ws), '… ! 171k/200k')
  meter.set_running(ws, false)
  local d = meter.describe(ws, meter.get(ws))
  assert(d:find('171,000 of 200,000 tokens', 1, true), d)
  assert(d:find('Auto-compact stopped after 3 failures', 1, true), d)
end)

test('transcript rendering', function()
  transcript.clear()
  local ws = 'file:///work/app'
  local function ev(e)
    e.workspace = e.workspace or ws
    e.sessionId = e.sessionId or 's1'
    transcript.event(e)
  end
  transcript.begin_run(ws, 'What is this project?')
  ev({ kind = 'text', delta = 'Let me ' })
  ev({ kind = 'text', delta = 'look.' })
  ev({ kind = 'toolCall', id = 'c1', name = 'read_file', arguments = { path = 'README.md' } })
  ev({ kind = 'toolResult', id = 'c1', name = 'read_file', isError = false, bytes = 2048, preview = '#' })
  ev({ kind = 'text', delta = 'Two\nlines.' })
  ev({ kind = 'toolResult', id = 'c2', name = 'run_command', isError = true, bytes = 9, preview = 'denied\nby user' })
  ev({ kind = 'compact', layer = 2, beforeTokens = 170000, afterTokens = 20000, offloaded = 1 })
  ev({ kind = 'memory', status = 'updated', changes = { { action = 'create', level = 'project', filename = 'n.md' } } })
  ev({ kind = 'memory', status = 'unchanged', changes = {} })
  ev({ kind = 'memory', status = 'failed', changes = {}, error = 'timeout' })
  ev({ kind = 'warning', message = 'spill failed' })
  ev({ kind = 'error', message = 'breaker tripped' })
  ev({ kind = 'usage', inputTokens = 1, outputTokens = 1, cacheRead = 0, cacheWrite = 0 })
  ev({ kind = 'stop', stopReason = 'completed' })
  transcript.end_run({ sessionId = 's1', stopReason = 'completed', text = 'x', iterations = 2,
    usage = { inputTokens = 1600, outputTokens = 70 } })
  eq(transcript.lines(), {
    '━━ You · app ━━',
    'What is this project?',
    '━━ PseudoClaude ━━',
    'Let me look.',
    '  ▸ read_file(path: README.md)',
    '  ✓ read_file · 2.0 KB',
    'Two',
    'lines.',
    '  ✗ run_command failed: denied by user',
    '  ⇣ compacted (layer 2): 170k → 20k tokens, 1 result offloaded',
    '  ✎ memory updated: create project n.md',
    '  ! memory update failed: timeout',
    '  ! spill failed',
    '  ✗ breaker tripped',
    '── completed · 2 iterations · 1.6k in / 70 out · session s1 ──',
    '',
  }, 'transcript')
  eq(transcript.streamed(), #'Let me look.Two\nlines.', 'streamed')
end)

test('transcript: result text when nothing streamed, other sessions get a header', function()
  transcript.clear()
  transcript.begin_run('file:///w', 'hi')
  transcript.end_run({ sessionId = 's', stopReason = 'error', text = 'partial', iterations = 1, error = 'HTTP 401' })
  transcript.event({ workspace = 'file:///lib', sessionId = 's9', kind = 'text', delta = 'x' })
  transcript.note('resumed session s9 (3 messages)')
  transcript.history({
    { role = 'user', content = 'read the\nREADME' },
    { role = 'assistant', content = '', tool_calls = { { id = 'c', name = 'read_file', arguments = { path = 'R' } } } },
    { role = 'user', tool_result = { call_id = 'c', name = 'read_file', content = 'abc', is_error = false } },
  }, 2)
  eq(transcript.lines(), {
    '━━ You · w ━━', 'hi', '━━ PseudoClaude ━━', 'partial',
    '── error · 1 iteration · session s ──', '✗ HTTP 401',
    '── lib · session s9 ──', 'x',
    '· resumed session s9 (3 messages)', '· (2 earlier messages not shown)',
    'You: read the README', '  ▸ read_file(path: R)', '  ✓ read_file · 3 B', '',
  }, 'transcript')
  eq(vim.bo[transcript.bufnr()].buftype, 'nofile')
  eq(vim.bo[transcript.bufnr()].modifiable, false)
  eq(vim.api.nvim_buf_get_name(transcript.bufnr()), 'pseudoclaude://transcript')
end)

test('config: server command and validation', function()
  eq(config.server_cmd({}), { 'pseudoclaude', 'lsp' })
  eq(config.server_cmd({ python = '/venv/bin/python' }), { '/venv/bin/python', '-m', 'pseudoclaude', 'lsp' })
  eq(config.server_cmd({ cmd = { 'x', 'lsp' }, python = '/p' }), { 'x', 'lsp' })
  assert(not pcall(config.set, { cmd = {} }), 'empty cmd rejected')
  assert(not pcall(config.set, { transcript = { open = 'float' } }), 'bad open rejected')
  eq(vim.json.encode(config.settings_object({})), '{}')
  eq(vim.json.decode(vim.json.encode(config.settings_object({ approvals = { runCommand = 'ask' } }))),
    { approvals = { runCommand = 'ask' } })
end)

test('lsp/pseudoclaude.lua is found by vim.lsp.config', function()
  local c = vim.lsp.config.pseudoclaude
  assert(c, 'no config')
  eq(c.cmd, { 'pseudoclaude', 'lsp' })
  assert(type(c.handlers['pseudoclaude/event']) == 'function')
  assert(type(c.handlers['pseudoclaude/contextUsage']) == 'function')
  assert(type(c.handlers['window/showMessageRequest']) == 'function')
  local params = {}
  c.before_init(params, { settings = { pseudoclaude = { provider = 'openai' } } })
  eq(params.initializationOptions, { provider = 'openai' })
  c.before_init(params, {})
  eq(vim.json.encode(params.initializationOptions), '{}')
  pc.setup({ python = '/venv/bin/python', settings = { model = 'm' }, enable = false })
  eq(vim.lsp.config.pseudoclaude.cmd, { '/venv/bin/python', '-m', 'pseudoclaude', 'lsp' })
  eq(vim.lsp.config.pseudoclaude.settings, { pseudoclaude = { model = 'm' } })
end)

test('approval requests are recognised', function()
  local actions = { { title = 'Allow once' }, { title = 'Allow for this session' }, { title = 'Deny' } }
  assert(handlers.is_approval({ type = 2, message = 'm', actions = actions }))
  assert(not handlers.is_approval({ type = 3, message = 'm', actions = actions }))
  assert(not handlers.is_approval({ type = 2, message = 'm', actions = { { title = 'OK' } } }))
end)

test('pickers', function()
  local now = fmt.parse_time('2025-06-10T12:00:00Z')
  eq(pc.session_label({ id = 'a', title = 'fix the parser', updatedAt = '2025-06-10T11:55:00Z', messageCount = 12,
    model = 'claude-sonnet-4-6', active = true }, now), '● fix the parser · 5 min ago · 12 messages · claude-sonnet-4-6')
  eq(pc.session_label({ id = 'b', title = '', updatedAt = '2025-06-10T11:59:59Z', messageCount = 1, model = vim.NIL,
    active = false }, now), '(no messages yet) · just now · 1 message')
  local items = pc.memory_items({ index = '', truncated = true, stores = {
    { level = 'project', dir = '/w/m', indexUri = 'file:///w/m/MEMORY.md', notes = {
      { filename = 'project_knowledge_t.md', uri = 'file:///w/m/project_knowledge_t.md', type = 'project_knowledge', title = 'Tests', summary = 'make test' },
    } },
    { level = 'user', dir = '/h/m', indexUri = 'file:///h/m/MEMORY.md', notes = {} },
  } })
  eq(vim.tbl_map(function(i) return i.label end, items), {
    'Memory index as the model sees it (truncated)',
    'Project · MEMORY.md (/w/m)',
    'Project · [project_knowledge] Tests — make test',
    'User · MEMORY.md (/h/m)',
  })
  eq(items[3].filename, 'project_knowledge_t.md')
  eq(items[3].level, 'project')
end)

test('user commands exist', function()
  vim.cmd.runtime('plugin/pseudoclaude.lua')
  local cmds = vim.api.nvim_get_commands({})
  for _, name in ipairs({ 'PseudoClaudeAsk', 'PseudoClaudeCompact', 'PseudoClaudeMemory', 'PseudoClaudeRemember',
    'PseudoClaudeSessions', 'PseudoClaudeResume', 'PseudoClaudeCancel', 'PseudoClaudeNew', 'PseudoClaudeForget',
    'PseudoClaudeContext', 'PseudoClaudeTranscript' }) do
    assert(cmds[name], 'missing :' .. name)
  end
end)

test(':help pseudoclaude with the plugin folder on the runtimepath (the README install)', function()
  -- The plugin folder went on 'runtimepath' at the top of this script, as the README says: the
  -- shipped doc/tags must make `:help` work without running :helptags.
  vim.cmd('help pseudoclaude')
  eq(vim.fs.normalize(vim.api.nvim_buf_get_name(0)), vim.fs.normalize(plugin .. '/doc/pseudoclaude.txt'), 'help file')
  vim.cmd('helpclose')
  vim.cmd('help :PseudoClaudeAsk')
  vim.cmd('helpclose')
  vim.cmd('help pseudoclaude-root')
  vim.cmd('helpclose')
end)

test('doc/tags is what :helptags makes of doc/pseudoclaude.txt', function()
  -- helptags on a copy: the plugin folder stays untouched.
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp .. '/doc', 'p')
  vim.fn.writefile(vim.fn.readfile(plugin .. '/doc/pseudoclaude.txt'), tmp .. '/doc/pseudoclaude.txt')
  vim.cmd.helptags(tmp .. '/doc')
  local fresh = vim.fn.readfile(tmp .. '/doc/tags')
  for _, tag in ipairs({ 'pseudoclaude', 'pseudoclaude-setup', ':PseudoClaudeAsk', ':PseudoClaudeCompact',
    ':PseudoClaudeMemory', ':PseudoClaudeRemember', ':PseudoClaudeSessions', ':PseudoClaudeResume',
    ':PseudoClaudeCancel', 'pseudoclaude-statusline', 'pseudoclaude-root' }) do
    assert(table.concat(fresh, '\n'):find(tag .. '\t', 1, true), 'no help tag ' .. tag)
  end
  eq(vim.fn.readfile(plugin .. '/doc/tags'), fresh,
    'doc/tags is stale: run  nvim --headless --clean -c "helptags editors/nvim/doc" -c q')
end)

test('protocol.lua: names, derived commands, handler keys', function()
  local protocol = require('pseudoclaude.protocol')
  eq(protocol.requests.run, 'pseudoclaude/run')
  eq(protocol.requests.sessions_resume, 'pseudoclaude/sessions/resume')
  eq(protocol.command_name('pseudoclaude/memory/show'), 'pseudoclaude.memory.show')
  eq(#protocol.commands, vim.tbl_count(protocol.requests), 'one command per request')
  assert(vim.tbl_contains(protocol.commands, 'pseudoclaude.sessions.messages'), vim.inspect(protocol.commands))
  eq(protocol.errors.request_cancelled, -32800)
  -- Every notification has a handler, under its protocol name.
  for _, method in pairs(protocol.notifications) do
    assert(type(handlers[method]) == 'function', 'no handler for ' .. method)
  end
  eq(handlers.is_approval({ type = 2, message = 'm', actions = {
    { title = protocol.approval_actions.once }, { title = protocol.approval_actions.deny } } }), true)
end)

test('client.request_or_fail: a failure is shown, a result handed on, `after` runs after both', function()
  local client = require('pseudoclaude.client')
  local protocol = require('pseudoclaude.protocol')
  local real_request, real_notify = client.request, vim.notify
  local sent, shown, results, after = {}, {}, {}, {}
  vim.notify = function(msg, level)
    shown[#shown + 1] = { msg = msg, level = level }
  end
  client.request = function(method, params, cb)
    sent[#sent + 1] = method
    if method == protocol.requests.sessions_new then
      cb(nil, { sessionId = 's1' }, 'the client')
    else
      cb({ code = protocol.errors.request_failed, message = 'a run is in progress\nTraceback ...' }, nil, 'the client')
    end
  end
  local ok, err = pcall(function()
    client.request_or_fail(protocol.requests.sessions_new, {}, 'New session', function(r, c)
      results[#results + 1] = { id = r.sessionId, client = c }
    end, function(e, r)
      after[#after + 1] = { failed = e ~= nil, id = r and r.sessionId }
    end)
    client.request_or_fail(protocol.requests.compact, {}, 'Compact', function()
      error('on_result called for a failure')
    end, function(e, r)
      after[#after + 1] = { failed = e ~= nil, code = e.code, result = r }
    end)
    -- The commands go through it (then the meter refreshes, quietly: that failure shows nothing).
    pc.new_session()
  end)
  client.request, vim.notify = real_request, real_notify
  assert(ok, err)
  eq(sent, { protocol.requests.sessions_new, protocol.requests.compact, protocol.requests.sessions_new,
    protocol.requests.context })
  eq(results[1], { id = 's1', client = 'the client' })
  eq(after, { { failed = false, id = 's1' }, { failed = true, code = -32803 } })
  eq(shown[1], { msg = 'PseudoClaude: Compact failed: a run is in progress', level = vim.log.levels.ERROR })
  eq(#shown, 2, vim.inspect(shown))
  assert(shown[2].msg:find('new session s1', 1, true), vim.inspect(shown))
end)

test('root: ~/.PseudoClaude never makes HOME a workspace; no marker: the cwd or the file folder', function()
  local config = require('pseudoclaude.config')
  local tmp = vim.fs.normalize(vim.fn.fnamemodify(vim.fn.tempname(), ':p'))
  local home, proj = tmp .. '/h', tmp .. '/h/proj'
  for _, d in ipairs({ home .. '/.PseudoClaude/memory', proj .. '/src', home .. '/git/.git', home .. '/git/sub',
    home .. '/pc/.PseudoClaude', home .. '/pc/lib/.git', tmp .. '/elsewhere' }) do
    vim.fn.mkdir(d, 'p')
  end
  vim.fn.writefile({ '# rules' }, home .. '/rules/PSEUDOCLAUDE.md', 'p')
  local real_home, real_cwd = vim.env.HOME, vim.fn.getcwd()
  local function root_of(path)
    local buf = vim.fn.bufadd(path)
    local via_lsp
    vim.lsp.config.pseudoclaude.root_dir(buf, function(dir)
      via_lsp = dir
    end)
    local direct = config.root_dir(buf)
    eq(via_lsp, direct, 'lsp/pseudoclaude.lua root_dir for ' .. path)
    return direct
  end
  local ok, err = pcall(function()
    vim.env.HOME = home
    -- The issue: HOME=/h, the project at /h/proj without .git resolved to /h.
    vim.fn.chdir(tmp .. '/elsewhere')
    eq(root_of(proj .. '/main.py'), proj, 'no marker, cwd elsewhere: the file folder')
    vim.fn.chdir(home)
    eq(root_of(proj .. '/main.py'), proj, 'no marker, cwd HOME: the file folder')
    vim.fn.chdir(proj)
    eq(root_of(proj .. '/src/a.py'), proj, 'no marker, the cwd holds the file: the cwd')
    eq(root_of(home .. '/notes.md'), home, 'a file in HOME itself: its own folder')
    -- Real markers still win.
    eq(root_of(home .. '/git/sub/x.py'), home .. '/git', '.git')
    eq(root_of(home .. '/rules/x.md'), home .. '/rules', 'PSEUDOCLAUDE.md')
    eq(root_of(home .. '/pc/lib/y.py'), home .. '/pc', 'a project .PseudoClaude before .git')
    -- A buffer without a file: the cwd.
    local scratch = vim.api.nvim_create_buf(false, true)
    vim.fn.chdir(tmp .. '/elsewhere')
    eq(config.root_dir(scratch), tmp .. '/elsewhere', 'scratch buffer')
  end)
  vim.env.HOME = real_home
  vim.fn.chdir(real_cwd)
  assert(ok, err)
end)

io.stdout:write(string.format('nvim unit: %d passed, %d failed\n', passed, failed))
if failed > 0 then
  os.exit(1)
end
