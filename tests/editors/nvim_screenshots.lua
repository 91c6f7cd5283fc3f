-- Screenshots of the Neovim plugin (editors/media/nvim-*.png), made by screenshots.py beside
-- this file: a real Neovim with its terminal UI (in a pseudo-terminal of 150x40, so the screen
-- has that size) drives the plugin against the real server and the fake model, and at each moment
-- of interest writes its screen (every cell with its colours, through nvim__inspect_cell) as an
-- HTML page, which Chromium turns into a PNG. Run as `nvim --clean -c 'luafile <this file>'`.
-- Environment: the harness's (nvim_harness.lua) plus PC_SHOTS (the folder for the HTML pages).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local h = dofile(vim.fs.joinpath(here, 'nvim_harness.lua'))
local step, take, wait_for = h.step, h.take, h.wait_for
local shots = assert(vim.env.PC_SHOTS)

vim.o.termguicolors = true
vim.o.showtabline = 1
vim.o.laststatus = 2
vim.o.cmdheight = 1

local function hex(n, fallback)
  return n and string.format('#%06x', n) or fallback
end

local function esc(s)
  return (s:gsub('&', '&amp;'):gsub('<', '&lt;'):gsub('>', '&gt;'))
end

-- The first nvim__inspect_cell switches Neovim to highlight tables that keep where each
-- attribute came from and clears them: the screen's attribute ids are stale until a full redraw.
local inspecting = false

-- The handle of the completion menu's grid, once it was found (while the menu was open).
local pum_handle

