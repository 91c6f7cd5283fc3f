--- Sub-agents (SPEC §13 "Sub-agents and background tasks", docs/agents.md).
---
--- In the chat, the parent's `agent` call is a card like any tool call, and its sub-agent's own
--- events (they carry `agentId`) go into that card, never into the session's stream: its live
--- tool calls (`│ ▸ read_file(…) · ✓ read_file · 20 B`) and its text (`│ …`), the status, the
--- number of tool calls and its tokens on the card's folded line. The card's fold opens when the
--- sub-agent starts and closes when it ends. A sub-agent's approval marks its call in its card.
--- Which card a sub-agent belongs to: `pseudoclaude/agents/list` names each one's `callId`; until
--- it answers, the oldest live `agent` card without a sub-agent takes it. A background task's
--- `task` events are a line in the chat (started, ended with its result).
---
--- `:PseudoClaudeAgents`: the session's sub-agents (`pseudoclaude/agents/list`: from their logs,
--- so also those of an earlier process) in a list: name or type, description, status, tokens,
--- when it started. `<CR>` opens one's transcript (`pseudoclaude/sessions/messages` with its
--- `agentId`, shown as the transcript shows items), `x` stops a running one
--- (`pseudoclaude/agents/stop`), `r` reads the list again, `q` closes it.
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')
local render = require('pseudoclaude.render')
local util = require('pseudoclaude.util')

local M = {}

--- Lines of one text of a sub-agent shown in its card (its last ones).
M.TEXT_LINES = 6
--- Steps of a sub-agent shown in its card (its last ones).
M.STEPS = 30

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

local STATUS_MARKS = {
  running = '…',
  completed = '✓',
  failed = '✗',
  canceled = '⊘',
  max_turns = '⊘',
}

M.HIGHLIGHTS = {
  PseudoClaudeAgentsTitle = 'Title',
  PseudoClaudeAgentsRunning = 'DiagnosticWarn',
  PseudoClaudeAgentsDone = 'DiagnosticOk',
  PseudoClaudeAgentsFailed = 'DiagnosticError',
  PseudoClaudeAgentsDim = 'Comment',
}
util.link_highlights('agents', M.HIGHLIGHTS)

local STATUS_GROUPS = {
  running = 'PseudoClaudeAgentsRunning',
  completed = 'PseudoClaudeAgentsDone',
  failed = 'PseudoClaudeAgentsFailed',
  canceled = 'PseudoClaudeAgentsDim',
  max_turns = 'PseudoClaudeAgentsDim',
}

-- The card -------------------------------------------------------------------------------------

--- @class pseudoclaude.SubAgent
--- @field id string its agentId
--- @field steps table[] `{kind='tool', id, name, arguments, status, error?, display?, bytes?}` or `{kind='text', text}`
--- @field usage {input: integer, output: integer}
--- @field status string running|completed|failed|canceled|max_turns
--- @field background? boolean it runs in the background (a task)
--- @field calls integer its tool calls so far

--- A new sub-agent's state.
--- @param id string
--- @return pseudoclaude.SubAgent
function M.new(id)
  return { id = id, steps = {}, usage = { input = 0, output = 0 }, status = 'running', calls = 0 }
end

