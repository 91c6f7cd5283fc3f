-- Unit checks of sub-agents in the Neovim plugin: a sub-agent's events go into the card of the
-- `agent` call that started it (a fold opened while it runs, closed when it ends; the status,
-- tool calls and tokens on the fold line), not into the session's stream; two sub-agents at once
-- are sorted by the callId of `agents/list`; its approval marks its call in its card; a background
-- task's `task` events are lines; `:PseudoClaudeAgents` (the list, <CR> the transcript with
-- agentId, x stops a running one). Against a fake request layer. Run by test_nvim.py as
-- `nvim --headless --clean -l nvim_unit_agents.lua PLUGIN_DIR`.
local plugin = assert(_G.arg[1], 'usage: nvim -l nvim_unit_agents.lua PLUGIN_DIR')
vim.opt.rtp:prepend(plugin)

local u = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_unit_harness.lua'))
local test, eq = u.test, u.eq

vim.cmd.runtime('plugin/pseudoclaude.lua')
local agents = require('pseudoclaude.agents')
local chat = require('pseudoclaude.chat')
local client = require('pseudoclaude.client')
local items = require('pseudoclaude.chat.items')
local protocol = require('pseudoclaude.protocol')
local r = protocol.requests

local WS = 'file:///work/agents'

local function context_of(sid)
  return { sessionId = sid or vim.NIL, messageCount = 0, estimatedTokens = 1000, contextWindow = 200000,
    autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false }
end

