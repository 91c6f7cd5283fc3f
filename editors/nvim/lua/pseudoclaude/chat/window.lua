--- The chat's windows: the chat at the right of the tab, its prompt below it; their buffers (a pair
--- per session: `pseudoclaude://chat/<folder>/<session id>`), options, winbar and keys. Switching
--- session shows the other session's pair in the same windows; `beside` opens it in a column of its
--- own, so that two sessions stream side by side.
local buffer = require('pseudoclaude.chat.buffer')
local client = require('pseudoclaude.client')
local config = require('pseudoclaude.config')
local editor = require('pseudoclaude.editor')
local fmt = require('pseudoclaude.format')
local history = require('pseudoclaude.chat.history')
local meter = require('pseudoclaude.meter')
local prompt = require('pseudoclaude.chat.prompt')
local state = require('pseudoclaude.chat.state')

local M = {}

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
    foldexpr = "v:lua.require'pseudoclaude.chat.buffer'.foldexpr(v:lnum)",
    foldtext = "v:lua.require'pseudoclaude.chat.buffer'.foldtext()",
    foldlevel = 0,
    winfixwidth = true,
    winbar = "%!v:lua.require'pseudoclaude.chat.window'.winbar()",
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
    winbar = "%!v:lua.require'pseudoclaude.chat.window'.prompt_winbar()",
  })
end

M.PROMPT_HINTS = 'Enter sends · Ctrl-C cancels · / commands · S-Tab mode · Up/Down earlier prompts · g? help'

--- The context the next prompt of a chat goes with (its chip, and the open files).
--- @param chat pseudoclaude.Chat
--- @return pseudoclaude.EditorContext?
function M.context(chat)
  return editor.context(chat.chip, editor.root(chat.workspace))
end

--- The winbar of the prompt window: the context chip (what the next prompt is sent with), then
--- the keys; short, and cut at its end when the window is narrow (its start says the most).
--- (The words of the chip are kept for a second: the winbar is drawn on every redraw, and the
--- open files are counted over all the buffers.)
function M.prompt_winbar()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local chat = state.of_buf(vim.api.nvim_win_get_buf(win))
  local label = ''
  if chat then
    local now, shown = vim.uv.now(), chat.chip_shown
    if not shown or shown.chip ~= chat.chip or now - shown.at > 1000 then
      shown = { chip = chat.chip, at = now, label = editor.label(M.context(chat)) }
      chat.chip_shown = shown
    end
    label = shown.label
  end
  if label == '' then
    return ' ' .. M.PROMPT_HINTS .. '%<'
  end
  return string.format(' %%#PseudoClaudeChatChip# Context: %s %%#PseudoClaudeChatChipHint# Ctrl-D removes · %s%%<',
    (label:gsub('%%', '%%%%')), M.PROMPT_HINTS)
end

local function redraw_winbars()
  pcall(vim.cmd, 'redrawstatus!')
end

--- Set the chip of a chat (nil: the next prompt goes without context).
--- @param chat pseudoclaude.Chat
--- @param chip? pseudoclaude.Chip
function M.set_chip(chat, chip)
  chat.chip = chip
  redraw_winbars()
  state.fire('PseudoClaudeChatContext', { workspace = chat.workspace, context = M.context(chat) })
end

--- The chip of a buffer's file (nil: not a file of the folder): the file, and with a range its
--- selection (`:'<,'>PseudoClaudeChat`).
--- @param bufnr integer
--- @param workspace string
--- @param encoding string
--- @param range? integer[] `{line1, line2}`
--- @return pseudoclaude.Chip?
function M.chip_of(bufnr, workspace, encoding, range)
  local path = editor.path_of(bufnr, editor.root(workspace))
  if not path then
    return nil
  end
  local chip = { activeFile = path }
  if range then
    chip.selection = editor.selection(bufnr, path, range[1], range[2], encoding)
  end
  return chip
end

