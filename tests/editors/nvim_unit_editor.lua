-- Unit checks of the plugin's editor parts (the agent lives in the editor): selections as LSP
-- ranges, the open files, the context of a prompt and its chip, the diagnostics answer, the
-- applyEdit handler, the code actions, and attaching every file buffer (against an in-process
-- fake server). Run by test_nvim.py as `nvim --headless --clean -l nvim_unit_editor.lua PLUGIN_DIR`.
local plugin = assert(_G.arg[1], 'usage: nvim -l nvim_unit_editor.lua PLUGIN_DIR')
vim.opt.rtp:prepend(plugin)
vim.cmd('filetype on')

local u = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_unit_harness.lua'))
local test, eq = u.test, u.eq

local editor = require('pseudoclaude.editor')
local handlers = require('pseudoclaude.handlers')
local protocol = require('pseudoclaude.protocol')

local tmp = vim.fs.normalize(vim.fn.fnamemodify(vim.fn.tempname(), ':p'))
vim.fn.mkdir(tmp .. '/ws/src', 'p')
vim.fn.mkdir(tmp .. '/ws/.git', 'p')
vim.fn.mkdir(tmp .. '/elsewhere', 'p')
local ROOT = tmp .. '/ws'
local WS = vim.uri_from_fname(ROOT)

local function pos(line, character)
  return { line = line, character = character }
end

--- A listed, loaded buffer of `path` (the file need not exist) with `lines`.
local function file_buf(path, lines)
  local b = vim.fn.bufadd(path)
  vim.fn.bufload(b)
  vim.bo[b].buflisted = true
  if lines then
    vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  end
  return b
end

local function scratch(lines)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  return b
end

test('editor: paths of buffers relative to the workspace, with /', function()
  eq(editor.root(WS .. '/'), ROOT)
  eq(editor.relative(ROOT, ROOT .. '/src/a.py'), 'src/a.py')
  eq(editor.relative(ROOT, ROOT), nil, 'the root itself')
  eq(editor.relative(ROOT, tmp .. '/elsewhere/b.py'), nil, 'outside')
  eq(editor.relative(ROOT, ROOT .. 'x/c.py'), nil, 'a sibling with the same prefix')
  local b = file_buf(ROOT .. '/src/a.py', { 'x' })
  eq(editor.path_of(b, ROOT), 'src/a.py')
  local nofile = scratch({ 'x' })
  vim.api.nvim_buf_set_name(nofile, ROOT .. '/scratch.txt')
  eq(editor.path_of(nofile, ROOT), nil, 'a nofile buffer has no file')
  local uri_named = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(uri_named, 'oil://' .. ROOT .. '/src')
  eq(editor.file_of(uri_named), nil, 'a scheme:// buffer has no file')
end)

test('editor: LSP characters of byte columns, in each encoding', function()
  local line = 'aé😀b' -- bytes: a 1, é 2, 😀 4, b 1
  eq(editor.character(line, 3, 'utf-16'), 2)
  eq(editor.character(line, 7, 'utf-16'), 4, 'the emoji is two utf-16 units')
  eq(editor.character(line, 7, 'utf-8'), 7)
  eq(editor.character(line, 7, 'utf-32'), 3)
  eq(editor.character(line, 2, 'utf-16'), 1, 'a byte inside é counts from its start')
  eq(editor.character(line, 99, 'utf-16'), 5, 'past the end: the end')
  local b = scratch({ line, 'xyz' })
  eq(editor.position(b, 5, 0, 'utf-16'), pos(1, 3), 'past the last line: its end')
end)

