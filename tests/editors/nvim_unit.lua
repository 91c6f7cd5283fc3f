-- Unit checks of the Neovim plugin's pure parts (formatting, meter, transcript rendering,
-- pickers, config), run by test_nvim.py as `nvim --headless --clean -l nvim_unit.lua PLUGIN_DIR`.
local plugin = assert(_G.arg[1], 'usage: nvim -l nvim_unit.lua PLUGIN_DIR')
vim.opt.rtp:prepend(plugin)

local u = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_unit_harness.lua'))
local test, eq = u.test, u.eq

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
  ev({ kind = 'compact', layer = 2, beforeTokens = 90000, afterTokens = 9000, offloaded = 0,
    factCheck = { checked = 7, missing = 3, added = 2 } })
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
    '  ⇣ compacted (layer 2): 90k → 9k tokens; summary checked: 7 facts, 2 carried by the server, 1 not carried (over the budget)',
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
    { kind = 'summary', text = 'Earlier work.', inContext = false },
    { kind = 'user', text = 'read the\nREADME', inContext = true },
    { kind = 'toolCall', id = 'c', name = 'read_file', arguments = { path = 'R' }, status = 'done', preview = 'abc',
      bytes = 3, inContext = true },
    { kind = 'toolCall', id = 'd', name = 'run_command', arguments = { command = 'make' }, status = 'denied',
      preview = 'denied by the user', error = 'denied by the user', inContext = true },
    { kind = 'compaction', summarized = 4, kept = 2, message = 'The earlier conversation was summarized.', inContext = true },
  }, 2)
  eq(transcript.lines(), {
    '━━ You · w ━━', 'hi', '━━ PseudoClaude ━━', 'partial',
    '── error · 1 iteration · session s ──', '✗ HTTP 401',
    '── lib · session s9 ──', 'x',
    '· resumed session s9 (3 messages)', '· (2 earlier items not shown)',
    'Summary: Earlier work. (not in context)',
    'You: read the README', '  ▸ read_file(path: R) · ✓ read_file · 3 B',
    '  ▸ run_command(command: make) · ⊘ run_command denied: denied by the user',
    '· The earlier conversation was summarized.', '',
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
  -- Diff approvals are asked for by default; `approvals = { diff = false }` turns them off.
  eq(c.capabilities, { experimental = { pseudoclaude = { approvals = true, diagnostics = true } },
    workspace = { workspaceEdit = { documentChanges = true } } })
  eq(vim.lsp.config.pseudoclaude.capabilities.experimental.pseudoclaude.approvals, true)
  pc.setup({ approvals = { diff = false }, enable = false })
  eq(vim.lsp.config.pseudoclaude.capabilities.experimental.pseudoclaude.approvals, false)
  pc.setup({ enable = false })
  eq(vim.lsp.config.pseudoclaude.capabilities.experimental.pseudoclaude.approvals, true)
  assert(type(c.handlers['pseudoclaude/approve']) == 'function', 'no approve handler')
  assert(type(c.handlers['$/cancelRequest']) == 'function', 'no $/cancelRequest handler')
  assert(not pcall(config.set, { approvals = { diff = 'yes' } }), 'approvals.diff must be a boolean')
  assert(not pcall(config.set, { chat = { width = 0 } }), 'chat.width must be positive')
  config.set({})
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
    model = 'claude-sonnet-4-6', active = true }, now), 'fix the parser · 5 min ago · 12 messages · claude-sonnet-4-6 · current')
  -- ● runs now (here or in another process); a worktree session shows its branch.
  eq(pc.session_label({ id = 'c', title = 'tests', updatedAt = '2025-06-10T11:55:00Z', messageCount = 2,
    model = '', active = false, running = true, worktree = 'pseudoclaude/c' }, now),
    '● tests · worktree pseudoclaude/c · 5 min ago · 2 messages')
  eq(pc.session_label({ id = 'd', title = 't', updatedAt = '2025-06-10T11:55:00Z', messageCount = 2,
    running = false, worktree = vim.NIL }, now), 't · 5 min ago · 2 messages')
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
    'PseudoClaudeContext', 'PseudoClaudeTranscript', 'PseudoClaudePreview', 'PseudoClaudeUndo',
    'PseudoClaudeChat', 'PseudoClaudeProposals', 'PseudoClaudeRewind', 'PseudoClaudeFork', 'PseudoClaudeMcp' }) do
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
    ':PseudoClaudeCancel', 'pseudoclaude-statusline', 'pseudoclaude-root', ':PseudoClaudeContext',
    ':PseudoClaudePreview', ':PseudoClaudeUndo', ':PseudoClaudeChat', ':PseudoClaudeProposals',
    'pseudoclaude-chat', 'pseudoclaude-approvals', 'pseudoclaude-proposals', ':PseudoClaudeRewind',
    ':PseudoClaudeFork', 'pseudoclaude-rewind', ':PseudoClaudeMcp', 'pseudoclaude-mcp' }) do
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

local context = require('pseudoclaude.context')
local BREAKDOWN = { system = 2000, rules = 500, memory = 300, skills = 250, tools = 3000, summary = 0,
  messages = 4000, toolCalls = 700, toolResults = 1400, spilled = 100, free = 188000, reserved = 33000 }

test('context: share and bar', function()
  eq(context.share(2000, 200000), '1%')
  eq(context.share(1, 200000), '<1%')
  eq(context.share(0, 200000), '0%')
  eq(context.share(-5, 200000), '0%')
  eq(context.share(5, 0), '—')
  eq(context.bar(0, 100), '')
  eq(context.bar(1, 200000), '▏', 'a non-zero count shows')
  eq(context.bar(50, 100, 20), string.rep('█', 10))
  eq(context.bar(55, 100, 4), '██▎', '2.2 cells')
  eq(context.bar(99.9, 100, 4), '████', 'rounds up to a full cell')
  eq(context.bar(300, 100, 4), '████', 'capped at the width')
  eq(context.bar(5, 0), '')
end)

test('context: the breakdown float lines', function()
  local lines = context.breakdown_lines({ sessionId = 's1', messageCount = 14, estimatedTokens = 12000,
    contextWindow = 200000, autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false,
    breakdown = BREAKDOWN })
  eq(lines, {
    '12,000 of 200,000 tokens · 14 messages · session s1',
    '',
    'System           2,000    1%  ▎',
    'Rules              500   <1%  ▏',
    'Memory             300   <1%  ▏',
    'Skills             250   <1%  ▏',
    'Tools            3,000    2%  ▎',
    'Summary              0    0%',
    'Messages         4,000    2%  ▍',
    'Tool calls         700   <1%  ▏',
    'Tool results     1,400    1%  ▏',
    'Spilled            100   <1%  ▏',
    string.rep('─', 50),
    'Free           188,000   94%  ██████████████████▊',
    'Reserved        33,000   17%  ███▎',
    '',
    'Auto-compact at 167,000 tokens',
    'q or <Esc> closes · :PseudoClaudePreview · :PseudoClaudeUndo',
  })
  local with_rules = context.breakdown_lines({ sessionId = 's1', messageCount = 14, estimatedTokens = 12000,
    contextWindow = 200000, autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false,
    breakdown = BREAKDOWN, rules = { { path = 'AGENTS.md', tokens = 400, source = 'project' },
      { path = 'sub/CLAUDE.md', tokens = 100, source = 'nested' } } })
  eq({ with_rules[4], with_rules[5], with_rules[6], with_rules[7] }, {
    'Rules              500   <1%  ▏',
    '  AGENTS.md        400  project',
    '  sub/CLAUDE.md      100  nested',
    'Memory             300   <1%  ▏',
  })
  eq(#with_rules, #lines + 2)
  local rows = context.rows(BREAKDOWN, 200000)
  eq(#rows, 12)
  eq(rows[4], { key = 'skills', label = 'Skills', tokens = 250, share = '<1%', bar = '▏' })
  eq(rows[9], { key = 'toolResults', label = 'Tool results', tokens = 1400, share = '1%', bar = '▏' })
  local tripped = context.breakdown_lines({ sessionId = vim.NIL, messageCount = 0, estimatedTokens = 0,
    contextWindow = 200000, autoCompactThreshold = 167000, autoCompactFailures = 3, autoCompactTripped = true })
  eq(tripped[1], '0 of 200,000 tokens · 0 messages · no session yet')
  eq(tripped[3], '(this server sends no breakdown)')
  eq(tripped[5], 'Auto-compact at 167,000 tokens; stopped after 3 failures: :PseudoClaudeCompact')
end)

test('context: preview plans in the server\'s words, the fact check', function()
  local preview = { wouldSummarize = true, beforeTokens = 170000, estimatedAfterTokens = 24000, summarizedMessages = 12,
    keptMessages = 8, firstKeptIndex = 12, spill = { results = 2, bytes = 120000 },
    message = 'Would summarize the 12 oldest messages and keep the 8 newest messages as they are.' }
  eq(context.preview_plan(preview, 'app'), { kind = 'confirm', message = 'Compact the context of app?', lines = {
    'Would summarize the 12 oldest messages and keep the 8 newest messages as they are.' } })
  local nothing = { wouldSummarize = false, reason = 'nothing to summarize', beforeTokens = 900, estimatedAfterTokens = 900,
    summarizedMessages = 0, keptMessages = 3, firstKeptIndex = 0, spill = { results = 0, bytes = 0 },
    message = 'Nothing would be summarized: everything is recent (900 tokens).' }
  eq(context.preview_plan(nothing, 'app'), { kind = 'nothing',
    message = 'PseudoClaude: Nothing would be summarized: everything is recent (900 tokens).' })
  local spill_only = vim.tbl_extend('force', nothing, { reason = 'would not shrink', spill = { results = 1, bytes = 60000 },
    message = 'Nothing would be summarized; 1 tool result would be saved to files.' })
  eq(context.preview_plan(spill_only, 'app'), { kind = 'confirm', message = 'Offload tool results in app?',
    lines = { 'Nothing would be summarized; 1 tool result would be saved to files.' } })
  local no_session = vim.tbl_extend('force', spill_only, { reason = 'no session' })
  eq(context.preview_plan(no_session, 'app').kind, 'nothing')
  eq(context.message({ message = 'Undone.' }, 'x'), 'PseudoClaude: Undone.')
  eq(context.message({}, 'nothing to undo.'), 'PseudoClaude: nothing to undo.')
  eq(context.fact_check_text({ checked = 1, missing = 0, added = 0 }), 'summary checked: 1 fact, 0 carried by the server')
end)

test('context: the float shows the lines and closes with q and <Esc>', function()
  local start = vim.api.nvim_get_current_win()
  local buf, win = context.open_float({ 'one', 'two' }, 'PseudoClaude context · app')
  eq(vim.api.nvim_get_current_win(), win, 'entered')
  eq(vim.api.nvim_win_get_config(win).relative, 'editor')
  eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { 'one', 'two' })
  eq(vim.bo[buf].modifiable, false)
  vim.api.nvim_feedkeys(vim.keycode('q'), 'x', false)
  eq(vim.api.nvim_win_is_valid(win), false, 'q closes')
  eq(vim.api.nvim_get_current_win(), start)
  local _, win2 = context.open_float({ 'x' }, 't')
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'x', false)
  eq(vim.api.nvim_win_is_valid(win2), false, '<Esc> closes')
  local _, win3 = context.open_float({ 'y' }, 't', { enter = false })
  eq(vim.api.nvim_get_current_win(), start, 'not entered')
  local _, win4 = context.open_float({ 'z' }, 't')
  eq(vim.api.nvim_win_is_valid(win3), false, 'one float at a time')
  context.close_float()
  eq(vim.api.nvim_win_is_valid(win4), false)
end)

