-- :PseudoClaudeChat in a real Neovim (SPEC §11 "Editors", issue 15): the chat buffer (markdown)
-- and its prompt (buftype=prompt); a prompt sent from the prompt streams its answer into the
-- chat; the tool call is a folded card with its result; a memory update shows inline; Ctrl-C
-- cancels; slash commands complete after / and act; closing and wiping the chat, then a server restart and a resume,
-- bring the session's history back. Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_chat.lua
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take = h.report, h.step, h.wait_for, h.take
local contains = h.contains
local workspace = h.workspace

local client, chat

local function chat_lines()
  return vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
end

local function chat_text()
  return table.concat(chat_lines(), '\n')
end

local function chat_win()
  return vim.fn.win_findbuf(chat.buf)[1]
end

local function find_line(pattern)
  for i, l in ipairs(chat_lines()) do
    if l:find(pattern, 1, true) then
      return i
    end
  end
end

--- Type `text` into the prompt and press Enter, as a user would.
local function send(text)
  local _, pw = nil, vim.fn.win_findbuf(chat.prompt_buf)[1]
  assert(pw, 'the prompt is not shown')
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('A' .. text .. '\r', 'x', false)
end

-- The chat's last line each time a text delta arrived (the answer streaming in).
local streamed = {}
vim.api.nvim_create_autocmd('User', {
  pattern = 'PseudoClaudeEvent',
  callback = function(ev)
    if ev.data.kind == 'text' and chat and vim.api.nvim_buf_is_valid(chat.buf) then
      local lines = chat_lines()
      streamed[#streamed + 1] = lines[#lines]
    end
  end,
})

step('setup', function()
  client = h.setup_plugin()
end)

step('open: a chat buffer and a prompt', function()
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd('PseudoClaudeChat')
  local loaded = take('PseudoClaudeChatLoaded')
  assert(loaded.sessionId == nil, 'a session on a fresh server: ' .. vim.inspect(loaded))
  chat = assert(require('pseudoclaude.chat').get(vim.uri_from_fname(workspace)), 'no chat')
  assert(vim.bo[chat.buf].filetype == 'markdown', vim.bo[chat.buf].filetype)
  assert(vim.bo[chat.buf].buftype == 'nofile' and not vim.bo[chat.buf].modifiable, 'chat buffer options')
  -- A chat buffer per session; a new conversation's is named after its session once it has one.
  assert(vim.api.nvim_buf_get_name(chat.buf) == 'pseudoclaude://chat/project/new', vim.api.nvim_buf_get_name(chat.buf))
  assert(vim.bo[chat.prompt_buf].buftype == 'prompt', vim.bo[chat.prompt_buf].buftype)
  assert(vim.api.nvim_get_current_buf() == chat.prompt_buf, 'not in the prompt')
  assert(chat_win(), 'the chat is not shown')
  contains(chat_text(), 'New conversation in project.', 'hint')
  -- The prompts here go without the editor context (README.md, the file the chat was opened
  -- from): Ctrl-D removes its chip (nvim_e2e_context.lua tests the context).
  vim.api.nvim_feedkeys('A' .. vim.keycode('<C-d>') .. vim.keycode('<Esc>'), 'x', false)
  assert(chat.chip == nil, 'the chip is still there')
  local winbar = vim.api.nvim_eval_statusline(vim.wo[chat_win()].winbar, { winid = chat_win(), maxwidth = 300 }).str
  contains(winbar, ' new session · ', 'winbar')
  contains(winbar, ' · PseudoClaude project', 'winbar')
  report.winbar_first = winbar
end)

step('send: the answer streams into the chat; the tool call is a folded card', function()
  vim.cmd('stopinsert')
  send('What is this project?')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil and done.result.stopReason == 'completed', vim.inspect(done))
  local lines = chat_lines()
  report.chat_after_first = lines
  assert(lines[1] == '## You' and lines[2] == 'What is this project?' and lines[4] == '## PseudoClaude', vim.inspect(lines))
  assert(lines[5] == 'Let me read the README first.', vim.inspect(lines))
  assert(lines[6] == '▸ read_file(path: README.md)', vim.inspect(lines))
  assert(lines[7]:find('^  ✓ read_file · %d'), lines[7])
  assert(lines[8] == '  │ # Demo project', lines[8])
  local card_end = find_line('  │ …')
  assert(card_end and card_end > 8, 'no preview end: ' .. vim.inspect(lines))
  local answer = 'I read README.md with read_file. The project keeps visible, resumable sessions and Markdown memory; that is all this offline demo does.'
  assert(lines[card_end + 1] == answer, vim.inspect(lines))
  assert(lines[card_end + 2]:find('^── completed · 2 iterations · '), lines[card_end + 2])
  -- Folded: the card is one closed fold, its folded line says what happened.
  local win = chat_win()
  vim.api.nvim_win_call(win, function()
    assert(vim.fn.foldclosed(6) == 6 and vim.fn.foldclosedend(6) == card_end,
      string.format('fold %d..%d', vim.fn.foldclosed(6), vim.fn.foldclosedend(6)))
    assert(vim.fn.foldclosed(5) == -1 and vim.fn.foldclosed(card_end + 1) == -1, 'text folded')
    local folded = vim.fn.foldtextresult(6)
    assert(folded:find('▸ read_file(path: README.md) · ✓ read_file · ', 1, true), folded)
    report.folded_card = folded
  end)
  -- It streamed: a delta showed part of a text before the whole (the server merges deltas
  -- that come within 16 ms, so which of the run's texts shows a part depends on timing).
  local partial = false
  local texts = vim.list_extend({ answer }, streamed)
  for _, l in ipairs(streamed) do
    for _, whole in ipairs(texts) do
      if #l > 0 and #l < #whole and vim.startswith(whole, l) then
        partial = true
      end
    end
  end
  assert(partial, 'no partial answer seen: ' .. vim.inspect(streamed))
  assert(#vim.fn.win_findbuf(vim.fn.bufnr('pseudoclaude://transcript')) == 0, 'the transcript opened for a chat run')
  assert(vim.api.nvim_get_current_buf() == chat.prompt_buf, 'left the prompt')
  assert(vim.api.nvim_buf_get_lines(chat.prompt_buf, 0, -1, false)[1] == '❯ ', 'the prompt was not cleared')
  local winbar = vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, maxwidth = 300 }).str
  contains(winbar, ' What is this project? · ', 'winbar: the session\'s title')
  assert(chat.session_id == done.result.sessionId, 'the chat took the run\'s session')
  assert(vim.api.nvim_buf_get_name(chat.buf) == 'pseudoclaude://chat/project/' .. done.result.sessionId,
    vim.api.nvim_buf_get_name(chat.buf))
  report.session = done.result.sessionId
end)