test('editor: regions as visual mode selects them, ranges and text', function()
  local b = scratch({ 'aé😀b', 'xyz', 'last' })
  local r, text = editor.region(b, 'V', { 1, 0 }, { 2, vim.v.maxcol }, 'utf-16')
  eq(r, { start = pos(0, 0), ['end'] = pos(2, 0) }, 'lines: up to the start of the next line')
  eq(text, 'aé😀b\nxyz\n')
  r, text = editor.region(b, 'V', { 3, 0 }, { 3, 2 }, 'utf-16')
  eq(r, { start = pos(2, 0), ['end'] = pos(2, 4) }, 'the last line: up to its end')
  eq(text, 'last')
  r, text = editor.region(b, 'v', { 1, 1 }, { 1, 3 }, 'utf-16')
  eq(r, { start = pos(0, 1), ['end'] = pos(0, 4) }, 'characters: the end character included')
  eq(text, 'é😀')
  eq((editor.region(b, 'v', { 1, 1 }, { 1, 3 }, 'utf-8')), { start = pos(0, 1), ['end'] = pos(0, 7) })
  eq((editor.region(b, 'v', { 1, 1 }, { 1, 3 }, 'utf-32')), { start = pos(0, 1), ['end'] = pos(0, 3) })
  r, text = editor.region(b, 'v', { 2, 1 }, { 1, 7 }, 'utf-16')
  eq(r, { start = pos(0, 4), ['end'] = pos(1, 2) }, 'marks in either order')
  eq(text, 'b\nxy')
  r, text = editor.region(b, 'v', { 1, 0 }, { 1, vim.v.maxcol }, 'utf-16')
  eq(r, { start = pos(0, 0), ['end'] = pos(1, 0) }, 'past the end of the line: its line break')
  eq(text, 'aé😀b\n')
  r = editor.region(b, '\22', { 1, 1 }, { 2, 1 }, 'utf-16')
  eq(r, { start = pos(0, 0), ['end'] = pos(2, 0) }, 'a block: its lines')
end)

test("editor: a command's range is the last visual selection when it is its lines", function()
  local b = scratch({ 'one two', 'three', 'four' })
  vim.api.nvim_set_current_buf(b)
  vim.api.nvim_feedkeys('gg0wv$' .. vim.keycode('<Esc>'), 'x', false)
  local sel = editor.selection(b, 'f.txt', 1, 1, 'utf-16')
  eq(sel, { path = 'f.txt', range = { start = pos(0, 4), ['end'] = pos(1, 0) }, text = 'two\n' }, 'charwise')
  sel = editor.selection(b, 'f.txt', 2, 3, 'utf-16')
  eq(sel, { path = 'f.txt', range = { start = pos(1, 0), ['end'] = pos(2, 4) }, text = 'three\nfour' },
    'other lines: linewise')
  vim.api.nvim_feedkeys('2GVj' .. vim.keycode('<Esc>'), 'x', false)
  eq(editor.selection(b, 'f.txt', 2, 3, 'utf-16').text, 'three\nfour', 'a linewise selection')
end)

test('editor: lines of a range and the words of a context', function()
  eq(editor.lines_label({ start = pos(0, 0), ['end'] = pos(1, 0) }), '1')
  eq(editor.lines_label({ start = pos(0, 0), ['end'] = pos(0, 0) }), '1')
  eq(editor.lines_label({ start = pos(3, 0), ['end'] = pos(5, 0) }), '4-5')
  eq(editor.lines_label({ start = pos(3, 2), ['end'] = pos(4, 1) }), '4-5')
  local sel = { path = 'app.py', range = { start = pos(9, 0), ['end'] = pos(14, 0) }, text = 'x' }
  eq(editor.label(nil), '')
  eq(editor.label({}), '')
  eq(editor.label({ activeFile = 'app.py' }), 'app.py')
  eq(editor.label({ activeFile = 'app.py', selection = sel, openFiles = { 'a', 'b', 'c' } }), 'app.py:10-14 · 3 open files')
  eq(editor.label({ activeFile = 'lib.py', selection = sel }), 'app.py:10-14 · lib.py')
  eq(editor.label({ selection = sel, diagnostics = { {} }, openFiles = { 'a' } }), 'app.py:10-14 · 1 problem · 1 open file')
end)