--- Run `fn` with `client.request` answering from `answers` (method -> result, or a function of
--- the params answering `err, result`), `vim.notify` and `vim.ui.select` recorded; the select
--- answers `choice`. Returns what was sent, shown and asked.
local function with_fake_server(answers, choice, fn)
  local client = require('pseudoclaude.client')
  local real_request, real_notify, real_select = client.request, vim.notify, vim.ui.select
  local seen = { sent = {}, shown = {}, asked = {}, floats = {} }
  vim.notify = function(msg, level)
    seen.shown[#seen.shown + 1] = { msg = msg, level = level }
  end
  vim.ui.select = function(items, opts, on_choice)
    local f = context.float
    seen.asked[#seen.asked + 1] = { items = items, prompt = opts.prompt, kind = opts.kind,
      float = f and vim.api.nvim_buf_get_lines(f.buf, 0, -1, false) }
    on_choice(choice)
  end
  client.request = function(method, params, cb)
    params = params or {}
    params.workspace = params.workspace or 'file:///work/app'
    seen.sent[#seen.sent + 1] = { method = method, params = vim.deepcopy(params) }
    local answer = answers[method]
    if type(answer) == 'function' then
      cb(answer(params))
    elseif answer ~= nil then
      cb(nil, answer, 'the client')
    else
      cb({ code = -32601, message = 'unhandled ' .. method }, nil, 'the client')
    end
  end
  local ok, err = pcall(fn, seen)
  client.request, vim.notify, vim.ui.select = real_request, real_notify, real_select
  context.close_float()
  assert(ok, err)
  return seen
end

local function methods(seen)
  return vim.tbl_map(function(s) return s.method end, seen.sent)
end

--- Wipe every chat buffer (a test's chats do not outlive it).
local function wipe_chats()
  for buf in pairs(require('pseudoclaude.chat.state').by_buf) do
    pcall(vim.cmd, 'bwipeout! ' .. buf)
  end
end

test(':PseudoClaudePreview: preview in a float, Compact compacts with the same instructions', function()
  local protocol = require('pseudoclaude.protocol')
  local r = protocol.requests
  local answers = {
    [r.compact_preview] = { wouldSummarize = true, beforeTokens = 170000, estimatedAfterTokens = 24000,
      summarizedMessages = 12, keptMessages = 8, firstKeptIndex = 12, spill = { results = 0, bytes = 0 },
      message = 'Would summarize the 12 oldest messages.' },
    [r.compact] = { beforeTokens = 170000, afterTokens = 20000, offloaded = 0, summarized = true,
      factCheck = { checked = 5, missing = 1, added = 1 }, message = 'Compacted: the earlier conversation is now a summary.' },
    [r.context] = { sessionId = 's', messageCount = 10, estimatedTokens = 20000, contextWindow = 200000,
      autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false, breakdown = BREAKDOWN },
  }
  local seen = with_fake_server(answers, 'Compact', function()
    pc.preview('  focus on the parser ')
  end)
  eq(methods(seen), { r.compact_preview, r.compact, r.context })
  eq(seen.sent[1].params, { instructions = 'focus on the parser', workspace = 'file:///work/app' })
  eq(seen.sent[2].params, { instructions = 'focus on the parser', workspace = 'file:///work/app' })
  eq(#seen.asked, 1)
  eq(seen.asked[1].items, { 'Compact', 'Cancel' })
  eq(seen.asked[1].kind, 'pseudoclaude_compact')
  eq(seen.asked[1].prompt, 'Compact the context of app?')
  eq(seen.asked[1].float, { 'Compact the context of app?', '', 'Would summarize the 12 oldest messages.' },
    'the float while asking')
  eq(context.float, nil, 'the float closes after the answer')
  eq(seen.shown[#seen.shown].msg, 'PseudoClaude: Compacted: the earlier conversation is now a summary.')
end)

test(':PseudoClaudePreview: Cancel (or dismissing) compacts nothing; nothing to do asks nothing', function()
  local r = require('pseudoclaude.protocol').requests
  local preview = { wouldSummarize = true, beforeTokens = 170000, estimatedAfterTokens = 24000,
    summarizedMessages = 12, keptMessages = 8, firstKeptIndex = 12, spill = { results = 0, bytes = 0 } }
  for _, choice in ipairs({ 'Cancel', vim.NIL }) do
    local seen = with_fake_server({ [r.compact_preview] = preview }, choice ~= vim.NIL and choice or nil, function()
      pc.preview()
    end)
    eq(methods(seen), { r.compact_preview }, tostring(choice))
    eq(seen.sent[1].params, { workspace = 'file:///work/app' })
    eq(#seen.asked, 1)
    eq(seen.shown, {})
    eq(context.float, nil)
  end
  local seen = with_fake_server({ [r.compact_preview] = { wouldSummarize = false, reason = 'no session', beforeTokens = 0,
    estimatedAfterTokens = 0, summarizedMessages = 0, keptMessages = 0, firstKeptIndex = 0,
    spill = { results = 0, bytes = 0 }, message = 'Nothing would be summarized: no conversation yet (0 tokens).' } },
    nil, function()
    pc.preview()
  end)
  eq(#seen.asked, 0)
  eq(seen.shown[1].msg, 'PseudoClaude: Nothing would be summarized: no conversation yet (0 tokens).')
  local failed = with_fake_server({ [r.compact_preview] = function()
    return { code = -32803, message = 'a run is in progress' }
  end }, nil, function()
    pc.preview()
  end)
  eq(failed.shown, { { msg = 'PseudoClaude: Preview failed: a run is in progress', level = vim.log.levels.ERROR } })
end)

test(':PseudoClaudeUndo: restored or not, with the reason; the meter refreshes', function()
  local r = require('pseudoclaude.protocol').requests
  transcript.clear()
  local seen = with_fake_server({ [r.compact_undo] = { restored = true, beforeTokens = 20000, afterTokens = 170000,
    messageCount = 42, message = 'Undone: what the last compaction summarized is back (42 messages).' } }, nil, function()
    pc.undo()
  end)
  eq(methods(seen), { r.compact_undo, r.context })
  eq(seen.sent[1].params, { workspace = 'file:///work/app' })
  eq(seen.shown[1].msg, 'PseudoClaude: Undone: what the last compaction summarized is back (42 messages).')
  eq(transcript.lines()[1], '· Undone: what the last compaction summarized is back (42 messages).')
  local not_restored = with_fake_server({ [r.compact_undo] = { restored = false, reason = 'no compaction to undo',
    beforeTokens = 900, afterTokens = 900, messageCount = 3, message = 'Nothing to undo: no compaction to undo.' } },
    nil, function()
    pc.undo()
  end)
  eq(not_restored.shown[1].msg, 'PseudoClaude: Nothing to undo: no compaction to undo.')
  eq(#not_restored.asked, 0, 'undo asks nothing')
end)

test(':PseudoClaudeContext: the breakdown in a float, the meter updated', function()
  local r = require('pseudoclaude.protocol').requests
  local c = { sessionId = 's1', messageCount = 14, estimatedTokens = 12000, contextWindow = 200000,
    autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false, breakdown = BREAKDOWN }
  local lines, title
  with_fake_server({ [r.context] = c }, nil, function(seen)
    pc.context()
    local f = assert(context.float, 'no float')
    lines = vim.api.nvim_buf_get_lines(f.buf, 0, -1, false)
    title = vim.api.nvim_win_get_config(f.win).title
    eq(vim.api.nvim_get_current_win(), f.win, 'the float is entered')
    eq(seen.shown, {})
  end)
  eq(lines, context.breakdown_lines(c))
  eq(title, { { ' PseudoClaude context · app ' } })
  eq(meter.get('file:///work/app').breakdown, BREAKDOWN)
end)

local render = require('pseudoclaude.render')
local chat = require('pseudoclaude.chat')
local diff = require('pseudoclaude.diff')
local approvals = require('pseudoclaude.approvals')
local proposals = require('pseudoclaude.proposals')

test('render: calls, results by status, notices, footers', function()
  eq(render.call('read_file', { path = 'README.md' }), '▸ read_file(path: README.md)')
  eq(render.result({ name = 'read_file', status = 'done', bytes = 2048 }), '✓ read_file · 2.0 KB')
  eq(render.result({ name = 'read_file', isError = false, bytes = 2048 }), '✓ read_file · 2.0 KB', 'no status: isError')
  eq(render.result({ name = 'run_command', status = 'error', display = 'exit 2', error = 'the command failed' }),
    '✗ run_command failed: the command failed')
  eq(render.result({ name = 'run_command', status = 'error', display = 'exit 2' }), '✗ run_command failed: exit 2')
  eq(render.result({ name = 'write_file', status = 'denied', error = 'denied by the user' }),
    '⊘ write_file denied: denied by the user')
  eq(render.result({ name = 'run_command', status = 'canceled' }), '⊘ run_command canceled')
  eq(render.result({ name = 'run_command', status = 'pending' }), '… run_command: no result')
  eq(render.notice({ kind = 'memory', status = 'proposed', changes = {
    { action = 'create', level = 'project', filename = 'b.md' } } }),
    '✎ memory proposed: create project b.md (review: :PseudoClaudeProposals)')
  eq(render.notice({ kind = 'memory', status = 'unchanged', changes = {} }), nil)
  eq(render.notice({ kind = 'usage' }), nil)
  eq(render.footer({ sessionId = 's', stopReason = 'completed', iterations = 1, usage = { inputTokens = 10, outputTokens = 2 } }, false),
    '── completed · 1 iteration · 10 in / 2 out ──')
  eq(render.proposal_label({ action = 'create', level = 'project', title = 'Build', filename = 'project_knowledge_build.md' }),
    'create · project · Build — project_knowledge_build.md')
  eq(render.proposal_label({ action = 'delete', level = 'user', title = '', filename = 'old.md' }), 'delete · user · old.md')
  eq(render.decision_of_title['Allow for this session'], 'allowSession')
  eq(render.decision_of_title['Deny'], 'deny')
end)

test('chat: item lines, fold lines, slash commands', function()
  eq(chat.item_lines({ kind = 'user', text = 'hi\nthere\n' }, true), { '## You', 'hi', 'there', '', '## PseudoClaude' })
  eq(chat.item_lines({ kind = 'user', text = 'x' }), { '', '## You', 'x', '', '## PseudoClaude' })
  eq(chat.item_lines({ kind = 'assistant', text = 'a\n\nb\n' }), { 'a', '', 'b' })
  local running = { kind = 'toolCall', name = 'read_file', arguments = { path = 'R' }, status = 'running' }
  eq(chat.item_lines(running), { '▸ read_file(path: R)', '  … running' })
  eq(chat.item_lines(vim.tbl_extend('force', running, { status = 'approval' }))[2], '  ⏸ waiting for your approval')
  local done = vim.tbl_extend('force', running, { status = 'done', bytes = 9000, preview = '1\n2\n3\n4\n5\n6\n7\n8…' })
  eq(chat.item_lines(done), { '▸ read_file(path: R)', '  ✓ read_file · 8.8 KB', '  │ 1', '  │ 2', '  │ 3', '  │ 4', '  │ 5',
    '  │ 6', '  │ …' })
  local short = vim.tbl_extend('force', done, { preview = 'one\ttab\ntwo…' })
  eq(chat.item_lines(short), { '▸ read_file(path: R)', '  ✓ read_file · 8.8 KB', '  │ one  tab', '  │ two…' })
  local failed = vim.tbl_extend('force', running, { status = 'error', preview = 'not found', error = 'not found' })
  eq(chat.item_lines(failed), { '▸ read_file(path: R)', '  ✗ read_file failed: not found' })
  eq(chat.fold_line(done), '▸ read_file(path: R) · ✓ read_file · 8.8 KB')
  eq(chat.fold_line(vim.tbl_extend('force', done, { inContext = false })),
    '▸ read_file(path: R) · ✓ read_file · 8.8 KB · not in context')
  eq(chat.item_lines({ kind = 'summary', text = 'one\n\ntwo' }), { '▸ Summary of the earlier conversation', '  one', '', '  two' })
  eq(chat.item_lines({ kind = 'thinking', text = 'hmm' }), { '▸ Thinking', '  hmm' })
  eq(chat.item_lines({ kind = 'notice', text = '⇣ compacted' }), { '> ⇣ compacted' })
  eq(chat.item_lines({ kind = 'compaction', text = 'The earlier conversation was summarized.' }),
    { '> The earlier conversation was summarized.' })
  eq(chat.item_lines({ kind = 'earlier', count_hidden = 3 }), { '*(3 earlier items not shown)*' })
  eq(chat.foldable(done), true)
  eq(chat.foldable({ kind = 'thinking' }), true)
  eq(chat.foldable({ kind = 'assistant' }), false)
  eq(chat.line_groups({ kind = 'user', text = 'x', inContext = false }, { '', '## You', 'x', '', '## PseudoClaude' }),
    { 'PseudoClaudeChatOutOfContext', 'PseudoClaudeChatOutOfContext', 'PseudoClaudeChatOutOfContext',
      'PseudoClaudeChatOutOfContext', 'PseudoClaudeChatOutOfContext' })
  eq(chat.line_groups(failed, chat.item_lines(failed)), { 'PseudoClaudeChatTool', 'PseudoClaudeChatError' })
  eq(chat.slash('/compact focus on the parser '), { command = 'compact', argument = 'focus on the parser' })
  eq(chat.slash('/UNDO'), { command = 'undo', argument = '' })
  eq(chat.slash('what does /undo do?'), nil)
  eq(chat.slash('/'), nil)
end)

test('chat: items from the server\'s transcript items', function()
  local items = chat.from_transcript({
    { kind = 'user', text = 'first', inContext = false, ts = 1 },
    { kind = 'summary', text = 'Summary of work.', inContext = true },
    { kind = 'compaction', summarized = 4, kept = 2, message = 'Summarized 4 messages.', inContext = true },
    { kind = 'user', text = 'read it', inContext = true },
    { kind = 'assistant', text = 'Reading.', thinking = 'Which file?', inContext = true },
    { kind = 'toolCall', id = 'c1', name = 'read_file', arguments = { path = 'R' }, status = 'done', preview = 'x',
      bytes = 1, inContext = true },
    { kind = 'toolCall', id = 'c2', name = 'run_command', arguments = { command = 'make' }, status = 'canceled',
      preview = 'interrupted', error = 'interrupted', inContext = true },
    { kind = 'assistant', text = '', inContext = true },
    { kind = 'undo', restored = 4, message = 'The last compaction was undone.', inContext = true },
    { kind = 'notice', text = 'The conversation was replaced.', inContext = false },
    { kind = 'newKind', message = 'From a newer server.', inContext = true },
  }, 4)
  eq(vim.tbl_map(function(i) return i.kind end, items), { 'earlier', 'user', 'summary', 'compaction', 'user', 'thinking',
    'assistant', 'toolCall', 'toolCall', 'undo', 'notice', 'notice' })
  eq(items[1].count_hidden, 4)
  eq({ items[2].inContext, items[2].ts, items[3].inContext }, { false, 1, true })
  eq(items[4].text, 'Summarized 4 messages.')
  eq(items[6].text, 'Which file?')
  eq({ items[8].status, items[8].preview, items[8].bytes }, { 'done', 'x', 1 })
  eq({ items[9].status, items[9].error }, { 'canceled', 'interrupted' })
  eq(items[11].inContext, false)
  eq(items[12].text, 'From a newer server.')
end)

test('diff: lines and text keep the final newline', function()
  eq(diff.lines('a\nb\n'), { 'a', 'b' })
  eq(diff.lines('a\nb'), { 'a', 'b' })
  eq(diff.lines(''), {})
  eq(diff.text({ 'a', 'b' }, true), 'a\nb\n')
  eq(diff.text({ 'a', 'b' }, false), 'a\nb')
  eq(diff.text({ '' }, true), '')
  eq(diff.ends_with_newline(''), true)
  eq(diff.ends_with_newline('x'), false)
  eq(diff.filetype('src/a.py'), 'python')
  eq(diff.winbar('keys', 'after · 100%'), ' keys · %<after · 100%%', 'the tail is cut first')
  eq(diff.winbar('a │ b', 'x', ' │ '), ' a │ b │ %<x')
  eq(diff.winbar('only'), ' only')
  eq(diff.join('a', nil), 'a')
  eq(diff.join('a', 'b'), 'a · b')
  eq(diff.filetype('notes.unknown-extension'), nil)
end)

test('approvals: the words of a write and of a command', function()
  local p = { workspace = 'file:///w', sessionId = 's', tool = 'write_file', arguments = {}, kind = 'write',
    path = 'src/a.py', before = '', after = 'print(1)' }
  eq(approvals.WRITE_HINT, 'a allow once · s allow for this session · d deny')
  local left, right = approvals.write_sides(p)
  eq(left.name, 'pseudoclaude://approve/src/a.py.before')
  eq(right.name, 'pseudoclaude://approve/src/a.py.after')
  eq(left.filetype, 'python')
  eq({ left.title, left.detail }, { 'PseudoClaude · before', 'write_file src/a.py (new file)' })
  eq(right.title, 'after')
  local _, r2 = approvals.write_sides(vim.tbl_extend('force', p, { before = 'x\n', after = 'y' }))
  eq(r2.title, 'after (removes the final newline)')
  eq(approvals.command_prompt({ tool = 'run_command', kind = 'runCommand', command = 'make test', cwd = '/w' }),
    'PseudoClaude: run_command wants to run: make test (in /w)')
  eq(approvals.command_prompt({ tool = 'run_command', kind = 'runCommand', arguments = { command = 'ls' } }),
    'PseudoClaude: run_command wants to run: command: ls')
  eq(approvals.request_id(), nil, 'no request being handled')
  eq(approvals.handle(nil, p, { client_id = 1 }), { decision = 'deny' }, 'not in a coroutine: nobody can be asked')
end)

--- Call the approve handler as Neovim does (in a coroutine); returns a function giving its answer.
local function approve_async(params, client_id)
  local answer
  coroutine.wrap(function()
    answer = { approvals.handle(nil, params, { method = 'pseudoclaude/approve', client_id = client_id or 7 }) }
  end)()
  return function()
    vim.wait(2000, function()
      return answer ~= nil
    end, 10)
    return answer
  end
end

test('approvals: the diff split answers once: a, s, d, q, closing the tab, a cancel', function()
  local start_tab = vim.api.nvim_get_current_tabpage()
  local p = { workspace = 'file:///w', sessionId = 's', tool = 'edit_file', arguments = {}, kind = 'write',
    path = 'notes.txt', before = 'one\ntwo\n', after = 'one\nTWO\n' }
  for key, decision in pairs({ a = 'allowOnce', s = 'allowSession', d = 'deny', q = 'deny' }) do
    local answer = approve_async(p)
    local pending = approvals.pending[#approvals.pending]
    local view = assert(pending and pending.view, 'no split for ' .. key)
    eq(vim.api.nvim_get_current_tabpage(), view.tab, 'the split is current')
    eq(vim.api.nvim_buf_get_lines(view.left.buf, 0, -1, false), { 'one', 'two' })
    eq(vim.api.nvim_buf_get_lines(view.right.buf, 0, -1, false), { 'one', 'TWO' })
    eq(vim.wo[view.right.win].diff, true)
    eq(vim.api.nvim_win_get_cursor(view.right.win)[1], 2, 'the cursor on the change')
    vim.api.nvim_feedkeys(key, 'x', false)
    eq(answer(), { { decision = decision } }, key)
    eq(view.closed, true)
    eq(vim.api.nvim_buf_is_valid(view.left.buf) or vim.api.nvim_buf_is_valid(view.right.buf), false, 'buffers left')
    eq(vim.api.nvim_get_current_tabpage(), start_tab, 'back where it was')
    eq(#approvals.pending, 0)
  end
  -- Closing the tab denies.
  local answer = approve_async(p)
  vim.cmd('tabclose')
  eq(answer(), { { decision = 'deny' } }, 'tabclose')
  -- The server cancels: RequestCancelled, the split goes; a key after that answers nothing more.
  answer = approve_async(p, 9)
  local view = approvals.pending[1].view
  approvals.cancel(8, 'another client')
  eq(#approvals.pending, 1, 'another client cancels nothing here')
  approvals.cancel(9, 'pseudoclaude-approval-x')
  local got = answer()
  eq(got[1], nil)
  eq(got[2].code, -32800)
  eq(view.closed, true)
  eq(#vim.api.nvim_list_tabpages(), 1)
  -- Two at once (two folders): each answers for itself.
  local first, second = approve_async(p), approve_async(vim.tbl_extend('force', p, { path = 'b.txt' }))
  eq(#approvals.pending, 2)
  vim.api.nvim_feedkeys('a', 'x', false) -- the second split is current
  eq(second(), { { decision = 'allowOnce' } })
  vim.api.nvim_set_current_tabpage(approvals.pending[1].view.tab)
  vim.api.nvim_feedkeys('d', 'x', false)
  eq(first(), { { decision = 'deny' } })
  -- An approval that arrives while typing in the chat's prompt (Insert mode): the split's keys
  -- work at once, and the prompt gets Insert mode back after.
  local prompt = vim.api.nvim_create_buf(false, true)
  vim.bo[prompt].buftype = 'prompt'
  vim.api.nvim_set_current_buf(prompt)
  local typing
  _G.pc_start_approval = function()
    typing = approve_async(p)
  end
  vim.api.nvim_feedkeys('i' .. vim.keycode('<Cmd>lua _G.pc_start_approval()<CR>') .. 's', 'xt', false)
  eq(typing(), { { decision = 'allowSession' } }, 'the key typed after the split opened')
  eq(vim.api.nvim_get_current_buf(), prompt, 'back in the prompt')
  vim.api.nvim_buf_delete(prompt, { force = true })
  -- A command asks with vim.ui.select; dismissing denies.
  local real_select = vim.ui.select
  local asked
  vim.ui.select = function(items, opts, on_choice)
    asked = { items = items, prompt = opts.prompt, kind = opts.kind }
    on_choice(nil)
  end
  local cmd = approve_async({ workspace = 'file:///w', sessionId = 's', tool = 'run_command', arguments = { command = 'ls' },
    kind = 'runCommand', command = 'ls', cwd = '/w' })
  vim.ui.select = real_select
  eq(cmd(), { { decision = 'deny' } })
  eq(asked, { items = { 'Allow once', 'Allow for this session', 'Deny' },
    prompt = 'PseudoClaude: run_command wants to run: ls (in /w)', kind = 'pseudoclaude_approval' })
end)

test('proposals: accept params, sides and hint', function()
  local p = { id = 'p1', action = 'create', level = 'project', title = 'Build', summary = 'make build',
    filename = 'b.md', before = '', after = '---\ntitle: Build\n---\nRun make.\n' }
  eq(proposals.accept_params(p, p.after), { id = 'p1', decision = 'accept' })
  eq(proposals.accept_params(p, '---\ntitle: Build\n---\nRun make -j.\n'),
    { id = 'p1', decision = 'accept', content = '---\ntitle: Build\n---\nRun make -j.\n' })
  local del = vim.tbl_extend('force', p, { action = 'delete', before = 'x', after = '' })
  eq(proposals.accept_params(del, 'edited'), { id = 'p1', decision = 'accept' }, 'a delete takes no content')
  local left, right = proposals.sides(p)
  eq(left.name, 'pseudoclaude://proposal/project/b.md.before')
  eq({ left.title, left.detail }, { 'PseudoClaude memory · before', 'project/b.md (no such note yet)' })
  eq({ right.title, right.detail }, { 'after (create, editable)', 'make build' })
  eq(right.editable, true)
  eq(right.filetype, 'markdown')
  local _, dright = proposals.sides(del)
  eq(dright.editable, false)
  eq(dright.title, 'after: deleted')
  eq(proposals.hint(p), 'a accept (:w too) · r reject · q later')
  eq(proposals.hint(del), 'a accept · r reject · q later')
end)

test('meter and handler: pending memory proposals', function()
  local ws = 'file:///proj'
  local shown = {}
  local real_notify = vim.notify
  vim.notify = function(msg)
    shown[#shown + 1] = msg
  end
  local ok, err = pcall(function()
    eq(meter.text(ws), 'PseudoClaude')
    handlers['pseudoclaude/memoryProposals'](nil, { workspace = ws, count = 2 }, {})
    eq(meter.text(ws), 'PseudoClaude · 2 proposals')
    meter.usage({ workspace = ws, sessionId = 's', estimatedTokens = 12000, contextWindow = 200000, autoCompactThreshold = 167000 })
    eq(meter.text(ws), '12k/200k · 2 proposals')
    handlers['pseudoclaude/memoryProposals'](nil, { workspace = ws, count = 1 }, {})
    eq(meter.text(ws), '12k/200k · 1 proposal')
    handlers['pseudoclaude/memoryProposals'](nil, { workspace = ws, count = 0 }, {})
    eq(meter.text(ws), '12k/200k')
  end)
  vim.notify = real_notify
  assert(ok, err)
  eq(shown, { 'PseudoClaude: 2 memory proposals to review in proj: :PseudoClaudeProposals' }, 'said once, when more')
end)

test('chat: live events render into the buffer, cards fold, results fill their cards', function()
  local r = require('pseudoclaude.protocol').requests
  local ws = 'file:///work/app'
  local c
  with_fake_server({ [r.context] = { sessionId = vim.NIL, messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
    autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false } }, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  eq(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false),
    { '*New conversation in app. Type below; Enter sends, / lists the commands.*' })
  local function ev(e)
    e.workspace, e.sessionId = ws, 's1'
    chat.event(e)
  end
  chat.begin_run(ws, 'Look at both')
  ev({ kind = 'text', delta = 'Let me ' })
  ev({ kind = 'text', delta = 'look.' })
  ev({ kind = 'toolCall', id = 'a', name = 'read_file', arguments = { path = 'A' } })
  ev({ kind = 'toolCall', id = 'b', name = 'read_file', arguments = { path = 'B' } })
  -- Results out of order: each fills its own card.
  ev({ kind = 'toolResult', id = 'b', name = 'read_file', isError = false, bytes = 2, status = 'done',
    preview = '{"ok":true,"tool":"read_file","content":"bb"}', display = 'bb' })
  ev({ kind = 'toolResult', id = 'a', name = 'read_file', isError = true, bytes = 9, preview = 'x', error = 'not found',
    status = 'error', display = 'not found' })
  ev({ kind = 'text', delta = 'Both\nread.' })
  ev({ kind = 'compact', layer = 1, beforeTokens = 9000, afterTokens = 3000, offloaded = 2 })
  chat.end_run(ws, { sessionId = 's1', stopReason = 'completed', text = 'x', iterations = 2,
    usage = { inputTokens = 1600, outputTokens = 70 } })
  local lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  eq(lines, {
    '## You', 'Look at both', '', '## PseudoClaude',
    'Let me look.',
    '▸ read_file(path: A)', '  ✗ read_file failed: not found',
    '▸ read_file(path: B)', '  ✓ read_file · 2 B', '  │ bb',
    'Both', 'read.',
    '> ⇣ compacted (layer 1): 9k → 3k tokens, 2 results offloaded',
    '── completed · 2 iterations · 1.6k in / 70 out ──',
  })
  eq(c.session_id, 's1')
  local win = vim.fn.win_findbuf(c.buf)[1]
  vim.api.nvim_win_call(win, function()
    eq({ vim.fn.foldclosed(6), vim.fn.foldclosedend(6) }, { 6, 7 }, 'card a')
    eq({ vim.fn.foldclosed(8), vim.fn.foldclosedend(8) }, { 8, 10 }, 'card b')
    eq(vim.fn.foldclosed(11), -1, 'text is not folded')
    eq(vim.fn.foldtextresult(8), '▸ read_file(path: B) · ✓ read_file · 2 B')
    -- An opened card stays open when another card changes.
    vim.cmd('6foldopen')
  end)
  chat.begin_run(ws, 'Again')
  ev({ kind = 'toolCall', id = 'c', name = 'run_command', arguments = { command = 'make' } })
  chat.approval({ workspace = ws, tool = 'run_command' }, true)
  local approval_line = vim.api.nvim_buf_get_lines(c.buf, -2, -1, false)[1]
  eq(approval_line, '  ⏸ waiting for your approval')
  chat.abort_run(ws, 'canceled')
  lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  eq(vim.list_slice(lines, #lines - 2), { '▸ run_command(command: make)', '  ⊘ run_command canceled: no result', '── canceled ──' })
  vim.api.nvim_win_call(win, function()
    eq(vim.fn.foldclosed(6), -1, 'the opened card stayed open')
    eq(vim.fn.foldclosed(8), 8, 'the other stayed closed')
    eq(vim.fn.foldclosed(#lines - 2), #lines - 2, 'the new card is closed')
  end)
  -- Events of other folders are not this chat's.
  chat.event({ workspace = 'file:///other', sessionId = 's9', kind = 'text', delta = 'elsewhere' })
  eq(#vim.api.nvim_buf_get_lines(c.buf, 0, -1, false), #lines)
  -- Events of another session of the folder are not this chat's (that session has no chat open).
  chat.event({ workspace = ws, sessionId = 's2', kind = 'warning', message = 'careful' })
  eq(#vim.api.nvim_buf_get_lines(c.buf, 0, -1, false), #lines)
  -- The chat buffer and its prompt name the folder for commands typed there.
  local client = require('pseudoclaude.client')
  eq(client.workspace({ workspace_folders = { { uri = 'file:///elsewhere' } } }, c.prompt_buf), ws)
  eq(chat.of_buf(c.prompt_buf), c)
  -- Only the prompt left (the chat window closed by hand): both come back, one of each, the
  -- prompt below the chat.
  vim.api.nvim_win_close(win, true)
  with_fake_server({}, nil, function()
    chat.show(ws, { enter = false })
  end)
  eq({ #vim.fn.win_findbuf(c.buf), #vim.fn.win_findbuf(c.prompt_buf) }, { 1, 1 })
  win = vim.fn.win_findbuf(c.buf)[1]
  local pwin = vim.fn.win_findbuf(c.prompt_buf)[1]
  eq(vim.api.nvim_win_get_position(pwin)[1] > vim.api.nvim_win_get_position(win)[1], true, 'the prompt is below')
  eq(vim.api.nvim_win_get_height(pwin), 3)
  -- q closes both windows; the buffers stay.
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_feedkeys('q', 'x', false)
  eq(#vim.fn.win_findbuf(c.buf) + #vim.fn.win_findbuf(c.prompt_buf), 0)
  assert(vim.api.nvim_buf_is_valid(c.buf))
  vim.cmd('bwipeout! ' .. c.buf)
  eq(chat.get(ws), nil)
end)

test('chat: a streamed answer grows by its last line, not by rendering the whole answer per chunk', function()
  local r = require('pseudoclaude.protocol').requests
  local ws = 'file:///work/app'
  local c
  with_fake_server({ [r.context] = { sessionId = vim.NIL, messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
    autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false } }, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  local win = vim.fn.win_findbuf(c.buf)[1]
  local function ev(e)
    e.workspace, e.sessionId = ws, 's1'
    chat.event(e)
  end
  -- Chunks of 1 to 9 bytes (some split a UTF-8 character), and chunks of newlines only, at the
  -- start, inside and at the end of the answer.
  local answer = '\nIntro – naïve “quotes”\n\n```lua\nlocal x = 1\n\n\nreturn x\n```\n'
    .. string.rep('line of the answer\n', 40) .. 'a\nb\nc\n\n\nEnd without a final newline'
  local chunks, pos, seed = { '\n', '\n\n' }, 1, 7
  while pos <= #answer do
    seed = (seed * 1103515245 + 12345) % 2147483648
    local n = seed % 9 + 1
    chunks[#chunks + 1] = answer:sub(pos, pos + n - 1)
    pos = pos + n
  end
  chunks[#chunks + 1] = '\n'
  chunks[#chunks + 1] = 'tail'
  answer = '\n\n\n' .. answer .. '\ntail'
  eq(table.concat(chunks), answer, 'the chunks make the answer')
  chat.begin_run(ws, 'Stream')
  local header = vim.api.nvim_buf_line_count(c.buf)
  local real_set_lines = vim.api.nvim_buf_set_lines
  local calls, widest = 0, 0
  vim.api.nvim_buf_set_lines = function(buf, first, last, strict, lines)
    if buf == c.buf then
      calls = calls + 1
      widest = math.max(widest, last - first)
    end
    return real_set_lines(buf, first, last, strict, lines)
  end
  local ok, err = pcall(function()
    for _, chunk in ipairs(chunks) do
      ev({ kind = 'text', delta = chunk })
      local item = c.open_text
      local want = chat.item_lines(item)
      eq(item.start, header + 1, 'the answer starts below the prompt')
      eq(item.count, #want, 'its line count')
      eq(vim.api.nvim_buf_get_lines(c.buf, header, -1, false), want, 'the buffer after ' .. vim.inspect(chunk))
      eq(vim.api.nvim_win_get_cursor(win)[1], vim.api.nvim_buf_line_count(c.buf), 'the window follows')
    end
  end)
  vim.api.nvim_buf_set_lines = real_set_lines
  assert(ok, err)
  eq(c.open_text.text, answer)
  local lines = chat.item_lines({ kind = 'assistant', text = answer })
  eq(vim.api.nvim_buf_get_lines(c.buf, header, -1, false), lines, 'the whole answer')
  eq(calls, #chunks, 'one change of the buffer per chunk')
  eq(widest, 1, 'each chunk replaces at most the last line')
  -- What follows the answer goes below it, and folds.
  ev({ kind = 'toolCall', id = 'a', name = 'read_file', arguments = { path = 'A' } })
  ev({ kind = 'toolResult', id = 'a', name = 'read_file', isError = false, bytes = 2, status = 'done', display = 'aa' })
  ev({ kind = 'text', delta = 'Done.\nBye' })
  ev({ kind = 'text', delta = '.' })
  chat.end_run(ws, { sessionId = 's1', stopReason = 'completed', text = 'x', iterations = 2,
    usage = { inputTokens = 1600, outputTokens = 70 } })
  local card = header + #lines + 1
  local want = vim.list_extend(vim.list_extend({ '## You', 'Stream', '', '## PseudoClaude' }, lines), {
    '▸ read_file(path: A)', '  ✓ read_file · 2 B', '  │ aa', 'Done.', 'Bye.',
    '── completed · 2 iterations · 1.6k in / 70 out ──' })
  eq(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false), want)
  vim.api.nvim_win_call(win, function()
    eq({ vim.fn.foldclosed(card), vim.fn.foldclosedend(card) }, { card, card + 2 }, 'the card')
    eq(vim.fn.foldclosed(card - 1), -1, 'the answer is not folded')
  end)
  for i, item in ipairs(c.items) do
    eq(vim.api.nvim_buf_get_lines(c.buf, item.start - 1, item.start - 1 + item.count, false), chat.item_lines(item, i == 1),
      'the lines of item ' .. i)
  end
  vim.cmd('bwipeout! ' .. c.buf)
end)

test('chat: a resumed session is rendered from the server\'s items alone; out of context items are marked', function()
  local protocol = require('pseudoclaude.protocol')
  local r = protocol.requests
  local ws = 'file:///work/resumed'
  local transcript_items = {
    { kind = 'user', text = 'Read the notes', inContext = false, ts = 1700000000 },
    { kind = 'toolCall', id = 'c1', name = 'read_file', arguments = { path = 'gone.txt' }, status = 'error',
      preview = 'gone.txt does not exist', error = 'gone.txt does not exist', bytes = 60, inContext = false },
    { kind = 'assistant', text = 'It is gone.', inContext = false },
    { kind = 'summary', text = 'The user asked for the notes; gone.txt is missing.', inContext = true },
    { kind = 'compaction', summarized = 3, kept = 0, message = 'The earlier conversation was summarized: 3 messages replaced by a summary.', inContext = true },
    { kind = 'user', text = 'Fix it', inContext = true },
    { kind = 'assistant', text = 'Writing it.', thinking = 'A new file then.', inContext = true },
    { kind = 'toolCall', id = 'c2', name = 'write_file', arguments = { path = 'gone.txt' }, status = 'denied',
      preview = 'write_file was denied by the user', error = 'write_file was denied by the user', inContext = true },
    { kind = 'toolCall', id = 'c3', name = 'run_command', arguments = { command = 'make' }, status = 'canceled',
      preview = 'the tool call did not finish (the run ended first)',
      error = 'the tool call did not finish (the run ended first)', inContext = true },
    { kind = 'toolCall', id = 'c4', name = 'read_file', arguments = { path = 'a.txt' }, status = 'done',
      preview = 'alpha\nbeta', bytes = 11, inContext = true },
  }
  local pages = {}
  local answers = {
    [r.context] = { sessionId = 's7', messageCount = 6, estimatedTokens = 900, contextWindow = 200000,
      autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false },
    [r.sessions_messages] = function(params)
      pages[#pages + 1] = { offset = params.offset, limit = params.limit, sessionId = params.sessionId }
      local from = (params.offset or 0) + 1
      local to = params.limit and (from + params.limit - 1) or #transcript_items
      return nil, { sessionId = 's7', total = #transcript_items, items = vim.list_slice(transcript_items, from, to) }
    end,
    [r.slash_commands] = { commands = {
      { name = 'compact', description = 'Summarize now', hint = 'what to focus on' },
      { name = 'undo', description = 'Undo the last compaction' },
      { name = 'context', description = 'What fills the context' },
      { name = 'memory', description = 'The memory index' },
      { name = 'new', description = 'Start a new session' },
      { name = 'brandnew', description = 'A command of a newer server' },
    } },
  }
  local c
  local seen = with_fake_server(answers, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  eq(vim.tbl_map(function(x) return x.method end, seen.sent),
    { r.slash_commands, r.context, r.sessions_messages, r.sessions_messages, r.tasks })
  eq(pages, { { offset = 0, limit = 1, sessionId = 's7' }, { offset = 0, sessionId = 's7' } }, 'the pages asked')
  eq(c.session_id, 's7')
  local lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  eq(lines, {
    '## You', 'Read the notes', '', '## PseudoClaude',
    '▸ read_file(path: gone.txt)', '  ✗ read_file failed: gone.txt does not exist',
    'It is gone.',
    '▸ Summary of the earlier conversation', '  The user asked for the notes; gone.txt is missing.',
    '> The earlier conversation was summarized: 3 messages replaced by a summary.',
    '', '## You', 'Fix it', '', '## PseudoClaude',
    '▸ Thinking', '  A new file then.',
    'Writing it.',
    '▸ write_file(path: gone.txt)', '  ⊘ write_file denied: write_file was denied by the user',
    '▸ run_command(command: make)', '  ⊘ run_command canceled: the tool call did not finish (the run ended first)',
    '▸ read_file(path: a.txt)', '  ✓ read_file · 11 B', '  │ alpha', '  │ beta',
  })
  -- Out of context: dimmed, and said at the end of the item's first line.
  local ns = vim.api.nvim_get_namespaces().pseudoclaude_chat
  local marks = vim.api.nvim_buf_get_extmarks(c.buf, ns, 0, -1, { details = true })
  local dim, said = {}, {}
  for _, m in ipairs(marks) do
    local d = m[4]
    if d.hl_group == 'PseudoClaudeChatOutOfContext' then
      dim[m[2] + 1] = true
    end
    if d.virt_text then
      said[#said + 1] = { m[2] + 1, d.virt_text[1][1] }
    end
  end
  eq(said, { { 1, '  · not in context' }, { 5, '  · not in context' }, { 7, '  · not in context' } })
  for lnum = 1, 26 do
    local want = lnum <= 7 and lines[lnum] ~= '' or nil
    eq(dim[lnum], want, 'dimmed line ' .. lnum)
  end
  local win = vim.fn.win_findbuf(c.buf)[1]
  vim.api.nvim_win_call(win, function()
    eq({ vim.fn.foldclosed(5), vim.fn.foldclosedend(5) }, { 5, 6 }, 'the failed card')
    eq(vim.fn.foldtextresult(5), '▸ read_file(path: gone.txt) · ✗ read_file failed: gone.txt does not exist · not in context')
    eq({ vim.fn.foldclosed(8), vim.fn.foldclosedend(8) }, { 8, 9 }, 'the summary')
    eq({ vim.fn.foldclosed(16), vim.fn.foldclosedend(16) }, { 16, 17 }, 'the thinking')
    eq(vim.fn.foldtextresult(21), '▸ run_command(command: make) · ⊘ run_command canceled: the tool call did not finish (the run ended first)')
  end)
  -- Only the newest HISTORY_ITEMS items, with how many are not shown.
  local history = require('pseudoclaude.chat.history')
  local real = history.HISTORY_ITEMS
  history.HISTORY_ITEMS = 3
  pages = {}
  with_fake_server(answers, nil, function()
    chat.reload(c)
  end)
  history.HISTORY_ITEMS = real
  eq(pages[2], { offset = 7, sessionId = 's7' })
  eq(vim.api.nvim_buf_get_lines(c.buf, 0, 1, false), { '*(7 earlier items not shown)*' })
  vim.cmd('bwipeout! ' .. c.buf)
  require('pseudoclaude.chat.prompt').forget()
end)

test('chat: slash commands come from the server, complete after / in the prompt, and run', function()
  local protocol = require('pseudoclaude.protocol')
  local r = protocol.requests
  local prompt = require('pseudoclaude.chat.prompt')
  local ws = 'file:///work/slash'
  local answers = {
    [r.context] = { sessionId = vim.NIL, messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
      autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false, breakdown = BREAKDOWN },
    [r.slash_commands] = { commands = {
      { name = 'compact', description = 'Summarize now', hint = 'what to focus on' },
      { name = 'undo', description = 'Undo the last compaction' },
      { name = 'context', description = 'What fills the context' },
      { name = 'memory', description = 'The memory index' },
      { name = 'new', description = 'Start a new session' },
      { name = 'brandnew', description = 'A command of a newer server' },
      { name = 'review', description = 'Review code', hint = '[path]', skill = true },
    } },
    [r.compact] = { beforeTokens = 900, afterTokens = 900, offloaded = 0, summarized = false,
      factCheck = { checked = 0, missing = 0, added = 0 }, message = 'Nothing to compact yet (900 tokens).' },
    [r.compact_undo] = { restored = false, beforeTokens = 0, afterTokens = 0, messageCount = 0,
      message = 'Nothing to undo: no compaction left to undo.' },
    [r.sessions_new] = { sessionId = 's-new' },
  }
  local c
  with_fake_server(answers, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  local names = vim.tbl_map(function(x) return x.name end, chat.commands(c))
  eq(names, { 'compact', 'undo', 'context', 'memory', 'new', 'brandnew', 'review', 'preview', 'sessions', 'resume',
    'fork', 'proposals', 'cancel', 'help' }, 'the server\'s first, then the chat\'s own')
  eq(vim.tbl_map(function(m) return m.word end, chat.matches(c, '/co')), { '/compact', '/context' })
  eq(chat.matches(c, 'undo')[1].menu, 'Undo the last compaction')
  eq(chat.matches(c, '/compact')[1].info, '/compact <what to focus on>\nSummarize now')
  -- Typing / at the start of the prompt opens the completion of the server's list.
  local pw = vim.fn.win_findbuf(c.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  _G.pc_complete = nil
  vim.api.nvim_feedkeys('A/' .. vim.keycode("<Cmd>lua _G.pc_complete = vim.fn.complete_info({'mode', 'items'})<CR>")
    .. 'u' .. vim.keycode("<Cmd>lua _G.pc_narrowed = vim.fn.complete_info({'items'})<CR><C-e><Esc>"), 'x', false)
  local info = assert(_G.pc_complete, 'no completion')
  eq(info.mode, 'function')
  eq(vim.tbl_map(function(i) return i.word end, info.items), vim.tbl_map(function(n) return '/' .. n end, names))
  eq(_G.pc_narrowed.items ~= nil, true, 'the completion stays open while typing')
  eq(vim.api.nvim_buf_get_lines(c.prompt_buf, -2, -1, false), { '❯ /u' }, 'nothing inserted but what was typed')
  vim.api.nvim_buf_set_lines(c.prompt_buf, -2, -1, false, { '❯ ' })
  -- A / inside a prompt is only a /.
  vim.api.nvim_feedkeys('Aa/b' .. vim.keycode("<Cmd>lua _G.pc_complete = vim.fn.complete_info({'mode'})<CR><Esc>"), 'x', false)
  eq(_G.pc_complete.mode, '')
  vim.api.nvim_buf_set_lines(c.prompt_buf, -2, -1, false, { '❯ ' })
  -- The commands run their requests; the server's words show in the chat.
  local pc, ran = require('pseudoclaude'), {}
  local real_run = pc.run
  pc.run = function(text) ran[#ran + 1] = text end
  local seen = with_fake_server(answers, nil, function()
    chat.submit(c, '/compact focus on the parser')
    chat.submit(c, '/undo')
    chat.submit(c, '/brandnew')
    chat.submit(c, '/nonsense')
    chat.submit(c, '/review src')
    chat.submit(c, '/context')
    require('pseudoclaude.context').close_float()
    chat.submit(c, '/new')
  end)
  local sent = vim.tbl_filter(function(x) return x.method ~= r.context end, seen.sent)
  pc.run = real_run
  eq(vim.tbl_map(function(x) return x.method end, sent), { r.compact, r.compact_undo, r.sessions_new })
  eq(ran, { '/nonsense', '/review src' }, 'a /word that is not a command, or a skill, is a prompt')
  eq(sent[1].params, { workspace = ws, instructions = 'focus on the parser' })
  local shown = vim.tbl_map(function(x) return x.msg end, seen.shown)
  assert(vim.tbl_contains(shown, 'PseudoClaude: Nothing to compact yet (900 tokens).'), vim.inspect(shown))
  assert(vim.tbl_contains(shown, 'PseudoClaude: /brandnew is not supported by this version of the plugin'), vim.inspect(shown))
  -- /new: the new session has a chat of its own, which takes the chat's place; this one stays.
  local fresh = chat.get(ws)
  assert(fresh ~= c, 'a chat of its own')
  eq(fresh.session_id, 's-new')
  eq(vim.api.nvim_buf_get_name(fresh.buf), 'pseudoclaude://chat/slash/s-new')
  eq(vim.api.nvim_buf_get_lines(fresh.buf, 0, -1, false), { '*New session s-new. Type below; Enter sends, / lists the commands.*' })
  eq(vim.api.nvim_buf_get_lines(c.buf, -2, -1, false), { '> Nothing to compact yet (900 tokens).' })
  eq({ #vim.fn.win_findbuf(fresh.buf), #vim.fn.win_findbuf(c.buf) }, { 1, 0 }, 'its window shows the new chat')
  eq({ #vim.fn.win_findbuf(fresh.prompt_buf), #vim.fn.win_findbuf(c.prompt_buf) }, { 1, 0 }, 'and its prompt')
  wipe_chats()
  prompt.forget()
end)

test('chat: /status shows the server\'s words for the chat\'s session in a float', function()
  local protocol = require('pseudoclaude.protocol')
  local r = protocol.requests
  local prompt = require('pseudoclaude.chat.prompt')
  local ws = 'file:///work/status'
  local text = 'session: s7\nmode: plan\nmodel: m1 (anthropic)\nMCP: none\nhooks: none\nskills: none'
  local answers = {
    [r.context] = { sessionId = 's7', messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
      autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false, breakdown = BREAKDOWN },
    [r.sessions_messages] = { sessionId = 's7', total = 0, items = {} },
    [r.tasks] = { sessionId = 's7', tasks = {} },
    [r.slash_commands] = { commands = { { name = 'status', description = 'The session at a glance' } } },
    [r.status] = { session = 's7', mode = 'plan', provider = 'anthropic', model = 'm1',
      tokens = { used = 0, window = 200000, autoCompactThreshold = 167000, billed = vim.NIL },
      sandbox = { enabled = false }, mcp = {}, hooks = {}, skills = {}, ignoredSettings = {}, text = text },
  }
  local c
  with_fake_server(answers, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  local ran, real_run = {}, pc.run
  pc.run = function(t) ran[#ran + 1] = t end
  local shown, title
  local seen = with_fake_server(answers, nil, function()
    chat.submit(c, '/status')
    local f = assert(context.float, 'no float')
    shown = vim.api.nvim_buf_get_lines(f.buf, 0, -1, false)
    title = vim.api.nvim_win_get_config(f.win).title[1][1]
  end)
  pc.run = real_run
  eq(ran, {}, 'not a prompt')
  local asked = vim.tbl_filter(function(x) return x.method == r.status end, seen.sent)
  eq(vim.tbl_map(function(x) return x.params end, asked), { { workspace = ws, sessionId = 's7' } })
  eq(shown, { 'session: s7', 'mode: plan', 'model: m1 (anthropic)', 'MCP: none', 'hooks: none', 'skills: none',
    '', 'q or <Esc> closes' })
  eq(title, ' PseudoClaude status · status ')
  eq(require('pseudoclaude.status').lines({})[1], '(this server sends no status text)')
  wipe_chats()
  prompt.forget()
end)

test('chat: /hooks and :PseudoClaudeHooks show the server\'s words in a float', function()
  local protocol = require('pseudoclaude.protocol')
  local r = protocol.requests
  local prompt = require('pseudoclaude.chat.prompt')
  local ws = 'file:///work/hooks'
  local text = 'PostToolUse:\n  lint  shell: npm run lint  (.PseudoClaude/hooks.yaml): waits for your approval'
  local answers = {
    [r.context] = { sessionId = 's8', messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
      autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false, breakdown = BREAKDOWN },
    [r.sessions_messages] = { sessionId = 's8', total = 0, items = {} },
    [r.tasks] = { sessionId = 's8', tasks = {} },
    [r.slash_commands] = { commands = { { name = 'hooks', description = 'Show the hooks' } } },
    [r.hooks_list] = { hooks = { { name = 'lint', event = 'PostToolUse', source = 'workspace',
      status = 'needsApproval', action = 'shell: npm run lint' } }, text = text },
  }
  local c
  with_fake_server(answers, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  local ran, real_run = {}, pc.run
  pc.run = function(t) ran[#ran + 1] = t end
  local shown, title
  local seen = with_fake_server(answers, nil, function()
    chat.submit(c, '/hooks')
    local f = assert(context.float, 'no float')
    shown = vim.api.nvim_buf_get_lines(f.buf, 0, -1, false)
    title = vim.api.nvim_win_get_config(f.win).title[1][1]
  end)
  pc.run = real_run
  eq(ran, {}, 'not a prompt')
  local asked = vim.tbl_filter(function(x) return x.method == r.hooks_list end, seen.sent)
  eq(vim.tbl_map(function(x) return x.params.workspace end, asked), { ws })
  eq(shown, { 'PostToolUse:', '  lint  shell: npm run lint  (.PseudoClaude/hooks.yaml): waits for your approval',
    '', "a review this folder's hooks · q close" })
  eq(title, ' PseudoClaude hooks · hooks ')
  eq(vim.fn.exists(':PseudoClaudeHooks'), 2)
  eq(require('pseudoclaude.hooks').lines({}), { '(this server sends no hooks text)', '', 'q or <Esc> closes' })
  wipe_chats()
  prompt.forget()
end)

test(':PseudoClaudeHooks: `a` asks about the folder\'s own hooks again, then shows what changed', function()
  local protocol = require('pseudoclaude.protocol')
  local hooks = require('pseudoclaude.hooks')
  local r = protocol.requests
  local ws = 'file:///work/hooks'
  local lint = { name = 'lint', event = 'PostToolUse', source = 'workspace', status = 'denied', action = 'shell: npm run lint' }
  local user = { name = 'notify', event = 'Stop', source = 'user', status = 'active', action = 'shell: true' }
  local answers = {
    [r.hooks_list] = { hooks = { user, lint }, text = 'PostToolUse:\n  lint …: declined' },
    [r.hooks_review] = { hooks = { user, vim.tbl_extend('force', lint, { status = 'active' }) }, text = 'PostToolUse:\n  lint …: runs' },
  }
  local shown
  local seen = with_fake_server(answers, nil, function()
    hooks.open(ws)
    local f = assert(context.float, 'no float')
    eq(vim.api.nvim_get_current_buf(), f.buf)
    vim.api.nvim_feedkeys('a', 'x', false)
    shown = vim.api.nvim_buf_get_lines(assert(context.float).buf, 0, -1, false)
  end)
  eq(vim.tbl_map(function(x) return x.method end, seen.sent), { r.hooks_list, r.hooks_review })
  eq(seen.sent[2].params, { workspace = ws })
  eq(shown, { 'PostToolUse:', '  lint …: runs', '', 'q or <Esc> closes' }, 'nothing waits now: no `a`')
  eq(seen.shown[#seen.shown].msg, "PseudoClaude: this folder's hooks run now: lint.")
  eq({ hooks.reviewed({ hooks = { lint } }) }, { "PseudoClaude: this folder's hooks stay off: they were not approved.",
    vim.log.levels.WARN })
  eq(hooks.waiting({ hooks = { user } }), false)
end)

test(':PseudoClaudeSkills: the skills in a float; <CR> puts /<name> on the chat\'s prompt line', function()
  local protocol = require('pseudoclaude.protocol')
  local skills = require('pseudoclaude.skills')
  local prompt = require('pseudoclaude.chat.prompt')
  local r = protocol.requests
  local ws = 'file:///work/skills'
  local function skill(name, more)
    return vim.tbl_extend('force', { name = name, description = 'what ' .. name .. ' does', source = 'workspace',
      loaded = false, path = '.PseudoClaude/skills/' .. name .. '/SKILL.md', model = true, command = true, tools = {} }, more or {})
  end
  local answers = {
    [r.context] = { sessionId = 's9', messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
      autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false, breakdown = BREAKDOWN },
    [r.sessions_messages] = { sessionId = 's9', total = 0, items = {} },
    [r.tasks] = { sessionId = 's9', tasks = {} },
    [r.slash_commands] = { commands = {} },
    [r.skills_list] = { sessionId = 's9', skills = { skill('review', { hint = '[path]', loaded = true }),
      skill('style', { source = 'claude', command = false }) },
      problems = { { path = '.claude/skills/bad/SKILL.md', line = 2, message = 'no description', source = 'claude', name = 'bad' } } },
  }
  local c
  with_fake_server(answers, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  local shown, title, line
  local seen = with_fake_server(answers, nil, function()
    vim.api.nvim_buf_set_lines(c.prompt_buf, -2, -1, false, { chat.PROMPT .. 'src/app.py' })
    skills.open(ws)
    local f = assert(context.float, 'no float')
    shown = vim.api.nvim_buf_get_lines(f.buf, 0, -1, false)
    title = vim.api.nvim_win_get_config(f.win).title[1][1]
    vim.api.nvim_win_set_cursor(f.win, { 1, 0 })
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
    line = vim.api.nvim_buf_get_lines(c.prompt_buf, -2, -1, false)[1]
  end)
  vim.cmd('stopinsert')
  eq(seen.sent[#seen.sent].params, { workspace = ws, sessionId = 's9' }, 'the chat\'s session')
  eq(title, ' PseudoClaude skills · skills ')
  eq(shown, {
    '✓ /review  .PseudoClaude/skills · loaded        what review does',
    '  style    .claude/skills · the model loads it  what style does',
    '', 'Cannot be read:', '  .claude/skills/bad/SKILL.md:2: no description', '', '<CR> use in the chat · q close' })
  eq(line, chat.PROMPT .. '/review src/app.py', 'before what was typed')
  eq(context.float, nil, 'the float closed')
  eq(vim.api.nvim_get_current_buf(), c.prompt_buf, 'in the prompt')
  eq(vim.fn.exists(':PseudoClaudeSkills'), 2)
  eq(skills.lines({ skills = {}, problems = {} })[1],
    'No skills: add one as .PseudoClaude/skills/<name>/SKILL.md (or .claude/skills/).')
  wipe_chats()
  prompt.forget()
  local told = with_fake_server(answers, nil, function()
    skills.use(ws, skill('review'))
  end)
  eq(told.shown[1].msg, 'PseudoClaude: open the chat (:PseudoClaudeChat) to use /review.')
end)

test('format.wrap and age of epoch seconds', function()
  eq(fmt.wrap('one two three four', 9), { 'one two', 'three', 'four' })
  eq(fmt.wrap('  a\n b  ', 10), { 'a b' })
  eq(fmt.wrap('', 10), { '' })
  eq(fmt.wrap('averyveryverylongword x', 5), { 'averyveryverylongword', 'x' })
  eq(fmt.age(1000, 1000 + 300), '5 min ago')
end)

test('context: the checkpoint line of the breakdown', function()
  eq(context.checkpoint_lines(nil), {})
  eq(context.checkpoint_lines({ covers = 'all', skipped = {} }), { 'Rewind: every file can be taken back' })
  eq(context.checkpoint_lines({ covers = 'all', skipped = { 'big.bin', 'x.iso' } }),
    { 'Rewind: every file can be taken back; 2 files over 1 MiB', 'left out' })
  local writes = context.checkpoint_lines({ covers = 'writes', skipped = {},
    problem = "only the agent's own file writes can be taken back: the git command is not on PATH, so what commands change is not checkpointed" })
  eq(writes[1], "Rewind: only the agent's own file writes can be taken back:")
  eq(table.concat(writes, ' '), "Rewind: only the agent's own file writes can be taken back: the git command is not on PATH, so what commands change is not checkpointed")
  for _, l in ipairs(writes) do
    assert(vim.fn.strdisplaywidth(l) <= context.CHECKPOINT_WIDTH, l)
  end
  eq(context.checkpoint_lines({ covers = 'writes', skipped = {} }), { "Rewind: only the agent's own file writes can be taken back" })
  local lines = context.breakdown_lines({ sessionId = 's1', messageCount = 1, estimatedTokens = 10, contextWindow = 100,
    autoCompactThreshold = 80, autoCompactFailures = 0, autoCompactTripped = false, breakdown = BREAKDOWN,
    checkpoints = { covers = 'all', skipped = {} } })
  eq({ lines[#lines - 2], lines[#lines - 1] }, { 'Auto-compact at 80 tokens', 'Rewind: every file can be taken back' })
end)

local rewind = require('pseudoclaude.rewind')
local PREVIEW = {
  turn = 2,
  prompt = 'Add hello.py and\nfix the notes',
  droppedMessages = 4,
  message = 'Rewind would take 3 files back to before prompt 2 (1 conflict: changed outside the agent, left alone unless forced) and the conversation back to before prompt 2 (4 messages taken back).',
  files = {
    { path = 'notes.txt', action = 'restore', conflict = true },
    { path = 'hello.py', action = 'delete', conflict = false },
    { path = 'docs/old.md', action = 'create', conflict = false },
  },
}

test('rewind: arguments, labels, help', function()
  eq(rewind.parse(''), {})
  eq(rewind.parse(' 2 '), { turn = 2 })
  eq(rewind.parse('2 code'), { turn = 2, mode = 'code' })
  eq(rewind.parse('Conversation 3'), { turn = 3, mode = 'conversation' })
  local bad, why = rewind.parse('2 everything')
  eq(bad, nil)
  eq(why, "everything is neither a prompt's number nor code, conversation or both")
  eq(rewind.parse('0'), nil)
  eq(rewind.parse('2 3'), nil)
  eq(vim.tbl_map(function(m) return m.label end, rewind.MODES), { 'Code and conversation', 'Conversation only', 'Code only' })
  eq(rewind.mode_label('code'), 'Code only')
  eq(rewind.turn_label({ turn = 2, prompt = 'Fix\nthe parser', ts = 1000, filesChanged = 3 }, 1300),
    '2. Fix the parser · 3 files changed · 5 min ago')
  eq(rewind.turn_label({ turn = 1, prompt = 'hi', filesChanged = 0 }), '1. hi · no files changed')
  eq(rewind.turn_label({ turn = 1, prompt = 'hi', filesChanged = 1, ts = 1000.5 }, 1010), '1. hi · 1 file changed · just now')
  eq(rewind.help(PREVIEW, 'both'), '<CR> rewind · F rewind and overwrite the changes · d diff · q cancel')
  eq(rewind.help(PREVIEW, 'conversation'), '<CR> rewind · q cancel')
  eq(rewind.help({ files = { { path = 'a', action = 'restore', conflict = false } } }, 'code'), '<CR> rewind · d diff · q cancel')
  eq({ rewind.counts(PREVIEW, 'code') }, { 3, 1 })
end)

test('rewind: the preview lines, files by line, highlights', function()
  local lines, files, marks = rewind.preview_lines(PREVIEW, 'both', 60)
  eq(lines, {
    'Before prompt 2: Add hello.py and fix the notes',
    '',
    'Rewind would take 3 files back to before prompt 2 (1',
    'conflict: changed outside the agent, left alone unless',
    'forced) and the conversation back to before prompt 2 (4',
    'messages taken back).',
    '',
    '  restored   notes.txt    ! changed outside the agent',
    '  deleted    hello.py',
    '  recreated  docs/old.md',
    '',
    '<CR> rewind · F rewind and overwrite the changes · d diff · q cancel',
  })
  eq(files[8].path, 'notes.txt')
  eq(files[9].path, 'hello.py')
  eq(files[10].path, 'docs/old.md')
  eq(vim.tbl_count(files), 3)
  local function groups(row)
    local out = {}
    for _, m in ipairs(marks) do
      if m[1] == row then
        out[#out + 1] = { lines[row + 1]:sub(m[2] + 1, m[3]), m[4] }
      end
    end
    return out
  end
  eq(groups(0), { { lines[1], 'PseudoClaudeRewindTitle' } })
  eq(groups(7), { { 'restored', 'PseudoClaudeRewindRestore' }, { '! ' .. rewind.CONFLICT, 'PseudoClaudeRewindConflict' },
    { 'notes.txt', 'Directory' } })
  eq(groups(8), { { 'deleted', 'PseudoClaudeRewindDelete' }, { 'hello.py', 'Directory' } })
  eq(groups(9)[1], { 'recreated', 'PseudoClaudeRewindCreate' })
  eq(groups(11), { { lines[12], 'PseudoClaudeRewindHelp' } })
  -- A long prompt: two lines at most, the second under the first, cut with `…`.
  local long = rewind.preview_lines(vim.tbl_extend('force', PREVIEW, { prompt = string.rep('word ', 40) }), 'both', 40)
  eq(long[1], 'Before prompt 2: word word word word')
  eq(long[2], '                 word word word word wo…')
  eq(long[3], '')
  local short = rewind.preview_lines(vim.tbl_extend('force', PREVIEW, { prompt = string.rep('word ', 8) }), 'both', 40)
  eq({ short[1], short[2], short[3] }, { 'Before prompt 2: word word word word', '                 word word word word', '' })
  -- The conversation alone: no files.
  local conv, none = rewind.preview_lines(vim.tbl_extend('force', PREVIEW, { message = 'Rewind would take the conversation back.' }), 'conversation')
  eq(conv, { 'Before prompt 2: Add hello.py and fix the notes', '', 'Rewind would take the conversation back.', '',
    '<CR> rewind · q cancel' })
  eq(none, {})
end)

test('rewind: the turn of a chat prompt', function()
  local turns = { { turn = 1, prompt = 'a' }, { turn = 2, prompt = 'b' }, { turn = 3, prompt = 'a' } }
  local known = { kind = 'user', text = 'a', turn = 1 }
  local live1 = { kind = 'user', text = 'b' }
  local live2 = { kind = 'user', text = 'a' }
  local gone = { kind = 'user', text = 'a', inContext = false }
  local items = { known, gone, { kind = 'assistant', text = 'x' }, live1, live2 }
  eq(rewind.turn_of(items, known, turns), 1)
  eq(rewind.turn_of(items, live1, turns), 2)
  eq(rewind.turn_of(items, live2, turns), 3)
  eq(rewind.turn_of(items, gone, turns), nil)
  eq(rewind.turn_of(items, { kind = 'user', text = 'zzz' }, turns), nil)
  local twice = { kind = 'user', text = 'a' }
  eq(rewind.turn_of({ twice, live2 }, twice, turns), 1, 'the earlier of two live prompts with one text')
end)

test('chat: prompts carry their turn; /rewind and /fork; the keys in the help', function()
  local items = chat.from_transcript({
    { kind = 'user', text = 'one', turn = 1, inContext = true },
    { kind = 'user', text = 'gone', inContext = false },
  }, 0)
  eq({ items[1].turn, items[2].turn }, { 1, nil })
  local prompt = require('pseudoclaude.chat.prompt')
  local help = table.concat(prompt.help_lines(nil), '\n')
  assert(help:find('on a prompt: r rewind to before it · F fork from before it', 1, true), help)
  assert(help:find('/fork', 1, true), help)
end)

test(':PseudoClaudeRewind: the preview float, <CR> rewinds, F forces, q changes nothing', function()
  wipe_chats()
  local r = require('pseudoclaude.protocol').requests
  local ws = 'file:///work/app'
  local answers = {
    [r.rewind_preview] = PREVIEW,
    [r.rewind] = { restoredFiles = { 'hello.py', 'docs/old.md' }, conflicts = { 'notes.txt' }, messageCount = 2,
      message = 'Rewound to before prompt 2: 2 files restored, 1 conflict left alone; the conversation is back to before prompt 2 (2 messages).' },
    [r.context] = { sessionId = 's', messageCount = 2, estimatedTokens = 10, contextWindow = 100, autoCompactThreshold = 80,
      autoCompactFailures = 0, autoCompactTripped = false },
    [r.sessions_turns] = { turns = { { turn = 1, prompt = 'one', filesChanged = 0 }, { turn = 2, prompt = 'two', filesChanged = 3 } } },
  }
  local start = vim.api.nvim_get_current_win()
  -- <CR>: the rewind as previewed, without force.
  local seen = with_fake_server(answers, rewind.MODES[1], function()
    pc.rewind('2', ws)
    local cur = assert(rewind.current, 'no preview on screen')
    eq(vim.api.nvim_get_current_win(), cur.win, 'the float is entered')
    eq(vim.api.nvim_win_get_config(cur.win).relative, 'editor')
    local lines = vim.api.nvim_buf_get_lines(cur.buf, 0, -1, false)
    local at = vim.fn.index(lines, '  restored   notes.txt    ! changed outside the agent') + 1
    assert(at > 0, vim.inspect(lines))
    eq(vim.api.nvim_win_get_cursor(cur.win)[1], at, 'the cursor on the first file')
    eq(lines[#lines], '<CR> rewind · F rewind and overwrite the changes · d diff · q cancel')
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
    eq(rewind.current, nil)
    eq(vim.api.nvim_win_is_valid(cur.win), false, 'the float closed')
  end)
  eq(seen.asked[1].kind, 'pseudoclaude_rewind_mode')
  eq(seen.asked[1].prompt, 'Rewind what to before prompt 2?')
  local sent = vim.tbl_filter(function(x) return x.method ~= r.context end, seen.sent)
  eq(vim.tbl_map(function(x) return x.method end, sent), { r.rewind_preview, r.rewind })
  eq(sent[1].params, { workspace = ws, turn = 2, mode = 'both' })
  eq(sent[2].params, { workspace = ws, turn = 2, mode = 'both' })
  local shown = vim.tbl_map(function(x) return x.msg end, seen.shown)
  assert(vim.tbl_contains(shown, 'PseudoClaude: ' .. answers[r.rewind].message), vim.inspect(shown))
  eq(seen.shown[1].level, vim.log.levels.WARN, 'a conflict left alone warns')
  eq(vim.api.nvim_get_current_win(), start)
  -- F: force; the turn picked from the list (newest first) and the mode given.
  local forced = with_fake_server(answers, nil, function()
    local real = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      eq(opts.kind, 'pseudoclaude_turn')
      eq(vim.tbl_map(opts.format_item, items), { '2. two · 3 files changed', '1. one · no files changed' })
      on_choice(items[1])
    end
    pc.rewind('code', ws)
    vim.ui.select = real
    vim.api.nvim_feedkeys('F', 'x', false)
  end)
  local last = vim.tbl_filter(function(x) return x.method == r.rewind end, forced.sent)
  eq(last[1].params, { workspace = ws, turn = 2, mode = 'code', force = true })
  -- q: nothing is sent after the preview; a bad argument says why.
  local cancelled = with_fake_server(answers, nil, function()
    pc.rewind('2 conversation', ws)
    local cur = rewind.current
    eq(vim.api.nvim_buf_get_lines(cur.buf, -2, -1, false), { '<CR> rewind · q cancel' })
    vim.api.nvim_feedkeys('F', 'x', false) -- no conflict to overwrite: F does nothing here
    vim.api.nvim_feedkeys('q', 'x', false)
    eq(vim.api.nvim_win_is_valid(cur.win), false)
    pc.rewind('2 nonsense', ws)
  end)
  eq(methods(cancelled), { r.rewind_preview })
  eq(cancelled.shown[1].msg, "PseudoClaude: nonsense is neither a prompt's number nor code, conversation or both.")
end)

test(':PseudoClaudeRewind: d shows a file as a diff, q comes back to the preview', function()
  local r = require('pseudoclaude.protocol').requests
  local ws = 'file:///work/app'
  local answers = {
    [r.rewind_preview] = PREVIEW,
    [r.rewind_file] = function(params)
      if params.path == 'hello.py' then
        return nil, { path = 'hello.py', current = 'print("hi")\n', restored = vim.NIL, binary = false }
      end
      return nil, { path = params.path, current = '', restored = '', binary = true }
    end,
  }
  local tabs = #vim.api.nvim_list_tabpages()
  local seen = with_fake_server(answers, nil, function()
    pc.rewind('2 code', ws)
    local cur = rewind.current
    local lines = vim.api.nvim_buf_get_lines(cur.buf, 0, -1, false)
    local hello = vim.fn.index(lines, '  deleted    hello.py') + 1
    vim.api.nvim_win_set_cursor(cur.win, { hello, 0 })
    vim.api.nvim_feedkeys('d', 'x', false)
    local view = assert(cur.diff, 'no diff')
    eq(#vim.api.nvim_list_tabpages(), tabs + 1, 'a tab')
    eq(vim.api.nvim_buf_get_lines(view.left.buf, 0, -1, false), { 'print("hi")' })
    eq(vim.api.nvim_buf_get_lines(view.right.buf, 0, -1, false), { '' })
    assert(vim.wo[view.left.win].diff and vim.wo[view.right.win].diff, 'diff mode')
    assert(vim.wo[view.left.win].winbar:find('now · %<hello.py', 1, true), vim.wo[view.left.win].winbar)
    assert(vim.wo[view.right.win].winbar:find('q back to the preview', 1, true), vim.wo[view.right.win].winbar)
    eq(vim.bo[view.left.buf].filetype, 'python')
    vim.api.nvim_feedkeys('q', 'x', false)
    eq(#vim.api.nvim_list_tabpages(), tabs, 'the tab closed')
    eq(vim.api.nvim_get_current_win(), cur.win, 'back in the preview')
    eq(rewind.current, cur, 'the preview stays')
    vim.api.nvim_win_set_cursor(cur.win, { hello - 1, 0 })
    vim.api.nvim_feedkeys(vim.keycode('<Tab>'), 'x', false)
    eq(#vim.api.nvim_list_tabpages(), tabs, 'no diff of a binary file')
    vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'x', false)
    eq(rewind.current, nil)
  end)
  eq(seen.sent[2].params, { workspace = ws, turn = 2, path = 'hello.py' })
  local shown = vim.tbl_map(function(x) return x.msg end, seen.shown)
  eq(shown, { 'PseudoClaude: notes.txt is not a text file: no diff to show.' })
end)

test(':PseudoClaudeFork: forks, then resumes the new session', function()
  wipe_chats()
  local r = require('pseudoclaude.protocol').requests
  local ws = 'file:///work/app'
  local answers = {
    [r.sessions_fork] = { sessionId = 's-fork' },
    [r.sessions_resume] = { sessionId = 's-fork', messageCount = 2, badLines = 0, repaired = 0 },
    [r.context] = { sessionId = 's-fork', messageCount = 2, estimatedTokens = 10, contextWindow = 100,
      autoCompactThreshold = 80, autoCompactFailures = 0, autoCompactTripped = false },
  }
  local seen = with_fake_server(answers, nil, function()
    -- A client whose own requests (the history the transcript replays) go nowhere.
    local client = require('pseudoclaude.client')
    local fake = client.request
    client.request = function(method, params, cb)
      fake(method, params, function(e, res)
        cb(e, res, { request = function() return true, 1 end })
      end)
    end
    pc.fork('2', ws)
    pc.fork('', ws)
    pc.fork('two', ws)
  end)
  local forks = vim.tbl_filter(function(x) return x.method == r.sessions_fork end, seen.sent)
  eq({ forks[1].params, forks[2].params }, { { workspace = ws, turn = 2 }, { workspace = ws } })
  local resumes = vim.tbl_filter(function(x) return x.method == r.sessions_resume end, seen.sent)
  eq(resumes[1].params, { workspace = ws, sessionId = 's-fork' })
  local shown = vim.tbl_map(function(x) return x.msg end, seen.shown)
  eq(shown, {
    'PseudoClaude: forked the conversation before prompt 2 into session s-fork, now the current one.',
    'PseudoClaude: forked the whole conversation into session s-fork, now the current one.',
    "PseudoClaude: Fork takes a prompt's number (none: the whole conversation).",
  })
end)

local mcp = require('pseudoclaude.mcp')

local ECHO_TOOLS = { 'echo', 'dotted.name', 'big', 'image', 'mixed', 'fail', 'env', 'header', 'shout', 'grow', 'pid',
  'sleep', 'crash' }

test('mcp: sources, statuses, the summary and the tools in words', function()
  eq(vim.tbl_map(mcp.source_label, { 'user', 'project', 'workspace', 'acp', 'other' }),
    { 'your settings', '.mcp.json', 'config.yaml', 'the editor', 'other' })
  eq(mcp.status_text({ name = 'e', status = 'ready', tools = { 'a', 'b' } }), 'ready · 2 tools')
  eq(mcp.status_text({ name = 'e', status = 'ready', tools = { 'a' } }), 'ready · 1 tool')
  eq(mcp.status_text({ name = 'e', status = 'ready', tools = {} }), 'ready · no tools')
  eq(mcp.status_text({ name = 'e', status = 'starting', tools = {} }), 'not started yet')
  eq(mcp.status_text({ name = 'e', status = 'needsApproval', tools = {} }), 'waits for your approval')
  eq(mcp.status_text({ name = 'e', status = 'failed', tools = {}, error = 'cannot run `x`:\n no such file' }),
    'failed: cannot run `x`: no such file')
  eq(mcp.status_text({ name = 'e', status = 'failed', tools = {}, error = vim.NIL }), 'failed: it did not start')
  eq(mcp.status_text({ name = 'e', status = 'disabled', tools = {} }), 'disabled')
  eq(mcp.status_text({ name = 'e', status = 'disabled', tools = {}, error = 'not approved' }), 'disabled: not approved')
  eq(mcp.summary({ { status = 'ready' }, { status = 'failed' }, { status = 'ready' }, { status = 'needsApproval' } }),
    '4 MCP servers: 2 ready, 1 waiting for your approval, 1 failed')
  eq(mcp.summary({ { status = 'starting' } }), '1 MCP server: 1 not started yet')
  eq(mcp.tools_lines({}, 40), {})
  eq(mcp.tools_lines({ 'echo', 'pid' }, 40), { 'tools: echo, pid' })
  eq(mcp.tools_lines(ECHO_TOOLS, 40), { 'tools: echo, dotted.name, big, … +10' })
  for _, l in ipairs(mcp.tools_lines(ECHO_TOOLS, 40)) do
    assert(vim.fn.strdisplaywidth(l) <= 40, l)
  end
  eq(mcp.tools_lines({ 'a-very-long-tool-name-indeed', 'b' }, 20), { 'tools: … +2' })
  eq(mcp.tools_lines(ECHO_TOOLS, 40, true), { 'tools: echo, dotted.name, big, image,', 'mixed, fail, env, header, shout, grow,',
    'pid, sleep, crash' })
end)

test('mcp: the float lines: aligned columns, details under the status, rows and highlights', function()
  local servers = {
    { name = 'echo', source = 'user', status = 'ready', tools = ECHO_TOOLS },
    { name = 'proj', source = 'project', status = 'needsApproval', tools = {} },
    { name = 'missing', source = 'user', status = 'failed', tools = {},
      error = 'cannot run `pseudoclaude-no-such-mcp`: no such file or directory' },
    { name = 'later', source = 'workspace', status = 'starting', tools = {} },
    { name = 'off', source = 'acp', status = 'disabled', tools = {} },
  }
  local lines, rows, marks = mcp.lines(servers, { width = 70, commands = { proj = 'python3 echo_server.py' } })
  -- By name, after a one-cell margin.
  eq(lines, {
    ' 5 MCP servers: 1 ready, 1 not started yet, 1 waiting for your approval, 1 failed, 1 disabled',
    '',
    ' ✓ echo     your settings  ready · 13 tools',
    '                           tools: echo, dotted.name, big, image, … +9',
    ' ○ later    config.yaml    not started yet',
    ' ✗ missing  your settings  failed: cannot run',
    '                           `pseudoclaude-no-such-mcp`: no such file or',
    '                           directory',
    ' ⊘ off      the editor     disabled',
    ' ? proj     .mcp.json      waits for your approval',
    '                           runs python3 echo_server.py',
    '',
    ' a approve · r restart · <CR> tools · R refresh · q close',
  })
  local names = {}
  for i = 3, 11 do
    names[#names + 1] = rows[i].name
  end
  eq(names, { 'echo', 'echo', 'later', 'missing', 'missing', 'missing', 'off', 'proj', 'proj' })
  eq({ rows[1], rows[2], rows[12], rows[13] }, {})
  local function groups(row)
    local out = {}
    for _, m in ipairs(marks) do
      if m[1] == row then
        out[#out + 1] = { lines[row + 1]:sub(m[2] + 1, m[3]), m[4] }
      end
    end
    return out
  end
  eq(groups(2), { { '✓', 'PseudoClaudeMcpReady' }, { 'echo', 'PseudoClaudeMcpName' },
    { 'your settings  ', 'PseudoClaudeMcpSource' }, { 'ready · 13 tools', 'PseudoClaudeMcpReady' } })
  eq(groups(3), { { lines[4]:sub(2), 'PseudoClaudeMcpDetail' } })
  eq(groups(5)[4], { 'failed: cannot run', 'PseudoClaudeMcpFailed' })
  eq(groups(6), { { lines[7]:sub(2), 'PseudoClaudeMcpFailed' } })
  eq(groups(9)[1], { '?', 'PseudoClaudeMcpApproval' })
  eq(groups(12), { { lines[13]:sub(2), 'PseudoClaudeMcpHelp' } })
  -- All the tools (<CR>); a server being restarted says so instead of its status.
  lines = mcp.lines(servers, { width = 70, expanded = { echo = true }, busy = { missing = 'restarting…' } })
  eq(vim.list_slice(lines, 3, 6), { ' ✓ echo     your settings  ready · 13 tools',
    '                           tools: echo, dotted.name, big, image, mixed,',
    '                           fail, env, header, shout, grow, pid, sleep,',
    '                           crash' })
  eq(lines[8], ' ✗ missing  your settings  restarting…')
  -- A very long error: three lines at most.
  local long = { { name = 'x', source = 'user', status = 'failed', tools = {}, error = string.rep('word ', 80) } }
  lines = mcp.lines(long, { width = 40 })
  eq(#lines, 2 + 3 + 2)
  assert(vim.endswith(lines[5], '…'), lines[5])
  -- No servers: how to add one.
  lines = mcp.lines({}, { folder = 'app' })
  eq(lines[1], ' No MCP servers in app.')
  assert(table.concat(lines, '\n'):find(".mcp.json", 1, true), 'no .mcp.json')
  assert(table.concat(lines, '\n'):find("mcp = { servers = {", 1, true), 'no mcp.servers setting')
  eq(lines[#lines], ' R refresh · q close')
end)

test('mcp: what a project server runs: asked by the server, else its .mcp.json', function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local ws = vim.uri_from_fname(dir)
  vim.fn.writefile({ vim.json.encode({ mcpServers = {
    docs = { command = 'npx', args = { '-y', 'docs-mcp' } },
    web = { type = 'http', url = 'https://example.com/mcp' },
  } }) }, dir .. '/.mcp.json')
  eq(mcp.project_command(ws, 'docs'), 'npx -y docs-mcp')
  eq(mcp.project_command(ws, 'web'), 'https://example.com/mcp')
  eq(mcp.project_command(ws, 'nope'), nil)
  eq(mcp.project_command(vim.uri_from_fname(dir .. '/none'), 'docs'), nil)
  eq(mcp.command_of(ws, { name = 'docs', source = 'project' }), 'npx -y docs-mcp')
  eq(mcp.command_of(ws, { name = 'docs', source = 'user' }), nil)
  mcp.remember_asked({ workspace = ws .. '/', kind = 'mcpServer', tool = 'docs', server = 'docs',
    command = 'npx -y docs-mcp@2' })
  eq(mcp.command_of(ws, { name = 'docs', source = 'project' }), 'npx -y docs-mcp@2')
  eq(mcp.approve_prompt({ name = 'docs', source = 'project' }, 'npx -y docs-mcp@2'),
    "PseudoClaude: This project's .mcp.json wants to start the MCP server docs: npx -y docs-mcp@2")
  eq(mcp.approve_prompt({ name = 'local', source = 'user' }), 'PseudoClaude: Your settings ask to start the MCP server local')
  mcp.asked = {}
  vim.fn.delete(dir, 'rf')
end)

test('approvals: an MCP tool call and an MCP server are asked in words; old kinds as before', function()
  local p = { workspace = 'file:///w', sessionId = 's', tool = 'echo', server = 'echo', kind = 'mcp',
    arguments = { text = 'hello' } }
  eq(approvals.mcp_prompt(p), 'PseudoClaude wants to call echo on the MCP server echo: text: hello')
  eq(approvals.mcp_prompt(vim.tbl_extend('force', p, { tool = 'pid', arguments = vim.empty_dict() })),
    'PseudoClaude wants to call pid on the MCP server echo (no arguments)')
  local choices, prompt = approvals.choices(p)
  eq(vim.tbl_map(function(c) return c.label end, choices), { 'Allow once', 'Allow echo for this session', 'Deny' })
  eq(vim.tbl_map(function(c) return c.decision end, choices), { 'allowOnce', 'allowSession', 'deny' })
  eq(prompt, approvals.mcp_prompt(p))
  local server = { workspace = 'file:///w', sessionId = '', tool = 'proj', server = 'proj', kind = 'mcpServer',
    arguments = vim.empty_dict(), command = 'python3 echo_server.py' }
  eq(approvals.mcp_server_prompt(server),
    "PseudoClaude: This project's .mcp.json wants to start the MCP server proj: python3 echo_server.py")
  eq(approvals.mcp_server_prompt({ tool = 'web', server = 'web', kind = 'mcpServer', url = 'https://example.com/mcp' }),
    "PseudoClaude: This project's .mcp.json wants to connect to the MCP server web at https://example.com/mcp")
  choices = approvals.choices(server)
  eq(vim.tbl_map(function(c) return c.label end, choices), { 'Allow once', 'Allow for this project', 'Deny' })
  eq(vim.tbl_map(function(c) return c.decision end, choices), { 'allowOnce', 'allowSession', 'deny' })
  -- A folder's own settings file: what it asks for, the URL first; allowed for the project.
  local settings = { workspace = 'file:///w', sessionId = '', tool = '.PseudoClaude/config.yaml', kind = 'permissions',
    arguments = vim.empty_dict(), path = '.PseudoClaude/config.yaml', url = 'http://127.0.0.1:9',
    rules = { 'baseUrl: http://127.0.0.1:9 (your prompts and API key would be sent there)',
      'approvals.runCommand: allow (commands would run without asking)' } }
  local settings_choices, settings_prompt = approvals.choices(settings)
  eq(settings_prompt, "PseudoClaude: this folder's .PseudoClaude/config.yaml asks to use its own settings (yours "
    .. 'stand until you allow it): baseUrl: http://127.0.0.1:9 (your prompts and API key would be sent there); '
    .. 'approvals.runCommand: allow (commands would run without asking)')
  eq(vim.tbl_map(function(c) return c.label end, settings_choices), { 'Allow once', 'Allow for this project', 'Deny' })
  -- A folder's own hooks file: each hook and what it runs; allowed for the project.
  local hooks = { workspace = 'file:///w', sessionId = '', tool = '.PseudoClaude/hooks.yaml', kind = 'hooks',
    arguments = vim.empty_dict(), path = '.PseudoClaude/hooks.yaml',
    hooks = { { name = 'lint', event = 'PostToolUse', action = 'shell: npm run lint' },
      { name = 'guard', event = 'PreToolUse', action = 'shell: ./guard.sh' } } }
  local hooks_choices, hooks_prompt = approvals.choices(hooks)
  eq(hooks_prompt, "PseudoClaude: this folder's .PseudoClaude/hooks.yaml has hooks that would run on your machine "
    .. '(they do not until you allow them): lint (PostToolUse): shell: npm run lint; guard (PreToolUse): shell: ./guard.sh')
  eq(vim.tbl_map(function(c) return c.decision end, hooks_choices), { 'allowOnce', 'allowSession', 'deny' })
  eq(hooks_choices[2].label, 'Allow for this project')
  -- The older kinds keep their words.
  local _, cmd_prompt = approvals.choices({ tool = 'run_command', kind = 'runCommand', command = 'ls', cwd = '/w' })
  eq(cmd_prompt, 'PseudoClaude: run_command wants to run: ls (in /w)')
  local write_choices, write_prompt = approvals.choices({ tool = 'write_file', kind = 'write', path = 'a.txt' })
  eq(write_prompt, 'PseudoClaude: write_file wants to write a.txt')
  eq(write_choices[2].label, 'Allow for this session')
end)

test('approvals: kind mcp and mcpServer through vim.ui.select; a dismissed server waits, asked once', function()
  local real_select, real_notify = vim.ui.select, vim.notify
  local asked, shown, pick = {}, {}, nil
  vim.ui.select = function(items, opts, on_choice)
    local labels = {}
    for i, item in ipairs(items) do
      labels[i] = opts.format_item and opts.format_item(item) or item
    end
    asked[#asked + 1] = { labels = labels, prompt = opts.prompt, kind = opts.kind }
    for i, l in ipairs(labels) do
      if pick and l == pick then
        return on_choice(items[i], i)
      end
    end
    on_choice(nil)
  end
  vim.notify = function(msg, level)
    shown[#shown + 1] = { msg = msg, level = level }
  end
  local ok, err = pcall(function()
    local tool = { workspace = 'file:///w', sessionId = 's', tool = 'echo', server = 'echo', kind = 'mcp',
      arguments = { text = 'hi' } }
    pick = 'Allow echo for this session'
    eq(approve_async(tool)(), { { decision = 'allowSession' } })
    eq(asked[1], { labels = { 'Allow once', 'Allow echo for this session', 'Deny' },
      prompt = 'PseudoClaude wants to call echo on the MCP server echo: text: hi', kind = 'pseudoclaude_approval' })
    pick = nil
    eq(approve_async(tool)(), { { decision = 'deny' } }, 'a dismissed tool call is denied')
    local server = { workspace = 'file:///w', sessionId = '', tool = 'proj', server = 'proj', kind = 'mcpServer',
      arguments = vim.empty_dict(), command = 'python3 echo_server.py' }
    pick = 'Allow for this project'
    eq(approve_async(server, 3)(), { { decision = 'allowSession' } })
    eq(asked[3].prompt, "PseudoClaude: This project's .mcp.json wants to start the MCP server proj: python3 echo_server.py")
    eq(mcp.command_of('file:///w', { name = 'proj', source = 'project' }), 'python3 echo_server.py', 'remembered for a')
    -- Dismissed: no answer (RequestCancelled), the server keeps it waiting; said once.
    pick = nil
    local got = approve_async(server, 4)()
    eq(got[1], nil)
    eq(got[2].code, -32800)
    eq(shown[#shown].msg, 'PseudoClaude: the MCP server proj waits for your approval: :PseudoClaudeMcp, then a.')
    -- The same question again from the same server (it read its configuration again): not shown.
    local before_asked, before_shown = #asked, #shown
    got = approve_async(server, 4)()
    eq(got[2].code, -32800)
    eq({ #asked, #shown }, { before_asked, before_shown }, 'asked again')
    -- Another command, or another server process: asked.
    approve_async(vim.tbl_extend('force', server, { command = 'python3 other.py' }), 4)()
    approve_async(server, 5)()
    eq(#asked, before_asked + 2)
    eq(#approvals.pending, 0)
  end)
  vim.ui.select, vim.notify = real_select, real_notify
  approvals.dismissed, mcp.asked = {}, {}
  assert(ok, err)
end)

test('chat: /mcp opens the servers; an MCP call\'s card waits for its approval', function()
  local r = require('pseudoclaude.protocol').requests
  local ws = 'file:///work/mcpchat'
  local c
  with_fake_server({ [r.context] = { sessionId = vim.NIL, messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
    autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false } }, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  chat.begin_run(ws, 'echo')
  chat.event({ workspace = ws, sessionId = 's1', kind = 'toolCall', id = 'm', name = 'mcp__my_docs__search',
    arguments = { q = 'x' } })
  chat.approval({ workspace = ws, tool = 'search', server = 'my.docs', kind = 'mcp' }, true)
  eq(vim.api.nvim_buf_get_lines(c.buf, -2, -1, false)[1], '  ⏸ waiting for your approval')
  chat.approval({ workspace = ws, tool = 'search', server = 'my.docs', kind = 'mcp' }, false)
  eq(vim.api.nvim_buf_get_lines(c.buf, -2, -1, false)[1], '  … running')
  chat.approval({ workspace = ws, tool = 'mcp__my_docs__search', server = 'docs', kind = 'mcpServer' }, true)
  eq(vim.api.nvim_buf_get_lines(c.buf, -2, -1, false)[1], '  … running', 'a server question is no call')
  chat.abort_run(ws, 'canceled')
  local pc = require('pseudoclaude')
  local real, opened = pc.mcp, nil
  pc.mcp = function(w) opened = w end
  local prompt = require('pseudoclaude.chat.prompt')
  prompt.server_commands[ws] = { { name = 'mcp', description = 'Show the MCP servers, their status and tools' } }
  chat.submit(c, '/mcp')
  pc.mcp = real
  eq(opened, ws)
  vim.cmd('bwipeout! ' .. c.buf)
  prompt.forget()
end)

test(':PseudoClaudeMcp: the float, a approves, r restarts, <CR> tools, R and mcpChanged refresh, q closes', function()
  local protocol = require('pseudoclaude.protocol')
  local r = protocol.requests
  local ws = 'file:///work/app'
  local listing = {
    { name = 'echo', source = 'user', status = 'ready', tools = ECHO_TOOLS },
    { name = 'proj', source = 'project', status = 'needsApproval', tools = {} },
    { name = 'missing', source = 'user', status = 'failed', tools = {}, error = 'cannot run `nope`' },
  }
  local lists = 0
  local answers = {
    [r.mcp_list] = function()
      lists = lists + 1
      return nil, { servers = vim.deepcopy(listing) }
    end,
    [r.mcp_approve] = function(params)
      return nil, { server = { name = params.server, source = 'project', status = 'starting', tools = {} } }
    end,
    [r.mcp_restart] = function(params)
      return nil, { server = { name = params.server, source = 'user', status = 'failed', tools = {},
        error = 'cannot run `nope` again' } }
    end,
  }
  local state
  local seen = with_fake_server(answers, mcp.APPROVE_CHOICES[2], function(seen)
    mcp.open(ws)
    state = assert(mcp.current, 'no float')
    eq(vim.api.nvim_get_current_win(), state.win, 'the float is current')
    eq(vim.api.nvim_win_get_config(state.win).title[1][1], ' PseudoClaude MCP servers · app ')
    eq(state.rows[vim.api.nvim_win_get_cursor(state.win)[1]].name, 'proj', 'the cursor on the one waiting for you')
    local function on(name, key)
      for l = 1, vim.api.nvim_buf_line_count(state.buf) do
        if state.rows[l] and state.rows[l].name == name then
          vim.api.nvim_win_set_cursor(state.win, { l, 0 })
          return vim.api.nvim_feedkeys(vim.keycode(key), 'x', false)
        end
      end
      error('no ' .. name)
    end
    local function text()
      return table.concat(vim.api.nvim_buf_get_lines(state.buf, 0, -1, false), '\n')
    end
    -- <CR>: every tool, then folded again.
    on('echo', '<CR>')
    assert(text():find('crash', 1, true), text())
    on('echo', '<CR>')
    assert(not text():find('crash', 1, true), text())
    -- a and r where they do nothing.
    on('echo', 'a')
    on('proj', 'r')
    -- a on the project server: the question says what it runs; the answer goes to the server.
    mcp.remember_asked({ workspace = ws, kind = 'mcpServer', tool = 'proj', server = 'proj', command = 'python3 s.py' })
    on('proj', 'a')
    local q = seen.asked[#seen.asked]
    eq(q.prompt, "PseudoClaude: This project's .mcp.json wants to start the MCP server proj: python3 s.py")
    eq(q.kind, 'pseudoclaude_mcp_approval')
    eq(state.rows[vim.api.nvim_win_get_cursor(state.win)[1]].name, 'proj', 'the cursor stayed on it')
    assert(text():find('? proj     .mcp.json      waits', 1, true) == nil, text())
    assert(text():find('○ proj     .mcp.json      not started yet', 1, true), text())
    -- r on the failed one: it stays failed, with the new error.
    on('missing', 'r')
    assert(text():find('failed: cannot run `nope` again', 1, true), text())
    eq(state.rows[vim.api.nvim_win_get_cursor(state.win)[1]].name, 'missing', 'the cursor stayed on it')
    on('missing', '<CR>')
    -- R, and pseudoclaude/mcpChanged (a burst: one request), ask the server again.
    local before = lists
    on('echo', 'R')
    eq(lists, before + 1)
    require('pseudoclaude.handlers')[protocol.notifications.mcp_changed](nil, { workspace = ws .. '/' })
    require('pseudoclaude.handlers')[protocol.notifications.mcp_changed](nil, { workspace = ws })
    require('pseudoclaude.handlers')[protocol.notifications.mcp_changed](nil, { workspace = 'file:///other' })
    vim.wait(500, function() return lists == before + 2 end, 10)
    vim.wait(100)
    eq(lists, before + 2)
    assert(text():find('proj     .mcp.json      waits for your approval', 1, true), 'the refreshed list')
    on('echo', 'q')
    eq(vim.api.nvim_win_is_valid(state.win), false)
    eq(mcp.current, nil)
  end)
  local sent = vim.tbl_filter(function(x) return x.method ~= r.mcp_list end, seen.sent)
  eq(vim.tbl_map(function(x) return x.params end, sent), {
    { workspace = ws, server = 'proj', decision = 'allowSession' },
    { workspace = ws, server = 'missing' },
  })
  local shown = vim.tbl_map(function(x) return x.msg end, seen.shown)
  eq(shown, {
    'PseudoClaude: echo needs no approval (ready · 13 tools).',
    'PseudoClaude: proj waits for your approval: a approves it.',
    'PseudoClaude: proj approved for this project: not started yet.',
    'PseudoClaude: missing failed: cannot run `nope` again',
    'PseudoClaude: missing has no tools to show (failed: cannot run `nope` again).',
  })
  -- No servers: the float says how to add one; leaving it closes it.
  with_fake_server({ [r.mcp_list] = { servers = {} } }, nil, function()
    mcp.open(ws)
    local lines = vim.api.nvim_buf_get_lines(mcp.current.buf, 0, -1, false)
    eq(lines[1], ' No MCP servers in app.')
    local win = mcp.current.win
    vim.cmd('wincmd p')
    vim.wait(200, function() return mcp.current == nil end, 10)
    eq(vim.api.nvim_win_is_valid(win), false, 'leaving the float closes it')
  end)
  mcp.asked = {}
end)

test(':checkhealth credentials: a local server needs no API key', function()
  local h = require('pseudoclaude.health')
  local none = function() return nil end
  local function levels(report)
    return vim.tbl_map(function(e) return e[1] .. ' ' .. e[2] end, report)
  end
  for _, url in ipairs({ 'http://localhost:11434/v1', 'http://127.0.0.1:8000/v1', 'http://[::1]:11434/v1',
    'http://user@LOCALHOST:1234', 'http://ollama.localhost/v1' }) do
    eq(h.is_local_url(url), true, url)
  end
  for _, url in ipairs({ 'https://api.openai.com/v1', 'http://10.0.0.5:11434/v1', 'http://localhost.example.com/v1',
    'localhost:11434', '', 'http://127.0.0.1.example.com' }) do
    eq(h.is_local_url(url), false, url)
  end
  -- Ollama in setup(): OK with a note, no warning
  local report = h.credential_report({ provider = 'openai', baseUrl = 'http://localhost:11434/v1' }, none, {})
  eq(levels(report), {
    'info ANTHROPIC_API_KEY is not set',
    'info OPENAI_API_KEY is not set',
    'info provider: openai (from setup())',
    'info baseUrl: http://localhost:11434/v1',
    'ok no API key needed: provider openai at http://localhost:11434/v1 (a server on this machine)',
    'info the server sends a placeholder key there; set apiKey if that server asks for one',
  })
  -- the same in ~/.PseudoClaude/config.yaml; an OpenAI-compatible server on another host too
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local file = dir .. '/config.yaml'
  vim.fn.writefile({ '# my model', 'provider: "openai"', 'baseUrl: http://gpu-box:8000/v1  # vLLM',
    'approvals:', '  runCommand: ask', 'apiKey:' }, file)
  local values = h.read_top_level(file)
  eq(values, { provider = 'openai', baseUrl = 'http://gpu-box:8000/v1' })
  report = h.credential_report({}, none, values)
  eq(report[#report - 1][1], 'ok', vim.inspect(report))
  eq(report[#report - 1][2], "no API key needed: provider openai at http://gpu-box:8000/v1 "
    .. "(an OpenAI-compatible server, not OpenAI's own API)")
  eq(h.read_top_level(dir .. '/missing.yaml'), {})
  -- OpenAI's own API, anthropic's, or nothing at all: the warning stays
  for _, settings in ipairs({ { provider = 'openai', baseUrl = 'https://api.openai.com/v1' },
    { provider = 'anthropic', baseUrl = 'https://proxy.example.com' }, { provider = 'openai' }, {} }) do
    report = h.credential_report(settings, none, {})
    eq(report[#report][1], 'warn', vim.inspect(settings))
  end
  report = h.credential_report({ baseUrl = 'http://localhost:11434/v1' }, none, {})
  eq(report[#report][1], 'warn')
  eq(report[#report][2], 'baseUrl is set but no provider: the server does not know which protocol to speak')
  -- a key anywhere: no note, no warning (never its value)
  report = h.credential_report({ provider = 'anthropic' }, function(name)
    return name == 'ANTHROPIC_API_KEY' and 'sk-ant-secret' or nil
  end, {})
  eq(levels(report), { 'ok ANTHROPIC_API_KEY is set', 'info OPENAI_API_KEY is not set',
    'info provider: anthropic (from setup())' })
  report = h.credential_report({}, none, { apiKey = 'sk-in-file' })
  eq(levels(report)[3], 'ok apiKey is set in ~/.PseudoClaude/config.yaml')
  eq(report[#report][1], 'ok')
end)

local function contains(haystack, needle, what)
  if not tostring(haystack):find(needle, 1, true) then
    error(string.format('%s: %q not found in %q', what or 'text', needle, tostring(haystack)), 2)
  end
end

test('tasks: the block\'s lines and highlights, the winbar words', function()
  local tasks = require('pseudoclaude.tasks')
  eq({ tasks.lines({}) }, { {}, {} })
  eq(tasks.words({}), nil)
  local list = tasks.normalize({ { content = 'Read app.py', status = 'completed' },
    { content = 'Change  greet\nto welcome', status = 'in_progress' }, { content = 'Add a test', status = 'pending' },
    { content = '  ', status = 'pending' }, 'bad', { content = 'Odd status', status = 'later' } })
  eq(#list, 4, 'blank and bad items left out')
  local lines, marks = tasks.lines(list)
  eq(lines, { 'Tasks 1/4', '  ✓ Read app.py', '  ▶ Change greet to welcome', '  ○ Add a test', '  ○ Odd status', '' })
  eq(tasks.words(list), 'tasks 1/4')
  local function groups(row)
    local out = {}
    for _, m in ipairs(marks) do
      if m[1] == row then
        out[#out + 1] = m[4]
      end
    end
    return out
  end
  eq(groups(0), { 'PseudoClaudeTasksTitle', 'PseudoClaudeTasksCount' })
  eq(groups(1), { 'PseudoClaudeTaskDone', 'PseudoClaudeTaskStrike' })
  eq(groups(2), { 'PseudoClaudeTaskCurrent' })
  eq(groups(3), { 'PseudoClaudeTaskPendingMark', 'PseudoClaudeTaskPending' })
  eq(vim.api.nvim_get_hl(0, { name = 'PseudoClaudeTaskStrike' }).strikethrough, true)
  -- The cards of the two tools say what they did in words.
  local render = require('pseudoclaude.render')
  eq(render.call('update_tasks', { tasks = { { content = 'a', status = 'completed' }, { content = 'b', status = 'pending' } } }),
    '▸ update_tasks(2 tasks, 1 done)')
  eq(render.call('exit_plan_mode', { plan = '\n# Plan: a friendlier greeting\n\n1. Change greet' }),
    '▸ exit_plan_mode(Plan: a friendlier greeting)')
  eq(render.call('exit_plan_mode', { other = 1 }), '▸ exit_plan_mode(other: 1)')
end)

test('chat: the task list at the top of the chat, from events and pseudoclaude/tasks; the items move', function()
  local r = require('pseudoclaude.protocol').requests
  local tasks = require('pseudoclaude.tasks')
  local ws = 'file:///work/tasks'
  local c
  local list = { { content = 'Read app.py', status = 'completed' }, { content = 'Change greet', status = 'in_progress' },
    { content = 'Add a test', status = 'pending' } }
  local seen = with_fake_server({ [r.context] = { sessionId = 's1', messageCount = 0, estimatedTokens = 0,
    contextWindow = 200000, autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false },
    [r.sessions_messages] = { total = 0, items = {} },
    [r.tasks] = function(params)
      return nil, { sessionId = params.sessionId, tasks = list }
    end }, nil, function()
    c = chat.show(ws, { enter = false })
  end)
  assert(vim.tbl_contains(methods(seen), r.tasks), vim.inspect(methods(seen)))
  eq(seen.sent[#seen.sent].params, { workspace = ws, sessionId = 's1' })
  local lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  eq(vim.list_slice(lines, 1, 5), { 'Tasks 1/3', '  ✓ Read app.py', '  ▶ Change greet', '  ○ Add a test', '' })
  contains(lines[6], 'New conversation', 'the hint below the block')
  local win = vim.fn.win_findbuf(c.buf)[1]
  local bar = vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, use_winbar = true, maxwidth = 300 }).str
  contains(bar, 'tasks 1/3', 'winbar')
  -- A run below it; a tasks event of the session changes only the block; the cards fold where they are.
  local function ev(e)
    e.workspace, e.sessionId = ws, 's1'
    handlers['pseudoclaude/event'](nil, e)
  end
  chat.begin_run(ws, 'Go on')
  ev({ kind = 'toolCall', id = 'a', name = 'read_file', arguments = { path = 'A' } })
  ev({ kind = 'toolResult', id = 'a', name = 'read_file', isError = false, bytes = 2, status = 'done', display = 'aa' })
  ev({ kind = 'tasks', tasks = { { content = 'Read app.py', status = 'completed' },
    { content = 'Change greet', status = 'completed' }, { content = 'Add a test', status = 'in_progress' },
    { content = 'Run the tests', status = 'pending' } } })
  lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  eq(lines, { 'Tasks 2/4', '  ✓ Read app.py', '  ✓ Change greet', '  ▶ Add a test', '  ○ Run the tests', '',
    '## You', 'Go on', '', '## PseudoClaude', '▸ read_file(path: A)', '  ✓ read_file · 2 B', '  │ aa' })
  eq(chat.item_at(c, 11).kind, 'toolCall')
  vim.api.nvim_win_call(win, function()
    eq({ vim.fn.foldclosed(11), vim.fn.foldclosedend(11) }, { 11, 13 }, 'the card folds')
  end)
  eq(vim.api.nvim_win_get_cursor(win)[1], #lines, 'the window follows the last line')
  local hl = vim.api.nvim_buf_get_extmarks(c.buf, require('pseudoclaude.chat.buffer').HEAD_NS, 0, -1, { details = true })
  assert(#hl >= 6, vim.inspect(hl))
  -- Another session's list is not this chat's; the transcript gets no line of it.
  handlers['pseudoclaude/event'](nil, { workspace = ws, sessionId = 's2', kind = 'tasks', tasks = {} })
  eq(vim.api.nvim_buf_get_lines(c.buf, 0, 1, false), { 'Tasks 2/4' })
  -- Cleared: the block goes, the items move up.
  ev({ kind = 'tasks', tasks = {} })
  lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  eq(lines[1], '## You')
  eq(chat.item_at(c, 5).kind, 'toolCall')
  eq(tasks.words(c.tasks), nil)
  chat.end_run(ws, { sessionId = 's1', stopReason = 'completed', iterations = 1 })
  wipe_chats()
end)

--- A plan asked with pseudoclaude/approve (kind plan), as the server sends it.
local PLAN = { workspace = 'file:///work/plan', sessionId = 's', tool = 'exit_plan_mode', kind = 'plan',
  arguments = { plan = '# Plan\n\n1. Change greet\n2. Add a test\n' }, plan = '# Plan\n\n1. Change greet\n2. Add a test\n' }

test('plan: the float shows the plan as markdown; a, A, k (with feedback, or empty), q, <Esc>, :q', function()
  local plan = require('pseudoclaude.plan')
  local cases = {
    { 'a', nil, { decision = 'approve', mode = 'default' } },
    { 'A', nil, { decision = 'approve', mode = 'acceptEdits' } },
    { 'k', 'also update the README', { decision = 'keepPlanning', feedback = 'also update the README' } },
    { 'k', '', { decision = 'keepPlanning' } },
    { 'q', nil, { decision = 'keepPlanning' } },
    { '<Esc>', nil, { decision = 'keepPlanning' } },
    { ':q<CR>', nil, { decision = 'keepPlanning' } },
  }
  local real_input = vim.ui.input
  -- (from a window of the tab, not a float an earlier test left: that closes when left)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(w).relative == '' then
      vim.api.nvim_set_current_win(w)
      break
    end
  end
  for _, case in ipairs(cases) do
    local origin = vim.api.nvim_get_current_win()
    local asked
    vim.ui.input = function(opts, on_confirm)
      asked = opts.prompt
      on_confirm(case[2])
    end
    local shown
    vim.api.nvim_create_autocmd('User', { pattern = 'PseudoClaudeApprovalShown', once = true, callback = function(ev)
      shown = ev.data
    end })
    local answer = approve_async(PLAN)
    assert(shown and shown.plan and shown.view, 'no float for ' .. case[1])
    local view = shown.view
    eq(vim.api.nvim_get_current_win(), view.win, 'the float is current')
    eq(vim.bo[view.buf].filetype, 'markdown')
    eq(vim.api.nvim_buf_get_lines(view.buf, 0, -1, false), { '# Plan', '', '1. Change greet', '2. Add a test' })
    local cfg = vim.api.nvim_win_get_config(view.win)
    eq(cfg.relative, 'editor')
    eq(cfg.footer[1][1], ' ' .. view.hint .. ' ')
    assert(view.hint == plan.HINT or view.hint == plan.SHORT_HINT, view.hint)
    contains(cfg.title[1][1], 'PseudoClaude plan · plan', 'title')
    vim.api.nvim_feedkeys(vim.keycode(case[1]), 'x', false)
    vim.wait(500, function()
      return answer() ~= nil
    end)
    eq(answer(), { case[3] }, case[1] .. ' ' .. tostring(case[2]))
    eq(asked ~= nil, case[1] == 'k', 'feedback asked')
    if asked then
      eq(asked, plan.FEEDBACK_PROMPT)
    end
    eq(vim.api.nvim_win_is_valid(view.win), false, 'the float closed')
    eq(vim.api.nvim_get_current_win(), origin, 'back where it was after ' .. case[1])
    eq(#approvals.pending, 0)
  end
  vim.ui.input = real_input
  -- The server withdraws it (the run was cancelled): RequestCancelled, the float goes.
  local answer = approve_async(PLAN, 9)
  local view = approvals.pending[1].view
  approvals.cancel(9, 'pseudoclaude-approval-x')
  local got = answer()
  eq(got[2].code, -32800)
  eq(vim.api.nvim_win_is_valid(view.win), false)
  -- Leaving the float leaves it open: it still waits.
  answer = approve_async(PLAN)
  view = approvals.pending[1].view
  vim.cmd('wincmd p')
  vim.wait(50)
  eq(vim.api.nvim_win_is_valid(view.win), true, 'the float stayed')
  vim.api.nvim_set_current_win(view.win)
  vim.api.nvim_feedkeys('a', 'x', false)
  eq(answer(), { { decision = 'approve', mode = 'default' } })
end)

test('plan: without the approvals capability the plan message shows in the float too', function()
  local plan = require('pseudoclaude.plan')
  local actions = { { title = 'Approve' }, { title = 'Approve, accept edits' }, { title = 'Keep planning' } }
  local params = { type = 3, message = "PseudoClaude's plan:\n\n# Plan\n\n1. Change greet", actions = actions }
  eq(plan.from_message(params), '# Plan\n\n1. Change greet')
  eq(plan.from_message({ type = 2, message = 'x', actions = { { title = 'Allow once' }, { title = 'Deny' } } }), nil)
  for key, title in pairs({ a = 'Approve', A = 'Approve, accept edits', k = 'Keep planning', q = 'Keep planning' }) do
    local answer
    local shown
    vim.api.nvim_create_autocmd('User', { pattern = 'PseudoClaudeApprovalShown', once = true, callback = function(ev)
      shown = ev.data
    end })
    coroutine.wrap(function()
      answer = { handlers['window/showMessageRequest'](nil, params, { client_id = 7, method = 'window/showMessageRequest' }) }
    end)()
    assert(shown and shown.view, 'no float')
    eq(vim.api.nvim_buf_get_lines(shown.view.buf, 0, -1, false), { '# Plan', '', '1. Change greet' })
    eq(vim.api.nvim_win_get_config(shown.view.win).footer[1][1], ' ' .. plan.HINT_NO_FEEDBACK .. ' ')
    contains(vim.api.nvim_win_get_config(shown.view.win).title[1][1], 'PseudoClaude plan', 'title')
    vim.api.nvim_feedkeys(key, 'x', false)
    vim.wait(1000, function()
      return answer ~= nil
    end)
    eq(answer, { { title = title } }, key)
  end
end)

u.finish('nvim unit')
