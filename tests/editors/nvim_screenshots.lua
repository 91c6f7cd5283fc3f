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

--- Write the screen as `<name>.html`: a grid of fixed-width cells.
local function snap(name)
  if not inspecting then
    vim.api.nvim__inspect_cell(1, 0, 0)
    inspecting = true
  end
  vim.cmd('redraw!')
  local normal = vim.api.nvim_get_hl(0, { name = 'Normal', link = false })
  local fg0, bg0 = hex(normal.fg, '#e0e2ea'), hex(normal.bg, '#14161b')
  local rows = {}
  for r = 0, vim.o.lines - 1 do
    local cells = {}
    for c = 0, vim.o.columns - 1 do
      local cell = vim.api.nvim__inspect_cell(1, r, c)
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
      if a.underline or a.undercurl then
        style[#style + 1] = 'text-decoration:underline'
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

local client, chat

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

step('stop', function()
  h.stop(client)
end)

h.done('nvim screenshots')
vim.cmd('qa!')
