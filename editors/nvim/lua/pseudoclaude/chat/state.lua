--- The open chats (one per workspace folder) and the small helpers every chat module shares.
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
--- @field session_id? string
--- @field running boolean
--- @field streamed integer
--- @field open_text? pseudoclaude.ChatItem the assistant item the answer streams into
--- @field prompts string[] sent prompts, oldest first
--- @field recall? integer
--- @field loaded boolean
--- @field chip? pseudoclaude.Chip the context of the next prompt (nil: removed, none is sent)
--- @field chip_shown? {chip: pseudoclaude.Chip?, at: integer, label: string} its words, as last drawn

--- What the prompt area shows as the context of the next prompt (the open files are added when
--- it is sent).
--- @class pseudoclaude.Chip
--- @field activeFile? string
--- @field selection? pseudoclaude.Selection
--- @field diagnostics? pseudoclaude.Diagnostic[]

--- @type table<string, pseudoclaude.Chat> workspace URI (no trailing slash) -> chat
M.chats = {}
--- @type table<integer, pseudoclaude.Chat> chat buffer -> chat
M.by_buf = {}

--- The key of a workspace URI (no trailing slash).
function M.key(uri)
  return (tostring(uri or ''):gsub('/+$', ''))
end

--- The chat of a workspace folder, if one is open (its buffer still valid).
--- @param workspace string
--- @return pseudoclaude.Chat?
function M.get(workspace)
  local chat = M.chats[M.key(workspace)]
  if chat and vim.api.nvim_buf_is_valid(chat.buf) then
    return chat
  end
  return nil
end

--- The chat shown in buffer `buf` (the chat or its prompt), if any.
--- @param buf integer
--- @return pseudoclaude.Chat?
function M.of_buf(buf)
  local chat = M.by_buf[buf]
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

M.notify = require('pseudoclaude.util').notify
M.fire = require('pseudoclaude.util').fire

return M
