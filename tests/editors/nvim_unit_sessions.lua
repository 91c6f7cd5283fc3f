-- Unit checks of sessions side by side in the Neovim plugin: a chat buffer per session (events to
-- their session's buffer, switching and opening beside), a session another process is writing
-- (Fork, Wait, Cancel), /worktree and :PseudoClaudeWorktree (status buffer, diff, apply, remove),
-- against a fake request layer. Run by test_nvim.py as
-- `nvim --headless --clean -l nvim_unit_sessions.lua PLUGIN_DIR`.
local plugin = assert(_G.arg[1], 'usage: nvim -l nvim_unit_sessions.lua PLUGIN_DIR')
vim.opt.rtp:prepend(plugin)

local u = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_unit_harness.lua'))
local test, eq = u.test, u.eq

vim.cmd.runtime('plugin/pseudoclaude.lua')
local pc = require('pseudoclaude')
local chat = require('pseudoclaude.chat')
local client = require('pseudoclaude.client')
local protocol = require('pseudoclaude.protocol')
local window = require('pseudoclaude.chat.window')
local worktree = require('pseudoclaude.worktree')
local r = protocol.requests

local function context_of(sid)
  return { sessionId = sid or vim.NIL, messageCount = 0, estimatedTokens = 1000, contextWindow = 200000,
    autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false }
end

--- Answer `client.request` (and the requests of `client.ensure`'s client, asynchronously, as a
--- server does) from `answers` (a value, or a function of the params returning `err, result`);
--- `vim.ui.select` takes the next of `choices` (an item, or a function of the items). Returns
--- what was sent, shown and asked; everything is put back after `fn`.
local function with_fake(answers, choices, fn)
  local real = { request = client.request, ensure = client.ensure, notify = vim.notify, select = vim.ui.select }
  local seen = { sent = {}, shown = {}, asked = {} }
  local function answer(method, params)
    seen.sent[#seen.sent + 1] = { method = method, params = vim.deepcopy(params) }
    local a = answers[method]
    if type(a) == 'function' then
      return a(params)
    elseif a ~= nil then
      return nil, a
    end
    return { code = -32601, message = 'unhandled ' .. method }
  end
  client.request = function(method, params, cb)
    params = params or {}
    params.workspace = params.workspace or 'file:///work/app'
    local err, res = answer(method, params)
    cb(err, res, nil)
  end
  local fake = { id = 99, initialized = true, cancelled = {} }
  function fake:request(method, params, handler)
    vim.schedule(function()
      handler(answer(method, params))
    end)
    return true, #seen.sent + 1000
  end
  function fake:cancel_request(id)
    self.cancelled[#self.cancelled + 1] = id
  end
  client.ensure = function(cb)
    cb(fake)
  end
  vim.notify = function(msg, level)
    seen.shown[#seen.shown + 1] = { msg = msg, level = level }
  end
  vim.ui.select = function(items, opts, on_choice)
    seen.asked[#seen.asked + 1] = { items = items, prompt = opts.prompt, kind = opts.kind,
      labels = opts.format_item and vim.tbl_map(opts.format_item, items) or items }
    local choice = table.remove(choices, 1)
    if type(choice) == 'function' then
      return choice(items, on_choice)
    end
    on_choice(choice, choice and vim.fn.index(items, choice) + 1 or nil)
  end
  local ok, err = pcall(fn, seen)
  client.request, client.ensure, vim.notify, vim.ui.select = real.request, real.ensure, real.notify, real.select
  assert(ok, err)
  return seen
end

local function wipe_chats()
  for buf in pairs(require('pseudoclaude.chat.state').by_buf) do
    pcall(vim.cmd, 'bwipeout! ' .. buf)
  end
  vim.cmd('silent! only')
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function methods(seen)
  return vim.tbl_map(function(s) return s.method end, seen.sent)
end

local EMPTY = { sessionId = 's', total = 0, items = {} }

test('a chat buffer per session: events go to their session\'s buffer; two stream side by side', function()
  local ws = 'file:///work/two'
  local a, b
  with_fake({ [r.context] = context_of('s1'), [r.sessions_messages] = EMPTY, [r.slash_commands] = { commands = {} } },
    {}, function()
      a = chat.show(ws, { enter = false })
    end)
  eq(a.session_id, 's1')
  eq(vim.api.nvim_buf_get_name(a.buf), 'pseudoclaude://chat/two/s1')
  eq(vim.api.nvim_buf_get_name(a.prompt_buf), 'pseudoclaude://chat/two/s1/prompt')
  -- Session s2 beside it: a column of its own, its prompt below it.
  local seen = with_fake({ [r.context] = context_of('s2'), [r.sessions_messages] = EMPTY }, {}, function()
    b = chat.switch(ws, 's2', { beside = true, title = 'Write the docs' })
  end)
  eq(seen.sent[1], { method = r.context, params = { workspace = ws, sessionId = 's2' } }, 'its own session\'s context')
  assert(b ~= a, 'a chat of its own')
  eq(chat.get(ws), b, 'the folder\'s current chat')
  eq(chat.get(ws, 's1'), a)
  local aw, bw = vim.fn.win_findbuf(a.buf)[1], vim.fn.win_findbuf(b.buf)[1]
  assert(aw and bw, 'both shown')
  local apos, bpos = vim.api.nvim_win_get_position(aw), vim.api.nvim_win_get_position(bw)
  eq(apos[1], bpos[1], 'side by side')
  assert(bpos[2] > apos[2], 'b at the right of a')
  local bp = vim.fn.win_findbuf(b.prompt_buf)[1]
  eq(vim.api.nvim_win_get_position(bp)[2], bpos[2], 'b\'s prompt below b')
  assert(vim.api.nvim_win_get_position(bp)[1] > bpos[1])
  eq(window.session_words(b), 'Write the docs')
  -- Two runs at once: each event to its session's chat.
  chat.begin_run(ws, 'Explain the parser', nil, { chat = a })
  chat.begin_run(ws, 'Write the docs', nil, { chat = b })
  chat.event({ workspace = ws, sessionId = 's1', kind = 'text', delta = 'The parser ' })
  chat.event({ workspace = ws, sessionId = 's2', kind = 'text', delta = 'Docs: ' })
  chat.event({ workspace = ws, sessionId = 's1', kind = 'text', delta = 'reads tokens.' })
  chat.event({ workspace = ws, sessionId = 's2', kind = 'toolCall', id = 't', name = 'read_file', arguments = { path = 'README.md' } })
  chat.event({ workspace = ws, sessionId = 's9', kind = 'text', delta = 'NOT SHOWN' })
  eq(lines(a.buf), { '## You', 'Explain the parser', '', '## PseudoClaude', 'The parser reads tokens.' })
  eq(lines(b.buf), { '## You', 'Write the docs', '', '## PseudoClaude', 'Docs: ', '▸ read_file(path: README.md)', '  … running' })
  chat.end_run(ws, { sessionId = 's1', stopReason = 'completed', text = 'x', iterations = 1,
    usage = { inputTokens = 10, outputTokens = 5 } }, { chat = a })
  eq({ a.running, b.running }, { false, true }, 'one run ended, the other goes on')
  -- An approval of session s2 marks b's card.
  chat.approval({ workspace = ws, sessionId = 's2', tool = 'read_file', kind = 'runCommand' }, true)
  eq(lines(b.buf)[7], '  ⏸ waiting for your approval')
  -- Switching session in a's window: s3's chat takes a's windows; b stays beside it.
  vim.api.nvim_set_current_win(aw)
  local c
  with_fake({ [r.context] = context_of('s3'), [r.sessions_messages] = EMPTY }, {}, function()
    c = chat.switch(ws, 's3', {})
  end)
  eq(vim.fn.win_findbuf(c.buf), { aw }, 's3 in a\'s window')
  eq(#vim.fn.win_findbuf(a.buf), 0)
  eq(vim.fn.win_findbuf(b.buf), { bw }, 'b still shown')
  eq(vim.fn.win_findbuf(c.prompt_buf)[1] ~= nil, true, 'with its prompt')
  -- And back: a's buffer (its history kept) in the same window.
  with_fake({ [r.context] = context_of('s1'), [r.sessions_messages] = EMPTY }, {}, function()
    eq(chat.switch(ws, 's1', {}), a)
  end)
  eq(vim.fn.win_findbuf(a.buf), { aw })
  wipe_chats()
end)

test('a new conversation\'s chat takes the session of its first run; a new session gets a chat of its own', function()
  local ws = 'file:///work/fresh'
  local a
  with_fake({ [r.context] = context_of(nil), [r.slash_commands] = { commands = {} } }, {}, function()
    a = chat.show(ws, { enter = false })
  end)
  eq(a.session_id, nil)
  eq(vim.api.nvim_buf_get_name(a.buf), 'pseudoclaude://chat/fresh/new')
  chat.begin_run(ws, 'hello', nil, { chat = a })
  chat.event({ workspace = ws, sessionId = 's7', kind = 'text', delta = 'Hi.' })
  eq(a.session_id, 's7')
  eq(vim.api.nvim_buf_get_name(a.buf), 'pseudoclaude://chat/fresh/s7')
  eq(vim.api.nvim_buf_get_name(a.prompt_buf), 'pseudoclaude://chat/fresh/s7/prompt')
  local names = vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs())
  assert(not vim.tbl_contains(names, 'pseudoclaude://chat/fresh/new'), 'no buffer left with the old name')
  chat.end_run(ws, { sessionId = 's7', stopReason = 'completed', text = 'Hi.', iterations = 1,
    usage = { inputTokens = 1, outputTokens = 1 } }, { chat = a })
  eq(a.title, 'hello')
  -- A new session in a worktree: its own chat in the same windows, its branch in the winbar.
  local b = chat.new_session(ws, 's8', { path = '/d/worktrees/s8', branch = 'pseudoclaude/s8', base = 'abc' })
  assert(b ~= a)
  eq(chat.get(ws), b)
  eq(vim.fn.win_findbuf(b.buf)[1] ~= nil and #vim.fn.win_findbuf(a.buf), 0, 'it takes a\'s window')
  eq(lines(b.buf), { '*New session s8 in a git worktree of its own (branch pseudoclaude/s8): its changes reach fresh'
    .. ' when you apply them (:PseudoClaudeWorktree). Type below; Enter sends, / lists the commands.*' })
  eq(window.session_words(b), 'session s8 · worktree pseudoclaude/s8')
  local bar = vim.api.nvim_win_call(vim.fn.win_findbuf(b.buf)[1], function()
    vim.g.statusline_winid = vim.api.nvim_get_current_win()
    local text = window.winbar()
    vim.g.statusline_winid = nil
    return text
  end)
  assert(bar:find(' session s8 · worktree pseudoclaude/s8 · 1k/200k · PseudoClaude fresh%<', 1, true), bar)
  wipe_chats()
end)

test('/worktree starts a session in a worktree; the chat sends its own session; Ctrl-C cancels only its run', function()
  local ws = 'file:///work/wt'
  local a
  with_fake({ [r.context] = context_of('s1'), [r.sessions_messages] = EMPTY,
    [r.slash_commands] = { commands = { { name = 'worktree', description = 'Start a new session in a git worktree of its own' } } } },
    {}, function()
      a = chat.show(ws, { enter = false })
    end)
  local seen = with_fake({ [r.sessions_new] = { sessionId = 's2', worktree = { path = '/d/w/s2', branch = 'pseudoclaude/s2', base = 'abc' } },
    [r.context] = context_of('s2') }, {}, function()
    chat.submit(a, '/worktree')
  end)
  eq(seen.sent[1], { method = r.sessions_new, params = { workspace = ws, worktree = true } })
  local b = chat.get(ws)
  eq({ b.session_id, b.worktree }, { 's2', 'pseudoclaude/s2' })
  assert(seen.shown[1].msg:find('new session s2 in a git worktree (branch pseudoclaude/s2, in /d/w/s2)', 1, true), seen.shown[1].msg)
  -- Prompts name their chat's session; two runs of the folder at once, one per session.
  local sent = with_fake({ [r.run] = function()
    return nil, { sessionId = 's', stopReason = 'completed', text = 'ok', iterations = 1, usage = { inputTokens = 1, outputTokens = 1 } }
  end }, {}, function(s)
    chat.submit(b, 'in the worktree')
    chat.submit(a, 'in the folder')
    eq(vim.tbl_count(pc.runs), 2, 'two runs at once')
    pc.cancel(ws, a)
    vim.wait(1000, function() return #s.sent == 2 and vim.tbl_count(pc.runs) == 0 end)
  end)
  local runs = vim.tbl_map(function(x) return { x.params.prompt, x.params.sessionId } end,
    vim.tbl_filter(function(x) return x.method == r.run end, sent.sent))
  eq(runs, { { 'in the worktree', 's2' }, { 'in the folder', 's1' } })
  wipe_chats()
end)

test('a session another process is writing: Cancel keeps the prompt, Wait sends it once free, Fork sends it in a fork', function()
  local ws = 'file:///work/busy'
  local a
  with_fake({ [r.context] = context_of('s1'), [r.sessions_messages] = EMPTY, [r.slash_commands] = { commands = {} } },
    {}, function()
      a = chat.show(ws, { enter = false })
    end)
  local busy = { code = -32011, message = 'session s1 is busy: process 4242 is writing it', data = { sessionId = 's1', pid = 4242 } }
  local ok = { sessionId = 's1', stopReason = 'completed', text = 'Done.', iterations = 1, usage = { inputTokens = 1, outputTokens = 1 } }
  -- Cancel: nothing sent again, the prompt back on the prompt line, the chat says why.
  local refuse = function()
    return busy
  end
  local seen = with_fake({ [r.run] = refuse }, { 'Cancel' }, function(s)
    chat.submit(a, 'add tests')
    vim.wait(1000, function() return #s.asked == 1 end)
  end)
  eq(seen.asked[1].kind, 'pseudoclaude_busy')
  eq(seen.asked[1].items, { 'Fork', 'Wait', 'Cancel' })
  eq(seen.asked[1].prompt, 'PseudoClaude: session s1 is busy: process 4242 is writing it (another window or a terminal).'
    .. ' Your prompt was not sent.')
  eq(seen.asked[1].labels[2], 'Wait: send it in this session once process 4242 is done')
  eq(lines(a.buf), { '> ✗ not sent: session s1 is busy: process 4242 is writing it' }, 'the prompt left the chat')
  eq(vim.api.nvim_buf_get_lines(a.prompt_buf, -2, -1, false), { '❯ add tests' })
  eq(a.running, false)
  vim.api.nvim_buf_set_lines(a.prompt_buf, -2, -1, false, { '❯ ' })
  -- Wait: sessions/list every BUSY_POLL_MS until s1 is not running, then the prompt goes to s1.
  local real_poll = pc.BUSY_POLL_MS
  pc.BUSY_POLL_MS = 20
  local polls, runs = 0, 0
  seen = with_fake({
    [r.run] = function()
      runs = runs + 1
      if runs == 1 then
        return busy
      end
      return nil, ok
    end,
    [r.sessions_list] = function()
      polls = polls + 1
      return nil, { sessions = { { id = 's1', title = 't', running = polls < 3, worktree = vim.NIL } } }
    end,
    [r.context] = context_of('s1'),
    [r.sessions_messages] = EMPTY,
  }, { 'Wait' }, function(s)
    chat.submit(a, 'add tests')
    vim.wait(2000, function() return a.waiting == true end)
    eq(vim.api.nvim_buf_get_lines(a.buf, -1, -1, false), {})
    assert(table.concat(lines(a.buf), '\n'):find('> waiting for session s1 to be free (process 4242 is writing it)', 1, true),
      table.concat(lines(a.buf), '\n'))
    chat.submit(a, 'another') -- refused while it waits
    vim.wait(3000, function() return runs == 2 and not a.running end)
  end)
  pc.BUSY_POLL_MS = real_poll
  eq(polls, 3)
  eq(vim.tbl_filter(function(m) return m == r.run end, methods(seen)), { r.run, r.run })
  local second = vim.tbl_filter(function(x) return x.method == r.run end, seen.sent)[2]
  eq({ second.params.prompt, second.params.sessionId }, { 'add tests', 's1' })
  assert(vim.tbl_contains(vim.tbl_map(function(x) return x.msg end, seen.shown),
    'PseudoClaude: a prompt waits for this session to be free: Ctrl-C stops waiting.'))
  eq(lines(a.buf)[#lines(a.buf)], '── completed · 1 iteration · 1 in / 1 out ──')
  -- Wait, then Ctrl-C: it stops waiting; the prompt is back.
  pc.BUSY_POLL_MS = 20
  seen = with_fake({ [r.run] = refuse, [r.sessions_list] = { sessions = { { id = 's1', title = 't', running = true } } } },
    { 'Wait' }, function()
      chat.submit(a, 'third')
      vim.wait(2000, function() return a.waiting == true end)
      pc.cancel(ws, a)
    end)
  pc.BUSY_POLL_MS = real_poll
  eq(a.waiting, nil)
  eq(vim.tbl_count(pc.waits), 0)
  eq(vim.api.nvim_buf_get_lines(a.prompt_buf, -2, -1, false), { '❯ third' })
  eq(vim.api.nvim_buf_get_lines(a.buf, -2, -1, false), { '> stopped waiting: your prompt was not sent (it is back on the prompt line)' })
  vim.api.nvim_buf_set_lines(a.prompt_buf, -2, -1, false, { '❯ ' })
  -- Fork: sessions/fork of s1, the fork becomes current (its chat in a's window), the prompt goes there.
  seen = with_fake({
    [r.run] = function(params)
      if params.sessionId == 's1' then
        return busy
      end
      return nil, vim.tbl_extend('force', ok, { sessionId = params.sessionId })
    end,
    [r.sessions_fork] = { sessionId = 's1-fork' },
    [r.sessions_resume] = { sessionId = 's1-fork', messageCount = 2, badLines = 0, repaired = 0 },
    [r.context] = context_of('s1-fork'),
    [r.sessions_messages] = { sessionId = 's1-fork', total = 2, items = {
      { kind = 'user', text = 'earlier prompt', inContext = true }, { kind = 'assistant', text = 'Earlier answer.', inContext = true } } },
  }, { 'Fork' }, function(s)
    chat.submit(a, 'fourth')
    vim.wait(3000, function()
      local f = chat.get(ws, 's1-fork')
      return f ~= nil and not f.running and #vim.tbl_filter(function(x) return x.method == r.run end, s.sent) == 2
    end)
  end)
  eq(vim.tbl_filter(function(x) return x.method == r.sessions_fork end, seen.sent)[1].params, { workspace = ws, sessionId = 's1' })
  local fork = assert(chat.get(ws, 's1-fork'), 'the fork has a chat')
  eq(chat.get(ws), fork, 'the current chat')
  local runs_sent = vim.tbl_filter(function(x) return x.method == r.run end, seen.sent)
  eq({ runs_sent[2].params.prompt, runs_sent[2].params.sessionId }, { 'fourth', 's1-fork' })
  eq(vim.list_slice(lines(fork.buf), 1, 9), { '## You', 'earlier prompt', '', '## PseudoClaude', 'Earlier answer.', '',
    '## You', 'fourth', '' })
  assert(vim.tbl_contains(vim.tbl_map(function(x) return x.msg end, seen.shown),
    'PseudoClaude: forked the busy session s1 into s1-fork: your prompt goes on there.'))
  wipe_chats()
end)

test(':PseudoClaudeWorktree: arguments, the status buffer, <CR> diff, a apply, R remove (asked to force)', function()
  eq(worktree.parse(''), { action = 'status', force = false })
  eq(worktree.parse('apply'), { action = 'apply', force = false })
  eq(worktree.parse('remove!'), { action = 'remove', force = true })
  eq(worktree.parse('remove', true), { action = 'remove', force = true })
  eq(select(2, worktree.parse('status!')), ':PseudoClaudeWorktree [status|apply|remove[!]]: only remove takes !')
  eq(select(2, worktree.parse('merge')), ':PseudoClaudeWorktree [status|apply|remove[!]]: "merge" is not one of status, apply, remove')
  local cmds = vim.api.nvim_get_commands({})
  assert(cmds.PseudoClaudeWorktree, 'the command')
  eq(cmds.PseudoClaudeWorktree.bang, true)
  -- The folder and the worktree, on disk.
  local root = vim.fn.tempname()
  local wt = root .. '/.PseudoClaude/worktrees/s2'
  vim.fn.mkdir(root .. '/src', 'p')
  vim.fn.mkdir(wt .. '/src', 'p')
  vim.fn.writefile({ 'print("one")' }, root .. '/src/app.py')
  vim.fn.writefile({ 'print("one")', 'print("two")' }, wt .. '/src/app.py')
  vim.fn.writefile({ 'new' }, wt .. '/NEW.md')
  vim.fn.writefile({ 'old' }, root .. '/OLD.md')
  local ws = vim.uri_from_fname(root)
  local status = { sessionId = 's2', path = wt, branch = 'pseudoclaude/s2', base = 'abcdef0123456789',
    files = { { path = 'NEW.md', action = 'create' }, { path = 'OLD.md', action = 'delete' }, { path = 'src/app.py', action = 'modify' } },
    message = '3 files changed' }
  local removes = {}
  local answers = {
    [r.worktree_status] = status,
    [r.worktree_apply] = { sessionId = 's2', applied = {}, conflicts = { 'src/app.py' }, message = 'nothing applied' },
    [r.worktree_remove] = function(params)
      removes[#removes + 1] = params
      if not params.force then
        return { code = protocol.errors.request_failed, message = 'the worktree of session s2 has 3 changes not applied to the main tree (NEW.md, OLD.md, src/app.py): apply them or remove with force' }
      end
      return nil, { sessionId = 's2', message = 'removed the worktree of session s2 and its branch; the session goes on in the folder itself' }
    end,
  }
  local name = vim.fs.basename(root)
  local buf
  local seen = with_fake(answers, { function(items, on_choice)
    on_choice(items[2], 2)
  end }, function()
    pc.worktree('status', ws, { session = 's2' })
    buf = vim.fn.bufnr('pseudoclaude://worktree/s2')
    eq(lines(buf), {
      'Worktree pseudoclaude/s2',
      '3 files changed since abcdef012345',
      'in .PseudoClaude/worktrees/s2',
      '',
      '  new      NEW.md',
      '  deleted  OLD.md',
      '  changed  src/app.py',
      '',
      "<CR> diff with " .. name .. "'s file · a apply to " .. name,
      'R remove the worktree · r refresh · q close',
    })
    eq(vim.api.nvim_get_current_buf(), buf, 'the buffer is shown and entered')
    eq(vim.api.nvim_win_get_cursor(0)[1], 5, 'on the first file')
    -- <CR> on src/app.py: the folder's file and the worktree's, in a new tab, both in diff mode.
    local tabs = #vim.api.nvim_list_tabpages()
    vim.api.nvim_win_set_cursor(0, { 7, 0 })
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
    eq(#vim.api.nvim_list_tabpages(), tabs + 1, 'a tab')
    local wins = vim.api.nvim_tabpage_list_wins(0)
    eq(#wins, 2)
    eq(vim.fs.normalize(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(wins[1]))), vim.fs.normalize(root .. '/src/app.py'))
    eq(vim.fs.normalize(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(wins[2]))), vim.fs.normalize(wt .. '/src/app.py'))
    assert(vim.wo[wins[1]].diff and vim.wo[wins[2]].diff, 'diff mode')
    vim.cmd('tabclose')
    -- A new file: its folder side is empty.
    vim.api.nvim_set_current_buf(buf)
    vim.api.nvim_win_set_cursor(0, { 5, 0 })
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
    wins = vim.api.nvim_tabpage_list_wins(0)
    eq(lines(vim.api.nvim_win_get_buf(wins[1])), { '' })
    eq(lines(vim.api.nvim_win_get_buf(wins[2])), { 'new' })
    vim.cmd('tabclose')
    vim.api.nvim_set_current_buf(buf)
    -- a: nothing applied, the conflict named.
    vim.api.nvim_feedkeys('a', 'x', false)
    -- R: refused for changes not applied, asked, removed with force; the buffer goes.
    vim.api.nvim_feedkeys('R', 'x', false)
  end)
  eq(seen.sent[2], { method = r.worktree_apply, params = { workspace = ws, sessionId = 's2' } })
  local shown = vim.tbl_map(function(x) return x.msg end, seen.shown)
  eq(shown[1], 'PseudoClaude: nothing applied: 1 file changed in ' .. name .. ' too since the worktree was made:\n'
    .. '  src/app.py\nUndo your change there (or bring the session\'s change over by hand), then apply again.')
  eq(seen.shown[1].level, vim.log.levels.WARN)
  eq(removes, { { workspace = ws, sessionId = 's2' }, { workspace = ws, sessionId = 's2', force = true } })
  eq(seen.asked[1].kind, 'pseudoclaude_worktree_remove')
  eq(seen.asked[1].prompt, 'PseudoClaude: the worktree of session s2 has 3 changes not applied to ' .. name
    .. ' (NEW.md, OLD.md, src/app.py). Remove the worktree anyway?')
  eq(shown[#shown], 'PseudoClaude: removed the worktree of session s2 and its branch; the session goes on in the folder itself.')
  eq(vim.api.nvim_buf_is_valid(buf), false, 'the status buffer closed')
  -- apply's words when it applied, and when there was nothing to apply.
  eq(worktree.apply_message({ applied = { 'a.py', 'b.py' }, conflicts = {}, message = '' }, 'app'),
    'PseudoClaude: applied 2 files to app (written, not committed): a.py, b.py.')
  eq(worktree.apply_message({ applied = {}, conflicts = {}, message = 'nothing to apply: the main tree has every change of the session' }, 'app'),
    'PseudoClaude: nothing to apply: app has every change of the session.')
  -- In a chat buffer the command is about the chat's session.
  local c = window.create(ws, 's5')
  eq(worktree.session_of(c.prompt_buf), 's5')
  vim.cmd('bwipeout! ' .. c.buf)
  vim.fn.delete(root, 'rf')
end)

u.finish('nvim unit sessions')
