--- The chat buffer: each item owns a range of lines; a change re-renders only that item (streamed
--- text only the item's last line and the lines it adds). Highlights, the "not in context" mark,
--- folds and windows that follow the last line. Above the items, the chat's head: lines of its
--- own (the session's task list), none when it has nothing to show.
local items = require('pseudoclaude.chat.items')
local state = require('pseudoclaude.chat.state')
local util = require('pseudoclaude.util')

local M = {}

util.link_highlights('chat', items.HIGHLIGHTS)

M.NS = vim.api.nvim_create_namespace('pseudoclaude_chat')
M.HEAD_NS = vim.api.nvim_create_namespace('pseudoclaude_chat_head')

--- The number of lines of the chat's head (above its first item).
--- @param chat pseudoclaude.Chat
--- @return integer
function M.head_count(chat)
  return chat.head and #chat.head.lines or 0
end

--- Highlight the head's lines (`chat.head.marks`: `{line (0-based), col, end_col, group}`).
local function highlight_head(chat)
  local buf = chat.buf
  vim.api.nvim_buf_clear_namespace(buf, M.HEAD_NS, 0, -1)
  for _, m in ipairs(chat.head and chat.head.marks or {}) do
    pcall(vim.api.nvim_buf_set_extmark, buf, M.HEAD_NS, m[1], m[2], { end_col = m[3], hl_group = m[4],
      priority = m[5] })
  end
end

local function set_lines(chat, first, last, lines)
  local buf = chat.buf
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  if last ~= first then
    vim.api.nvim_buf_clear_namespace(buf, M.NS, first, last < 0 and -1 or last)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- Highlight the lines of an item (shown at `item.start`); an item out of the context also says
--- so at the end of its first non-blank line.
local function highlight(chat, item, lines)
  for i, group in ipairs(items.line_groups(item, lines)) do
    if group and lines[i] ~= '' then
      pcall(vim.api.nvim_buf_set_extmark, chat.buf, M.NS, item.start + i - 2, 0,
        { end_col = #lines[i], hl_group = group })
    end
  end
  if items.out_of_context(item) then
    for i, l in ipairs(lines) do
      if l ~= '' then
        pcall(vim.api.nvim_buf_set_extmark, chat.buf, M.NS, item.start + i - 2, 0, {
          virt_text = { { '  · ' .. items.OUT_OF_CONTEXT, 'PseudoClaudeChatOutOfContext' } },
          virt_text_pos = 'eol',
        })
        break
      end
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

--- Put the cursor of `wins` on the chat's last line.
function M.follow(chat, wins)
  local last = vim.api.nvim_buf_line_count(chat.buf)
  for _, win in ipairs(wins) do
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
end

--- Folds are computed from the items: after a card appears or changes, every window showing the
--- chat computes them again (setting 'foldexpr' keeps the folds the user opened).
--- A running sub-agent's card (`fold_open`) is opened again each time: computed again, a fold
--- that moved would close.
function M.refresh_folds(chat)
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    local expr = vim.api.nvim_get_option_value('foldexpr', { win = win })
    vim.api.nvim_set_option_value('foldexpr', expr, { scope = 'local', win = win })
    if chat.agents then
      vim.api.nvim_win_call(win, function()
        for _, item in ipairs(chat.items) do
          if item.fold_open and item.start and vim.fn.foldclosed(item.start) ~= -1 then
            vim.cmd(string.format('silent! %dfoldopen', item.start))
          end
        end
      end)
    end
  end
end

--- Render the head and all of `chat.items` again.
function M.render_all(chat)
  local lines, per_item = vim.list_slice(chat.head and chat.head.lines or {}), {}
  for i, item in ipairs(chat.items) do
    local l = items.item_lines(item, i == 1)
    item.start, item.count = #lines + 1, #l
    per_item[i] = l
    vim.list_extend(lines, l)
  end
  local wins = followers(chat)
  set_lines(chat, 0, -1, lines)
  if vim.api.nvim_buf_is_valid(chat.buf) then
    highlight_head(chat)
  end
  for i, item in ipairs(chat.items) do
    highlight(chat, item, per_item[i])
  end
  M.refresh_folds(chat)
  M.follow(chat, wins)
end

--- Add an item at the end; returns it.
function M.append(chat, item)
  local wins = followers(chat)
  local n = #chat.items
  local lines = items.item_lines(item, n == 0)
  if n == 0 then
    local head = M.head_count(chat)
    item.start = head + 1
    set_lines(chat, head, -1, lines)
  else
    local last = chat.items[n]
    item.start = last.start + last.count
    set_lines(chat, item.start - 1, item.start - 1, lines)
  end
  item.count = #lines
  chat.items[n + 1] = item
  highlight(chat, item, lines)
  if items.foldable(item) then
    M.refresh_folds(chat)
  end
  M.follow(chat, wins)
  return item
end

--- Show `head` (`{lines, marks}`; nil or no lines: none) above the items: only the head's lines
--- change, the items move down or up.
--- @param chat pseudoclaude.Chat
--- @param head? {lines: string[], marks: table[]}
function M.set_head(chat, head)
  if head and #head.lines == 0 then
    head = nil
  end
  local before = M.head_count(chat)
  chat.head = head
  if not vim.api.nvim_buf_is_valid(chat.buf) then
    return
  end
  local wins = followers(chat)
  local lines = head and head.lines or {}
  if #chat.items == 0 then
    set_lines(chat, 0, -1, lines)
  else
    set_lines(chat, 0, before, lines)
  end
  highlight_head(chat)
  local delta = #lines - before
  if delta ~= 0 then
    for _, item in ipairs(chat.items) do
      if item.start then
        item.start = item.start + delta
      end
    end
    M.refresh_folds(chat)
  end
  M.follow(chat, wins)
end

local function index_of(chat, item)
  for i = #chat.items, 1, -1 do
    if chat.items[i] == item then
      return i
    end
  end
end

--- Render one item again (after it changed).
function M.update(chat, item)
  local i = index_of(chat, item)
  if not i or not item.start then
    return
  end
  local wins = followers(chat)
  local lines = items.item_lines(item, i == 1)
  set_lines(chat, item.start - 1, item.start - 1 + item.count, lines)
  local delta = #lines - item.count
  item.count = #lines
  highlight(chat, item, lines)
  for j = i + 1, #chat.items do
    chat.items[j].start = chat.items[j].start + delta
  end
  if items.foldable(item) or (delta ~= 0 and i < #chat.items) then
    M.refresh_folds(chat)
  end
  M.follow(chat, wins)
end

--- Stream `text` into the open assistant item: its last line takes the text up to the first
--- newline and each newline adds a line (`update` would render all its lines again: quadratic in
--- the answer's length). The lines are those `item_lines` gives for the whole text.
function M.stream(chat, item, text)
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
    M.refresh_folds(chat)
  end
  M.follow(chat, wins)
end

--- The item holding line `lnum` (binary search: items are in line order).
--- @param chat pseudoclaude.Chat
--- @param lnum integer
--- @return pseudoclaude.ChatItem?
function M.item_at(chat, lnum)
  local list = chat.items
  local lo, hi, found = 1, #list, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local item = list[mid]
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

--- 'foldexpr' of the chat windows: a tool card, a summary or the model's reasoning is one fold.
function M.foldexpr(lnum)
  local chat = state.by_buf[vim.api.nvim_get_current_buf()]
  local item = chat and M.item_at(chat, lnum)
  if not item or not items.foldable(item) or item.count < 2 then
    return '0'
  end
  return lnum == item.start and '>1' or '1'
end

--- 'foldtext' of the chat windows.
function M.foldtext()
  local chat = state.by_buf[vim.api.nvim_get_current_buf()]
  local item = chat and M.item_at(chat, vim.v.foldstart)
  if not item then
    return vim.fn.foldtext()
  end
  if vim.fn.has('nvim-0.10') == 1 then
    return items.fold_chunks(item)
  end
  return items.fold_line(item)
end

return M
