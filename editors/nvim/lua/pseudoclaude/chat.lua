--- `:PseudoClaudeChat`: a chat buffer per session (`pseudoclaude://chat/<folder>/<session id>`,
--- filetype markdown) with a prompt below it (a `buftype=prompt` buffer). The answer streams in
--- from `pseudoclaude/event`, each event to the chat of its session (several sessions of a folder
--- run at once, each in its own buffer); each tool call is a card folded to one line (its result
--- and a preview inside); a sub-agent's events go into the card of the `agent` call that started
--- it (`pseudoclaude.agents`); compaction and memory events show inline. It opens with the session's
--- history as the server tells it (`pseudoclaude/sessions/messages` items). The folder's current
--- chat (the one shown last) is the one its commands act on.
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
M.of_workspace = state.of_workspace

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
M.create = window.create

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
      if item.agent then -- its sub-agent was cancelled with the run
        require('pseudoclaude.agents').interrupt(item.agent)
      end
      buffer.update(chat, item)
      if item.fold_open then
        require('pseudoclaude.agents').set_fold(chat, item, false)
      end
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

--- The chat of an event's session: its own, else the chat of the folder whose run has no session
--- yet (a new conversation: its first event names it). Nil when the session has no chat open.
--- @param e pseudoclaude.Event
--- @return pseudoclaude.Chat?
function M.chat_of_event(e)
  local sid = type(e.sessionId) == 'string' and e.sessionId ~= '' and e.sessionId or nil
  if not sid then
    return get(e.workspace)
  end
  local chat = get(e.workspace, sid)
  if chat then
    return chat
  end
  for _, c in ipairs(state.of_workspace(e.workspace)) do
    if c.running and not c.session_id then
      window.set_session(c, sid)
      return c
    end
  end
  return nil
end

--- One `pseudoclaude/event` notification, to the chat of its session (ignored without one).
--- @param e pseudoclaude.Event
function M.event(e)
  local chat = M.chat_of_event(e)
  if not chat then
    return
  end
  local kind = e.kind
  if kind == 'task' then -- a background sub-agent started or ended: a line
    return require('pseudoclaude.agents').task(chat, e)
  elseif type(e.agentId) == 'string' and e.agentId ~= '' then -- a sub-agent's: into its card
    return require('pseudoclaude.agents').event(chat, e)
  end
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
    buffer.append(chat, { kind = 'toolCall', id = e.id, name = e.name, arguments = e.arguments, status = 'running',
      live = true })
  elseif kind == 'toolResult' then
    chat.open_text = nil
    local item = find_tool(chat, e.id)
    if not item then
      item = buffer.append(chat, { kind = 'toolCall', id = e.id, name = e.name, arguments = vim.NIL, status = 'running' })
    end
    item.status = given(e.status) or (e.isError and 'error' or 'done')
    item.preview, item.error = given(e.display), given(e.error)
    item.bytes = type(e.bytes) == 'number' and e.bytes or nil
    if item.name == 'agent' then
      require('pseudoclaude.agents').ended(chat, item)
    end
    buffer.update(chat, item)
  else
    local text = render.notice(e)
    if text then
      notice(chat, text)
    end
  end
end

--- The chat a run is shown in: the chat that sent it, else its session's, else the folder's
--- current chat (`:PseudoClaudeAsk` runs the current session).
--- @param workspace string
--- @param target? {chat?: pseudoclaude.Chat, session?: string}
--- @return pseudoclaude.Chat?
local function run_chat(workspace, target)
  target = target or {}
  if target.chat and vim.api.nvim_buf_is_valid(target.chat.buf) then
    return target.chat
  end
  if target.session then
    return get(workspace, target.session)
  end
  return get(workspace)
end
M.run_chat = run_chat

--- A run starts in the folder (from the chat or `:PseudoClaudeAsk`), with the editor context it
--- was sent with (shown under the prompt). `target`: the chat that sent it, or its session.
--- @param workspace string
--- @param text string
--- @param context? pseudoclaude.EditorContext
--- @param target? {chat?: pseudoclaude.Chat, session?: string}
function M.begin_run(workspace, text, context, target)
  local chat = run_chat(workspace, target)
  if not chat then
    return
  end
  chat.running, chat.streamed, chat.open_text, chat.waiting = true, 0, nil, nil
  if #chat.items == 1 and chat.items[1].kind == 'hint' then
    chat.items = {}
  end
  if not chat.title then
    chat.title = text
  end
  buffer.append(chat, { kind = 'user', text = text, context = context })
  pcall(vim.cmd, 'redrawstatus!')
