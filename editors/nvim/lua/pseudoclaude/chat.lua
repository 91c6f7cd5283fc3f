--- `:PseudoClaudeChat`: a chat buffer per workspace folder (`pseudoclaude://chat/<folder>`,
--- filetype markdown) with a prompt below it (a `buftype=prompt` buffer). The answer streams in
--- from `pseudoclaude/event`; each tool call is a card folded to one line (its result and a
--- preview inside); compaction and memory events show inline. It opens with the session's history
--- (`pseudoclaude/sessions/messages`).
---
--- The chat is a list of items (`user`, `text`, `tool`, `summary`, `notice`, `footer`, `earlier`,
--- `hint`), each owning a range of lines; `item_lines` renders one (pure), and a change re-renders
--- only that item (streamed text only the item's last line and the lines it adds).
local client = require('pseudoclaude.client')
local config = require('pseudoclaude.config')
local fmt = require('pseudoclaude.format')
local meter = require('pseudoclaude.meter')
local protocol = require('pseudoclaude.protocol')
local render = require('pseudoclaude.render')

local M = {}

--- How many messages of the session the chat shows when it opens.
M.HISTORY_MESSAGES = 60
--- Lines of a tool result's preview inside its card.
M.PREVIEW_LINES = 6

M.PROMPT = '❯ '

--- @class pseudoclaude.ChatItem
--- @field kind 'user'|'text'|'tool'|'summary'|'notice'|'footer'|'earlier'|'hint'
--- @field text? string
--- @field id? string tool call id
--- @field name? string
--- @field arguments? any
--- @field status? 'running'|'approval'|'done'|'failed'|'interrupted'
--- @field result? table the `toolResult` fields
--- @field start? integer first line (1-based) once shown
--- @field count? integer its number of lines

--- @class pseudoclaude.Chat
--- @field workspace string
--- @field buf integer
--- @field prompt_buf integer
--- @field items pseudoclaude.ChatItem[]
--- @field session_id? string
--- @field running boolean
--- @field streamed integer
--- @field open_text? pseudoclaude.ChatItem the text item the answer streams into
--- @field prompts string[] sent prompts, oldest first
--- @field recall? integer
--- @field loaded boolean

--- @type table<string, pseudoclaude.Chat> workspace URI (no trailing slash) -> chat
M.chats = {}
--- @type table<integer, pseudoclaude.Chat> chat buffer -> chat
local by_buf = {}

local function key(uri)
  return (tostring(uri or ''):gsub('/+$', ''))
end

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'PseudoClaude' })
end

local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, data = data, modeline = false })
end

-- Rendering (pure) ------------------------------------------------------------------------------

--- The lines of a text: a final newline ends the last line.
local function text_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

local function printable(s)
  return (s:gsub('[%z\1-\8\11-\31\127]', '?'))
end