local function text_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  while #lines > 0 and vim.trim(lines[#lines]) == '' do
    lines[#lines] = nil
  end
  return lines
end

--- The lines of a sub-agent's steps inside its card (`  │ ` each).
--- @param agent pseudoclaude.SubAgent
--- @return string[]
function M.step_lines(agent)
  local out = {}
  local first = math.max(1, #agent.steps - M.STEPS + 1)
  if first > 1 then
    out[#out + 1] = string.format('  │ (%s not shown)', fmt.plural(first - 1, 'earlier step'))
  end
  for i = first, #agent.steps do
    local step = agent.steps[i]
    if step.kind == 'tool' then
      local status
      if step.status == 'running' then
        status = '… running'
      elseif step.status == 'approval' then
        status = '⏸ waiting for your approval'
      else
        status = render.result(step)
      end
      out[#out + 1] = '  │ ' .. render.call(step.name, step.arguments) .. ' · ' .. status
    else
      local lines = text_lines(step.text)
      local from = math.max(1, #lines - M.TEXT_LINES + 1)
      if from > 1 then
        out[#out + 1] = '  │ …'
      end
      for j = from, #lines do
        out[#out + 1] = '  │ ' .. (lines[j]:gsub('[%z\1-\8\11-\31\127]', '?'))
      end
    end
  end
  return out
end

--- The status of a sub-agent's card: `… running`, `✓ completed`, `✗ failed`, `⊘ canceled`.
--- @param agent pseudoclaude.SubAgent
--- @return string
function M.status_words(agent)
  return string.format('%s %s', STATUS_MARKS[agent.status] or '·', agent.status:gsub('_', ' '))
end

--- What the card's folded line adds: `2 tool calls · 1.2k in / 300 out`.
--- @param agent pseudoclaude.SubAgent
--- @return string
function M.summary(agent)
  local parts = {}
  if agent.background then
    parts[#parts + 1] = 'in the background'
  end
  parts[#parts + 1] = fmt.plural(agent.calls, 'tool call')
  if agent.usage.input > 0 or agent.usage.output > 0 then
    parts[#parts + 1] = string.format('%s in / %s out', fmt.tokens(agent.usage.input), fmt.tokens(agent.usage.output))
  end
  return table.concat(parts, ' · ')
end

--- The steps' highlight: a tool line by its status, text as a preview.
--- @param line string
--- @return string
function M.step_group(line)
  if line:find(' · ✓ ', 1, true) then
    return 'PseudoClaudeChatOk'
  elseif line:find(' · ✗ ', 1, true) then
    return 'PseudoClaudeChatError'
  elseif line:find(' · … running', 1, true) or line:find(' · ⏸ ', 1, true) or line:find(' · ⊘ ', 1, true) then
    return 'PseudoClaudeChatPending'
  end
  return 'PseudoClaudeChatPreview'
end

-- The chat's sub-agents --------------------------------------------------------------------------

local function chat_mod()
  return require('pseudoclaude.chat')
end

--- Open (`open` true) or close the fold of a card in the windows showing the chat. An open card
--- stays open when the folds are computed again (`chat.buffer.refresh_folds`), until it ends.
local function set_fold(chat, item, open)
  item.fold_open = open or nil
  if not item.start then
    return
  end
  local buffer = require('pseudoclaude.chat.buffer')
  buffer.refresh_folds(chat)
  if not open then
    for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
      vim.api.nvim_win_call(win, function()
        if vim.fn.foldlevel(item.start) > 0 and vim.fn.foldclosed(item.start) == -1 then
          pcall(vim.cmd, string.format('silent! %dfoldclose', item.start))
        end
      end)
    end
  end
end
M.set_fold = set_fold

local function agent_cards(chat)
  local out = {}
  for _, item in ipairs(chat.items) do
    if item.kind == 'toolCall' and item.name == 'agent' then
      out[#out + 1] = item
    end
  end
  return out
end

--- Ask which call started each sub-agent of the chat's session, and move a sub-agent that took the
--- wrong card (two started at once) to its own.
local function confirm(chat)
  if not chat.session_id then
    return
  end
  if chat.agents_asked then -- another started since: ask again once this answer came
    chat.agents_again = true
    return
  end
  chat.agents_asked = true
  local params = { workspace = chat.workspace, sessionId = chat.session_id }
  client.request(protocol.requests.agents_list, params, function(err, r)
    chat.agents_asked = false
    if chat.agents_again then
      chat.agents_again = false
      vim.schedule(function()
        confirm(chat)
      end)
    end
    if err or type(r) ~= 'table' or type(r.agents) ~= 'table' then
      return
    end
    local buffer = require('pseudoclaude.chat.buffer')
    for _, info in ipairs(r.agents) do
      local agent = chat.agents and chat.agents[info.agentId]
      local call_id = given(info.callId)
      if agent and call_id then
        local want
        for _, item in ipairs(agent_cards(chat)) do
          if item.id == call_id then
            want = item
          end
        end
        if want and want.agent ~= agent then
          for _, item in ipairs(agent_cards(chat)) do -- the card it took by mistake
            if item.agent == agent then
              item.agent = want.agent
              buffer.update(chat, item)
              set_fold(chat, item, item.agent ~= nil and item.agent.status == 'running')
            end
          end
          want.agent = agent
          buffer.update(chat, want)
          set_fold(chat, want, agent.status == 'running')
        end
      end
    end
  end)
end

--- The card of sub-agent `agent_id` in the chat: the one it has, else the oldest live `agent` card
--- without a sub-agent, else a new card.
--- @param chat pseudoclaude.Chat
--- @param agent_id string
--- @return pseudoclaude.ChatItem card, boolean new it just started
function M.card(chat, agent_id)
  chat.agents = chat.agents or {}
  local agent = chat.agents[agent_id]
  if agent then
    for _, item in ipairs(agent_cards(chat)) do
      if item.agent == agent then
        return item, false
      end
    end
  end
  agent = agent or M.new(agent_id)
  chat.agents[agent_id] = agent
  local card
  for _, item in ipairs(agent_cards(chat)) do
    if item.live and not item.agent then
      card = item
      break
    end
  end
  if not card then
    chat.open_text = nil
    card = require('pseudoclaude.chat.buffer').append(chat, { kind = 'toolCall', name = 'agent', arguments = vim.NIL,
      status = 'running', live = true })
  end
  card.agent = agent
  confirm(chat)
  for _, item in ipairs(agent_cards(chat)) do -- (the answer may have moved it already)
    if item.agent == agent then
      return item, true
    end
  end
  return card, true
end

local function find_step(agent, id)
  for i = #agent.steps, 1, -1 do
    local step = agent.steps[i]
    if step.kind == 'tool' and step.id == id then
      return step
    end
  end
end

--- One event of a sub-agent (`agentId` set; not a `task` event) into its card in the chat.
--- @param chat pseudoclaude.Chat
--- @param e pseudoclaude.Event
function M.event(chat, e)
  local card, started = M.card(chat, e.agentId)
  local agent = card.agent
  local kind = e.kind
  if kind == 'text' then
    local delta = e.delta or ''
    if delta == '' then
      return
    end
    local last = agent.steps[#agent.steps]
    if last and last.kind == 'text' then
      last.text = last.text .. delta
    else
      agent.steps[#agent.steps + 1] = { kind = 'text', text = delta }
    end
  elseif kind == 'toolCall' then
    agent.calls = agent.calls + 1
    agent.steps[#agent.steps + 1] = { kind = 'tool', id = e.id, name = e.name, arguments = e.arguments,
      status = 'running' }
  elseif kind == 'toolResult' then
    local step = find_step(agent, e.id)
    if not step then
      step = { kind = 'tool', id = e.id, name = e.name, arguments = vim.NIL }
      agent.steps[#agent.steps + 1] = step
    end
    step.status = given(e.status) or (e.isError and 'error' or 'done')
    step.display, step.error = given(e.display), given(e.error)
    step.bytes = type(e.bytes) == 'number' and e.bytes or nil
  elseif kind == 'usage' then
    agent.usage.input = agent.usage.input + (tonumber(e.inputTokens) or 0)
    agent.usage.output = agent.usage.output + (tonumber(e.outputTokens) or 0)
  else
    local text = render.notice(e)
    if not text then
      return
    end
    agent.steps[#agent.steps + 1] = { kind = 'text', text = text }
  end
  require('pseudoclaude.chat.buffer').update(chat, card)
  if started then
    set_fold(chat, card, true)
  end
end

--- The run ended without the sub-agent's end (cancelled): its calls still running are canceled.
--- @param agent pseudoclaude.SubAgent
function M.interrupt(agent)
  if agent.status == 'running' and not agent.background then
    agent.status = 'canceled'
  end
  for _, step in ipairs(agent.steps) do
    if step.kind == 'tool' and (step.status == 'running' or step.status == 'approval') and not agent.background then
      step.status, step.error = 'canceled', 'no result'
    end
  end
end

--- The parent's `agent` call got its result: its sub-agent ended (a background one runs on: the
--- result says `{"taskId": …, "status": "running"}`), its fold closes.
--- @param chat pseudoclaude.Chat
--- @param item pseudoclaude.ChatItem the card
function M.ended(chat, item)
  local agent = item.agent
  local text = (item.preview or '') .. (item.error or '')
  local task = text:match('"taskId"%s*:%s*"([^"]+)"')
  if task then
    agent = agent or (chat.agents and chat.agents[task])
    if not agent then
      chat.agents = chat.agents or {}
      agent = M.new(task)
      chat.agents[task] = agent
    end
    agent.background = true
    item.agent = agent
    return
  end
  if agent and agent.status == 'running' then
    agent.status = (item.status == 'done' and 'completed') or (item.status == 'canceled' and 'canceled') or 'failed'
  end
  set_fold(chat, item, false)
end

--- A background task's `task` event: a line in the chat (it started; it ended, with its result),
--- and its card says how it ended.
--- @param chat pseudoclaude.Chat
--- @param e pseudoclaude.Event
--- @return string line
function M.task_line(e)
  local who = given(e.name) or given(e.subagentType) or 'sub-agent'
  local what = given(e.description) and (': ' .. fmt.one_line(e.description, 120)) or ''
  if e.status == 'running' then
    return string.format('⧗ background agent %s%s started (task %s)', who, what, tostring(e.taskId))
  end
  local result = given(e.result) and (' — ' .. fmt.one_line(e.result, 200)) or ''
  return string.format('%s background agent %s%s %s%s', STATUS_MARKS[e.status] or '·', who, what,
    tostring(e.status), result)
end

function M.task(chat, e)
  local agent_id = given(e.taskId) or given(e.agentId)
  if agent_id and e.status ~= 'running' then
    local agent = chat.agents and chat.agents[agent_id]
    if agent then
      agent.status = e.status
      for _, item in ipairs(agent_cards(chat)) do
        if item.agent == agent then
          require('pseudoclaude.chat.buffer').update(chat, item)
          set_fold(chat, item, false)
        end
      end
    end
  end
  chat_mod().note(chat.workspace, M.task_line(e), { chat = chat })
end

--- A sub-agent's approval is shown (`waiting`) or answered: its call in its card says so.
--- @param chat pseudoclaude.Chat
--- @param params pseudoclaude.ApproveParams
--- @param waiting boolean
function M.approval(chat, params, waiting)
  local agent = chat.agents and chat.agents[params.agentId]
  if not agent then
    return
  end
  for i = #agent.steps, 1, -1 do
    local step = agent.steps[i]
    if step.kind == 'tool' and step.name == params.tool and step.status == (waiting and 'running' or 'approval') then
      step.status = waiting and 'approval' or 'running'
      for _, item in ipairs(agent_cards(chat)) do
        if item.agent == agent then
          require('pseudoclaude.chat.buffer').update(chat, item)
          if waiting then
            set_fold(chat, item, true)
          end
        end
      end
      return
    end
  end
end

-- :PseudoClaudeAgents ----------------------------------------------------------------------------

M.NAME = 'pseudoclaude://agents'
M.HELP = '<CR> transcript · x stop · r refresh · q close'

--- `12:03:04` of an ISO 8601 time (the date too when it is not today's).
local function started(iso)
  if type(iso) ~= 'string' then
    return ''
  end
  local date, time = iso:match('^(%d%d%d%d%-%d%d%-%d%d)T(%d%d:%d%d)')
  if not date then
    return iso
  end
  return date == os.date('!%Y-%m-%d') and time or (date .. ' ' .. time)
end

--- The list's lines, and the agent of each line (`nil`: a title or help line).
--- @param r pseudoclaude.AgentsResult
--- @return string[] lines, (pseudoclaude.AgentInfo|false)[] by_line, table[] marks
function M.list_lines(r)
  local agents = type(r) == 'table' and type(r.agents) == 'table' and r.agents or {}
  local lines, by_line, marks = {}, {}, {}
  local title = string.format('Sub-agents of session %s (%d)', tostring(r and r.sessionId or '—'), #agents)
  lines[1], by_line[1] = title, false
  marks[#marks + 1] = { 0, 0, #title, 'PseudoClaudeAgentsTitle' }
  if #agents == 0 then
    lines[#lines + 1], by_line[#lines + 1] = '  (no sub-agent yet: the agent tool starts them)', false
  end
  local width = 0
  for _, a in ipairs(agents) do
    width = math.max(width, vim.fn.strdisplaywidth(given(a.name) or given(a.subagentType) or 'agent'))
  end
  width = math.min(width, 24)
  for _, a in ipairs(agents) do
    local who = given(a.name) or given(a.subagentType) or 'agent'
    local counted = type(a.usage) == 'table' and ((a.usage.inputTokens or 0) + (a.usage.outputTokens or 0)) > 0
    local usage = counted and string.format('%s in / %s out', fmt.tokens(a.usage.inputTokens or 0),
      fmt.tokens(a.usage.outputTokens or 0)) or (a.status == 'running' and 'tokens when it ends' or 'no tokens')
    local head = string.format('  %s %-9s  ', STATUS_MARKS[a.status] or '·', tostring(a.status))
    local name = who .. string.rep(' ', math.max(0, width - vim.fn.strdisplaywidth(who)))
    local desc = fmt.one_line(a.description or '', 60)
    local type_note = given(a.name) and given(a.subagentType) and (' (' .. a.subagentType .. ')') or ''
    local line = string.format('%s%s  %s%s · %s · %s', head, name, desc, type_note, usage, started(a.startedAt))
    lines[#lines + 1] = line
    by_line[#lines] = a
    marks[#marks + 1] = { #lines - 1, 2, #head - 2, STATUS_GROUPS[a.status] or 'PseudoClaudeAgentsDim' }
    marks[#marks + 1] = { #lines - 1, #head + #name + 2 + #desc, #line, 'PseudoClaudeAgentsDim' }
  end
  lines[#lines + 1], by_line[#lines + 1] = '', false
  lines[#lines + 1], by_line[#lines + 1] = M.HELP, false
  marks[#marks + 1] = { #lines - 1, 0, #M.HELP, 'PseudoClaudeAgentsDim' }
  return lines, by_line, marks
end

local list_state = { buf = nil, by_line = {}, workspace = nil, session = nil }
M.NS = vim.api.nvim_create_namespace('pseudoclaude_agents')

local function list_buf()
  local b = list_state.buf
  if b and vim.api.nvim_buf_is_valid(b) then
    return b
  end
  b = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, b, M.NAME)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'wipe'
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = 'pseudoclaude-agents'
  list_state.buf = b
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = b, nowait = true, silent = true, desc = desc })
  end
  map('<CR>', function()
    M.open_transcript(list_state.by_line[vim.fn.line('.')])
  end, 'PseudoClaude: the sub-agent\'s transcript')
  map('x', function()
    M.stop(list_state.by_line[vim.fn.line('.')])
  end, 'PseudoClaude: stop the background sub-agent')
  map('r', function()
    M.open(list_state.workspace, list_state.session)
  end, 'PseudoClaude: read the list again')
  map('q', '<cmd>close<cr>', 'PseudoClaude: close')
  return b
end

--- Show the list (in a window of its own at the bottom, or where it is shown).
--- @param r pseudoclaude.AgentsResult
function M.show_list(r)
  local lines, by_line, marks = M.list_lines(r)
  local b = list_buf()
  list_state.by_line = by_line
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  vim.api.nvim_buf_clear_namespace(b, M.NS, 0, -1)
  for _, m in ipairs(marks) do
    pcall(vim.api.nvim_buf_set_extmark, b, M.NS, m[1], m[2], { end_col = m[3], hl_group = m[4] })
  end
  local win = vim.fn.win_findbuf(b)[1]
  if not win then
    vim.cmd('botright split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, b)
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_win_set_height(win, math.min(#lines + 1, 16))
  vim.wo[win].wrap = false
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].cursorline = true
  vim.wo[win].signcolumn = 'no'
  vim.wo[win].winfixheight = true
  pcall(vim.api.nvim_win_set_cursor, win, { #lines > 3 and 2 or 1, 0 })
end

--- `:PseudoClaudeAgents`: the sub-agents of the session (`session`, else the current chat's, else
--- the folder's current one).
--- @param workspace? string
--- @param session? string
function M.open(workspace, session)
  local chat = require('pseudoclaude.chat.state').of_buf(vim.api.nvim_get_current_buf())
  if not session and chat then
    session, workspace = chat.session_id, workspace or chat.workspace
  end
  local params = { workspace = workspace, sessionId = session }
  client.request_or_fail(protocol.requests.agents_list, params, 'Agents', function(r)
    list_state.workspace, list_state.session = params.workspace, r.sessionId or session
    M.show_list(r)
  end)
end

--- The lines of a sub-agent's transcript: who it is, then its items as the transcript shows them.
--- @param info pseudoclaude.AgentInfo
--- @param page pseudoclaude.TranscriptPage
--- @return string[]
function M.transcript_lines(info, page, skipped)
  local transcript = require('pseudoclaude.transcript')
  local lines = {
    string.format('━━ Sub-agent %s · %s ━━', given(info.name) or given(info.subagentType) or 'agent',
      fmt.one_line(info.description or '', 100)),
    string.format('%s · %s · started %s · %s', info.agentId, tostring(info.status),
      started(info.startedAt), type(info.usage) == 'table' and string.format('%s in / %s out',
        fmt.tokens(info.usage.inputTokens or 0), fmt.tokens(info.usage.outputTokens or 0)) or ''),
    '',
  }
  if (skipped or 0) > 0 then
    lines[#lines + 1] = string.format('· (%s not shown)', fmt.plural(skipped, 'earlier item'))
  end
  for _, item in ipairs(type(page) == 'table' and page.items or {}) do
    local text = transcript.item_line(item)
    if text then
      lines[#lines + 1] = text
    end
  end
  return lines
end

--- The transcript of a sub-agent (`pseudoclaude/sessions/messages` with its `agentId`), in a
--- buffer of its own (`pseudoclaude://agent/<agentId>`).
--- @param info? pseudoclaude.AgentInfo|false
function M.open_transcript(info)
  if not info then
    return
  end
  local params = { workspace = list_state.workspace, sessionId = list_state.session, agentId = info.agentId,
    offset = 0, limit = 400 }
  client.request_or_fail(protocol.requests.sessions_messages, params, 'Agent transcript', function(page)
    local skipped = math.max(0, (page.total or 0) - #(page.items or {}))
    local lines = M.transcript_lines(info, page, 0)
    if skipped > 0 then
      lines[#lines + 1] = string.format('· (%s more)', fmt.plural(skipped, 'item'))
    end
    local name = 'pseudoclaude://agent/' .. info.agentId
    local b = vim.fn.bufnr(name)
    if b < 0 then
      b = vim.api.nvim_create_buf(true, true)
      vim.api.nvim_buf_set_name(b, name)
      vim.bo[b].buftype = 'nofile'
      vim.bo[b].bufhidden = 'hide'
      vim.bo[b].swapfile = false
      vim.bo[b].filetype = 'pseudoclaude'
    end
    vim.bo[b].modifiable = true
    vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
    vim.bo[b].modifiable = false
    local win = vim.fn.win_findbuf(b)[1]
    if win then
      vim.api.nvim_set_current_win(win)
    else
      vim.cmd('aboveleft split')
      vim.api.nvim_win_set_buf(0, b)
      vim.wo.wrap, vim.wo.linebreak = true, true
    end
    util.fire('PseudoClaudeAgentTranscript', { agentId = info.agentId, lines = lines })
  end)
end

--- Stop a running sub-agent alone (`pseudoclaude/agents/stop`), then read the list again.
--- @param info? pseudoclaude.AgentInfo|false
function M.stop(info)
  if not info then
    return
  end
  if info.status ~= 'running' then
    return util.notify(string.format('PseudoClaude: %s is not running (%s).', info.agentId, tostring(info.status)))
  end
  local method = protocol.requests.agents_stop
  if not method then
    return util.notify('PseudoClaude: this server cannot stop a sub-agent.', vim.log.levels.WARN)
  end
  local params = { workspace = list_state.workspace, sessionId = list_state.session, agentId = info.agentId }
  client.request_or_fail(method, params, 'Stop agent', function(r)
    util.notify(string.format('PseudoClaude: stopped %s (%s).', info.agentId, tostring(r and r.status or 'canceled')))
    M.open(list_state.workspace, list_state.session)
  end)
end

return M
