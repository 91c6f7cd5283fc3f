-- Rewind and fork in a real Neovim against the real server (its checkpoints, with git) and the
-- scripted fake model: two prompts change files; :PseudoClaudeRewind 2 (the mode picked through
-- vim.ui.select) previews in a float (a file's diff in a tab, `q` back), `<CR>` puts the files
-- back and the conversation has one prompt; a file changed by hand is marked, `<CR>` leaves it,
-- `F` overwrites it; /rewind in the chat, `r` on a prompt a rewind took back, `F` on a prompt
-- forks from before it, :PseudoClaudeFork forks the whole conversation.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_rewind.lua
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take, contains = h.report, h.step, h.wait_for, h.take, h.contains
local workspace = h.workspace
local ws = vim.uri_from_fname(workspace)

local NOTES, HELLO = workspace .. '/notes.txt', workspace .. '/hello.py'
local ORIGINAL = 'one\ntwo\nthree\n'
local client, protocol, rewind

local function read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data
end

local function write(path, data)
  local f = assert(io.open(path, 'wb'))
  f:write(data)
  f:close()
end

-- The rewind's own User events (the harness records the others).
local last = {}
for _, pattern in ipairs({ 'PseudoClaudeRewindPreview', 'PseudoClaudeRewindDiff', 'PseudoClaudeRewound',
  'PseudoClaudeForked' }) do
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = function(ev)
      last[pattern] = ev.data
    end,
  })
end

local function take_own(pattern)
  return wait_for(pattern, function()
    local v = last[pattern]
    last[pattern] = nil
    return v
  end)
end

local function request(method, params)
  params = vim.tbl_extend('force', { workspace = ws }, params or {})
  local resp = client:request_sync(method, params, 10000)
  assert(resp and resp.result, method .. ': ' .. vim.inspect(resp))
  return resp.result
end

local function turns(session_id)
  return request(protocol.requests.sessions_turns, { sessionId = session_id }).turns
end

local function prompts(list)
  return vim.tbl_map(function(t)
    return t.prompt
  end, list)
end

--- The prompts of a session's transcript (`pseudoclaude/sessions/messages`) the model still sees.
local function conversation(session_id)
  local items = request(protocol.requests.sessions_messages, { sessionId = session_id, offset = 0 }).items
  local out = {}
  for _, i in ipairs(items) do
    if i.kind == 'user' and i.inContext ~= false then
      out[#out + 1] = i.text
    end
  end
  return out
end

local function ask(prompt)
  h.forget('PseudoClaudeRunDone')
  vim.cmd('PseudoClaudeAsk ' .. prompt)
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil and done.result.stopReason == 'completed', vim.inspect(done))
  return done.result
end

local no_errors = h.no_errors

--- The preview on screen after `cmd` (answering the pickers with `answers`).
local function open_preview(cmd, answers)
  h.answer(answers or {})
  last.PseudoClaudeRewindPreview = nil
  vim.cmd(cmd)
  local shown = take_own('PseudoClaudeRewindPreview')
  assert(shown.error == nil, vim.inspect(shown.error))
  local cur = assert(rewind.current, 'no preview on screen')
  assert(vim.api.nvim_get_current_win() == cur.win, 'the preview float is not entered')
  local lines = vim.api.nvim_buf_get_lines(cur.buf, 0, -1, false)
  assert(vim.deep_equal(lines, shown.lines), vim.inspect({ lines, shown.lines }))
  return cur, lines, shown.result
end

local function line_of(lines, start)
  for i, l in ipairs(lines) do
    if vim.startswith(l, start) then
      return i
    end
  end
  error(string.format('no line starting %q in %s', start, vim.inspect(lines)), 2)
end

local function press(keys)
  last.PseudoClaudeRewound = nil
  vim.api.nvim_feedkeys(vim.keycode(keys), 'x', false)
  local done = take_own('PseudoClaudeRewound')
  assert(done.error == nil, 'rewind failed: ' .. vim.inspect(done.error))
  return done
end

local first_session