end

--- A run ended with its result.
--- @param result pseudoclaude.RunResult
--- @param target? {chat?: pseudoclaude.Chat, session?: string}
function M.end_run(workspace, result, target)
  local chat = run_chat(workspace, target)
  if not chat and type(result.sessionId) == 'string' then
    chat = get(workspace, result.sessionId)
  end
  if not chat then
    return
  end
  chat.open_text = nil
  if chat.streamed == 0 and type(result.text) == 'string' and result.text ~= '' then
    buffer.append(chat, { kind = 'assistant', text = result.text })
  end
  if type(result.sessionId) == 'string' then
    window.set_session(chat, result.sessionId)
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
--- @param target? {chat?: pseudoclaude.Chat, session?: string}
function M.abort_run(workspace, reason, target)
  local chat = run_chat(workspace, target)
  if not chat then
    return
  end
  chat.open_text = nil
  interrupt_tools(chat)
  buffer.append(chat, { kind = 'footer', text = string.format('── %s ──', reason) })
  chat.running = false
  vim.cmd.redrawstatus({ bang = true })
end

--- A run's prompt was not sent (its session is busy: another process writes it): the prompt leaves
--- the chat (it is not part of the conversation), a line says why.
--- @param workspace string
--- @param text string the line
--- @param target? {chat?: pseudoclaude.Chat, session?: string}
function M.refused_run(workspace, text, target)
  local chat = run_chat(workspace, target)
  if not chat then
    return
  end
  chat.open_text = nil
  local last = chat.items[#chat.items]
  if last and last.kind == 'user' then
    table.remove(chat.items)
    buffer.render_all(chat)
  end
  notice(chat, text)
  chat.running = false
  vim.cmd.redrawstatus({ bang = true })
end

--- A note from the plugin, in the server's words (compacted, compaction undone...); to the chat
--- of `target` (a chat, or a session) when given, else to the folder's current chat.
--- @param target? {chat?: pseudoclaude.Chat, session?: string}
function M.note(workspace, text, target)
  local chat = run_chat(workspace, target)
  if chat and given(text) then
    notice(chat, text)
  end
end

--- An approval for a call of this folder is shown (`waiting` true) or answered: its card says so.
--- @param params pseudoclaude.ApproveParams
--- @param waiting boolean
function M.approval(params, waiting)
  local sid = type(params.sessionId) == 'string' and params.sessionId or nil
  local chat = (sid and get(params.workspace, sid)) or get(params.workspace)
  if not chat or params.kind == 'mcpServer' or params.kind == 'permissions' or params.kind == 'hooks' then -- (no call)
    return
  end
  if type(params.agentId) == 'string' and params.agentId ~= '' then -- a sub-agent's call: in its card
    return require('pseudoclaude.agents').approval(chat, params, waiting)
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

--- Whether a chat of the folder is shown in the current tab (its chat or its prompt window).
local function folder_shown(workspace)
  for _, c in ipairs(state.of_workspace(workspace)) do
    if #vim.fn.win_findbuf(c.buf) > 0 or #vim.fn.win_findbuf(c.prompt_buf) > 0 then
      return true
    end
  end
  return false
end

--- Whether a chat holds nothing yet (a new conversation, nothing sent): it can take a session.
local function unused(chat)
  return not chat.running and not chat.waiting and not chat.session_id
    and (#chat.items == 0 or (#chat.items == 1 and chat.items[1].kind == 'hint'))
end

--- Show the chat of session `session_id` of a folder where its chat is shown (in the same windows;
--- `opts.beside`: beside it): the chat it has, else a new one (an unused chat of the folder takes
--- the session). Without any chat open for the folder nothing opens, unless `opts.open`.
--- @param workspace string
--- @param session_id string
--- @param opts? {beside?: boolean, open?: boolean, reload?: boolean, title?: string, worktree?: string|false, enter?: boolean, done?: fun(chat: pseudoclaude.Chat)}
--- @return pseudoclaude.Chat?
function M.switch(workspace, session_id, opts)
  opts = opts or {}
  local current = get(workspace)
  if not current and not opts.open then
    return nil
  end
  local chat = get(workspace, session_id)
  if not chat and current and unused(current) then
    chat = current
    window.set_session(chat, session_id)
    chat.loaded = false
  end
  chat = chat or window.create(workspace, session_id)
  if opts.reload and chat.loaded and not chat.running then
    chat.prompts, chat.loaded = {}, false
  end
  if folder_shown(workspace) or opts.open or opts.beside then
    window.show(workspace, { chat = chat, beside = opts.beside, enter = opts.enter == true, title = opts.title,
      worktree = opts.worktree, done = opts.done })
  else
    state.set_current(chat)
    if opts.title then
      chat.title = opts.title
    end
    if opts.worktree ~= nil then
      chat.worktree = opts.worktree or nil
    end
    if not chat.loaded and not chat.running then
      history.reload(chat, function()
        if opts.done then
          opts.done(chat)
        end
      end)
    elseif opts.done then
      opts.done(chat)
    end
  end
  return chat
end

--- The session of the folder changed (resume, fork): its chat is shown where the folder's chat was
--- (its history read again); without a session id, the current chat reloads.
--- @param workspace string
--- @param session_id? string
--- @param opts? {beside?: boolean, title?: string, worktree?: string|false, done?: fun(chat: pseudoclaude.Chat)}
function M.session_changed(workspace, session_id, opts)
  if not session_id then
    local chat = get(workspace)
    if chat then
      chat.prompts = {}
      history.reload(chat)
    end
    return
  end
  opts = vim.tbl_extend('force', opts or {}, { reload = true })
  M.switch(workspace, session_id, opts)
end

--- A rewind ended: with the conversation rewound the chat shows the session again (and its
--- prompt line gets the prompt taken back, to edit and send again); the rewind's line after.
--- @param workspace string
--- @param message? string the server's words
--- @param conversation boolean the conversation was rewound
--- @param prompt_text? string the prompt taken back
--- @param session? string the session rewound (default: the folder's current one)
function M.rewound(workspace, message, conversation, prompt_text, session)
  local chat = session and get(workspace, session) or get(workspace)
  if not chat then
    return
  end
  if not conversation then
    return M.note(workspace, message, { chat = chat })
  end
  chat.prompts = {}
  history.reload(chat, function()
    M.note(workspace, message, { chat = chat })
  end)
  if prompt_text then
    prompt.offer(chat, prompt_text)
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

--- Put `text` at the start of the prompt line of the folder's chat (before what is typed there)
--- and go there, in insert mode at the end of the line. False when the folder has no chat open.
--- @param workspace string
--- @param text string
--- @return boolean
function M.use_prompt(workspace, text)
  local chat = get(workspace)
  if not chat or not vim.api.nvim_buf_is_valid(chat.prompt_buf) then
    return false
  end
  local shown = vim.fn.win_findbuf(chat.prompt_buf)
  if #shown == 0 then
    window.show(workspace, { chat = chat, enter = false })
    shown = vim.fn.win_findbuf(chat.prompt_buf)
  end
  prompt.prepend(chat, text)
  if shown[1] then
    vim.api.nvim_set_current_win(shown[1])
    vim.cmd('startinsert!')
  end
  return true
end

--- A new session started in the folder: a chat of its own takes the folder chat's place (the
--- other session's chat goes on, hidden; the sessions picker shows it again). `worktree`: the
--- session's git worktree.
--- @param workspace string
--- @param session_id string
--- @param worktree? {path: string, branch: string, base: string}
function M.new_session(workspace, session_id, worktree)
  local current = get(workspace)
  if not current then
    return
  end
  local chat = get(workspace, session_id)
  if not chat then
    chat = unused(current) and current or window.create(workspace, session_id)
    window.set_session(chat, session_id)
  end
  chat.items, chat.open_text, chat.loaded, chat.title = {}, nil, true, nil
  chat.tasks, chat.head = nil, nil -- (a new session has no task list)
  chat.worktree = worktree and worktree.branch or nil
  local hint = 'New session ' .. session_id .. '.'
  if worktree then
    hint = string.format('New session %s in a git worktree of its own (branch %s): its changes reach %s when you'
      .. ' apply them (:PseudoClaudeWorktree).', session_id, worktree.branch, fmt.basename(workspace))
  end
  buffer.render_all(chat)
  buffer.append(chat, history.hint(hint))
  if chat ~= current then
    if folder_shown(workspace) then
      window.show(workspace, { chat = chat, enter = vim.api.nvim_get_current_buf() == current.prompt_buf })
    else
      state.set_current(chat)
    end
  end
  pcall(vim.cmd, 'redrawstatus!')
  return chat
end

return M