step('a tool approval and a memory update show inline', function()
  h.answer({ 'Allow once' })
  send('REMEMBER-BOTH please run the tests')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  local card = find_line('▸ run_command(command: true)')
  assert(card, 'no run_command card: ' .. chat_text())
  assert(chat_lines()[card + 1] == '  ✓ run_command · 40 B' or chat_lines()[card + 1]:find('^  ✓ run_command'), chat_lines()[card + 1])
  wait_for('the memory update in the chat', function()
    return find_line('> ✎ memory updated: create project project_knowledge_build.md')
  end)
  vim.api.nvim_win_call(chat_win(), function()
    assert(vim.fn.foldclosed(card) == card, 'the run_command card is not folded')
  end)
end)

step('Ctrl-C in the prompt cancels the run', function()
  send('a slow question')
  wait_for('the slow answer to stream', function()
    return chat_text():find('Thinking slowly', 1, true)
  end)
  assert(chat.running, 'the chat does not know a run is going')
  -- In the prompt (Insert mode) Ctrl-C is the prompt buffer's interrupt.
  vim.api.nvim_feedkeys('A' .. vim.keycode('<C-c>'), 'x', false)
  local done = take('PseudoClaudeRunDone')
  assert(done.error and done.error.code == -32800, 'not cancelled: ' .. vim.inspect(done))
  local lines = chat_lines()
  assert(lines[#lines] == '── canceled ──', vim.inspect(lines))
  assert(not chat.running, 'still running')
end)

step('slash commands: completion from the server\'s list; /compact, /undo, /context', function()
  -- Typing / at the start of the prompt completes the server's commands (pseudoclaude/commands).
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  _G.pc_complete = nil
  vim.api.nvim_feedkeys('A/' .. vim.keycode("<Cmd>lua _G.pc_complete = vim.fn.complete_info({'mode', 'items'})<CR><C-e><Esc>"),
    'x', false)
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ ' })
  local info = assert(_G.pc_complete, 'no completion after /')
  local words = vim.tbl_map(function(i) return i.word end, info.items)
  report.completion = words
  for _, name in ipairs({ '/compact', '/undo', '/context', '/memory', '/new', '/cancel' }) do
    assert(vim.tbl_contains(words, name), name .. ' not offered: ' .. vim.inspect(words))
  end
  assert(words[1] == '/compact', 'the server\'s commands come first: ' .. vim.inspect(words))
  -- /compact with instructions compacts (no preview); the server's words show in the chat.
  send('/compact focus on the README')
  local compacted = take('PseudoClaudeCompactDone')
  assert(compacted.error == nil, vim.inspect(compacted))
  wait_for('the compaction in the chat', function()
    return find_line('> ' .. compacted.result.message)
  end)
  assert(h.notified('PseudoClaude: ' .. compacted.result.message), vim.inspect(report.notifications))
  send('/undo')
  local undone = take('PseudoClaudeUndoDone')
  assert(undone.error == nil, vim.inspect(undone))
  assert(h.notified('PseudoClaude: ' .. undone.result.message), vim.inspect(report.notifications))
  send('/context')
  wait_for('the context float', function()
    return require('pseudoclaude.context').float
  end)
  require('pseudoclaude.context').close_float()
  -- Nothing of that reached the chat as a prompt (a /word that is not a command would: the
  -- unit tests send one).
  assert(not chat_text():find('## You\n/', 1, true), 'a command was sent as a prompt')
end)

step('Up recalls the earlier prompts', function()
  local pw = vim.fn.win_findbuf(chat.prompt_buf)[1]
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('A' .. vim.keycode('<Up>') .. vim.keycode('<Up>') .. vim.keycode('<Esc>'), 'x', false)
  local line = vim.api.nvim_buf_get_lines(chat.prompt_buf, -2, -1, false)[1]
  assert(line == '❯ REMEMBER-BOTH please run the tests', line)
  vim.api.nvim_buf_set_lines(chat.prompt_buf, -2, -1, false, { '❯ ' })
end)

step('q closes the chat; :PseudoClaudeChat shows it again as it was', function()
  local before = chat_lines()
  vim.api.nvim_set_current_win(chat_win())
  vim.api.nvim_feedkeys('q', 'x', false)
  assert(chat_win() == nil and vim.fn.win_findbuf(chat.prompt_buf)[1] == nil, 'windows left')
  vim.cmd('PseudoClaudeChat')
  wait_for('the chat window', chat_win)
  assert(vim.deep_equal(chat_lines(), before), 'the chat changed')
end)

step('a wiped chat reopens with the session history', function()
  local buf = chat.buf
  vim.cmd('bwipeout! ' .. buf)
  assert(require('pseudoclaude.chat').get(vim.uri_from_fname(workspace)) == nil, 'the chat survived')
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd('PseudoClaudeChat')
  local loaded = take('PseudoClaudeChatLoaded')
  assert(loaded.sessionId == report.session, vim.inspect(loaded))
  chat = require('pseudoclaude.chat').get(vim.uri_from_fname(workspace))
  local text = chat_text()
  report.chat_history = chat_lines()
  contains(text, '## You\nWhat is this project?\n\n## PseudoClaude\nLet me read the README first.\n▸ read_file(path: README.md)', 'history')
  contains(text, '## You\nREMEMBER-BOTH please run the tests', 'history')
  contains(text, '▸ run_command(command: true)\n  ✓ run_command', 'history')
  contains(text, '## You\na slow question', 'history')
  local card = find_line('▸ read_file(path: README.md)')
  vim.api.nvim_win_call(chat_win(), function()
    assert(vim.fn.foldclosed(card) == card, 'the history card is not folded')
    assert(vim.fn.foldtextresult(card):find('✓ read_file · ', 1, true), vim.fn.foldtextresult(card))
  end)
end)

step('after a server restart, a resume brings the history into the chat', function()
  h.stop(client)
  client = h.setup_plugin()
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd('PseudoClaudeResume latest')
  local resumed = take('PseudoClaudeResumed')
  assert(resumed.error == nil and resumed.result.sessionId == report.session, vim.inspect(resumed))
  local loaded = take('PseudoClaudeChatLoaded')
  assert(loaded.sessionId == report.session, vim.inspect(loaded))
  contains(chat_text(), '## You\nWhat is this project?', 'history after the restart')
  contains(chat_text(), '▸ read_file(path: README.md)', 'history after the restart')
end)

step('stop', function()
  h.no_errors()
  h.stop(client)
end)

h.done('nvim chat e2e')