test('editor: open files: listed, loaded, of the folder, the most recent first, at most 20', function()
  local root = tmp .. '/many'
  vim.fn.mkdir(root, 'p')
  local bufs = {}
  for i = 1, 23 do
    bufs[i] = file_buf(string.format('%s/f%02d.txt', root, i), { tostring(i) })
  end
  file_buf(tmp .. '/elsewhere/out.txt', { 'x' })
  local unlisted = file_buf(root .. '/unlisted.txt', { 'x' })
  vim.bo[unlisted].buflisted = false
  local unloaded = vim.fn.bufadd(root .. '/unloaded.txt')
  vim.bo[unloaded].buflisted = true
  vim.api.nvim_set_current_buf(bufs[23])
  vim.wait(1100) -- lastused has seconds
  vim.api.nvim_set_current_buf(bufs[2])
  local open = editor.open_files(root)
  eq(#open, 20)
  eq(open[1], 'f02.txt', 'the most recently used first')
  eq(open[2], 'f23.txt')
  assert(not vim.tbl_contains(open, 'unlisted.txt') and not vim.tbl_contains(open, 'unloaded.txt'), vim.inspect(open))
  eq(vim.tbl_contains(editor.open_files(root, 'f02.txt'), 'f02.txt'), false, 'without the active file')
  for _, b in ipairs(bufs) do
    vim.api.nvim_buf_delete(b, { force = true })
  end
end)

test('editor: the context a prompt goes with', function()
  local root = tmp .. '/ctx'
  vim.fn.mkdir(root, 'p')
  eq(editor.context(nil, root), nil, 'a removed chip: nothing')
  eq(editor.context({}, root), nil, 'nothing to say: nothing')
  local other = file_buf(root .. '/other.py', { 'x' })
  local sel = { path = 'app.py', range = { start = pos(0, 0), ['end'] = pos(1, 0) }, text = 'x\n' }
  eq(editor.context({ activeFile = 'app.py', selection = sel, diagnostics = {} }, root),
    { activeFile = 'app.py', selection = sel, openFiles = { 'other.py' } })
  eq(editor.context({}, root), { openFiles = { 'other.py' } })
  -- On the wire: objects and arrays as the server reads them.
  local wire = vim.json.decode(vim.json.encode(editor.context({ activeFile = 'app.py', selection = sel }, root)))
  eq(wire.selection.range['end'], { line = 1, character = 0 })
  vim.api.nvim_buf_delete(other, { force = true })
end)

test('editor: diagnostics of the folder in the client encoding, the pseudoclaude clients left out', function()
  local root = tmp .. '/diag'
  vim.fn.mkdir(root .. '/src', 'p')
  local a = file_buf(root .. '/src/a.py', { 'x = "é😀" + y', 'ok' })
  local b = file_buf(root .. '/b.py', { 'z' })
  local out = file_buf(tmp .. '/elsewhere/c.py', { 'w' })
  local lint = vim.api.nvim_create_namespace('unit-lint')
  local own = vim.api.nvim_create_namespace('vim.lsp.pseudoclaude.77')
  local S = vim.diagnostic.severity
  vim.diagnostic.set(lint, a, {
    { lnum = 0, col = 14, end_lnum = 0, end_col = 15, severity = S.ERROR, message = 'y is undefined', source = 'pyflakes' },
    { lnum = 1, col = 0, severity = S.HINT, message = 'a hint' },
  })
  vim.diagnostic.set(lint, b, { { lnum = 0, col = 0, severity = S.INFO, message = 'info', source = '' } })
  vim.diagnostic.set(lint, out, { { lnum = 0, col = 0, severity = S.WARN, message = 'outside' } })
  vim.diagnostic.set(own, a, { { lnum = 0, col = 0, severity = S.ERROR, message = 'our own' } })
  local got = editor.diagnostics(root, nil, 'utf-16')
  eq(got, {
    { path = 'b.py', range = { start = pos(0, 0), ['end'] = pos(0, 0) }, severity = 'info', message = 'info' },
    { path = 'src/a.py', range = { start = pos(0, 11), ['end'] = pos(0, 12) }, severity = 'error',
      message = 'y is undefined', source = 'pyflakes' },
    { path = 'src/a.py', range = { start = pos(1, 0), ['end'] = pos(1, 0) }, severity = 'hint', message = 'a hint' },
  })
  eq(#editor.diagnostics(root, { 'b.py' }, 'utf-16'), 1, 'only the given paths')
  eq(editor.diagnostics(root, { 'src/a.py' }, 'utf-8')[1].range.start, pos(0, 14), 'utf-8: bytes')
  -- Every server request has its handler (in lsp/pseudoclaude.lua's handlers).
  for _, method in pairs(protocol.server_requests) do
    assert(type(handlers[method]) == 'function', 'no handler for ' .. method)
  end
  -- The handler: its answer, an empty list as a JSON array, bad params refused.
  local answer = handlers[protocol.server_requests.diagnostics](nil, { workspace = vim.uri_from_fname(root), paths = { 'b.py' } },
    { client_id = 0 })
  eq(#answer.diagnostics, 1)
  local empty = handlers[protocol.server_requests.diagnostics](nil, { workspace = vim.uri_from_fname(tmp .. '/none') },
    { client_id = 0 })
  eq(vim.json.encode(empty), '{"diagnostics":[]}')
  local nothing, err = handlers[protocol.server_requests.diagnostics](nil, { paths = { 'b.py' } }, { client_id = 0 })
  eq(nothing, nil)
  eq(err.code, protocol.errors.invalid_params)
  nothing, err = handlers[protocol.server_requests.diagnostics](nil, { workspace = 'file:///x', paths = 'b.py' }, { client_id = 0 })
  eq(err.code, protocol.errors.invalid_params)
  -- A code action's range gets the diagnostics of its lines, of every source but ours.
  local on_line = editor.range_diagnostics(a, { start = pos(0, 3), ['end'] = pos(0, 3) }, 'utf-16')
  eq(#on_line, 1)
  eq(on_line[1], { range = { start = pos(0, 11), ['end'] = pos(0, 12) }, severity = 1, message = 'y is undefined',
    source = 'pyflakes' })
  eq(#editor.range_diagnostics(a, { start = pos(0, 0), ['end'] = pos(1, 0) }, 'utf-16'), 1, 'an end at a line start')
  local kept = { range = { start = pos(0, 11), ['end'] = pos(0, 12) }, severity = 1, message = 'y is undefined' }
  eq(#editor.range_diagnostics(a, { start = pos(0, 0), ['end'] = pos(1, 2) }, 'utf-16', { kept }), 2,
    'the request\'s own kept, not repeated')
end)

test('workspace/applyEdit: applied in the buffer, one undo step, modified; a stale one refused', function()
  local path = tmp .. '/edit.txt'
  vim.fn.writefile({ 'one', 'two', 'three' }, path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_feedkeys('Goadded by hand' .. vim.keycode('<Esc>'), 'x', false)
  local before = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  local events = {}
  local au = vim.api.nvim_create_autocmd('User', { pattern = 'PseudoClaudeEdit', callback = function(ev)
    events[#events + 1] = ev.data
  end })
  local apply = handlers['workspace/applyEdit']
  local uri = vim.uri_from_fname(path)
  local result = apply(nil, { label = 'PseudoClaude: edit edit.txt', edit = { documentChanges = { {
    textDocument = { uri = uri, version = vim.NIL },
    edits = {
      { range = { start = pos(1, 0), ['end'] = pos(1, 3) }, newText = 'TWO' },
      { range = { start = pos(3, 0), ['end'] = pos(3, 5) }, newText = 'ADDED' },
    },
  } } } }, { client_id = 0 })
  eq(result, { applied = true })
  eq(vim.api.nvim_buf_get_lines(b, 0, -1, false), { 'one', 'TWO', 'three', 'ADDED by hand' })
  eq(vim.bo[b].modified, true)
  eq(vim.fn.readfile(path), { 'one', 'two', 'three' }, 'nothing written')
  vim.api.nvim_feedkeys('u', 'x', false)
  eq(vim.api.nvim_buf_get_lines(b, 0, -1, false), before, 'one u takes both edits back')
  -- Made on an older version of the buffer: refused, nothing changed.
  rawset(vim.lsp.util.buf_versions, b, 9)
  result = apply(nil, { edit = { documentChanges = { {
    textDocument = { uri = uri, version = 4 },
    edits = { { range = { start = pos(0, 0), ['end'] = pos(0, 3) }, newText = 'ONE' } },
  } } } }, { client_id = 0 })
  eq(result.applied, false)
  assert(result.failureReason:find('edit.txt changed in the editor since the agent read it', 1, true), result.failureReason)
  eq(vim.api.nvim_buf_get_lines(b, 0, 1, false), { 'one' })
  rawset(vim.lsp.util.buf_versions, b, nil)
  -- `changes` (no versions) apply too; a broken edit is not applied, with the reason.
  eq(apply(nil, { edit = { changes = { [uri] = { { range = { start = pos(0, 0), ['end'] = pos(0, 3) }, newText = 'ONE' } } } } },
    { client_id = 0 }), { applied = true })
  eq(vim.api.nvim_buf_get_lines(b, 0, 1, false), { 'ONE' })
  local broken = apply(nil, { edit = { documentChanges = { { kind = 'frobnicate' } } } }, { client_id = 0 })
  eq(broken.applied, false)
  local _, err = apply(nil, {}, { client_id = 0 })
  eq(err.code, protocol.errors.invalid_params)
  eq(#events, 4, vim.inspect(events))
  eq(events[1].label, 'PseudoClaude: edit edit.txt')
  vim.api.nvim_del_autocmd(au)
  vim.cmd('bwipeout! ' .. b)
end)

test('code actions: registered commands; arguments checked; Explain and Fix send, Ask waits', function()
  local code_actions = require('pseudoclaude.code_actions')
  code_actions.register()
  for command in pairs(protocol.code_actions) do
    assert(type(vim.lsp.commands[command]) == 'function', 'no handler for ' .. command)
  end
  local sel_range = { start = pos(3, 0), ['end'] = pos(5, 0) }
  local args = { path = 'app.py', range = sel_range, text = 'def f():\n  pass\n' }
  eq(select(2, code_actions.arguments(nil)), 'no selection in the command')
  eq(select(2, code_actions.arguments({ path = 'a', range = { start = pos(0, 0) }, text = '' })), 'no range in the command')
  eq(code_actions.arguments(vim.tbl_extend('force', args, { diagnostics = {} })).diagnostics, nil)
  local problem = { path = 'app.py', range = sel_range, severity = 'error', message = 'boom' }
  local chip, ctx = code_actions.context(vim.tbl_extend('force', args, { diagnostics = { problem } }))
  eq(chip, { activeFile = 'app.py', selection = { path = 'app.py', range = sel_range, text = args.text }, diagnostics = { problem } })
  eq(ctx, chip, 'the context is the chip (no open files)')
  -- Run them against a fake chat and client.
  local chat, prompt, client = require('pseudoclaude.chat'), require('pseudoclaude.chat.prompt'), require('pseudoclaude.client')
  local real = { show = chat.show, send = prompt.send, get = client.get, workspace = client.workspace, offer = chat.offer_prompt }
  local shown, sent, offered, busy = {}, {}, {}, false
  chat.show = function(ws, opts)
    shown[#shown + 1] = { ws = ws, chip = opts.chip, enter = opts.enter }
    if opts.done then
      opts.done({ workspace = ws })
    end
  end
  prompt.send = function(c, text, context)
    sent[#sent + 1] = { ws = c.workspace, text = text, context = context }
    return not busy
  end
  chat.offer_prompt = function(ws, text)
    offered[#offered + 1] = text
  end
  client.get = function()
    return { id = 1 }
  end
  client.workspace = function()
    return 'file:///w'
  end
  local shown_msgs = {}
  local real_notify = vim.notify
  vim.notify = function(msg)
    shown_msgs[#shown_msgs + 1] = msg
  end
  local ok, e = pcall(function()
    vim.lsp.commands['pseudoclaude.codeAction.explain']({ command = 'pseudoclaude.codeAction.explain', arguments = { args } }, { bufnr = 0 })
    code_actions.run('pseudoclaude.codeAction.ask', args, { bufnr = 0 })
    busy = true
    code_actions.run('pseudoclaude.codeAction.fix', vim.tbl_extend('force', args, { diagnostics = { problem } }), { bufnr = 0 })
    code_actions.run('pseudoclaude.codeAction.explain', { path = 'x' }, { bufnr = 0 })
  end)
  chat.show, prompt.send, client.get, client.workspace, chat.offer_prompt = real.show, real.send, real.get, real.workspace, real.offer
  vim.notify = real_notify
  assert(ok, e)
  eq(#shown, 3)
  eq(shown[1].enter, false, 'Explain stays in the code')
  eq(shown[2].enter, nil, 'Ask enters the prompt')
  eq(shown[2].chip.selection.text, args.text)
  eq(vim.tbl_map(function(s) return s.text end, sent), { 'Explain the selected code.', 'Fix the problems in the selected code.' })
  eq(sent[1].context, { activeFile = 'app.py', selection = { path = 'app.py', range = sel_range, text = args.text } })
  eq(sent[2].context.diagnostics, { problem })
  eq(offered, { 'Fix the problems in the selected code.' }, 'during a run the prompt waits on the prompt line')
  eq(shown_msgs, { 'PseudoClaude: PseudoClaude: Explain: no range in the command.' })
end)

--- Run `fn` with `client.request` answering an empty session (a chat opens against it).
local function with_fake_context(fn)
  local client = require('pseudoclaude.client')
  local real = client.request
  client.request = function(method, params, cb)
    if method == protocol.requests.context then
      return cb(nil, { sessionId = vim.NIL, messageCount = 0, estimatedTokens = 0, contextWindow = 200000,
        autoCompactThreshold = 167000, autoCompactFailures = 0, autoCompactTripped = false }, 'the client')
    end
    cb({ code = -32601, message = 'unhandled ' .. method }, nil, 'the client')
  end
  local ok, err = pcall(fn)
  client.request = real
  assert(ok, err)
end

test('chat: the chip above the prompt, Ctrl-D removes it, a prompt carries it, the echo shows it', function()
  local chat = require('pseudoclaude.chat')
  local window = require('pseudoclaude.chat.window')
  local pc = require('pseudoclaude')
  vim.cmd('silent! %bwipeout!')
  local app = file_buf(ROOT .. '/app.py', { 'def greet():', '    return 1', '', 'print(greet())' })
  file_buf(ROOT .. '/README.md', { '# r' })
  vim.api.nvim_set_current_buf(app)
  local sel = { path = 'app.py', range = { start = pos(0, 0), ['end'] = pos(2, 0) }, text = 'def greet():\n    return 1\n' }
  local c
  with_fake_context(function()
    c = chat.show(WS, { enter = false, chip = { activeFile = 'app.py', selection = sel } })
  end)
  local pw = vim.fn.win_findbuf(c.prompt_buf)[1]
  local function bar()
    return vim.api.nvim_eval_statusline(vim.wo[pw].winbar, { winid = pw, maxwidth = 300, use_winbar = true }).str
  end
  eq(vim.trim(bar()), 'Context: app.py:1-2 · 1 open file  Ctrl-D removes · ' .. window.PROMPT_HINTS)
  -- The winbar's highlights: the chip, then the hint.
  local hl = vim.api.nvim_eval_statusline(vim.wo[pw].winbar, { winid = pw, maxwidth = 300, use_winbar = true, highlights = true })
  eq(vim.tbl_map(function(x) return x.group end, hl.highlights), { 'WinBar', 'PseudoClaudeChatChip', 'PseudoClaudeChatChipHint' })
  -- Sending: the context goes with the prompt; the selection once, the file stays.
  local runs = {}
  local real_run = pc.run
  pc.run = function(text, opts)
    runs[#runs + 1] = { text = text, context = opts.context, workspace = opts.workspace }
  end
  chat.submit(c, 'What does greet do?')
  eq(runs[1].context, { activeFile = 'app.py', selection = sel, openFiles = { 'README.md' } })
  eq(vim.trim(bar()):sub(1, #'Context: app.py · 1 open file'), 'Context: app.py · 1 open file')
  -- Ctrl-D in the prompt: no chip, the next prompt goes without context.
  vim.api.nvim_set_current_win(pw)
  vim.api.nvim_feedkeys('A' .. vim.keycode('<C-d>') .. vim.keycode('<Esc>'), 'x', false)
  eq(c.chip, nil)
  eq(vim.trim(bar()), window.PROMPT_HINTS)
  chat.submit(c, 'And now?')
  eq(runs[2].context, nil)
  -- Coming to the prompt from a file's window: that file is the context again.
  vim.cmd('wincmd t')
  local filewin = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(filewin, app)
  vim.api.nvim_set_current_win(pw)
  eq(c.chip, { activeFile = 'app.py' })
  -- From the chat window: nothing changes.
  window.set_chip(c, { activeFile = 'app.py', selection = sel })
  vim.api.nvim_set_current_win(vim.fn.win_findbuf(c.buf)[1])
  vim.api.nvim_set_current_win(pw)
  eq(c.chip.selection, sel, 'kept')
  pc.run = real_run
  -- The echo of a prompt with its context, and its highlight.
  chat.begin_run(WS, 'What does greet do?', runs[1].context)
  local lines = vim.api.nvim_buf_get_lines(c.buf, 0, -1, false)
  eq(lines, { '## You', 'Context: app.py:1-2 · 1 open file', 'What does greet do?', '', '## PseudoClaude' })
  chat.abort_run(WS, 'canceled')
  vim.cmd('bwipeout! ' .. c.buf)
end)

test('chat items and transcript: a prompt with its context', function()
  local items = require('pseudoclaude.chat.items')
  local transcript = require('pseudoclaude.transcript')
  local ctx = { activeFile = 'app.py', selection = { path = 'app.py', range = { start = pos(9, 0), ['end'] = pos(14, 0) }, text = 'x' } }
  local item = { kind = 'user', text = 'Explain', context = ctx }
  eq(items.item_lines(item, true), { '## You', 'Context: app.py:10-14', 'Explain', '', '## PseudoClaude' })
  eq(items.line_groups(item, items.item_lines(item)), { false, false, 'PseudoClaudeChatContext', false, false, false })
  eq(items.item_lines({ kind = 'user', text = 'x', context = {} }, true), { '## You', 'x', '', '## PseudoClaude' })
  local from = items.from_transcript({ { kind = 'user', text = 'Explain', turn = 3, context = ctx, inContext = true },
    { kind = 'user', text = 'plain', turn = 4, inContext = true } }, 0)
  eq(from[1].context, ctx)
  eq(from[2].context, nil)
  eq(transcript.item_line({ kind = 'user', text = 'Explain', context = ctx }), 'You [app.py:10-14]: Explain')
  eq(transcript.item_line({ kind = 'user', text = 'plain' }), 'You: plain')
  transcript.begin_run(WS, 'Explain', ctx)
  local b = vim.fn.bufnr(transcript.NAME)
  local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
  assert(text:find('━━ You · ws ━━\nContext: app.py:10-14\nExplain\n━━ PseudoClaude ━━', 1, true), text)
end)

test('attach: every file buffer of the folder, also without a filetype or loaded before the client', function()
  vim.cmd('silent! %bwipeout!')
  local opened = {}
  local function fake(dispatchers)
    local closing, id = false, 0
    return {
      request = function(method, _, callback)
        id = id + 1
        local result = method == 'initialize' and { capabilities = { textDocumentSync = 2 } } or vim.NIL
        vim.schedule(function()
          callback(nil, result)
        end)
        return true, id
      end,
      notify = function(method, params)
        if method == 'textDocument/didOpen' then
          opened[#opened + 1] = vim.fs.basename(vim.uri_to_fname(params.textDocument.uri))
        elseif method == 'exit' then
          closing = true
          dispatchers.on_exit(0, 0)
        end
        return true
      end,
      is_closing = function()
        return closing
      end,
      terminate = function()
        closing = true
      end,
    }
  end
  vim.cmd.runtime('plugin/pseudoclaude.lua')
  -- Loaded before the client started.
  local early = file_buf(ROOT .. '/early.py', { 'x = 1' })
  vim.fn.writefile({ 'note' }, ROOT .. '/NOTES')
  vim.lsp.config('pseudoclaude', { cmd = fake })
  vim.lsp.enable('pseudoclaude')
  vim.cmd.edit(vim.fn.fnameescape(ROOT .. '/src/main.py'))
  local main = vim.api.nvim_get_current_buf()
  local function attached(b)
    return vim.lsp.get_clients({ name = 'pseudoclaude', bufnr = b })[1] ~= nil
  end
  assert(vim.wait(5000, function()
    return attached(main) and attached(early)
  end, 10), 'main.py and early.py not attached')
  vim.cmd.edit(vim.fn.fnameescape(ROOT .. '/NOTES'))
  local notes = vim.api.nvim_get_current_buf()
  eq(vim.bo[notes].filetype, '')
  assert(vim.wait(5000, function()
    return attached(notes)
  end, 10), 'NOTES (no filetype) not attached')
  eq(vim.tbl_map(function(x) return x.root_dir end, vim.lsp.get_clients({ name = 'pseudoclaude' })), { ROOT },
    'one client, of the folder')
  local scratch_buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_set_current_buf(scratch_buf)
  require('pseudoclaude.client').attach_buffer(scratch_buf)
  eq(attached(scratch_buf), false, 'a scratch buffer is not a file')
  assert(vim.wait(2000, function()
    return #opened == 3
  end, 10), vim.inspect(opened))
  table.sort(opened)
  eq(opened, { 'NOTES', 'early.py', 'main.py' })
  vim.lsp.enable('pseudoclaude', false)
end)

u.finish('nvim unit editor')
