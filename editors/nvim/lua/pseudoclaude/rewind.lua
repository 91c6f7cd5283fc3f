--- `:PseudoClaudeRewind` and `:PseudoClaudeFork`: take the code, the conversation or both back to
--- before a prompt, after a preview, or continue in a new session from before a prompt.
---
--- The flow of a rewind: pick a prompt (`pseudoclaude/sessions/turns`), pick what to take back,
--- then a float previews it (`pseudoclaude/rewind/preview`: the server's line, one line per file
--- with what happens to it, the files changed outside the agent marked). In the float `<CR>`
--- rewinds (`pseudoclaude/rewind`), `F` also overwrites the files changed outside the agent,
--- `d` or `<Tab>` shows a file's diff in a tab (`pseudoclaude/rewind/file`), `q` and `<Esc>`
--- cancel: nothing changes until `<CR>` or `F`.
local util = require('pseudoclaude.util')
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')

local M = {}

local notify, fire = util.notify, util.fire

--- What a rewind takes back, in the order the picker offers it.
M.MODES = {
  { mode = protocol.rewind_modes.both, label = 'Code and conversation' },
  { mode = protocol.rewind_modes.conversation, label = 'Conversation only' },
  { mode = protocol.rewind_modes.code, label = 'Code only' },
}

--- What a code rewind does to a file, in words.
M.ACTIONS = { restore = 'restored', delete = 'deleted', create = 'recreated' }

--- How the preview marks a file changed outside the agent since the last checkpoint.
M.CONFLICT = 'changed outside the agent'

--- The width the preview wraps the server's line at.
M.WIDTH = 72

--- The preview's highlight groups (`default`: a colorscheme may set them).
M.HIGHLIGHTS = {
  PseudoClaudeRewindTitle = 'Title',
  PseudoClaudeRewindRestore = 'DiagnosticInfo',
  PseudoClaudeRewindDelete = 'DiagnosticError',
  PseudoClaudeRewindCreate = 'DiagnosticOk',
  PseudoClaudeRewindConflict = 'DiagnosticWarn',
  PseudoClaudeRewindHelp = 'Comment',
}

local ACTION_GROUPS = {
  restore = 'PseudoClaudeRewindRestore',
  delete = 'PseudoClaudeRewindDelete',
  create = 'PseudoClaudeRewindCreate',
}

M.NS = vim.api.nvim_create_namespace('pseudoclaude_rewind')

--- The preview on screen: `{workspace, turn, mode, preview, buf, win, files, diff?, closed}`.
M.current = nil

util.link_highlights('rewind', M.HIGHLIGHTS)

-- Pure parts ------------------------------------------------------------------------------------

--- The label of a mode (`both` → `Code and conversation`).
--- @param mode string
--- @return string
function M.mode_label(mode)
  for _, m in ipairs(M.MODES) do
    if m.mode == mode then
      return m.label
    end
  end
  return mode
end

--- The arguments of `:PseudoClaudeRewind` and `/rewind`: a prompt's number and what to take back,
--- each optional, in any order (`2`, `2 code`, `conversation 3`). `nil, why` for anything else.
--- @param arg? string
--- @return {turn?: integer, mode?: string}?, string?
function M.parse(arg)
  local out = {}
  for word in tostring(arg or ''):gmatch('%S+') do
    local w = word:lower()
    if w:match('^%d+$') and not out.turn and tonumber(w) > 0 then
      out.turn = tonumber(w)
    elseif protocol.rewind_modes[w] and not out.mode then
      out.mode = w
    else
      return nil, string.format("%s is neither a prompt's number nor code, conversation or both", word)
    end
  end
  return out
end

