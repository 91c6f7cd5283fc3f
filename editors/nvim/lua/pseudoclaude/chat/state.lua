--- The open chats (one per session: a chat buffer and its prompt each; the folder's current chat is
--- the one its commands act on) and the small helpers every chat module shares.
local M = {}

--- @class pseudoclaude.ChatItem
--- @field kind 'user'|'assistant'|'thinking'|'toolCall'|'summary'|'compaction'|'undo'|'rewind'|'notice'|'footer'|'earlier'|'hint'
--- @field text? string
--- @field id? string tool call id
--- @field name? string
--- @field arguments? any
--- @field status? 'running'|'approval'|'done'|'error'|'denied'|'canceled'|'pending'
--- @field preview? string a tool result's readable first lines (the server's)
--- @field error? string a failed, denied or canceled call's message
--- @field bytes? integer the size of a tool result
--- @field inContext? boolean false: the model no longer sees it (shown dimmed)
--- @field turn? integer a prompt's number, as rewind and fork name it (the server's; absent
---   for a prompt sent since the chat loaded, and one a rewind took back)
--- @field count_hidden? integer `earlier`: items before these that are not shown
--- @field start? integer first line (1-based) once shown
--- @field count? integer its number of lines

--- @class pseudoclaude.Chat
--- @field workspace string
--- @field buf integer
--- @field prompt_buf integer
--- @field items pseudoclaude.ChatItem[]
--- @field session_id? string nil until the first run of a new conversation names it
--- @field title? string the session's title (its first prompt), as the winbar shows it
--- @field worktree? string the branch of the session's git worktree (nil: it works in the folder)
--- @field running boolean
--- @field waiting? boolean a prompt waits for the session to be free (another process writes it)
--- @field streamed integer
--- @field open_text? pseudoclaude.ChatItem the assistant item the answer streams into
--- @field prompts string[] sent prompts, oldest first
--- @field recall? integer
--- @field loaded boolean
--- @field chip? pseudoclaude.Chip the context of the next prompt (nil: removed, none is sent)
--- @field chip_shown? {chip: pseudoclaude.Chip?, at: integer, label: string} its words, as last drawn
--- @field tasks? pseudoclaude.TaskItem[] the session's task list, as last heard
--- @field head? {lines: string[], marks: table[]} the lines above the items (the task list)

--- What the prompt area shows as the context of the next prompt (the open files are added when
--- it is sent).
--- @class pseudoclaude.Chip
--- @field activeFile? string
--- @field selection? pseudoclaude.Selection
--- @field diagnostics? pseudoclaude.Diagnostic[]

--- @type table<string, pseudoclaude.Chat> workspace URI (no trailing slash) -> its current chat
--- (the one shown last: the folder's commands act on it)
M.chats = {}
--- @type table<integer, pseudoclaude.Chat> chat buffer -> chat (every open chat, a session each)
M.by_buf = {}

--- The key of a workspace URI (no trailing slash).
function M.key(uri)
  return (tostring(uri or ''):gsub('/+$', ''))
end

local function valid(chat)
  return chat ~= nil and vim.api.nvim_buf_is_valid(chat.buf)
end

--- The open chats of a folder (each a session; one may have no session yet), oldest first.
--- @param workspace string
--- @return pseudoclaude.Chat[]
function M.of_workspace(workspace)
  local k, out = M.key(workspace), {}
  for _, c in pairs(M.by_buf) do
    if M.key(c.workspace) == k and valid(c) then
      out[#out + 1] = c
    end
  end
  table.sort(out, function(a, b)
    return a.buf < b.buf
  end)
  return out
end

--- The chat of session `session_id` of a folder; without an id, the folder's current chat (the one
--- shown last). Nil when none is open.
--- @param workspace string
--- @param session_id? string
--- @return pseudoclaude.Chat?
function M.get(workspace, session_id)
  if session_id then
    for _, c in ipairs(M.of_workspace(workspace)) do
      if c.session_id == session_id then
        return c
      end
    end
    return nil
  end
  local chat = M.chats[M.key(workspace)]
  if valid(chat) then
    return chat
  end
  return nil
end

--- Make `chat` its folder's current chat (the folder's commands act on it).
--- @param chat pseudoclaude.Chat
function M.set_current(chat)
  M.chats[M.key(chat.workspace)] = chat
end

--- The chat shown in buffer `buf` (the chat or its prompt), if any.
--- @param buf integer
--- @return pseudoclaude.Chat?
function M.of_buf(buf)
  local chat = M.by_buf[buf]
  if chat then
    return chat
  end
  for _, c in pairs(M.by_buf) do
    if c.prompt_buf == buf then
      return c
    end
  end
  return nil
end

M.notify = require('pseudoclaude.util').notify
M.fire = require('pseudoclaude.util').fire

return M