step('setup: two prompts change files', function()
  write(NOTES, ORIGINAL)
  client = h.setup_plugin()
  protocol, rewind = require('pseudoclaude.protocol'), require('pseudoclaude.rewind')
  first_session = ask('EDIT-NOTES please').sessionId
  assert(read(NOTES) == 'one\nTWO\nthree\n', read(NOTES))
  ask('CHANGE-BOTH now')
  assert(read(NOTES) == 'one\nTWO\nthree\nfour\n', read(NOTES))
  assert(read(HELLO) == 'print("hi")\n', tostring(read(HELLO)))
  local list = turns()
  assert(vim.deep_equal(prompts(list), { 'EDIT-NOTES please', 'CHANGE-BOTH now' }), vim.inspect(list))
  assert(list[1].filesChanged == 1 and list[2].filesChanged == 2, vim.inspect(list))
  local cp = request(protocol.requests.context).checkpoints
  assert(cp and cp.covers == 'all', vim.inspect(cp))
  report.checkpoints = cp
  -- The commands complete the prompts' numbers (newest first), then what to take back.
  local function completion(line)
    return vim.fn.getcompletion(line, 'cmdline')
  end
  assert(vim.deep_equal(completion('PseudoClaudeRewind '), { '2', '1', 'both', 'conversation', 'code' }),
    vim.inspect(completion('PseudoClaudeRewind ')))
  assert(vim.deep_equal(completion('PseudoClaudeRewind 2 c'), { 'conversation', 'code' }),
    vim.inspect(completion('PseudoClaudeRewind 2 c')))
  assert(vim.deep_equal(completion('PseudoClaudeFork '), { '2', '1' }), vim.inspect(completion('PseudoClaudeFork ')))
  -- notes.txt is open: the rewind reads it again.
  vim.cmd.edit(vim.fn.fnameescape(NOTES))
  no_errors()
end)

