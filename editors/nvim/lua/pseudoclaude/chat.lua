--- `:PseudoClaudeChat`: a chat buffer per workspace folder (`pseudoclaude://chat/<folder>`,
--- filetype markdown) with a prompt below it (a `buftype=prompt` buffer). The answer streams in
--- from `pseudoclaude/event`; each tool call is a card folded to one line (its result and a
--- preview inside); compaction and memory events show inline. It opens with the session's history
--- as the server tells it (`pseudoclaude/sessions/messages` items).
---
--- This module is the entry and the live events of a run; the parts have one job each:
--- `chat.items` (the items and their lines, pure), `chat.buffer` (the buffer, highlights, folds),
--- `chat.history` (the session's items), `chat.prompt` (prompts, slash commands, completion) and
--- `chat.window` (windows, keys, winbar).
local buffer = require('pseudoclaude.chat.buffer')
local fmt = require('pseudoclaude.format')
local history = require('pseudoclaude.chat.history')
local items = require('pseudoclaude.chat.items')
local prompt = require('pseudoclaude.chat.prompt')
local render = require('pseudoclaude.render')
local state = require('pseudoclaude.chat.state')
local window = require('pseudoclaude.chat.window')

local M = {}

M.chats = state.chats
M.get = state.get
M.of_buf = state.of_buf

M.PREVIEW_LINES = items.PREVIEW_LINES
M.HIGHLIGHTS = items.HIGHLIGHTS
M.item_lines = items.item_lines
M.line_groups = items.line_groups
M.tool_status = items.tool_status
M.foldable = items.foldable
M.fold_line = items.fold_line
M.from_transcript = items.from_transcript

M.item_at = buffer.item_at
M.foldexpr = buffer.foldexpr
M.foldtext = buffer.foldtext

M.reload = history.reload

M.PROMPT = prompt.PROMPT
M.slash = prompt.slash
M.submit = prompt.submit
M.recall = prompt.recall
M.commands = prompt.commands
M.matches = prompt.matches

M.winbar = window.winbar
M.show = window.show
M.open = window.open
M.close = window.close

-- Live events -------------------------------------------------------------------------------------

local get = state.get

local function notice(chat, text)
  chat.open_text = nil
  buffer.append(chat, { kind = 'notice', text = text })
end

--- Tool calls still running when the run ended: canceled, without a result.
local function interrupt_tools(chat)
  for _, item in ipairs(chat.items) do
    if item.kind == 'toolCall' and (item.status == 'running' or item.status == 'approval') then
      item.status, item.error = 'canceled', 'no result'
      buffer.update(chat, item)
    end
  end
end

local function find_tool(chat, id)
  for i = #chat.items, 1, -1 do
    local item = chat.items[i]
    if item.kind == 'toolCall' and item.id == id then
      return item
    end
  end
end

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
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
      buffer.stream(chat, chat.open_text, delta)
    else
      chat.open_text = buffer.append(chat, { kind = 'assistant', text = delta })
    end
  elseif kind == 'toolCall' then
    chat.open_text = nil
    buffer.append(chat, { kind = 'toolCall', id = e.id, name = e.name, arguments = e.arguments, status = 'running' })
  elseif kind == 'toolResult' then
    chat.open_text = nil
    local item = find_tool(chat, e.id)
    if not item then
      item = buffer.append(chat, { kind = 'toolCall', id = e.id, name = e.name, arguments = vim.NIL, status = 'running' })
    end
    item.status = given(e.status) or (e.isError and 'error' or 'done')
    item.preview, item.error = given(e.display), given(e.error)
    item.bytes = type(e.bytes) == 'number' and e.bytes or nil
    buffer.update(chat, item)
  else
    local text = render.notice(e)
    if text then
      notice(chat, text)
    end
  end
end

--- A run starts in the folder (from the chat or `:PseudoClaudeAsk`), with the editor context it
--- was sent with (shown under the prompt).
--- @param workspace string
--- @param text string
--- @param context? pseudoclaude.EditorContext
function M.begin_run(workspace, text, context)
  local chat = get(workspace)
  if not chat then
    return
  end
  chat.running, chat.streamed, chat.open_text = true, 0, nil
  if #chat.items == 1 and chat.items[1].kind == 'hint' then
    chat.items = {}
  end
  buffer.append(chat, { kind = 'user', text = text, context = context })
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
    buffer.append(chat, { kind = 'assistant', text = result.text })
  end
  if type(result.sessionId) == 'string' then
    chat.session_id = result.sessionId
  end
  interrupt_tools(chat)
  buffer.append(chat, { kind = 'footer', text = render.footer(result, false) })
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
  buffer.append(chat, { kind = 'footer', text = string.format('── %s ──', reason) })
  chat.running = false
  vim.cmd.redrawstatus({ bang = true })
end

--- A note from the plugin, in the server's words (compacted, compaction undone...).
function M.note(workspace, text)
  local chat = get(workspace)
  if chat and given(text) then
    notice(chat, text)
  end
end

--- An approval for a call of this folder is shown (`waiting` true) or answered: its card says so.
--- @param params pseudoclaude.ApproveParams
--- @param waiting boolean
function M.approval(params, waiting)
  local chat = get(params.workspace)
  if not chat or params.kind == 'mcpServer' or params.kind == 'permissions' then -- (no call, no card)
    return
  end
  -- An MCP tool is asked by its own name; its card has the model's (`mcp__<server>__<tool>`).
  local mcp_prefix = params.kind == 'mcp' and type(params.server) == 'string'
    and ('mcp__' .. params.server:gsub('[^%w_-]', '_') .. '__') or nil
  for i = #chat.items, 1, -1 do
    local item = chat.items[i]
    if item.kind == 'toolCall'
      and (item.name == params.tool or (mcp_prefix and vim.startswith(tostring(item.name), mcp_prefix)))
      and item.status == (waiting and 'running' or 'approval') then
      item.status = waiting and 'approval' or 'running'
      buffer.update(chat, item)
      return
    end
  end
end

--- The session of the folder changed (resume): the chat shows the new one's history.
function M.session_changed(workspace)
  local chat = get(workspace)
  if chat then
    chat.prompts = {}
    history.reload(chat)
  end
end

--- A rewind ended: with the conversation rewound the chat shows the session again (and its
--- prompt line gets the prompt taken back, to edit and send again); the rewind's line after.
--- @param workspace string
--- @param message? string the server's words
--- @param conversation boolean the conversation was rewound
--- @param prompt_text? string the prompt taken back
function M.rewound(workspace, message, conversation, prompt_text)
  local chat = get(workspace)
  if not chat then
    return
  end
  if not conversation then
    return M.note(workspace, message)
  end
  chat.prompts = {}
  history.reload(chat, function()
    M.note(workspace, message)
  end)
  if prompt_text then
    M.offer_prompt(workspace, prompt_text)
  end
end

--- Put `text` on the chat's prompt line (when nothing is typed there), to edit and send.
--- @param workspace string
--- @param text string
function M.offer_prompt(workspace, text)
  local chat = get(workspace)
  if chat and given(text) then
    prompt.offer(chat, text)
  end
end

--- A new session started in the folder: the chat starts over.
function M.new_session(workspace, session_id)
  local chat = get(workspace)
  if not chat or chat.running then
    return
  end
  chat.items, chat.open_text, chat.session_id = {}, nil, session_id
  buffer.append(chat, history.hint('New session ' .. session_id .. '.'))
end

return M
