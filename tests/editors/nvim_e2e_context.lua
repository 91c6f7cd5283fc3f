-- The editor context of a prompt, in a real Neovim against the real server: the chat opened from
-- a visual selection (`:'<,'>PseudoClaudeChat`) shows the file and the selection as a chip above
-- the prompt; a prompt sent from there carries them (the model reads an "Editor context" block)
-- and the chat's echo shows them; Ctrl-D removes the chip and the next prompt goes without; the
-- server's code actions (Explain, Fix with the line's diagnostics, Ask about selection) open the
-- chat with the selection; `:'<,'>PseudoClaudeAsk` sends the selection too; while a run is in
-- progress a code action says so and sends nothing.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_context.lua
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take = h.report, h.step, h.wait_for, h.take
local contains = h.contains
local workspace = h.workspace

local client, chat, app_buf
local APP = workspace .. '/app.py'

local function chat_text()
  return table.concat(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false), '\n')
end

local function prompt_winbar()
  local pw = assert(vim.fn.win_findbuf(chat.prompt_buf)[1], 'the prompt is not shown')
  return vim.api.nvim_eval_statusline(vim.wo[pw].winbar, { winid = pw, maxwidth = 400, use_winbar = true }).str
end

--- Type `text` into the prompt and press Enter, as a user would.
local function send(text)
  local pw = assert(vim.fn.win_findbuf(chat.prompt_buf)[1], 'the prompt is not shown')
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('A' .. text .. '\r', 'x', false)
end

local function app_window()
  local win = vim.fn.bufwinid(app_buf)
  assert(win ~= -1, 'app.py is not shown')
  vim.api.nvim_set_current_win(win)
  vim.cmd('stopinsert')
  return win
end

--- The code action titled `title` on the current selection / cursor, applied.
local function code_action(title)
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title == title
    end,
  })
end

step('setup', function()
  client = h.setup_plugin()
  vim.cmd.edit(vim.fn.fnameescape(APP))
  app_buf = vim.api.nvim_get_current_buf()
  wait_for('app.py to be attached', function()
    return vim.lsp.get_clients({ name = 'pseudoclaude', bufnr = app_buf })[1]
  end)
  assert(client.server_capabilities.codeActionProvider, 'the server offers no code actions')
end)

step("the chat opened from a visual selection shows it as the chip; the prompt carries it", function()
  -- Lines 4-5 (def greet ... return) selected linewise, then :'<,'>PseudoClaudeChat.
  vim.api.nvim_feedkeys('4GVj' .. vim.keycode('<Esc>'), 'x', false)
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd("'<,'>PseudoClaudeChat")
  take('PseudoClaudeChatLoaded')
  chat = assert(require('pseudoclaude.chat').get(vim.uri_from_fname(workspace)), 'no chat')
  local bar = prompt_winbar()
  report.chip = bar
  contains(bar, 'Context: app.py:4-5 · 1 open file', 'the chip')
  contains(bar, 'Ctrl-D removes', 'the chip hint')
  local sel = chat.chip.selection
  assert(sel.path == 'app.py' and sel.text == 'def greet(name: str) -> str:\n    return f"hello {name}"\n', vim.inspect(sel))
  assert(vim.deep_equal(sel.range, { start = { line = 3, character = 0 }, ['end'] = { line = 5, character = 0 } }),
    vim.inspect(sel.range))
  vim.cmd('stopinsert')
  h.forget('PseudoClaudeRunDone')
  send('SEL-CONTEXT what does this do?')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  contains(chat_text(), '## You\nContext: app.py:4-5 · 1 open file\nSEL-CONTEXT what does this do?', 'the echo')
  -- The selection went once: the file stays the context.
  local after = prompt_winbar()
  contains(after, 'Context: app.py · 1 open file', 'the chip after sending')
  assert(not after:find('app.py:4', 1, true), after)
end)