--- The preview lines of a tool result in its card (`  │ ...`).
local function preview_lines(r)
  local out = {}
  local preview = render.preview_text(type(r.preview) == 'string' and r.preview or '')
  if vim.trim(preview) == '' then
    return out
  end
  local lines = text_lines(printable((preview:gsub('\t', '  '))))
  for i = 1, math.min(#lines, M.PREVIEW_LINES) do
    out[#out + 1] = '  │ ' .. lines[i]
  end
  if #lines > M.PREVIEW_LINES or (type(r.bytes) == 'number' and r.bytes > #preview) then
    out[#out + 1] = '  │ …'
  end
  return out
end

--- The status of a tool card in words (its body line, and its folded line).
--- @param item pseudoclaude.ChatItem
--- @return string
function M.tool_status(item)
  if item.status == 'done' or item.status == 'failed' then
    return render.result(item.result)
  elseif item.status == 'approval' then
    return '⏸ waiting for your approval'
  elseif item.status == 'interrupted' then
    return '⊘ interrupted: no result'
  end
  return '… running'
end

--- The lines of one item. `first`: it is the first item of the buffer (no blank line above it).
--- @param item pseudoclaude.ChatItem
--- @param first? boolean
--- @return string[]
function M.item_lines(item, first)
  local kind = item.kind
  if kind == 'user' then
    local lines = first and {} or { '' }
    vim.list_extend(lines, { '## You' })
    vim.list_extend(lines, text_lines(item.text))
    vim.list_extend(lines, { '', '## PseudoClaude' })
    return lines
  elseif kind == 'text' then
    return text_lines(item.text)
  elseif kind == 'tool' then
    local lines = { render.call(item.name, item.arguments), '  ' .. M.tool_status(item) }
    if item.result and item.status ~= 'failed' then
      vim.list_extend(lines, preview_lines(item.result))
    end
    return lines
  elseif kind == 'summary' then
    local lines = { '▸ Summary of the earlier conversation' }
    for _, l in ipairs(text_lines(item.text)) do
      lines[#lines + 1] = l == '' and '' or ('  ' .. l)
    end
    return lines
  elseif kind == 'notice' then
    return { '> ' .. item.text }
  elseif kind == 'footer' then
    return { item.text }
  elseif kind == 'earlier' then
    return { string.format('*(%s not shown)*', fmt.plural(item.count_hidden or 0, 'earlier message')) }
  end
  return { '*' .. (item.text or '') .. '*' }
end

--- The highlight group of each line of an item (nil: the buffer's own, markdown).
--- @param item pseudoclaude.ChatItem
--- @param lines string[] its lines (`item_lines`)
--- @return (string|false)[]
function M.line_groups(item, lines)
  local groups = {}
  for i = 1, #lines do
    groups[i] = false
  end
  local kind = item.kind
  if kind == 'tool' then
    groups[1] = 'PseudoClaudeChatTool'
    local status = {
      done = 'PseudoClaudeChatOk', failed = 'PseudoClaudeChatError', interrupted = 'PseudoClaudeChatError',
      approval = 'PseudoClaudeChatPending', running = 'PseudoClaudeChatPending',
    }
    groups[2] = status[item.status] or false
    for i = 3, #lines do
      groups[i] = 'PseudoClaudeChatPreview'
    end
  elseif kind == 'summary' then
    groups[1] = 'PseudoClaudeChatTool'
    for i = 2, #lines do
      groups[i] = 'PseudoClaudeChatPreview'
    end
  elseif kind == 'notice' then
    groups[1] = lines[1]:find('^> ✗') and 'PseudoClaudeChatError'
      or (lines[1]:find('^> !') and 'PseudoClaudeChatPending' or 'PseudoClaudeChatNotice')
  elseif kind == 'footer' or kind == 'earlier' or kind == 'hint' then
    groups[1] = 'PseudoClaudeChatFooter'
  end
  return groups
end

--- The chat's highlight groups (`default`: a colorscheme may set them).
M.HIGHLIGHTS = {
  PseudoClaudeChatTool = 'Function',
  PseudoClaudeChatOk = 'DiagnosticOk',
  PseudoClaudeChatError = 'DiagnosticError',
  PseudoClaudeChatPending = 'DiagnosticWarn',
  PseudoClaudeChatPreview = 'Comment',
  PseudoClaudeChatNotice = 'DiagnosticInfo',
  PseudoClaudeChatFooter = 'Comment',
}
local function define_highlights()
  for group, link in pairs(M.HIGHLIGHTS) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end
define_highlights()
-- A colorscheme clears them: again after each.
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('pseudoclaude_chat_highlights', { clear = true }),
  callback = define_highlights,
})

local NS = vim.api.nvim_create_namespace('pseudoclaude_chat')

--- Whether an item folds (its lines beyond the first hide under one line).
function M.foldable(item)
  return item.kind == 'tool' or item.kind == 'summary'
end

--- The folded line of a tool card or summary.
--- @param item pseudoclaude.ChatItem
--- @return string
function M.fold_line(item)
  if item.kind == 'summary' then
    return string.format('▸ Summary of the earlier conversation · %s', fmt.plural((item.count or 1) - 1, 'line'))
  end
  return render.call(item.name, item.arguments) .. ' · ' .. M.tool_status(item)
end

--- The items of a session's log messages (`pseudoclaude/sessions/messages`): prompts, answers,
--- tool cards with their results, the summary of an earlier compaction (its acknowledgement is
--- not shown). `earlier`: messages before these that are not shown. Calls without a result in
--- the log did not finish (a cancelled or crashed run).
--- @param messages table[]
--- @param earlier integer
--- @return pseudoclaude.ChatItem[]
function M.items_from_log(messages, earlier)
  local items = {}
  if earlier > 0 then
    items[1] = { kind = 'earlier', count_hidden = earlier }
  end
  local tools = {}
  local after_summary = false
  for _, m in ipairs(messages) do
    local r = m.tool_result
    if type(r) == 'table' then
      local e = render.log_result(r)
      local item = tools[r.call_id]
      if not item then
        item = { kind = 'tool', id = r.call_id, name = r.name, arguments = vim.NIL }
        items[#items + 1] = item
      end
      item.status = e.isError and 'failed' or 'done'
      item.result = e
      after_summary = false
    elseif render.is_summary(m) then
      items[#items + 1] = { kind = 'summary', text = render.summary_text(m.content) }
      after_summary = true
    else
      local content = type(m.content) == 'string' and m.content or ''
      if m.role == 'user' then
        if vim.trim(content) ~= '' then
          items[#items + 1] = { kind = 'user', text = content }
        end
      elseif m.role == 'assistant' then
        if vim.trim(content) ~= '' and not after_summary then
          items[#items + 1] = { kind = 'text', text = content }
        end
        for _, call in ipairs(type(m.tool_calls) == 'table' and m.tool_calls or {}) do
          local item = { kind = 'tool', id = call.id, name = call.name, arguments = call.arguments, status = 'running' }
          tools[call.id] = item
          items[#items + 1] = item
        end
      end
      after_summary = false
    end
  end
  for _, item in ipairs(items) do
    if item.kind == 'tool' and item.status == 'running' then
      item.status = 'interrupted'
    end
  end
  return items
end

--- Parse a prompt: `{command, argument}` for `/command argument`, else nil.
--- @param text string
--- @return {command: string, argument: string}?
function M.slash(text)
  local command, argument = text:match('^/(%a[%w-]*)%s*(.-)%s*$')
  if not command then
    return nil
  end
  return { command = command:lower(), argument = argument }
end

M.HELP = {
  'Enter sends · Ctrl-C cancels the run · Up/Down recall earlier prompts',
  '/compact [instructions]  preview a compaction, then compact or not',
  '/undo                    undo the last compaction',
  '/new                     start a new session',
  '/sessions, /resume [id]  continue another session',
  '/context                 what fills the context',
  '/proposals               review memory proposals',
  '/cancel                  cancel the run',
  'In the chat: i/a/o prompt · <Tab> or za opens a tool card · C compact · U undo · N new',
  '             S sessions · R reload the history · <C-c> cancel · q close · g? this help',
}

-- The buffer -------------------------------------------------------------------------------------

local function chat_of(buf)
  return by_buf[buf]
end

local function set_lines(chat, first, last, lines)
  local buf = chat.buf
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  if last ~= first then
    vim.api.nvim_buf_clear_namespace(buf, NS, first, last < 0 and -1 or last)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- Highlight the lines of an item (shown at `item.start`).
local function highlight(chat, item, lines)
  for i, group in ipairs(M.line_groups(item, lines)) do
    if group and lines[i] ~= '' then
      pcall(vim.api.nvim_buf_set_extmark, chat.buf, NS, item.start + i - 2, 0,
        { end_col = #lines[i], hl_group = group })
    end
  end
end

--- Windows showing the chat whose cursor is on its last line (they follow new lines).
local function followers(chat)
  local out = {}
  local last = vim.api.nvim_buf_line_count(chat.buf)
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= last - 1 then
      out[#out + 1] = win
    end
  end
  return out
end

local function follow(chat, wins)
  local last = vim.api.nvim_buf_line_count(chat.buf)
  for _, win in ipairs(wins) do
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
end

--- Folds are computed from the items: after a card appears or changes, every window showing the
--- chat computes them again (setting 'foldexpr' keeps the folds the user opened).
local function refresh_folds(chat)
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    local expr = vim.api.nvim_get_option_value('foldexpr', { win = win })
    vim.api.nvim_set_option_value('foldexpr', expr, { scope = 'local', win = win })
  end
end

local function render_all(chat)
  local lines, per_item = {}, {}
  for i, item in ipairs(chat.items) do
    local l = M.item_lines(item, i == 1)
    item.start, item.count = #lines + 1, #l
    per_item[i] = l
    vim.list_extend(lines, l)
  end
  local wins = followers(chat)
  set_lines(chat, 0, -1, lines)
  for i, item in ipairs(chat.items) do
    highlight(chat, item, per_item[i])
  end
  refresh_folds(chat)
  follow(chat, wins)
end

local function append(chat, item)
  local wins = followers(chat)
  local n = #chat.items
  local lines = M.item_lines(item, n == 0)
  if n == 0 then
    item.start = 1
    set_lines(chat, 0, -1, lines)
  else
    local last = chat.items[n]
    item.start = last.start + last.count
    set_lines(chat, item.start - 1, item.start - 1, lines)
  end
  item.count = #lines
  chat.items[n + 1] = item
  highlight(chat, item, lines)
  if M.foldable(item) then
    refresh_folds(chat)
  end
  follow(chat, wins)
  return item
end

local function index_of(chat, item)
  for i = #chat.items, 1, -1 do
    if chat.items[i] == item then
      return i
    end
  end
end

local function update(chat, item)
  local i = index_of(chat, item)
  if not i or not item.start then
    return
  end
  local wins = followers(chat)
  local lines = M.item_lines(item, i == 1)
  set_lines(chat, item.start - 1, item.start - 1 + item.count, lines)
  local delta = #lines - item.count
  item.count = #lines
  highlight(chat, item, lines)
  for j = i + 1, #chat.items do
    chat.items[j].start = chat.items[j].start + delta
  end
  if M.foldable(item) or (delta ~= 0 and i < #chat.items) then
    refresh_folds(chat)
  end
  follow(chat, wins)
end

--- Stream `text` into the open text item: its last line takes the text up to the first newline
--- and each newline adds a line (`update` would render all its lines again: quadratic in the
--- answer's length). The lines are those `item_lines` gives for the whole text.
local function stream(chat, item, text)
  local before = item.text
  item.text = before .. text
  local i = index_of(chat, item)
  if not i or not item.start then
    return
  end
  -- After a final newline all the item's lines stay (the empty line after it is not shown), else
  -- all but the last, which the text continues.
  local ended = before:sub(-1) == '\n'
  local kept = ended and item.count or item.count - 1
  local first = item.start - 1 + kept
  local tail = ended and '' or (vim.api.nvim_buf_get_lines(chat.buf, first, first + 1, false)[1] or '')
  local lines = vim.split(tail .. text, '\n', { plain = true })
  if kept + #lines > 1 and lines[#lines] == '' then
    lines[#lines] = nil
  end
  local wins = followers(chat)
  set_lines(chat, first, item.start - 1 + item.count, lines)
  local delta = kept + #lines - item.count
  item.count = kept + #lines
  for j = i + 1, #chat.items do
    chat.items[j].start = chat.items[j].start + delta
  end
  if delta ~= 0 and i < #chat.items then
    refresh_folds(chat)
  end
  follow(chat, wins)
end

--- The item holding line `lnum` (binary search: items are in line order).
--- @param chat pseudoclaude.Chat
--- @param lnum integer
--- @return pseudoclaude.ChatItem?
function M.item_at(chat, lnum)
  local items = chat.items
  local lo, hi, found = 1, #items, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local item = items[mid]
    if item.start and item.start <= lnum then
      found, lo = item, mid + 1
    else
      hi = mid - 1
    end
  end
  if found and lnum < found.start + found.count then
    return found
  end
  return nil
end

--- 'foldexpr' of the chat windows: a tool card or summary is one fold.
function M.foldexpr(lnum)
  local chat = chat_of(vim.api.nvim_get_current_buf())
  local item = chat and M.item_at(chat, lnum)
  if not item or not M.foldable(item) or item.count < 2 then
    return '0'
  end
  return lnum == item.start and '>1' or '1'
end

--- 'foldtext' of the chat windows.
function M.foldtext()
  local chat = chat_of(vim.api.nvim_get_current_buf())
  local item = chat and M.item_at(chat, vim.v.foldstart)
  if not item then
    return vim.fn.foldtext()
  end
  return M.fold_line(item)
end

--- The winbar of a chat window: folder, session, meter, state.
function M.winbar()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local chat = chat_of(vim.api.nvim_win_get_buf(win))
  if not chat then
    return ''
  end
  local parts = { 'PseudoClaude', fmt.basename(chat.workspace) }
  parts[#parts + 1] = chat.session_id and ('session ' .. chat.session_id) or 'new session'
  parts[#parts + 1] = meter.text(chat.workspace)
  if chat.running then
    parts[#parts + 1] = 'running… (Ctrl-C cancels)'
  end
  return ' ' .. (table.concat(parts, ' · '):gsub('%%', '%%%%'))
end

--- The chat shown in buffer `buf` (the chat or its prompt), if any.
--- @param buf integer
--- @return pseudoclaude.Chat?
function M.of_buf(buf)
  local chat = by_buf[buf]
  if chat then
    return chat
  end
  for _, c in pairs(M.chats) do
    if c.prompt_buf == buf then
      return c
    end
  end
  return nil
end

-- Live events -------------------------------------------------------------------------------------

local function get(workspace)
  local chat = M.chats[key(workspace)]
  if chat and vim.api.nvim_buf_is_valid(chat.buf) then
    return chat
  end
  return nil
end

--- The chat of a workspace folder, if one is open.
M.get = get

local function notice(chat, text)
  chat.open_text = nil
  append(chat, { kind = 'notice', text = text })
end

local function interrupt_tools(chat)
  for _, item in ipairs(chat.items) do
    if item.kind == 'tool' and (item.status == 'running' or item.status == 'approval') then
      item.status = 'interrupted'
      update(chat, item)
    end
  end
end

local function find_tool(chat, id)
  for i = #chat.items, 1, -1 do
    local item = chat.items[i]
    if item.kind == 'tool' and item.id == id then
      return item
    end
  end
end

--- One `pseudoclaude/event` notification (ignored without a chat for its folder).
--- @param e pseudoclaude.Event
function M.event(e)
  local chat = get(e.workspace)
  if not chat then
    return
  end
  if type(e.sessionId) == 'string' and e.sessionId ~= '' and e.sessionId ~= chat.session_id then
    if chat.session_id then
      notice(chat, 'session ' .. e.sessionId)
    end
    chat.session_id = e.sessionId
  end
  local kind = e.kind
  if kind == 'text' then
    local delta = e.delta or ''
    if delta == '' then
      return
    end
    chat.streamed = chat.streamed + #delta
    if chat.open_text then
      stream(chat, chat.open_text, delta)
    else
      chat.open_text = append(chat, { kind = 'text', text = delta })
    end
  elseif kind == 'toolCall' then
    chat.open_text = nil
    append(chat, { kind = 'tool', id = e.id, name = e.name, arguments = e.arguments, status = 'running' })
  elseif kind == 'toolResult' then
    chat.open_text = nil
    local item = find_tool(chat, e.id)
    if not item then
      item = append(chat, { kind = 'tool', id = e.id, name = e.name, arguments = vim.NIL, status = 'running' })
    end
    item.status = e.isError and 'failed' or 'done'
    item.result = e
    update(chat, item)
  else
    local text = render.notice(e)
    if text then
      notice(chat, text)
    end
  end
end

--- A run starts in the folder (from the chat or `:PseudoClaudeAsk`).
function M.begin_run(workspace, prompt)
  local chat = get(workspace)
  if not chat then
    return
  end
  chat.running, chat.streamed, chat.open_text = true, 0, nil
  if #chat.items == 1 and chat.items[1].kind == 'hint' then
    chat.items = {}
  end
  append(chat, { kind = 'user', text = prompt })
end

--- A run ended with its result.
--- @param result pseudoclaude.RunResult
function M.end_run(workspace, result)
  local chat = get(workspace)
  if not chat then
    return
  end
  chat.open_text = nil
  if chat.streamed == 0 and type(result.text) == 'string' and result.text ~= '' then
    append(chat, { kind = 'text', text = result.text })
  end
  if type(result.sessionId) == 'string' then
    chat.session_id = result.sessionId
  end
  interrupt_tools(chat)
  append(chat, { kind = 'footer', text = render.footer(result, false) })
  if type(result.error) == 'string' and result.error ~= '' then
    notice(chat, '✗ ' .. fmt.one_line(result.error, 300))
  end
  chat.running = false
  vim.cmd.redrawstatus({ bang = true })
end

--- A run ended without a result (cancelled, or the request failed).
function M.abort_run(workspace, reason)
  local chat = get(workspace)
  if not chat then
    return
  end
  chat.open_text = nil
  interrupt_tools(chat)
  append(chat, { kind = 'footer', text = string.format('── %s ──', reason) })
  chat.running = false
  vim.cmd.redrawstatus({ bang = true })
end

--- A note from the plugin (new session, compaction undone...).
function M.note(workspace, text)
  local chat = get(workspace)
  if chat then
    notice(chat, text)
  end
end

--- An approval for a call of this folder is shown (`state` true) or answered: its card says so.
--- @param params pseudoclaude.ApproveParams
--- @param waiting boolean
function M.approval(params, waiting)
  local chat = get(params.workspace)
  if not chat then
    return
  end
  for i = #chat.items, 1, -1 do
    local item = chat.items[i]
    if item.kind == 'tool' and item.name == params.tool
      and item.status == (waiting and 'running' or 'approval') then
      item.status = waiting and 'approval' or 'running'
      update(chat, item)
      return
    end
  end
end

-- History ----------------------------------------------------------------------------------------

--- Show the folder's current session from the server's log (the newest `HISTORY_MESSAGES`
--- messages). `done(err)` after. Nothing happens while a run streams into the chat.
--- @param chat pseudoclaude.Chat
--- @param done? fun(err?: table)
function M.reload(chat, done)
  done = done or function() end
  if chat.running then
    return done()
  end
  local ws = chat.workspace
  client.request(protocol.requests.context, { workspace = ws }, function(err, c)
    if err then
      return done(err)
    end
    meter.context(ws, c)
    local sid = type(c.sessionId) == 'string' and c.sessionId or nil
    local function show(items, session_id)
      if chat.running or not vim.api.nvim_buf_is_valid(chat.buf) then
        return done()
      end
      if #items == 0 then
        items = { { kind = 'hint', text = string.format(
          'New conversation in %s. Type below; Enter sends, /help lists the commands.', fmt.basename(ws)) } }
      end
      chat.items, chat.open_text, chat.session_id, chat.loaded = items, nil, session_id, true
      chat.prompts = chat.prompts or {}
      for _, item in ipairs(items) do
        if item.kind == 'user' then
          chat.prompts[#chat.prompts + 1] = item.text
        end
      end
      render_all(chat)
      fire('PseudoClaudeChatLoaded', { workspace = ws, sessionId = session_id, items = #items })
      done()
    end
    if not sid then
      return show({}, nil)
    end
    local head = { workspace = ws, sessionId = sid, offset = 0, limit = 1 }
    client.request(protocol.requests.sessions_messages, head, function(e1, first)
      if e1 then
        return done(e1)
      end
      local offset = math.max(0, (first.total or 0) - M.HISTORY_MESSAGES)
      local page = { workspace = ws, sessionId = sid, offset = offset }
      client.request(protocol.requests.sessions_messages, page, function(e2, r)
        if e2 then
          return done(e2)
        end
        show(M.items_from_log(r.messages or {}, offset), sid)
      end)
    end)
  end)
end

--- The session of the folder changed (resume): the chat shows the new one's history.
function M.session_changed(workspace)
  local chat = get(workspace)
  if chat then
    chat.prompts = {}
    M.reload(chat)
  end
end

--- A new session started in the folder: the chat starts over.
function M.new_session(workspace, session_id)
  local chat = get(workspace)
  if not chat or chat.running then
    return
  end
  chat.items, chat.open_text, chat.session_id = {}, nil, session_id
  append(chat, { kind = 'hint', text = 'New session ' .. session_id .. '. Type below; Enter sends, /help lists the commands.' })
end

-- The prompt --------------------------------------------------------------------------------------

--- Send a prompt (or run a `/command`) from the chat of `workspace`.
--- @param chat pseudoclaude.Chat
--- @param text string
function M.submit(chat, text)
  text = vim.trim(text or '')
  if text == '' then
    return
  end
  local pc = require('pseudoclaude')
  local slash = M.slash(text)
  if slash then
    local ws, arg = chat.workspace, slash.argument ~= '' and slash.argument or nil
    local commands = {
      compact = function()
        pc.preview(arg, ws)
      end,
      undo = function()
        pc.undo(ws)
      end,
      new = function()
        pc.new_session(ws)
      end,
      sessions = function()
        pc.sessions(ws)
      end,
      resume = function()
        pc.resume(arg, ws)
      end,
      context = function()
        pc.context(ws)
      end,
      proposals = function()
        pc.proposals(ws)
      end,
      cancel = function()
        pc.cancel(ws)
      end,
      help = function()
        notify(table.concat(M.HELP, '\n'))
      end,
    }
    commands.preview = commands.compact
    local command = commands[slash.command]
    if not command then
      return notify('PseudoClaude: unknown chat command /' .. slash.command .. ' (/help lists them)', vim.log.levels.WARN)
    end
    return command()
  end
  if chat.running or pc.runs[chat.workspace] then
    return notify('PseudoClaude: a run is in progress: wait for it, or Ctrl-C to cancel it.', vim.log.levels.WARN)
  end
  chat.prompts[#chat.prompts + 1] = text
  chat.recall = nil
  pc.run(text, { workspace = chat.workspace, transcript = false })
end

local function set_prompt_text(chat, text)
  local buf = chat.prompt_buf
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last - 1, last, false, { M.PROMPT .. text })
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { last, #M.PROMPT + #text })
  end
end

--- Recall an earlier prompt (`step` -1: older, 1: newer) into the prompt line.
function M.recall(chat, step)
  local n = #chat.prompts
  if n == 0 then
    return
  end
  local i = (chat.recall or (n + 1)) + step
  if i < 1 then
    i = 1
  end
  if i > n then
    chat.recall = nil
    return set_prompt_text(chat, '')
  end
  chat.recall = i
  set_prompt_text(chat, chat.prompts[i])
end

-- Windows ------------------------------------------------------------------------------------------

local function set_local(win, options)
  for name, value in pairs(options) do
    vim.api.nvim_set_option_value(name, value, { scope = 'local', win = win })
  end
end

local function setup_chat_window(win)
  set_local(win, {
    wrap = true,
    linebreak = true,
    number = false,
    relativenumber = false,
    signcolumn = 'no',
    foldcolumn = '0',
    foldenable = true,
    foldmethod = 'expr',
    foldexpr = "v:lua.require'pseudoclaude.chat'.foldexpr(v:lnum)",
    foldtext = "v:lua.require'pseudoclaude.chat'.foldtext()",
    foldlevel = 0,
    winfixwidth = true,
    winbar = "%!v:lua.require'pseudoclaude.chat'.winbar()",
  })
end

local function setup_prompt_window(win)
  set_local(win, {
    wrap = true,
    number = false,
    relativenumber = false,
    signcolumn = 'no',
    foldcolumn = '0',
    winfixheight = true,
    winbar = ' Enter sends · Ctrl-C cancels · Up/Down earlier prompts · /help · g? in the chat',
  })
end

--- The chat and prompt windows of a chat in the current tab: `chat_win, prompt_win` (nil when absent).
local function windows(chat)
  local tab = vim.api.nvim_get_current_tabpage()
  local cw, pw
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local b = vim.api.nvim_win_get_buf(win)
    if b == chat.buf then
      cw = cw or win
    elseif b == chat.prompt_buf then
      pw = pw or win
    end
  end
  return cw, pw
end

--- Close the chat's windows in the current tab (the buffers stay: `:PseudoClaudeChat` shows them).
function M.close(chat)
  chat = chat or chat_of(vim.api.nvim_get_current_buf())
  if not chat then
    for _, c in pairs(M.chats) do
      chat = c
    end
  end
  if not chat then
    return
  end
  local cw, pw = windows(chat)
  for _, win in ipairs({ pw, cw }) do
    if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
end

local function focus_prompt(chat, insert)
  local _, pw = windows(chat)
  if not pw then
    return
  end
  vim.api.nvim_set_current_win(pw)
  local last = vim.api.nvim_buf_line_count(chat.prompt_buf)
  pcall(vim.api.nvim_win_set_cursor, pw, { last, 0 })
  if insert ~= false then
    vim.cmd('startinsert!')
  end
end

local function toggle_fold()
  local lnum = vim.fn.line('.')
  if vim.fn.foldlevel(lnum) > 0 then
    vim.cmd('normal! za')
  end
end

local function map_keys(chat)
  local pc = function()
    return require('pseudoclaude')
  end
  local function in_ws(name)
    return function()
      if name == 'preview' then
        pc().preview(nil, chat.workspace)
      else
        pc()[name](chat.workspace)
      end
    end
  end
  local chat_keys = {
    { { 'i', 'a', 'o', 'I', 'A', 'O' }, function()
      focus_prompt(chat)
    end, 'PseudoClaude chat: type a prompt' },
    { { '<Tab>', '<CR>' }, toggle_fold, 'PseudoClaude chat: open or close the tool card' },
    { { '<C-c>' }, function()
      pc().cancel(chat.workspace)
    end, 'PseudoClaude chat: cancel the run' },
    { { 'C' }, in_ws('preview'), 'PseudoClaude chat: compact (with a preview)' },
    { { 'U' }, in_ws('undo'), 'PseudoClaude chat: undo the last compaction' },
    { { 'N' }, in_ws('new_session'), 'PseudoClaude chat: new session' },
    { { 'S' }, in_ws('sessions'), 'PseudoClaude chat: pick a session' },
    { { 'R' }, function()
      M.reload(chat)
    end, 'PseudoClaude chat: reload the history' },
    { { 'q' }, function()
      M.close(chat)
    end, 'PseudoClaude chat: close' },
    { { 'g?' }, function()
      notify(table.concat(M.HELP, '\n'))
    end, 'PseudoClaude chat: keys' },
  }
  for _, k in ipairs(chat_keys) do
    for _, lhs in ipairs(k[1]) do
      vim.keymap.set('n', lhs, k[2], { buffer = chat.buf, nowait = true, desc = k[3] })
    end
  end
  local pb = chat.prompt_buf
  vim.keymap.set('n', '<C-c>', function()
    pc().cancel(chat.workspace)
  end, { buffer = pb, desc = 'PseudoClaude chat: cancel the run' })
  vim.keymap.set('i', '<Up>', function()
    M.recall(chat, -1)
  end, { buffer = pb, desc = 'PseudoClaude chat: the prompt before' })
  vim.keymap.set('i', '<Down>', function()
    M.recall(chat, 1)
  end, { buffer = pb, desc = 'PseudoClaude chat: the prompt after' })
  vim.keymap.set('n', 'q', function()
    M.close(chat)
  end, { buffer = pb, nowait = true, desc = 'PseudoClaude chat: close' })
end

local function create(workspace)
  local name = fmt.basename(workspace)
  local function new_buf(bufname)
    local b = vim.fn.bufnr(bufname)
    if b > 0 then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
    b = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(b, bufname)
    vim.bo[b].bufhidden = 'hide'
    vim.bo[b].swapfile = false
    return b
  end
  local buf = new_buf('pseudoclaude://chat/' .. name)
  vim.bo[buf].buftype = 'nofile'
  -- Vim's markdown syntax marks `_` inside words (read_file) as an error: not here.
  vim.api.nvim_create_autocmd('Syntax', {
    buffer = buf,
    callback = function()
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent! syntax clear markdownError')
      end)
    end,
  })
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  local pb = new_buf('pseudoclaude://chat/' .. name .. '/prompt')
  vim.bo[pb].buftype = 'prompt'
  vim.bo[pb].filetype = 'pseudoclaude_prompt'
  --- @type pseudoclaude.Chat
  local chat = { workspace = workspace, buf = buf, prompt_buf = pb, items = {}, running = false, streamed = 0,
    prompts = {}, loaded = false }
  vim.fn.prompt_setprompt(pb, M.PROMPT)
  vim.fn.prompt_setcallback(pb, function(text)
    -- The prompt buffer keeps what was sent above the new prompt line: only the prompt stays.
    vim.api.nvim_buf_set_lines(pb, 0, -2, false, {})
    M.submit(chat, text)
  end)
  vim.fn.prompt_setinterrupt(pb, function()
    require('pseudoclaude').cancel(chat.workspace)
  end)
  M.chats[key(workspace)] = chat
  by_buf[buf] = chat
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      by_buf[buf] = nil
      if M.chats[key(workspace)] == chat then
        M.chats[key(workspace)] = nil
      end
      if vim.api.nvim_buf_is_valid(pb) then
        vim.schedule(function()
          pcall(vim.api.nvim_buf_delete, pb, { force = true })
        end)
      end
    end,
  })
  map_keys(chat)
  return chat
end

local function width()
  local w = config.options.chat.width
  if w < 1 then
    w = math.floor(vim.o.columns * w)
  end
  return math.max(30, math.min(math.floor(w), vim.o.columns - 10))
end

--- Show the chat of `workspace` (at the right of the tab, its prompt below it) and enter the
--- prompt. A new chat (or one whose buffer was wiped) loads the session's history first.
--- @param workspace string
--- @param opts? {enter?: boolean, done?: fun(chat: pseudoclaude.Chat)}
--- @return pseudoclaude.Chat
function M.show(workspace, opts)
  opts = opts or {}
  local chat = get(workspace) or create(workspace)
  local cw, pw = windows(chat)
  if not cw and pw then
    -- Only the prompt is left: both come back together, the prompt below the chat.
    if not pcall(vim.api.nvim_win_close, pw, true) then -- the last window: it shows the chat
      vim.api.nvim_win_set_buf(pw, chat.buf)
      cw = pw
    end
    pw = nil
  end
  if not cw then
    vim.cmd('botright vertical sbuffer ' .. chat.buf)
    cw = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_width(cw, width())
  end
  setup_chat_window(cw)
  if not pw then
    vim.api.nvim_set_current_win(cw)
    vim.cmd('belowright sbuffer ' .. chat.prompt_buf)
    pw = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_win_set_height(pw, config.options.chat.prompt_height)
  setup_prompt_window(pw)
  refresh_folds(chat)
  local function ready()
    follow(chat, { cw })
    if opts.enter ~= false then
      focus_prompt(chat)
    end
    if opts.done then
      opts.done(chat)
    end
  end
  if not chat.loaded and not chat.running then
    M.reload(chat, function(err)
      if err then
        notify('PseudoClaude: Chat failed: ' .. client.error_message(err), vim.log.levels.ERROR)
      end
      ready()
    end)
  else
    ready()
  end
  return chat
end

--- `:PseudoClaudeChat`: open the chat of the current buffer's folder.
function M.open()
  local bufnr = vim.api.nvim_get_current_buf()
  local current = M.of_buf(bufnr)
  if current then
    return M.show(current.workspace)
  end
  client.ensure(function(c, err)
    if not c then
      return client.fail('Chat', err)
    end
    M.show(assert(client.workspace(c, bufnr)))
  end)
end

return M