--- Entering the prompt from a window of a file of the folder makes that file the context (a
--- selection of another file is dropped; a removed chip comes back). Entering the chat or its
--- prompt makes it the folder's current chat (its commands act on it).
local function follow_windows(chat)
  vim.api.nvim_create_autocmd('BufEnter', {
    buffer = chat.buf,
    callback = function()
      state.set_current(chat)
    end,
  })
  vim.api.nvim_create_autocmd('BufEnter', {
    buffer = chat.prompt_buf,
    callback = function()
      state.set_current(chat)
      local prev = vim.fn.win_getid(vim.fn.winnr('#'))
      if prev == 0 or not vim.api.nvim_win_is_valid(prev) then
        return
      end
      local path = editor.path_of(vim.api.nvim_win_get_buf(prev), editor.root(chat.workspace))
      if path and not (chat.chip and chat.chip.activeFile == path) then
        M.set_chip(chat, { activeFile = path })
      end
    end,
  })
end

--- The words of a chat's session for its winbar: its title (else its id), its branch.
--- @param chat pseudoclaude.Chat
--- @return string
function M.session_words(chat)
  local words
  if chat.title and vim.trim(chat.title) ~= '' then
    words = fmt.one_line(chat.title, 40)
  else
    words = chat.session_id and ('session ' .. chat.session_id) or 'new session'
  end
  if chat.worktree then
    words = words .. ' · worktree ' .. chat.worktree
  end
  return words
end

--- The permission mode of a chat's session (nil: not known yet).
--- @param chat pseudoclaude.Chat
--- @return string?
function M.mode(chat)
  return require('pseudoclaude.permissions').mode_of(chat.workspace, chat.session_id)
end