--- The grids of the completion menu and of the floating windows, drawn over the default one:
--- nvim__inspect_cell(1, ...) reads the default grid only. Each is found by its handle (probed)
--- and placed where its first row matches the composed screen (screenstring).
local function overlays()
  local regions = {}
  local pum = vim.fn.pumvisible() == 1
  if pum then
    local p = vim.fn.pum_getpos()
    regions[#regions + 1] = { row = p.row, col = p.col, rows = p.height, pum = true }
  end
  -- Floating windows (the rewind preview) only without the menu: the menu's info popup is one,
  -- and its grid does not hold what the screen shows.
  for _, win in ipairs(pum and {} or vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      local pos = vim.fn.win_screenpos(win)
      regions[#regions + 1] = { row = pos[1] - 1, col = pos[2] - 1 }
    end
  end
  local found = {}
  -- The handle of a closed menu's grid still answers, from freed memory (Neovim crashes): with
  -- the menu closed, only floating windows are probed, and the menu's handle is skipped (a
  -- menu that was never found while open must not have been shown before).
  if #regions == 0 then
    return found
  end
  for handle = 2, 3000 do
    if #found == #regions then
      break
    end
    local skip = not pum and handle == pum_handle
    local ok, first = false, nil
    if not skip then
      ok, first = pcall(vim.api.nvim__inspect_cell, handle, 0, 0)
    end
    if ok and type(first) == 'table' and first[1] then
      local cols = 1
      while cols < vim.o.columns and pcall(vim.api.nvim__inspect_cell, handle, 0, cols) do
        cols = cols + 1
      end
      local rows = 1
      while rows < vim.o.lines and pcall(vim.api.nvim__inspect_cell, handle, rows, 0) do
        rows = rows + 1
      end
      for _, reg in ipairs(regions) do
        for _, d in ipairs({ { 0, 0 }, { 0, -1 }, { -1, -1 }, { -1, 0 } }) do
          local r0, c0, match = reg.row + d[1], reg.col + d[2], true
          -- (the start of its first row: a grid may be wider than what is drawn of it)
          for c = 0, math.min(cols, vim.o.columns - c0, 6) - 1 do
            local cell = vim.api.nvim__inspect_cell(handle, 0, c)
            if r0 < 0 or c0 < 0 or vim.fn.screenstring(r0 + 1, c0 + c + 1) ~= (cell[1] == '' and '' or cell[1]) then
              match = false
              break
            end
          end
          if match and not reg.used then
            reg.used = true
            if reg.pum then
              pum_handle = handle
            end
            found[#found + 1] = { handle = handle, row = r0, col = c0, rows = rows, cols = cols }
            break
          end
        end
      end
    end
  end
  return found
end

--- The cell at screen position (r, c): from a grid drawn over the default one, or the default.
local function cell_at(over, r, c)
  for i = #over, 1, -1 do
    local o = over[i]
    if r >= o.row and r < o.row + o.rows and c >= o.col and c < o.col + o.cols then
      local ok, cell = pcall(vim.api.nvim__inspect_cell, o.handle, r - o.row, c - o.col)
      if ok and cell[1] == vim.fn.screenstring(r + 1, c + 1) then
        return cell
      end
    end
  end
  return vim.api.nvim__inspect_cell(1, r, c)
end

--- Write the screen as `<name>.html`: a grid of fixed-width cells.
local function snap(name)
  if not inspecting then
    vim.api.nvim__inspect_cell(1, 0, 0)
    inspecting = true
  end
  vim.cmd('redraw!')
  local over = overlays()
  local normal = vim.api.nvim_get_hl(0, { name = 'Normal', link = false })
  local fg0, bg0 = hex(normal.fg, '#e0e2ea'), hex(normal.bg, '#14161b')
  local rows = {}
  for r = 0, vim.o.lines - 1 do
    local cells = {}
    for c = 0, vim.o.columns - 1 do
      local cell = cell_at(over, r, c)
      local text, a = cell[1], cell[2] or {}
      local fg, bg = hex(a.foreground, fg0), hex(a.background, bg0)
      if a.reverse then
        fg, bg = bg, fg
      end
      local style = { 'color:' .. fg, 'background:' .. bg }
      if a.bold then
        style[#style + 1] = 'font-weight:bold'
      end
      if a.italic then
        style[#style + 1] = 'font-style:italic'
      end
      local lines = {}
      if a.underline or a.undercurl then
        lines[#lines + 1] = 'underline'
      end
      if a.strikethrough then
        lines[#lines + 1] = 'line-through'
      end
      if #lines > 0 then
        style[#style + 1] = 'text-decoration:' .. table.concat(lines, ' ')
      end
      if text == '' then
        cells[#cells + 1] = '' -- the second half of a wide character
      else
        cells[#cells + 1] = string.format('<span style="%s">%s</span>', table.concat(style, ';'), esc(text))
      end
    end
    rows[#rows + 1] = '<div class="r">' .. table.concat(cells) .. '</div>'
  end
  local page = table.concat({
    '<!doctype html><meta charset="utf-8"><style>',
    string.format('body{margin:0;background:%s}', bg0),
    '.s{padding:12px;display:inline-block}',
    '.r{height:19px;white-space:pre;font:15px "DejaVu Sans Mono",monospace;line-height:19px}',
    '.r span{display:inline-block;width:9px;height:19px;overflow:visible}',
    '</style><div class="s">',
    table.concat(rows, '\n'),
    '</div>',
  })
  local f = assert(io.open(vim.fs.joinpath(shots, name .. '.html'), 'w'))
  f:write(page)
  f:close()
end
_G.pc_snap = snap

local client, chat

--- The folder's current chat (a new session has a chat of its own).
local function current()
  return require('pseudoclaude.chat').get(vim.uri_from_fname(h.workspace))
end

local function chat_text(c)
  return table.concat(vim.api.nvim_buf_get_lines((c or chat).buf, 0, -1, false), '\n')
end

local function send(text)
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('A' .. text .. '\r', 'x', false)
end

step('setup', function()
  client = h.setup_plugin({
    settings = { approvals = { runCommand = 'ask', write = 'ask' }, memory = { mode = 'confirm' } },
    chat = { width = 0.55 },
  })
  vim.cmd.edit(vim.fn.fnameescape(h.workspace .. '/app.py'))
end)

step('chat', function()
  vim.cmd('PseudoClaudeChat')
  chat = wait_for('the chat', function()
    return require('pseudoclaude.chat').get(vim.uri_from_fname(h.workspace))
  end)
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  send('What is this project?')
  take('PseudoClaudeRunDone')
  h.answer({ 'Allow once' })
  send('REMEMBER-BOTH: I am a Go engineer. How do I build it? please run the tests')
  take('PseudoClaudeRunDone')
  wait_for('the proposals', function()
    return require('pseudoclaude').statusline():find('proposals', 1, true)
      and table.concat(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false), '\n'):find('memory proposed', 1, true)
  end)
  -- The first card open, the second folded; a prompt being typed.
  local win = vim.fn.win_findbuf(chat.buf)[1]
  local card
  vim.api.nvim_win_call(win, function()
    vim.fn.cursor(1, 1)
    card = vim.fn.search('^▸ read_file', 'cW')
    vim.cmd('normal! zo')
    vim.fn.cursor(1, 1)
  end)
  assert(card > 0)
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ Now fix the greeting in app.py' })
  vim.api.nvim_win_set_cursor(pw, { vim.api.nvim_buf_line_count(chat.prompt_buf), 40 })
  snap('nvim-chat')
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ ' })
end)

step('approval', function()
  h.forget('PseudoClaudeApprovalShown')
  send('FIX-GREETING please')
  take('PseudoClaudeApprovalShown')
  snap('nvim-approval')
  vim.api.nvim_feedkeys('a', 'x', false)
  take('PseudoClaudeRunDone')
end)

step('proposal', function()
  -- Accept the new note as proposed, reject the other; then a later run proposes to update it.
  local function review(label, key)
    h.answer({ label })
    h.forget('PseudoClaudeReviewed')
    h.forget('PseudoClaudeReviewing')
    vim.cmd('PseudoClaudeProposals')
    take('PseudoClaudeReviewing')
    vim.api.nvim_feedkeys(key, 'x', false)
    take('PseudoClaudeReviewed')
  end
  review('create · project · Build', 'a')
  review('User Profile', 'r')
  h.forget('PseudoClaudeRunDone')
  vim.cmd('PseudoClaudeAsk UPDATE-BUILD: use all cores')
  take('PseudoClaudeRunDone')
  wait_for('the update proposal', function()
    return require('pseudoclaude').statusline():find('1 proposal', 1, true)
  end)
  h.answer({ 'update · project · Build' })
  h.forget('PseudoClaudeReviewing')
  vim.cmd('PseudoClaudeProposals')
  take('PseudoClaudeReviewing')
  local view = require('pseudoclaude.proposals').current.view
  local lines = vim.api.nvim_buf_get_lines(view.right.buf, 0, -1, false)
  for i, l in ipairs(lines) do
    if l == 'Run `make build -j8`.' then
      vim.api.nvim_buf_set_lines(view.right.buf, i - 1, i, false, { 'Run `make build -j8` (needs Go 1.22).' })
    end
  end
  snap('nvim-proposal')
  vim.api.nvim_feedkeys('q', 'x', false)
end)

step('slash', function()
  -- `/` at the start of the prompt opens the menu of commands; Ctrl-N picks the first (its info
  -- popup opens beside the menu).
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  _G.pc_menu = nil
  vim.api.nvim_feedkeys('A/' .. vim.keycode('<C-n>')
    .. vim.keycode("<Cmd>lua _G.pc_menu = vim.fn.pumvisible(); _G.pc_snap('nvim-slash')<CR><C-e><Esc>"), 'x', false)
  assert(_G.pc_menu == 1, 'no completion menu after /')
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ ' })
end)

step('resumed', function()
  -- A new session with a failed, a denied and a canceled tool call, a large read, then a
  -- compaction: the chat reopened from the server's items shows the summarized part dimmed.
  local ws = vim.uri_from_fname(h.workspace)
  h.forget('PseudoClaudeChatLoaded')
  local before = chat
  require('pseudoclaude').new_session(ws)
  wait_for('the new session', function()
    chat = current()
    return chat ~= before and #vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false) <= 3
  end)
  local function run(prompt, answers)
    h.answer(answers or {})
    h.forget('PseudoClaudeRunDone')
    send(prompt)
    return take('PseudoClaudeRunDone')
  end
  run('MISSING-FILE: what is in notes/todo.md?')
  run('CLEAN-BUILD: remove the build folder', { 'Deny' })
  h.answer({ 'Allow once' })
  h.forget('PseudoClaudeRunDone')
  send('SLOW-CMD: run the long benchmark')
  wait_for('the slow command', function()
    return table.concat(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false), '\n'):find('running', 1, true)
  end)
  vim.wait(500)
  require('pseudoclaude').cancel(ws)
  take('PseudoClaudeRunDone')
  run('READ-BIG: read big.txt')
  run('AGAIN-BIG: read big.txt again')
  h.forget('PseudoClaudeCompactDone')
  send('/compact')
  local done = take('PseudoClaudeCompactDone')
  assert(done.error == nil and done.result.summarized, vim.inspect(done))
  -- Reopen the chat from the session's items (as after a restart).
  vim.cmd('bwipeout! ' .. chat.buf)
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd('PseudoClaudeChat')
  take('PseudoClaudeChatLoaded')
  chat = require('pseudoclaude.chat').get(ws)
  -- The end of the dimmed part in the middle of the window; the transcript window (of the
  -- earlier :PseudoClaudeAsk) closed.
  for _, w in ipairs(vim.fn.win_findbuf(vim.fn.bufnr('pseudoclaude://transcript'))) do
    vim.api.nvim_win_close(w, true)
  end
  local win = vim.fn.win_findbuf(chat.buf)[1]
  vim.api.nvim_win_call(win, function()
    vim.fn.cursor(1, 1)
    local at = vim.fn.search('^' .. vim.pesc(require('pseudoclaude.chat.items').SUMMARY_TITLE), 'cW')
    assert(at > 0, 'no summary in the reopened chat')
    vim.cmd('normal! zz')
  end)
  vim.cmd('stopinsert')
  vim.api.nvim_set_current_win(win)
  snap('nvim-resumed')
end)

step('editor context', function()
  -- A new session. In app.py the user added a docstring to greet, unsaved; with greet selected
  -- the chat asks for a friendlier greeting: the agent edits the unsaved buffer (approved in its
  -- diff), which stays modified. Then greet selected again: the prompt shows it as its context.
  local ws = vim.uri_from_fname(h.workspace)
  local before = chat
  require('pseudoclaude').new_session(ws)
  wait_for('the new session', function()
    chat = current()
    return chat ~= before and #vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false) <= 3
  end)
  local app = vim.fn.bufnr(vim.fs.joinpath(h.workspace, 'app.py'))
  local function app_window()
    local win = vim.fn.bufwinid(app)
    vim.api.nvim_set_current_win(win)
    vim.cmd('stopinsert')
    return win
  end
  local win = app_window()
  vim.cmd('silent! checktime')
  vim.api.nvim_buf_set_lines(app, 4, 4, false, { '    """Greet someone by name."""' })
  vim.wo[win].statusline = "%{expand('%:~:.')} %m%=%{v:lua.require'pseudoclaude'.statusline()}"
  vim.wo[win].number = true
  vim.api.nvim_feedkeys('4GV2j' .. vim.keycode('<Esc>'), 'x', false)
  vim.cmd("'<,'>PseudoClaudeChat")
  vim.cmd('stopinsert')
  h.forget('PseudoClaudeApprovalShown')
  h.forget('PseudoClaudeRunDone')
  send('Make the greeting friendlier')
  take('PseudoClaudeApprovalShown')
  vim.api.nvim_feedkeys('a', 'x', false)
  take('PseudoClaudeRunDone')
  assert(vim.bo[app].modified, 'app.py is not modified')
  local line = vim.api.nvim_buf_get_lines(app, 5, 6, false)[1]
  assert(line == '    return f"Hello, {name}!"', line)
  win = app_window()
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  vim.api.nvim_feedkeys('4GV2j' .. vim.keycode('<Esc>'), 'x', false)
  vim.cmd("'<,'>PseudoClaudeChat")
  -- The edit's card open: it says the change went into the unsaved buffer.
  vim.api.nvim_win_call(vim.fn.win_findbuf(chat.buf)[1], function()
    vim.fn.cursor(1, 1)
    assert(vim.fn.search('^▸ edit_file', 'cW') > 0, 'no edit_file card')
    vim.cmd('normal! zo')
    vim.fn.cursor(1, 1)
  end)
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ Now add a test for it' })
  vim.api.nvim_win_set_cursor(pw, { vim.api.nvim_buf_line_count(chat.prompt_buf), 40 })
  snap('nvim-editor-context')
  -- Back as it was: the prompt empty (its context the file alone), app.py as on disk.
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ ' })
  require('pseudoclaude.chat.window').set_chip(chat, { activeFile = 'app.py' })
  win = app_window()
  vim.cmd('edit!')
  vim.wo[win].number = false
  vim.wo[win].statusline = ''
end)

step('rewind', function()
  -- A new session: a prompt adds a test, the next renames greet (app.py, the test), removes the
  -- usage notes with a command and adds a changelog; then app.py changes by hand. The preview of
  -- a rewind to before prompt 2 shows each file and the conflict.
  local ws = vim.uri_from_fname(h.workspace)
  local before = chat
  require('pseudoclaude').new_session(ws)
  wait_for('the new session', function()
    chat = current()
    return chat ~= before and #vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false) <= 3
  end)
  h.forget('PseudoClaudeApprovalShown')
  h.forget('PseudoClaudeRunDone')
  send('ADD-TESTS: add a test for greet')
  take('PseudoClaudeApprovalShown')
  vim.api.nvim_feedkeys('s', 'x', false) -- writes allowed for the rest of the session
  take('PseudoClaudeRunDone')
  h.answer({ 'Allow once' })
  send('RENAME-GREET: rename greet to welcome, and drop the old usage notes')
  take('PseudoClaudeRunDone')
  local app = vim.fs.joinpath(h.workspace, 'app.py')
  local f = assert(io.open(app, 'ab'))
  f:write('\n# TODO: a --name option\n')
  f:close()
  local shown
  vim.api.nvim_create_autocmd('User', {
    pattern = 'PseudoClaudeRewindPreview',
    once = true,
    callback = function(ev)
      shown = ev.data
    end,
  })
  -- The editor shows app.py as it is on disk now (as focusing Neovim again would).
  vim.cmd('silent! checktime')
  h.answer({ 'Code and conversation' })
  vim.cmd('stopinsert')
  require('pseudoclaude').rewind('2', ws)
  wait_for('the rewind preview', function()
    return shown
  end)
  local text = table.concat(shown.lines, '\n')
  assert(text:find('! changed outside the agent', 1, true), text)
  snap('nvim-rewind')
  vim.api.nvim_feedkeys('q', 'x', false)
end)

step('sessions side by side', function()
  -- Two sessions at once: a new session asks for a plan (its answer streams); another new
  -- session takes its window, and the first opens beside it (`:PseudoClaudeSessions!`); the
  -- second asks for an outline: both stream, each into its own buffer.
  local ws = vim.uri_from_fname(h.workspace)
  local pc = require('pseudoclaude')
  local function new_chat()
    local before = chat
    pc.new_session(ws)
    wait_for('the new session', function()
      chat = current()
      return chat ~= before and #vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false) <= 3
    end)
    return chat
  end
  local plan = new_chat()
  send('Sketch a plan for the parser tests')
  wait_for('the plan to stream', function()
    return chat_text(plan):find('Empty input', 1, true)
  end)
  local guide = new_chat()
  assert(#vim.fn.win_findbuf(plan.buf) == 0 and plan.running, 'the plan streams on, hidden')
  h.answer({ 'Sketch a plan' })
  vim.cmd('stopinsert')
  pc.sessions(ws, { beside = true })
  wait_for('the plan beside', function()
    return #vim.fn.win_findbuf(plan.buf) == 1 and #vim.fn.win_findbuf(guide.buf) == 1
  end)
  chat = guide
  send('Outline the user guide')
  wait_for('both streaming', function()
    return plan.running and guide.running and chat_text(guide):find('First steps', 1, true)
      and chat_text(plan):find('Nested blocks', 1, true)
  end)
  vim.cmd('stopinsert')
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(guide.prompt_buf)[1])
  snap('nvim-sessions')
  wait_for('both runs to end', function()
    return not plan.running and not guide.running
  end, 60000)
  assert(chat_text(plan):find('named after the bug.', 1, true), chat_text(plan))
  assert(chat_text(guide):find('a short exercise.', 1, true), chat_text(guide))
  assert(not chat_text(plan):find('Installing', 1, true) and not chat_text(guide):find('Empty input', 1, true),
    'an answer went to the other session\'s buffer')
  require('pseudoclaude.chat').close(plan)
end)

step('worktree', function()
  -- /worktree: a session in a git worktree of its own; its run writes a file, edits the README and
  -- removes a file, in the worktree only. :PseudoClaudeWorktree lists them in its buffer.
  local ws = vim.uri_from_fname(h.workspace)
  local before = chat
  send('/worktree')
  wait_for('the worktree session', function()
    chat = current()
    return chat ~= before and chat.worktree ~= nil
  end)
  h.forget('PseudoClaudeApprovalShown')
  h.forget('PseudoClaudeRunDone')
  h.answer({ 'Allow once' })
  send('Write down the release steps and link them from the README')
  take('PseudoClaudeApprovalShown')
  vim.api.nvim_feedkeys('s', 'x', false) -- writes allowed for the rest of the session
  take('PseudoClaudeRunDone')
  local readme = io.open(vim.fs.joinpath(h.workspace, 'README.md')):read('a')
  assert(not readme:find('RELEASING', 1, true), 'the worktree session wrote into the folder')
  assert(vim.fn.filereadable(vim.fs.joinpath(h.workspace, 'RELEASING.md')) == 0, 'RELEASING.md in the folder')
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.prompt_buf)[1])
  vim.cmd('stopinsert')
  h.forget('PseudoClaudeWorktreeStatus')
  vim.cmd('PseudoClaudeWorktree')
  local shown = take('PseudoClaudeWorktreeStatus')
  assert(shown.result and #shown.result.files == 3, vim.inspect(shown))
  snap('nvim-worktree')
  vim.api.nvim_feedkeys('q', 'x', false)
end)

step('mcp', function()
  -- MCP servers: the echo server and one whose command is missing in the settings, one that is
  -- switched off, and a server of the folder's .mcp.json whose question (asked when the folder
  -- opens) was dismissed: :PseudoClaudeMcp after a run started the others.
  h.stop(client)
  vim.cmd('silent! %bwipeout!')
  local f = assert(io.open(vim.fs.joinpath(h.workspace, '.mcp.json'), 'w'))
  f:write(vim.json.encode({ mcpServers = { search = { command = 'python3', args = { 'tools/search_server.py' } } } }))
  f:close()
  local echo = vim.fs.normalize(vim.fs.joinpath(here, '..', 'fixtures', 'mcp', 'echo_server.py'))
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    if tostring(opts.prompt):find('wants to start the MCP server', 1, true) then
      return on_choice(nil)
    end
    return select(items, opts, on_choice)
  end
  client = h.setup_plugin({
    settings = {
      approvals = { runCommand = 'ask', write = 'ask', mcp = 'ask' },
      mcp = { servers = {
        echo = { command = h.python, args = { echo } },
        tracker = { command = 'tracker-mcp', args = { '--stdio' } },
        browser = { type = 'http', url = 'http://127.0.0.1:9/mcp', disabled = true },
      }, startTimeout = 30 },
    },
  })
  vim.cmd.edit(vim.fn.fnameescape(h.workspace .. '/app.py'))
  h.forget('PseudoClaudeRunDone')
  require('pseudoclaude').run('What is this project?', { transcript = false })
  take('PseudoClaudeRunDone')
  local shown
  vim.api.nvim_create_autocmd('User', {
    pattern = 'PseudoClaudeMcp',
    once = true,
    callback = function(ev)
      shown = ev.data
    end,
  })
  vim.cmd('PseudoClaudeMcp')
  wait_for('the MCP float', function()
    return shown
  end)
  local text = table.concat(shown.lines, '\n')
  assert(text:find('ready · 13 tools', 1, true) and text:find('waits for your approval', 1, true), text)
  snap('nvim-mcp')
  vim.api.nvim_feedkeys('q', 'x', false)
  vim.ui.select = select
end)

step('stop', function()
  h.stop(client)
end)

h.done('nvim screenshots')
vim.cmd('qa!')