step('Ctrl-D removes the chip: the next prompt goes without context', function()
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('A' .. vim.keycode('<C-d>') .. vim.keycode('<Esc>'), 'x', false)
  local bar = prompt_winbar()
  assert(not bar:find('Context:', 1, true), bar)
  assert(chat.chip == nil, vim.inspect(chat.chip))
  h.forget('PseudoClaudeRunDone')
  send('BARE-PROMPT no context here')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  contains(chat_text(), '## You\nBARE-PROMPT no context here', 'the echo')
  -- Coming back to the prompt from app.py's window brings the file back.
  app_window()
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.prompt_buf)[1])
  contains(prompt_winbar(), 'Context: app.py', 'the chip after coming back')
end)

step('code action Explain on a selection: the chat sends the explanation request', function()
  app_window()
  vim.api.nvim_feedkeys('9GV' .. vim.keycode('<Esc>'), 'x', false)
  vim.api.nvim_feedkeys('gv', 'x', false) -- back in Visual mode: code_action takes the selection
  h.forget('PseudoClaudeRunDone')
  code_action('PseudoClaude: Explain')
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'x', false)
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  contains(chat_text(), '## You\nContext: app.py:9\nExplain the selected code.', 'the echo')
end)

step('code action Fix on a line with a diagnostic: its problem goes with the prompt', function()
  local ns = vim.api.nvim_create_namespace('testlint')
  vim.diagnostic.set(ns, app_buf, {
    { lnum = 8, col = 4, end_lnum = 8, end_col = 9, severity = vim.diagnostic.severity.WARN,
      message = 'print should use greet', source = 'testlint' },
  })
  app_window()
  vim.api.nvim_win_set_cursor(0, { 9, 6 })
  h.forget('PseudoClaudeRunDone')
  code_action('PseudoClaude: Fix')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  contains(chat_text(), '## You\nContext: app.py:9 · 1 problem\nFix the problems in the selected code.', 'the echo')
end)

step('code action Ask: the chat waits with the selection for the question', function()
  app_window()
  vim.api.nvim_feedkeys('4GVj' .. vim.keycode('<Esc>') .. 'gv', 'x', false)
  code_action('PseudoClaude: Ask about selection')
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'x', false)
  wait_for('the prompt', function()
    return vim.api.nvim_get_current_buf() == chat.prompt_buf
  end)
  contains(prompt_winbar(), 'Context: app.py:4-5', 'the chip')
  assert(not chat.running, 'a run started')
  vim.cmd('stopinsert')
  h.forget('PseudoClaudeRunDone')
  send('ASK-SELECTION is the f-string right?')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  contains(chat_text(), '## You\nContext: app.py:4-5 · 1 open file\nASK-SELECTION is the f-string right?', 'the echo')
end)

step(":'<,'>PseudoClaudeAsk sends the selection", function()
  app_window()
  vim.api.nvim_feedkeys('5Gwwvf}' .. vim.keycode('<Esc>'), 'x', false)
  h.forget('PseudoClaudeRunDone')
  vim.cmd("'<,'>PseudoClaudeAsk RANGE-ASK what is this?")
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  contains(h.transcript_text(), 'Context: app.py:5 · 1 open file\nRANGE-ASK what is this?', 'transcript')
end)

step('a code action during a run says so and sends nothing (its prompt waits in the prompt)', function()
  send('a slow question')
  wait_for('the slow answer to stream', function()
    return chat_text():find('Thinking slowly', 1, true)
  end)
  local before = #report.notifications
  app_window()
  vim.api.nvim_feedkeys('4GV' .. vim.keycode('<Esc>') .. 'gv', 'x', false)
  code_action('PseudoClaude: Explain')
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'x', false)
  wait_for('the warning', function()
    for i = before + 1, #report.notifications do
      if report.notifications[i].msg:find('a run is in progress', 1, true) then
        return true
      end
    end
  end)
  local prompt_line = vim.api.nvim_buf_get_lines(chat.prompt_buf, -2, -1, false)[1]
  assert(prompt_line == '❯ Explain the selected code.', prompt_line)
  h.forget('PseudoClaudeRunDone')
  require('pseudoclaude').cancel(vim.uri_from_fname(workspace))
  take('PseudoClaudeRunDone')
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ ' })
end)

step('stop', function()
  h.no_errors()
  h.stop(client)
end)

h.done('nvim context e2e')