--- The winbar of a chat window: the session (title, worktree branch), its permission mode, its
--- task list's count, its state, its meter, the folder; cut at its end when the window is narrow
--- (its start says the most).
function M.winbar()
  local win = vim.g.statusline_winid or vim.api.nvim_get_current_win()
  local chat = state.by_buf[vim.api.nvim_win_get_buf(win)]
  if not chat then
    return ''
  end
  local function esc(s)
    return (s:gsub('%%', '%%%%'))
  end
  local parts = { esc(M.session_words(chat)) }
  local mode = M.mode(chat)
  if mode then
    local permissions = require('pseudoclaude.permissions')
    parts[#parts + 1] = '%#' .. permissions.group(mode) .. '#' .. esc(permissions.words(mode)) .. '%*'
  end
  local tasks = require('pseudoclaude.tasks').words(chat.tasks)
  if tasks then
    parts[#parts + 1] = tasks
  end
  if chat.waiting then
    parts[#parts + 1] = 'waiting for the session… (Ctrl-C stops)'
  elseif chat.running then
    parts[#parts + 1] = 'running… (Ctrl-C cancels)'
  end
  parts[#parts + 1] = esc(meter.session_text(chat.workspace, chat.session_id))
  parts[#parts + 1] = esc('PseudoClaude ' .. fmt.basename(chat.workspace))
  return ' ' .. table.concat(parts, ' · ') .. '%<'
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
  chat = chat or state.of_buf(vim.api.nvim_get_current_buf())
  if not chat then
    for _, c in pairs(state.chats) do
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
        pc().preview(nil, chat.workspace, chat.session_id)
      elseif name == 'undo' then
        pc().undo(chat.workspace, chat.session_id)
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
      pc().cancel(chat.workspace, chat)
    end, 'PseudoClaude chat: cancel the run' },
    { { 'C' }, in_ws('preview'), 'PseudoClaude chat: compact (with a preview)' },
    { { 'U' }, in_ws('undo'), 'PseudoClaude chat: undo the last compaction' },
    { { 'N' }, in_ws('new_session'), 'PseudoClaude chat: new session' },
    { { 'S' }, in_ws('sessions'), 'PseudoClaude chat: pick a session (its chat takes this window)' },
    { { 'gS' }, function()
      pc().sessions(chat.workspace, { beside = true })
    end, 'PseudoClaude chat: pick a session to open beside this one' },
    { { 'R' }, function()
      history.reload(chat)
    end, 'PseudoClaude chat: reload the history' },
    { { 'r' }, function()
      if not require('pseudoclaude.rewind').from_chat(chat, 'rewind', vim.fn.line('.')) then
        state.notify('PseudoClaude: r rewinds to before the prompt under the cursor (a line under ## You).')
      end
    end, 'PseudoClaude chat: rewind to before the prompt under the cursor' },
    { { 'q' }, function()
      M.close(chat)
    end, 'PseudoClaude chat: close' },
    { { 'g?' }, function()
      state.notify(table.concat(prompt.help_lines(chat), '\n'))
    end, 'PseudoClaude chat: keys' },
  }
  for _, k in ipairs(chat_keys) do
    for _, lhs in ipairs(k[1]) do
      vim.keymap.set('n', lhs, k[2], { buffer = chat.buf, nowait = true, desc = k[3] })
    end
  end
  -- F on a prompt forks from before it; elsewhere it is Vim's F (find a character backwards).
  vim.keymap.set('n', 'F', function()
    local item = buffer.item_at(chat, vim.fn.line('.'))
    if not (item and item.kind == 'user') then
      return 'F'
    end
    local lnum = vim.fn.line('.')
    vim.schedule(function()
      require('pseudoclaude.rewind').from_chat(chat, 'fork', lnum)
    end)
    return ''
  end, { buffer = chat.buf, expr = true, desc = 'PseudoClaude chat: fork from before the prompt under the cursor' })
  local pb = chat.prompt_buf
  -- Shift-Tab: the next permission mode (in the completion menu: the item before).
  local function cycle()
    require('pseudoclaude.permissions').cycle(chat)
  end
  vim.keymap.set('i', '<S-Tab>', function()
    if vim.fn.pumvisible() == 1 then
      return vim.keycode('<C-p>')
    end
    vim.schedule(cycle)
    return ''
  end, { buffer = pb, expr = true, desc = 'PseudoClaude chat: the next permission mode' })
  for _, b in ipairs({ pb, chat.buf }) do
    vim.keymap.set('n', '<S-Tab>', cycle, { buffer = b, desc = 'PseudoClaude chat: the next permission mode' })
  end
  vim.keymap.set({ 'i', 'n' }, '<C-d>', function()
    M.set_chip(chat, nil)
  end, { buffer = pb, desc = 'PseudoClaude chat: send the next prompt without the context' })
  vim.keymap.set('n', '<C-c>', function()
    pc().cancel(chat.workspace, chat)
  end, { buffer = pb, desc = 'PseudoClaude chat: cancel the run' })
  vim.keymap.set('n', 'q', function()
    M.close(chat)
  end, { buffer = pb, nowait = true, desc = 'PseudoClaude chat: close' })
end

--- The name of a session's chat buffer: `pseudoclaude://chat/<folder>/<session id>` (`new` until
--- the first run names the session).
--- @param workspace string
--- @param session_id? string
--- @return string
function M.buffer_name(workspace, session_id)
  return 'pseudoclaude://chat/' .. fmt.basename(workspace) .. '/' .. (session_id or 'new')
end

--- The buffer named exactly `name` (`bufnr()` would take a name as a pattern), or nil.
local function buf_named(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == name then
      return b
    end
  end
  return nil
end

--- Give buffer `b` the name `bufname`: a buffer left with that name (a wiped chat's) goes, and so
--- does the unlisted one renaming leaves with the old name. False when a live chat has the name.
local function name_buf(b, bufname)
  local other = buf_named(bufname)
  if other and other ~= b then
    if state.of_buf(other) then
      return false
    end
    pcall(vim.api.nvim_buf_delete, other, { force = true })
  end
  local old = vim.api.nvim_buf_get_name(b)
  vim.api.nvim_buf_set_name(b, bufname)
  local left = old ~= '' and buf_named(old) or nil
  if left and left ~= b and not state.of_buf(left) then
    pcall(vim.api.nvim_buf_delete, left, { force = true })
  end
  return true
end

--- The chat takes session `session_id` (a new conversation's first run named it): its buffers
--- are named after it.
--- @param chat pseudoclaude.Chat
--- @param session_id string
function M.set_session(chat, session_id)
  if chat.session_id == session_id then
    return
  end
  chat.session_id = session_id
  local name = M.buffer_name(chat.workspace, session_id)
  if vim.api.nvim_buf_is_valid(chat.buf) and name_buf(chat.buf, name) and vim.api.nvim_buf_is_valid(chat.prompt_buf) then
    name_buf(chat.prompt_buf, name .. '/prompt')
  end
  pcall(vim.cmd, 'redrawstatus!')
end

--- A new chat (its buffers, not shown) for session `session_id` of a folder (nil: a new
--- conversation, named by its first run).
--- @param workspace string
--- @param session_id? string
--- @return pseudoclaude.Chat
function M.create(workspace, session_id)
  local function new_buf(bufname)
    local b = vim.api.nvim_create_buf(true, true)
    if not name_buf(b, bufname) then
      name_buf(b, bufname .. '#' .. b)
    end
    vim.bo[b].bufhidden = 'hide'
    vim.bo[b].swapfile = false
    return b
  end
  local name = M.buffer_name(workspace, session_id)
  local buf = new_buf(name)
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
  local pb = new_buf(vim.api.nvim_buf_get_name(buf) .. '/prompt')
  vim.bo[pb].buftype = 'prompt'
  vim.bo[pb].filetype = 'pseudoclaude_prompt'
  --- @type pseudoclaude.Chat
  local chat = { workspace = workspace, buf = buf, prompt_buf = pb, items = {}, running = false, streamed = 0,
    prompts = {}, loaded = false, chip = {}, session_id = session_id }
  prompt.setup(chat)
  follow_windows(chat)
  local key = state.key(workspace)
  state.by_buf[buf] = chat
  if not state.get(workspace) then
    state.chats[key] = chat
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      state.by_buf[buf] = nil
      if state.chats[key] == chat then
        state.chats[key] = nil
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

--- The windows of the current tab that show another chat of `chat`'s folder (its chat and prompt
--- windows, paired): where switching session shows `chat`.
local function windows_of_folder(chat)
  local tab = vim.api.nvim_get_current_tabpage()
  local current = state.of_buf(vim.api.nvim_get_current_buf())
  local best
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    local other = state.by_buf[vim.api.nvim_win_get_buf(win)]
    if other and other ~= chat and state.key(other.workspace) == state.key(chat.workspace) then
      local _, pw = windows(other)
      local pair = { chat = win, prompt = pw, other = other }
      if other == current or not best then
        best = pair
      end
    end
  end
  if not best and current and current ~= chat and state.key(current.workspace) == state.key(chat.workspace) then
    -- In the prompt of another chat whose chat window was closed: that prompt window.
    best = { prompt = vim.api.nvim_get_current_win(), other = current }
  end
  return best
end

--- Show `chat` in the windows `pair` (another chat's): its buffers take their place.
local function take_windows(chat, pair)
  if pair.chat and vim.api.nvim_win_is_valid(pair.chat) then
    vim.api.nvim_win_set_buf(pair.chat, chat.buf)
  end
  if pair.prompt and vim.api.nvim_win_is_valid(pair.prompt) then
    vim.api.nvim_win_set_buf(pair.prompt, chat.prompt_buf)
  end
end

--- Show the chat of `workspace` (at the right of the tab, its prompt below it) and enter the
--- prompt: `opts.chat`, else the chat of session `opts.session` (a new one, loading its history),
--- else the folder's current chat. Another chat of the folder shown in this tab gives its windows
--- (switching session), unless `opts.beside`: then it opens in a column of its own, beside it. A
--- new chat (or one whose buffer was wiped) loads the session's history first. `opts.chip`: the
--- context of the next prompt (a file, a selection).
--- @param workspace string
--- @param opts? {enter?: boolean, done?: fun(chat: pseudoclaude.Chat), chip?: pseudoclaude.Chip, chat?: pseudoclaude.Chat, session?: string, beside?: boolean, title?: string, worktree?: string|false}
--- @return pseudoclaude.Chat
function M.show(workspace, opts)
  opts = opts or {}
  local chat = opts.chat or (opts.session and state.get(workspace, opts.session)) or (not opts.session and state.get(workspace))
    or M.create(workspace, opts.session)
  state.set_current(chat)
  if opts.title then
    chat.title = opts.title
  end
  if opts.worktree ~= nil then
    chat.worktree = opts.worktree or nil
  end
  if opts.chip ~= nil then
    M.set_chip(chat, opts.chip)
  end
  local cw, pw = windows(chat)
  if not cw and not pw and not opts.beside then
    local pair = windows_of_folder(chat)
    if pair then
      take_windows(chat, pair)
      cw, pw = windows(chat)
    end
  end
  if not cw and pw then
    -- Only the prompt is left: both come back together, the prompt below the chat.
    if not pcall(vim.api.nvim_win_close, pw, true) then -- the last window: it shows the chat
      vim.api.nvim_win_set_buf(pw, chat.buf)
      cw = pw
    end
    pw = nil
  end
  if not cw then
    -- A column at the right of the tab (beside another chat's column, when one is shown).
    local beside = opts.beside and windows_of_folder(chat)
    vim.cmd('botright vertical sbuffer ' .. chat.buf)
    cw = vim.api.nvim_get_current_win()
    if beside and beside.chat and vim.api.nvim_win_is_valid(beside.chat) then
      local w = math.max(30, math.min(width(), math.floor((vim.o.columns - 24) / 2)))
      vim.api.nvim_win_set_width(beside.chat, w)
      vim.api.nvim_win_set_width(cw, w)
    else
      vim.api.nvim_win_set_width(cw, width())
    end
  end
  setup_chat_window(cw)
  if not pw then
    vim.api.nvim_set_current_win(cw)
    vim.cmd('belowright sbuffer ' .. chat.prompt_buf)
    pw = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_win_set_height(pw, config.options.chat.prompt_height)
  setup_prompt_window(pw)
  buffer.refresh_folds(chat)
  local function ready()
    buffer.follow(chat, { cw })
    if opts.enter ~= false then
      focus_prompt(chat)
    end
    if opts.done then
      opts.done(chat)
    end
  end
  local function loaded(err, other)
    if err then
      state.notify('PseudoClaude: Chat failed: ' .. client.error_message(err), vim.log.levels.ERROR)
    end
    if other then
      -- The folder's current session has a chat already: that one, in these windows.
      local gone = chat
      take_windows(other, { chat = cw, prompt = pw })
      state.set_current(other)
      chat = other
      setup_chat_window(cw)
      setup_prompt_window(pw)
      pcall(vim.api.nvim_buf_delete, gone.buf, { force = true })
      if not chat.running then
        chat.prompts = {}
        return history.reload(chat, function(e2)
          if e2 then
            state.notify('PseudoClaude: Chat failed: ' .. client.error_message(e2), vim.log.levels.ERROR)
          end
          ready()
        end)
      end
    end
    ready()
  end
  if not chat.loaded and not chat.running then
    history.reload(chat, loaded)
  else
    ready()
  end
  return chat
end

--- `:PseudoClaudeChat`: open the chat of the current buffer's folder, the buffer's file (and with
--- `opts.range`, its selection) as the context of the next prompt.
--- @param opts? {range?: integer[]}
function M.open(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local current = state.of_buf(bufnr)
  if current then
    return M.show(current.workspace)
  end
  client.ensure(function(c, err)
    if not c then
      return client.fail('Chat', err)
    end
    local ws = assert(client.workspace(c, bufnr))
    M.show(ws, { chip = M.chip_of(bufnr, ws, c.offset_encoding or 'utf-16', opts.range) })
  end)
end

return M