--- One line of the prompt picker: `2. Fix the parser · 3 files changed · 5 min ago`.
--- @param t pseudoclaude.TurnSummary
--- @param now? integer
--- @return string
function M.turn_label(t, now)
  local n = tonumber(t.filesChanged) or 0
  local bits = { n == 0 and 'no files changed' or (fmt.plural(n, 'file') .. ' changed') }
  if type(t.ts) == 'number' then
    bits[#bits + 1] = fmt.age(math.floor(t.ts), now)
  end
  return string.format('%d. %s · %s', t.turn, fmt.one_line(t.prompt, 60), table.concat(bits, ' · '))
end

--- The files a rewind in `mode` puts back, and how many of them changed outside the agent.
--- @param p pseudoclaude.RewindPreviewResult
--- @param mode string
--- @return integer files, integer conflicts
function M.counts(p, mode)
  if mode == protocol.rewind_modes.conversation or type(p.files) ~= 'table' then
    return 0, 0
  end
  local conflicts = 0
  for _, f in ipairs(p.files) do
    conflicts = conflicts + (f.conflict and 1 or 0)
  end
  return #p.files, conflicts
end

--- The keys of a preview, as its last line says them.
--- @param p pseudoclaude.RewindPreviewResult
--- @param mode string
--- @return string
function M.help(p, mode)
  local files, conflicts = M.counts(p, mode)
  local keys = { '<CR> rewind' }
  if conflicts > 0 then
    keys[#keys + 1] = 'F rewind and overwrite the changes'
  end
  if files > 0 then
    keys[#keys + 1] = 'd diff'
  end
  keys[#keys + 1] = 'q cancel'
  return table.concat(keys, ' · ')
end

local function pad(s, width)
  return s .. string.rep(' ', math.max(0, width - vim.fn.strdisplaywidth(s)))
end

--- What the preview float shows: the prompt, the server's line (wrapped), one line per file
--- (`restored`, `deleted`, `recreated`; `! changed outside the agent` after a conflict), the
--- keys. Returns the lines, the file of each file line (by line number) and the highlights
--- (`{row, col, end_col, group}`, 0-based rows, byte columns).
--- @param p pseudoclaude.RewindPreviewResult
--- @param mode string
--- @param width? integer
--- @return string[], table<integer, pseudoclaude.RewindFile>, table[]
function M.preview_lines(p, mode, width)
  width = width or M.WIDTH
  local lines, files, marks = {}, {}, {}
  local function add(line, group)
    lines[#lines + 1] = line
    if group and line ~= '' then
      marks[#marks + 1] = { #lines - 1, 0, #line, group }
    end
  end
  -- The prompt, on up to two lines (cut with `…` beyond).
  local head = string.format('Before prompt %d: ', p.turn)
  local room = math.max(10, width - #head)
  local said = fmt.wrap(p.prompt or '', room)
  if #said > 2 then
    said = { said[1], fmt.one_line(said[2] .. ' ' .. said[3], room) }
    if not vim.endswith(said[2], '…') then
      said[2] = fmt.one_line(said[2] .. ' …', room)
    end
  end
  for i, l in ipairs(said) do
    add((i == 1 and head or string.rep(' ', #head)) .. l, 'PseudoClaudeRewindTitle')
  end
  add('')
  for _, l in ipairs(fmt.wrap(p.message or '', width)) do
    add(l)
  end
  local code = mode ~= protocol.rewind_modes.conversation
  local list = code and (p.files or {}) or {}
  if #list > 0 then
    add('')
    local word_w, path_w = 0, 0
    for _, f in ipairs(list) do
      word_w = math.max(word_w, vim.fn.strdisplaywidth(M.ACTIONS[f.action] or f.action))
      path_w = math.max(path_w, vim.fn.strdisplaywidth(f.path))
    end
    path_w = math.min(path_w, 48)
    for _, f in ipairs(list) do
      local word = M.ACTIONS[f.action] or tostring(f.action)
      local line = '  ' .. pad(word, word_w) .. '  '
      local path_at = #line
      line = line .. (f.conflict and pad(f.path, path_w) or f.path)
      local note_at = #line
      if f.conflict then
        line = line .. '  ! ' .. M.CONFLICT
      end
      add(line)
      files[#lines] = f
      local row = #lines - 1
      marks[#marks + 1] = { row, 2, 2 + #word, ACTION_GROUPS[f.action] or 'PseudoClaudeRewindRestore' }
      if f.conflict then
        marks[#marks + 1] = { row, note_at + 2, #line, 'PseudoClaudeRewindConflict' }
      end
      marks[#marks + 1] = { row, path_at, path_at + #f.path, 'Directory' }
    end
  end
  add('')
  add(M.help(p, mode), 'PseudoClaudeRewindHelp')
  return lines, files, marks
end

--- The turn of a chat's prompt: its own (the server's), else, for a prompt sent since the chat
--- loaded, the one with its text counted from the end (the n-th last prompt of the chat with that
--- text is the n-th last turn with it); nil for a prompt a rewind took back.
--- @param items pseudoclaude.ChatItem[]
--- @param item pseudoclaude.ChatItem
--- @param turns pseudoclaude.TurnSummary[]
--- @return integer?
function M.turn_of(items, item, turns)
  if type(item.turn) == 'number' then
    return item.turn
  end
  if item.inContext == false then
    return nil
  end
  local later, seen = 0, false
  for _, it in ipairs(items) do
    if it == item then
      seen = true
    elseif seen and it.kind == 'user' and it.text == item.text and it.inContext ~= false then
      later = later + 1
    end
  end
  local same = {}
  for _, t in ipairs(turns or {}) do
    if t.prompt == item.text then
      same[#same + 1] = t.turn
    end
  end
  return same[#same - later]
end

-- The flow --------------------------------------------------------------------------------------


--- Pick a prompt of the session (newest first); `cb(turn)` unless dismissed.
--- @param workspace string
--- @param prompt string
--- @param cb fun(turn: integer)
--- @param session? string the session (default: the folder's current one)
function M.pick_turn(workspace, prompt, cb, session)
  local params = { workspace = workspace, sessionId = session }
  client.request_or_fail(protocol.requests.sessions_turns, params, 'Rewind', function(r)
    local turns = type(r) == 'table' and r.turns or {}
    if #turns == 0 then
      return notify('PseudoClaude: no prompts in this session yet.')
    end
    local newest_first = {}
    for i = #turns, 1, -1 do
      newest_first[#newest_first + 1] = turns[i]
    end
    local now = os.time()
    vim.ui.select(newest_first, {
      prompt = prompt,
      kind = 'pseudoclaude_turn',
      format_item = function(t)
        return M.turn_label(t, now)
      end,
    }, function(t)
      if t then
        cb(t.turn)
      end
    end)
  end)
end

--- Pick what to take back to before prompt `turn`; `cb(mode)` unless dismissed.
function M.pick_mode(turn, cb)
  vim.ui.select(M.MODES, {
    prompt = string.format('Rewind what to before prompt %d?', turn),
    kind = 'pseudoclaude_rewind_mode',
    format_item = function(m)
      return m.label
    end,
  }, function(m)
    if m then
      cb(m.mode)
    end
  end)
end

--- `:PseudoClaudeRewind [turn] [mode]` and `/rewind`: what is not given is picked, then the preview.
--- @param arg? string
--- @param workspace? string
--- @param session? string the session (a chat's; default: the folder's current one)
function M.start(arg, workspace, session)
  local parsed, why = M.parse(arg)
  if not parsed then
    return notify('PseudoClaude: ' .. why .. '.', vim.log.levels.WARN)
  end
  client.with_workspace(workspace, 'Rewind', function(ws)
    local function with_turn(turn)
      if parsed.mode then
        return M.preview(turn, parsed.mode, ws, session)
      end
      M.pick_mode(turn, function(mode)
        M.preview(turn, mode, ws, session)
      end)
    end
    if parsed.turn then
      return with_turn(parsed.turn)
    end
    M.pick_turn(ws, 'Rewind to before which prompt?', with_turn, session)
  end)
end

--- Close the preview (and its diff); nothing changes.
--- @param state? table (default: the one on screen)
function M.close(state)
  state = state or M.current
  if not state or state.closed then
    return
  end
  state.closed = true
  if M.current == state then
    M.current = nil
  end
  if state.diff and not state.diff.closed then
    state.diff:close()
  end
  if vim.api.nvim_win_is_valid(state.win) then
    pcall(vim.api.nvim_win_close, state.win, true)
  end
  if vim.api.nvim_buf_is_valid(state.buf) then
    pcall(vim.api.nvim_buf_delete, state.buf, { force = true })
  end
end

local function cancel(state)
  if state.closed then
    return
  end
  M.close(state)
  fire('PseudoClaudeRewound', { workspace = state.workspace, turn = state.turn, mode = state.mode, cancelled = true })
end

local function given(v)
  return v ~= nil and v ~= vim.NIL
end

--- The buffers of the restored files that exist and have no unsaved changes read them again.
local function reload_buffers(workspace, paths)
  local root = vim.uri_to_fname(workspace)
  local wanted = {}
  for _, p in ipairs(paths or {}) do
    wanted[vim.fs.normalize(vim.fs.joinpath(root, p))] = true
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= '' and vim.api.nvim_buf_is_loaded(b) and wanted[vim.fs.normalize(name)]
      and not vim.bo[b].modified and vim.uv.fs_stat(name) then
      pcall(vim.cmd.checktime, b)
    end
  end
end

local function after_rewind(state, r, force)
  local ws, mode = state.workspace, state.mode
  local conflicts = type(r.conflicts) == 'table' and #r.conflicts or 0
  notify(require('pseudoclaude.context').message(r, 'rewound.'),
    conflicts > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
  require('pseudoclaude.transcript').note(r.message)
  if mode ~= protocol.rewind_modes.conversation then
    reload_buffers(ws, r.restoredFiles)
  end
  local conversation = mode ~= protocol.rewind_modes.code
  require('pseudoclaude.chat').rewound(ws, r.message, conversation, conversation and state.preview.prompt or nil,
    state.session)
  require('pseudoclaude').refresh_context(ws)
  fire('PseudoClaudeRewound', { workspace = ws, turn = state.turn, mode = mode, force = force, result = r })
end

local function apply(state, force)
  if state.closed or state.busy then
    return
  end
  state.busy = true
  local params = { workspace = state.workspace, turn = state.turn, mode = state.mode, force = force or nil,
    sessionId = state.session }
  client.request(protocol.requests.rewind, params, function(err, r)
    M.close(state)
    if err then
      client.fail('Rewind', err)
      return fire('PseudoClaudeRewound',
        { workspace = state.workspace, turn = state.turn, mode = state.mode, error = err })
    end
    after_rewind(state, r, force == true)
  end)
end

--- The file line under the cursor of the preview (the only file when there is one).
local function file_under_cursor(state)
  local f = state.files[vim.api.nvim_win_get_cursor(state.win)[1]]
  if f then
    return f
  end
  local only
  for _, x in pairs(state.files) do
    if only then
      return nil
    end
    only = x
  end
  return only
end

--- Show the diff of a file of the preview in a tab: the file now (left) and after the rewind.
--- @param state table
--- @param file pseudoclaude.RewindFile
function M.open_diff(state, file)
  local params = { workspace = state.workspace, turn = state.turn, path = file.path, sessionId = state.session }
  client.request(protocol.requests.rewind_file, params, function(err, r)
    if err then
      return client.fail('Rewind diff', err)
    end
    if state.closed then
      return
    end
    if r.binary then
      notify(string.format('PseudoClaude: %s is not a text file: no diff to show.', file.path))
      return fire('PseudoClaudeRewindDiff', { path = file.path, result = r })
    end
    local now, after = given(r.current) and r.current or nil, given(r.restored) and r.restored or nil
    local diff = require('pseudoclaude.diff')
    local ft = diff.filetype(file.path, diff.lines(now or after or ''))
    if state.diff and not state.diff.closed then
      state.diff:close()
    end
    local view
    view = diff.open({
      left = {
        name = 'pseudoclaude://rewind/' .. file.path .. '.now',
        text = now or '',
        filetype = ft,
        title = 'PseudoClaude rewind · now',
        detail = file.path .. (now and '' or ' (does not exist)'),
      },
      right = {
        name = 'pseudoclaude://rewind/' .. file.path .. '.rewound',
        text = after or '',
        filetype = ft,
        title = 'after the rewind',
        detail = (M.ACTIONS[file.action] or file.action) .. (file.conflict and (' · ' .. M.CONFLICT) or ''),
      },
      hint = 'q back to the preview',
      keys = {
        { 'q', function()
          view:close()
        end, 'PseudoClaude: back to the rewind preview' },
      },
    })
    state.diff = view
    fire('PseudoClaudeRewindDiff', { path = file.path, result = r, view = view })
  end)
end

--- Show a preview in a float, with its keys.
--- @param p pseudoclaude.RewindPreviewResult
--- @param mode string
--- @param workspace string
--- @param session? string the session (default: the folder's current one)
--- @return table state
function M.show(p, mode, workspace, session)
  M.close()
  local width = math.max(20, math.min(M.WIDTH, vim.o.columns - 8))
  local lines, files, marks = M.preview_lines(p, mode, width)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  for _, m in ipairs(marks) do
    pcall(vim.api.nvim_buf_set_extmark, buf, M.NS, m[1], m[2], { end_col = m[3], hl_group = m[4] })
  end
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'pseudoclaude_rewind'
  local title = string.format(' PseudoClaude rewind · %s · %s ', M.mode_label(mode):lower(), fmt.basename(workspace))
  local w = vim.fn.strdisplaywidth(title) + 2
  for _, l in ipairs(lines) do
    w = math.max(w, vim.fn.strdisplaywidth(l))
  end
  w = math.max(1, math.min(w + 2, vim.o.columns - 4))
  local h = math.max(1, math.min(#lines, vim.o.lines - 4))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = w,
    height = h,
    row = math.max(0, math.floor((vim.o.lines - h) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - w) / 2)),
    style = 'minimal',
    border = 'rounded',
    title = title,
    title_pos = 'center',
  })
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  local state = { workspace = workspace, turn = p.turn, mode = mode, preview = p, buf = buf, win = win,
    files = files, closed = false, lines = lines, session = session }
  local first
  for lnum in pairs(files) do
    first = (first == nil or lnum < first) and lnum or first
  end
  if first then
    vim.api.nvim_win_set_cursor(win, { first, 0 })
  end
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map('<CR>', function()
    apply(state, false)
  end, 'PseudoClaude: rewind')
  if select(2, M.counts(p, mode)) > 0 then
    map('F', function()
      apply(state, true)
    end, 'PseudoClaude: rewind, overwriting the files changed outside the agent')
  end
  for _, lhs in ipairs({ 'd', '<Tab>' }) do
    map(lhs, function()
      local f = file_under_cursor(state)
      if f then
        M.open_diff(state, f)
      elseif next(files) then
        notify('PseudoClaude: put the cursor on a file to see its diff.')
      end
    end, 'PseudoClaude: the diff of the file under the cursor')
  end
  for _, lhs in ipairs({ 'q', '<Esc>' }) do
    map(lhs, function()
      cancel(state)
    end, 'PseudoClaude: cancel the rewind')
  end
  -- Leaving the float cancels, except for its own diff tab (closing that comes back here).
  vim.api.nvim_create_autocmd('WinLeave', {
    buffer = buf,
    callback = vim.schedule_wrap(function()
      if state.closed or (state.diff and not state.diff.closed) or state.busy then
        return
      end
      if vim.api.nvim_get_current_win() ~= state.win then
        cancel(state)
      end
    end),
  })
  M.current = state
  fire('PseudoClaudeRewindPreview',
    { workspace = workspace, mode = mode, result = p, lines = lines, buf = buf, win = win })
  return state
end

--- Preview a rewind to before prompt `turn` (nothing changes), in a float.
--- @param turn integer
--- @param mode string
--- @param workspace string
function M.preview(turn, mode, workspace, session)
  local params = { workspace = workspace, turn = turn, mode = mode, sessionId = session }
  client.request_or_fail(protocol.requests.rewind_preview, params, 'Rewind', function(p)
    M.show(p, mode, params.workspace, session)
  end, function(err)
    if err then
      fire('PseudoClaudeRewindPreview', { workspace = params.workspace, mode = mode, error = err })
    end
  end)
end

--- `:PseudoClaudeFork [turn]`: a new session with the conversation before prompt `turn` (all of it
--- without), which becomes the current one; the source stays as it is.
--- @param turn? integer
--- @param workspace? string
--- @param opts? {prompt?: string, session?: string} the prompt forked off (the chat's prompt line gets
--- it back); the session forked (default: the folder's current one)
function M.fork(turn, workspace, opts)
  opts = opts or {}
  client.with_workspace(workspace, 'Fork', function(ws)
    local params = { workspace = ws, turn = turn, sessionId = opts.session }
    client.request_or_fail(protocol.requests.sessions_fork, params, 'Fork', function(r)
      local what = turn and string.format('the conversation before prompt %d', turn) or 'the whole conversation'
      local message = string.format('PseudoClaude: forked %s into session %s, now the current one.', what, r.sessionId)
      require('pseudoclaude').resume(r.sessionId, ws, {
        message = message,
        done = function(err, resumed)
          if not err and opts.prompt then
            require('pseudoclaude.chat').offer_prompt(ws, opts.prompt)
          end
          fire('PseudoClaudeForked', { workspace = ws, turn = turn, result = r, resumed = resumed, error = err })
        end,
      })
    end, function(err)
      if err then
        fire('PseudoClaudeForked', { workspace = ws, turn = turn, error = err })
      end
    end)
  end)
end

--- The chat's `r` (rewind) and `F` (fork) on a prompt: the prompt under the cursor, its turn
--- asked from the server when the chat does not know it. False when the line is no prompt.
--- @param chat pseudoclaude.Chat
--- @param what 'rewind'|'fork'
--- @param lnum integer
--- @return boolean
function M.from_chat(chat, what, lnum)
  local item = require('pseudoclaude.chat.buffer').item_at(chat, lnum)
  if not item or item.kind ~= 'user' then
    return false
  end
  local function go(turn)
    if what == 'fork' then
      return M.fork(turn, chat.workspace, { prompt = item.text, session = chat.session_id })
    end
    M.pick_mode(turn, function(mode)
      M.preview(turn, mode, chat.workspace, chat.session_id)
    end)
  end
  if type(item.turn) == 'number' then
    go(item.turn)
    return true
  end
  if item.inContext == false then
    notify('PseudoClaude: a rewind took this prompt back: it is no longer one of the session\'s prompts.',
      vim.log.levels.WARN)
    return true
  end
  local params = { workspace = chat.workspace, sessionId = chat.session_id }
  client.request_or_fail(protocol.requests.sessions_turns, params, 'Rewind', function(r)
    local turn = M.turn_of(chat.items, item, type(r) == 'table' and r.turns or {})
    if not turn then
      return notify('PseudoClaude: this prompt is not one of the session\'s own prompts (a forked session counts'
        .. ' only the prompts sent since the fork), so there is no rewind to it.', vim.log.levels.WARN)
    end
    item.turn = turn
    go(turn)
  end)
  return true
end

return M