--- `client.request` answered from `answers` (a value, or a function of the params) while `fn` runs.
local function with_fake(answers, fn)
  local real = { request = client.request, notify = vim.notify }
  local seen = { sent = {}, shown = {} }
  client.request = function(method, params, cb)
    params = params or {}
    params.workspace = params.workspace or WS
    seen.sent[#seen.sent + 1] = { method = method, params = vim.deepcopy(params) }
    local a = answers[method]
    if type(a) == 'function' then
      return cb(a(params))
    elseif a ~= nil then
      return cb(nil, a)
    end
    cb({ code = -32601, message = 'unhandled ' .. method })
  end
  vim.notify = function(msg, level)
    seen.shown[#seen.shown + 1] = { msg = msg, level = level }
  end
  local ok, err = pcall(fn, seen)
  client.request, vim.notify = real.request, real.notify
  assert(ok, err)
  return seen
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function ev(e)
  e.workspace, e.sessionId = WS, 's1'
  chat.event(e)
end

local function open_chat()
  local c
  with_fake({ [r.context] = context_of('s1'), [r.sessions_messages] = { sessionId = 's1', total = 0, items = {} },
    [r.slash_commands] = { commands = {} } }, function()
    c = chat.show(WS, { enter = false })
  end)
  return c
end

local function card_at(c, call_id)
  for _, item in ipairs(c.items) do
    if item.kind == 'toolCall' and item.id == call_id then
      return item
    end
  end
end

local function fold_closed(c, item)
  local win = vim.fn.win_findbuf(c.buf)[1]
  return vim.api.nvim_win_call(win, function()
    return vim.fn.foldclosed(item.start) ~= -1
  end)
end

test('a sub-agent\'s events go into its agent card: a fold open while it runs, closed at its end', function()
  local c = open_chat()
  chat.begin_run(WS, 'Find the words', nil, { chat = c })
  local list = { sessionId = 's1', agents = { { agentId = 'agent-aa', callId = 'call-1', name = '',
    subagentType = 'explore', description = 'find the words', status = 'running', startedAt = '2025-01-01T10:00:00Z',
    usage = { inputTokens = 0, outputTokens = 0 } } } }
  with_fake({ [r.agents_list] = list }, function()
    ev({ kind = 'text', delta = 'Handing it over.' })
    ev({ kind = 'toolCall', id = 'call-1', name = 'agent',
      arguments = { prompt = 'find the words', description = 'find the words', subagent_type = 'explore' } })
    ev({ kind = 'text', delta = 'SUB: reading', agentId = 'agent-aa' })
    ev({ kind = 'toolCall', id = 'c2', name = 'read_file', arguments = { path = 'notes.txt' }, agentId = 'agent-aa' })
    ev({ kind = 'usage', inputTokens = 1200, outputTokens = 300, agentId = 'agent-aa' })
  end)
  local card = card_at(c, 'call-1')
  local want = { '## You', 'Find the words', '', '## PseudoClaude', 'Handing it over.',
    '▸ agent(explore: find the words)', '  … running · 1 tool call · 1.2k in / 300 out',
    '  │ SUB: reading', '  │ ▸ read_file(path: notes.txt) · … running' }
  eq(lines(c.buf), want, 'the sub-agent inside its card, not in the session\'s text')
  eq(fold_closed(c, card), false, 'its fold is open while it runs')
  ev({ kind = 'toolResult', id = 'c2', name = 'read_file', isError = false, bytes = 12, status = 'done',
    display = 'alpha', agentId = 'agent-aa' })
  ev({ kind = 'text', delta = 'SUBANSWER', agentId = 'agent-aa' })
  eq(lines(c.buf)[9], '  │ ▸ read_file(path: notes.txt) · ✓ read_file · 12 B')
  ev({ kind = 'toolResult', id = 'call-1', name = 'agent', isError = false, bytes = 40, status = 'done',
    display = 'SUBANSWER' })
  eq(card.agent.status, 'completed')
  eq(fold_closed(c, card), true, 'closed when it ended')
  local fold = table.concat(vim.tbl_map(function(ch) return ch[1] end, items.fold_chunks(card)))
  eq(fold, '▸ agent(explore: find the words) · ✓ completed · 1 tool call · 1.2k in / 300 out')
  ev({ kind = 'text', delta = ' Done.' })
  eq(lines(c.buf)[#lines(c.buf)], ' Done.', 'the parent\'s text after the card')
  chat.end_run(WS, { sessionId = 's1', stopReason = 'completed', text = 'x', iterations = 2 }, { chat = c })
end)

test('two sub-agents at once: agents/list\'s callId puts each in its own card; approvals in its card', function()
  local c = open_chat()
  chat.begin_run(WS, 'Two at once', nil, { chat = c })
  local function info(id, call)
    return { agentId = id, callId = call, name = '', subagentType = 'general-purpose', description = id,
      status = 'running', startedAt = '2025-01-01T10:00:00Z', usage = { inputTokens = 0, outputTokens = 0 } }
  end
  with_fake({ [r.agents_list] = { sessionId = 's1', agents = { info('agent-b', 'call-b'), info('agent-a', 'call-a') } } },
    function()
      ev({ kind = 'toolCall', id = 'call-a', name = 'agent', arguments = { prompt = 'A', description = 'task A' } })
      ev({ kind = 'toolCall', id = 'call-b', name = 'agent', arguments = { prompt = 'B', description = 'task B' } })
      -- b speaks first: it takes a's card until agents/list says which call is its
      ev({ kind = 'toolCall', id = 'w1', name = 'write_file', arguments = { path = 'b.txt' }, agentId = 'agent-b' })
      ev({ kind = 'toolCall', id = 'w2', name = 'write_file', arguments = { path = 'a.txt' }, agentId = 'agent-a' })
    end)
  eq(card_at(c, 'call-a').agent.id, 'agent-a')
  eq(card_at(c, 'call-b').agent.id, 'agent-b')
  chat.approval({ workspace = WS, sessionId = 's1', tool = 'write_file', kind = 'write', agentId = 'agent-b' }, true)
  eq(card_at(c, 'call-b').agent.steps[1].status, 'approval')
  eq(card_at(c, 'call-a').agent.steps[1].status, 'running', 'the other card untouched')
  local b = card_at(c, 'call-b')
  eq(lines(c.buf)[b.start + 2], '  │ ▸ write_file(path: b.txt) · ⏸ waiting for your approval')
  eq(card_at(c, 'call-a').status, 'running', 'no approval on the agent card itself')
  chat.abort_run(WS, 'canceled', { chat = c })
  eq(card_at(c, 'call-a').agent.status, 'canceled')
  eq(card_at(c, 'call-a').agent.steps[1].status, 'canceled')
end)

test('a background task: its result line, task events as lines, its card ends with the task', function()
  local c = open_chat()
  chat.begin_run(WS, 'In the background', nil, { chat = c })
  with_fake({ [r.agents_list] = { sessionId = 's1', agents = {} } }, function()
    ev({ kind = 'toolCall', id = 'call-t', name = 'agent', arguments = { prompt = 'later', description = 'slow job',
      run_in_background = true } })
    ev({ kind = 'task', agentId = 'agent-t', taskId = 'agent-t', status = 'running', subagentType = 'general-purpose',
      description = 'slow job' })
    ev({ kind = 'toolResult', id = 'call-t', name = 'agent', isError = false, bytes = 40, status = 'done',
      display = '{"taskId": "agent-t", "status": "running"}' })
    ev({ kind = 'toolCall', id = 'x1', name = 'run_command', arguments = { command = 'make' }, agentId = 'agent-t' })
  end)
  local card = card_at(c, 'call-t')
  eq(card.agent.background, true)
  eq(card.agent.steps[1].name, 'run_command')
  local all = lines(c.buf)
  assert(vim.tbl_contains(all, '> ⧗ background agent general-purpose: slow job started (task agent-t)'), vim.inspect(all))
  ev({ kind = 'task', agentId = 'agent-t', taskId = 'agent-t', status = 'completed', subagentType = 'general-purpose',
    description = 'slow job', result = 'built it' })
  eq(card.agent.status, 'completed')
  assert(vim.tbl_contains(lines(c.buf), '> ✓ background agent general-purpose: slow job completed — built it'))
  eq(items.fold_line(card), '▸ agent(general-purpose: slow job, background) · ✓ completed · in the background · 1 tool call')
end)

test(':PseudoClaudeAgents lists them; <CR> the transcript with agentId; x stops a running one', function()
  local list = { sessionId = 's1', agents = {
    { agentId = 'agent-1', callId = 'c1', name = 'reviewer', subagentType = 'explore', description = 'review the parser',
      status = 'completed', startedAt = os.date('!%Y-%m-%d') .. 'T09:15:00Z', usage = { inputTokens = 5200, outputTokens = 800 } },
    { agentId = 'agent-2', callId = 'c2', name = '', subagentType = 'general-purpose', description = 'slow job',
      status = 'running', startedAt = '2024-12-31T23:59:00Z', usage = { inputTokens = 0, outputTokens = 0 } } } }
  local page = { sessionId = 's1', total = 2, items = {
    { kind = 'user', text = 'review the parser' }, { kind = 'assistant', text = 'It is fine.' } } }
  local seen = with_fake({ [r.agents_list] = list, [r.sessions_messages] = page,
    [r.agents_stop] = { sessionId = 's1', agentId = 'agent-2', status = 'canceled' } }, function()
    vim.cmd('PseudoClaudeAgents')
    local buf = vim.api.nvim_get_current_buf()
    eq(vim.api.nvim_buf_get_name(buf), agents.NAME)
    local shown = lines(buf)
    eq(shown[1], 'Sub-agents of session s1 (2)')
    eq(shown[2], '  ✓ completed  reviewer         review the parser (explore) · 5.2k in / 800 out · 09:15')
    eq(shown[3], '  … running    general-purpose  slow job · tokens when it ends · 2024-12-31 23:59')
    eq(shown[#shown], agents.HELP)
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    local tb = vim.api.nvim_get_current_buf()
    eq(vim.api.nvim_buf_get_name(tb), 'pseudoclaude://agent/agent-1')
    eq(lines(tb), { '━━ Sub-agent reviewer · review the parser ━━',
      'agent-1 · completed · started ' .. '09:15' .. ' · 5.2k in / 800 out', '',
      'You: review the parser', 'PseudoClaude: It is fine.' })
    vim.cmd('close')
    vim.api.nvim_set_current_win(vim.fn.win_findbuf(buf)[1])
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.api.nvim_feedkeys('x', 'x', false) -- not running: said, nothing sent
    vim.api.nvim_win_set_cursor(0, { 3, 0 })
    vim.api.nvim_feedkeys('x', 'x', false)
  end)
  local msgs = vim.tbl_map(function(s) return s.method end, seen.sent)
  eq(msgs, { r.agents_list, r.sessions_messages, r.agents_stop, r.agents_list })
  eq(seen.sent[2].params.agentId, 'agent-1')
  eq(seen.sent[3].params.agentId, 'agent-2')
  assert(seen.shown[1].msg:find('is not running'), vim.inspect(seen.shown))
  assert(seen.shown[2].msg:find('stopped agent%-2'), vim.inspect(seen.shown))
end)

u.finish('nvim unit agents')
