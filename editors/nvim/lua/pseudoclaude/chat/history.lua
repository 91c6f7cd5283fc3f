--- The chat's history: its session (a new chat: the folder's current one) as the server tells it
--- (`pseudoclaude/sessions/messages` items), its newest `HISTORY_ITEMS` items, and its task list
--- (`pseudoclaude/tasks`).
local buffer = require('pseudoclaude.chat.buffer')
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local items = require('pseudoclaude.chat.items')
local meter = require('pseudoclaude.meter')
local protocol = require('pseudoclaude.protocol')
local state = require('pseudoclaude.chat.state')

local M = {}

--- How many transcript items of the session the chat shows when it opens.
M.HISTORY_ITEMS = 60

--- The hint of an empty chat.
function M.hint(text)
  return { kind = 'hint', text = text .. ' Type below; Enter sends, / lists the commands.' }
end

--- Show the chat's items (the history, or the hint of a new conversation).
local function show(chat, list, session_id)
  if #list == 0 then
    list = { M.hint(string.format('New conversation in %s.', fmt.basename(chat.workspace))) }
  end
  chat.items, chat.open_text, chat.loaded = list, nil, true
  if session_id then
    require('pseudoclaude.chat.window').set_session(chat, session_id)
  end
  for _, item in ipairs(list) do
    if not chat.title and item.kind == 'user' and type(item.text) == 'string' then
      chat.title = item.text -- the session's title is its first prompt
    end
  end
  chat.prompts = chat.prompts or {}
  for _, item in ipairs(list) do
    if item.kind == 'user' then
      chat.prompts[#chat.prompts + 1] = item.text
    end
  end
  buffer.render_all(chat)
  -- The session's task list, at the top (a `tasks` event may bring it first: the same list).
  require('pseudoclaude.tasks').fetch(chat)
  state.fire('PseudoClaudeChatLoaded', { workspace = chat.workspace, sessionId = session_id, items = #list })
end

--- Show the chat's session (a chat with no session yet: the folder's current one), its newest
--- `HISTORY_ITEMS` items. `done(err)` after. Nothing happens while a run streams into the chat.
--- A chat with no session whose folder's current session has a chat already shows nothing:
--- `done(nil, other)` names that chat.
--- @param chat pseudoclaude.Chat
--- @param done? fun(err?: table, other?: pseudoclaude.Chat)
function M.reload(chat, done)
  done = done or function() end
  if chat.running then
    return done()
  end
  local ws = chat.workspace
  require('pseudoclaude.chat.prompt').load(chat)
  local params = { workspace = ws, sessionId = chat.session_id }
  client.request(protocol.requests.context, params, function(err, c)
    if err then
      return done(err)
    end
    meter.context(ws, c)
    local sid = type(c.sessionId) == 'string' and c.sessionId or chat.session_id
    if not chat.session_id and sid then
      local other = state.get(ws, sid)
      if other and other ~= chat then
        return done(nil, other) -- the folder's current session has a chat of its own already
      end
    end
    local function shown(list)
      if not chat.running and vim.api.nvim_buf_is_valid(chat.buf) then
        show(chat, list, sid)
      end
      done()
    end
    if not sid then
      return shown({})
    end
    local head = { workspace = ws, sessionId = sid, offset = 0, limit = 1 }
    client.request(protocol.requests.sessions_messages, head, function(e1, first)
      if e1 then
        return done(e1)
      end
      local offset = math.max(0, (first.total or 0) - M.HISTORY_ITEMS)
      local page = { workspace = ws, sessionId = sid, offset = offset }
      client.request(protocol.requests.sessions_messages, page, function(e2, r)
        if e2 then
          return done(e2)
        end
        shown(items.from_transcript(r.items or {}, offset))
      end)
    end)
  end)
end

return M