step(':PseudoClaudeRewind 2: mode picked, the preview, a diff, <CR>', function()
  local before = #h.selects
  local cur, lines, p = open_preview('PseudoClaudeRewind 2', { 'Code and conversation' })
  local menu = h.selects[before + 1]
  assert(menu and menu.kind == 'pseudoclaude_rewind_mode', vim.inspect(h.selects))
  assert(vim.deep_equal(menu.labels, { 'Code and conversation', 'Conversation only', 'Code only' }), vim.inspect(menu))
  assert(p.turn == 2 and p.droppedMessages > 0, vim.inspect(p))
  assert(lines[1] == 'Before prompt 2: CHANGE-BOTH now', lines[1])
  local text = table.concat(lines, '\n')
  contains(text, 'Rewind would take 2 files back to before prompt 2', 'preview')
  contains(text, '\n  restored  notes.txt', 'preview')
  contains(text, '\n  deleted   hello.py', 'preview')
  assert(not text:find(rewind.CONFLICT, 1, true), 'a conflict without a change by hand')
  assert(lines[#lines] == '<CR> rewind · d diff · q cancel', lines[#lines])
  report.preview_lines = lines
  -- d on notes.txt: the diff in a tab; q comes back.
  local tabs = #vim.api.nvim_list_tabpages()
  vim.api.nvim_win_set_cursor(cur.win, { line_of(lines, '  restored  notes.txt'), 0 })
  vim.api.nvim_feedkeys('d', 'x', false)
  local shown = take_own('PseudoClaudeRewindDiff')
  local view = assert(shown.view, 'no diff view')
  assert(#vim.api.nvim_list_tabpages() == tabs + 1, 'no tab')
  local left = vim.api.nvim_buf_get_lines(view.left.buf, 0, -1, false)
  local right = vim.api.nvim_buf_get_lines(view.right.buf, 0, -1, false)
  assert(vim.deep_equal(left, { 'one', 'TWO', 'three', 'four' }), vim.inspect(left))
  assert(vim.deep_equal(right, { 'one', 'TWO', 'three' }), vim.inspect(right))
  assert(vim.wo[view.left.win].diff and vim.wo[view.right.win].diff, 'not a diff')
  report.diff = { left = left, right = right, winbar = vim.wo[view.right.win].winbar }
  vim.api.nvim_feedkeys('q', 'x', false)
  assert(#vim.api.nvim_list_tabpages() == tabs, 'the diff tab stayed')
  assert(vim.api.nvim_get_current_win() == cur.win and rewind.current == cur, 'not back in the preview')
  assert(read(HELLO) ~= nil, 'the preview changed files')
  -- <CR>: the files and the conversation go back.
  local done = press('<CR>')
  local r = done.result
  table.sort(r.restoredFiles)
  assert(vim.deep_equal(r.restoredFiles, { 'hello.py', 'notes.txt' }) and #r.conflicts == 0, vim.inspect(r))
  assert(read(NOTES) == 'one\nTWO\nthree\n', read(NOTES))
  assert(read(HELLO) == nil, 'hello.py is still there')
  assert(vim.deep_equal(prompts(turns()), { 'EDIT-NOTES please' }), vim.inspect(turns()))
  assert(h.notified('PseudoClaude: ' .. r.message, vim.log.levels.INFO), vim.inspect(report.notifications))
  contains(r.message, 'Rewound to before prompt 2', 'message')
  assert(rewind.current == nil and not vim.api.nvim_win_is_valid(cur.win), 'the preview stayed')
  local buf = vim.fn.bufnr(NOTES)
  local shown_lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  assert(vim.deep_equal(shown_lines, { 'one', 'TWO', 'three' }), 'the buffer was not read again: ' .. vim.inspect(shown_lines))
  contains(h.transcript_text(), r.message, 'transcript')
  report.rewound = r
  no_errors()
end)

step('a file changed by hand: marked, <CR> leaves it, F overwrites it', function()
  ask('CHANGE-BOTH again')
  assert(read(HELLO) ~= nil and read(NOTES) == 'one\nTWO\nthree\nfour\n', tostring(read(NOTES)))
  write(NOTES, 'one\nTWO\nthree\nfour\nby hand\n')
  -- No arguments: the prompt and the mode are picked.
  local before = #h.selects
  local _, lines = open_preview('PseudoClaudeRewind', { '2. CHANGE-BOTH again', 'Code only' })
  local menu = h.selects[before + 1]
  assert(menu.kind == 'pseudoclaude_turn', vim.inspect(menu))
  assert(menu.labels[1]:find('^2%. CHANGE%-BOTH again · 2 files changed') and menu.labels[2]:find('^1%. EDIT%-NOTES please'),
    vim.inspect(menu.labels))
  local text = table.concat(lines, '\n')
  contains(text, '  restored  notes.txt  ! ' .. rewind.CONFLICT, 'the conflict')
  contains(text, '\n  deleted   hello.py\n', 'preview')
  assert(lines[#lines] == '<CR> rewind · F rewind and overwrite the changes · d diff · q cancel', lines[#lines])
  report.conflict_preview = lines
  local r = press('<CR>').result
  assert(vim.deep_equal(r.restoredFiles, { 'hello.py' }) and vim.deep_equal(r.conflicts, { 'notes.txt' }), vim.inspect(r))
  assert(read(NOTES) == 'one\nTWO\nthree\nfour\nby hand\n', 'the file changed by hand was overwritten')
  assert(read(HELLO) == nil, 'hello.py is still there')
  assert(h.notified('PseudoClaude: ' .. r.message, vim.log.levels.WARN), vim.inspect(report.notifications))
  assert(#turns() == 2, 'a code rewind changed the conversation')
  -- Changed by hand again: F overwrites it.
  write(NOTES, 'one\nTWO\nthree\nfour\nby hand\nand again\n')
  local _, again = open_preview('PseudoClaudeRewind 2 code')
  contains(table.concat(again, '\n'), '  restored  notes.txt  ! ' .. rewind.CONFLICT, 'the conflict again')
  local forced = press('F')
  assert(forced.force == true and vim.deep_equal(forced.result.restoredFiles, { 'notes.txt' })
    and #forced.result.conflicts == 0, vim.inspect(forced))
  assert(read(NOTES) == 'one\nTWO\nthree\n', read(NOTES))
  report.forced = forced.result
  no_errors()
end)

local chat

step('the chat: /rewind previews, q cancels; r on a prompt taken back says so', function()
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd('PseudoClaudeChat')
  take('PseudoClaudeChatLoaded')
  chat = assert(require('pseudoclaude.chat').get(ws))
  vim.cmd('stopinsert')
  local users = vim.tbl_filter(function(i)
    return i.kind == 'user'
  end, chat.items)
  local seen = vim.tbl_map(function(i)
    return { i.text, i.turn or false }
  end, users)
  assert(vim.deep_equal(seen, { { 'EDIT-NOTES please', 1 }, { 'CHANGE-BOTH now', false }, { 'CHANGE-BOTH again', 2 } }),
    vim.inspect(seen))
  -- /rewind 2 conversation: the preview, then q: nothing changes.
  last.PseudoClaudeRewindPreview = nil
  require('pseudoclaude.chat').submit(chat, '/rewind 2 conversation')
  local shown = take_own('PseudoClaudeRewindPreview')
  assert(shown.mode == 'conversation', vim.inspect(shown.mode))
  assert(shown.lines[#shown.lines] == '<CR> rewind · q cancel', vim.inspect(shown.lines))
  last.PseudoClaudeRewound = nil
  vim.api.nvim_feedkeys('q', 'x', false)
  assert(take_own('PseudoClaudeRewound').cancelled == true, 'q did not cancel')
  assert(#turns() == 2, 'a cancelled rewind changed the conversation')
  -- r on the prompt the first rewind took back.
  local win = vim.fn.win_findbuf(chat.buf)[1]
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { users[2].start + (users[2].start > 1 and 1 or 0), 0 })
  vim.api.nvim_feedkeys('r', 'x', false)
  assert(h.notified('PseudoClaude: a rewind took this prompt back', vim.log.levels.WARN), vim.inspect(report.notifications))
  report.chat_prompts = seen
end)

local forked

step('F on a prompt forks from before it; the prompt comes back in the prompt line', function()
  local again
  for _, i in ipairs(chat.items) do
    if i.kind == 'user' and i.text == 'CHANGE-BOTH again' then
      again = i
    end
  end
  local win = vim.fn.win_findbuf(chat.buf)[1]
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { again.start + 1, 0 })
  last.PseudoClaudeForked = nil
  h.forget('PseudoClaudeChatLoaded')
  vim.api.nvim_feedkeys('F', 'x', false)
  local done = take_own('PseudoClaudeForked')
  assert(done.error == nil and done.turn == 2, vim.inspect(done))
  forked = done.result.sessionId
  assert(forked ~= first_session, 'the fork is the same session')
  assert(h.notified('PseudoClaude: forked the conversation before prompt 2 into session ' .. forked .. ', now the current one.'),
    vim.inspect(report.notifications))
  assert(request(protocol.requests.context).sessionId == forked, 'the fork is not the current session')
  assert(vim.deep_equal(conversation(forked), { 'EDIT-NOTES please' }), vim.inspect(conversation(forked)))
  assert(#turns(first_session) == 2, 'the source session changed')
  report.fork_turns = turns()
  take('PseudoClaudeChatLoaded')
  -- The fork has a chat of its own, in the chat's window; the original's stays as it was.
  local fork_chat = assert(require('pseudoclaude.chat').get(ws, forked), 'the fork has no chat')
  assert(require('pseudoclaude.chat').get(ws) == fork_chat, 'the fork\'s chat is not the current one')
  assert(vim.fn.win_findbuf(fork_chat.buf)[1] == win, 'the fork\'s chat is not in the chat\'s window')
  assert(chat.session_id == first_session, 'the original chat shows ' .. tostring(chat.session_id))
  local line = vim.api.nvim_buf_get_lines(fork_chat.prompt_buf, -2, -1, false)[1]
  assert(line == '❯ CHANGE-BOTH again', line)
  vim.api.nvim_buf_set_lines(fork_chat.prompt_buf, -2, -1, false, { '❯ ' })
  chat = fork_chat
  no_errors()
end)

step(':PseudoClaudeFork forks the whole conversation', function()
  last.PseudoClaudeForked = nil
  vim.cmd('PseudoClaudeFork')
  local done = take_own('PseudoClaudeForked')
  assert(done.error == nil and done.turn == nil, vim.inspect(done))
  local id = done.result.sessionId
  assert(id ~= forked and id ~= first_session, id)
  assert(h.notified('PseudoClaude: forked the whole conversation into session ' .. id .. ', now the current one.'),
    vim.inspect(report.notifications))
  assert(request(protocol.requests.context).sessionId == id, 'not the current session')
  assert(vim.deep_equal(conversation(id), { 'EDIT-NOTES please' }), vim.inspect(conversation(id)))
  local listed = vim.tbl_map(function(s)
    return s.id
  end, request(protocol.requests.sessions_list).sessions)
  for _, want in ipairs({ first_session, forked, id }) do
    assert(vim.tbl_contains(listed, want), want .. ' not in ' .. vim.inspect(listed))
  end
  report.sessions = { first_session, forked, id }
  no_errors()
end)

step('stop', function()
  h.stop(client)
end)

h.done('nvim rewind e2e')
