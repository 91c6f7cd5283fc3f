--- PseudoClaude for Neovim: the commands' logic, the statusline meter and `setup()`.
--- See `:help pseudoclaude`.
local util = require('pseudoclaude.util')
local client = require('pseudoclaude.client')
local config = require('pseudoclaude.config')
local ctx = require('pseudoclaude.context')
local fmt = require('pseudoclaude.format')
local meter = require('pseudoclaude.meter')
local protocol = require('pseudoclaude.protocol')
local transcript = require('pseudoclaude.transcript')

local M = {}

--- How many items of a resumed session the transcript replays.
M.HISTORY_MESSAGES = 20

--- Runs in flight: workspace URI -> {client, id, cancelled, done, finish}
--- @type table<string, {client: vim.lsp.Client, id: integer?, cancelled: boolean, done: boolean, finish: function?}>
M.runs = {}

local notify = util.notify

local fire = util.fire

--- Apply options, configure the `pseudoclaude` server and enable it (unless `enable = false`).
--- Optional: `vim.lsp.enable('pseudoclaude')` alone works with the defaults.
--- @param opts? pseudoclaude.Options
function M.setup(opts)
  local o = config.set(opts)
  local lsp_config = { cmd = config.server_cmd(o), capabilities = config.capabilities(o) }
  if next(o.settings) ~= nil then
    lsp_config.settings = { pseudoclaude = o.settings }
  end
  vim.lsp.config(client.NAME, lsp_config)
  if o.enable then
    vim.lsp.enable(client.NAME)
  end
end

--- Ask the server for the context state of a folder and update the meter (quietly).
--- @param workspace? string
function M.refresh_context(workspace)
  local params = workspace and { workspace = workspace } or {}
  client.request(protocol.requests.context, params, function(err, result)
    if not err and result then
      meter.context(params.workspace, result)
      fire('PseudoClaudeContext', result)
    end
  end)
end

local function is_blank(s)
  return s == nil or vim.trim(s) == ''
end

--- Ask for a text with `vim.ui.input`; `cb(text)` unless it is dismissed or blank.
local function ask_for(prompt, cb)
  vim.ui.input({ prompt = prompt }, function(input)
    if not is_blank(input) then
      cb(input)
    end
  end)
end

local function report_stop(result)
  if type(result.error) == 'string' and result.error ~= '' then
    notify('PseudoClaude: the run stopped with an error: ' .. result.error, vim.log.levels.ERROR)
  elseif result.stopReason == 'max_iterations' then
    notify(
      string.format(
        'PseudoClaude: stopped after %s (maxIterations). Ask again to continue.',
        fmt.plural(result.iterations, 'iteration')
      ),
      vim.log.levels.WARN
    )
  elseif result.stopReason == 'unknown_tool_limit' then
    notify('PseudoClaude: stopped: the model called unknown tools twice in a row.', vim.log.levels.WARN)
  end
end

--- Where a run is shown: the transcript (always written, shown by `:PseudoClaudeAsk`) and the
--- folder's chat buffer, when one is open.
local function views(method, workspace, ...)
  if method == 'begin_run' then
    transcript.begin_run(workspace, ...)
  else
    transcript[method](...)
  end
  require('pseudoclaude.chat')[method](workspace, ...)
end

--- Run the agent on `prompt` in a folder (`opts.workspace`, else the current buffer's); the
--- answer streams into the transcript (shown unless `opts.transcript == false`) and the folder's
--- chat. One run per folder. `opts.context`: what the user is looking at (`EditorContext`: the
--- active file, the selection, the open files), sent with the prompt and shown with it.
--- @param prompt string
--- @param opts? {workspace?: string, transcript?: boolean, context?: pseudoclaude.EditorContext}
function M.run(prompt, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  client.ensure(function(c, start_err)
    if not c then
      return client.fail('Ask', start_err)
    end
    local ws = opts.workspace or client.workspace(c, bufnr)
    if M.runs[ws] then
      return notify(
        string.format(
          'PseudoClaude: a run is already in progress in %s: wait for it or use :PseudoClaudeCancel',
          fmt.basename(ws)
        ),
        vim.log.levels.WARN
      )
    end
    if opts.transcript ~= false then
      transcript.open(config.options.transcript.open)
    end
    views('begin_run', ws, prompt, opts.context)
    local run = { client = c, id = nil, cancelled = false, done = false, autocmd = nil }
    local function finish(err, result)
      if run.done then
        return
      end
      run.done = true
      if run.autocmd then
        pcall(vim.api.nvim_del_autocmd, run.autocmd)
      end
      M.runs[ws] = nil
      meter.set_running(ws, false)
      if err then
        if client.is_cancelled(err) or run.cancelled then
          views('abort_run', ws, 'canceled')
        else
          views('abort_run', ws, 'failed: ' .. client.error_message(err))
          client.fail('Ask', err)
        end
      else
        views('end_run', ws, result)
        report_stop(result)
      end
      M.refresh_context(ws)
      fire('PseudoClaudeRunDone', { workspace = ws, error = err, result = result })
    end
    local params = { prompt = prompt, workspace = ws, context = opts.context }
    local ok, id = c:request(protocol.requests.run, params, function(err, result)
      finish(err, result)
    end)
    if not ok then
      return finish({ message = 'the server is not running' })
    end
    run.id = id
    -- Neovim drops the RequestCancelled answer of a cancelled request (the handler never runs),
    -- but the reply still completes the request: finish a cancelled run then.
    run.autocmd = vim.api.nvim_create_autocmd('LspRequest', {
      callback = function(ev)
        local d = ev.data
        if d.client_id == c.id and d.request_id == id and d.request.type == 'complete' and run.cancelled then
          vim.schedule(function()
            finish({ code = protocol.errors.request_cancelled, message = 'canceled' })
          end)
        end
      end,
    })
    run.finish = finish
    M.runs[ws] = run
    meter.set_running(ws, true)
  end)
end

--- The context of a command given a range in a file buffer (`:'<,'>PseudoClaudeAsk`): the
--- file, the selection (the last visual one when the range is its lines, else the lines), the
--- open files. Nil outside a file of the client's workspace.
--- @param bufnr integer
--- @param range integer[] `{line1, line2}`
--- @param c vim.lsp.Client
--- @return pseudoclaude.EditorContext?
local function range_context(bufnr, range, c)
  local editor = require('pseudoclaude.editor')
  local ws = client.workspace(c, bufnr)
  local root = ws and editor.root(ws)
  local path = root and editor.path_of(bufnr, root)
  if not path then
    return nil
  end
  local sel = editor.selection(bufnr, path, range[1], range[2], c.offset_encoding or 'utf-16')
  return editor.context({ activeFile = path, selection = sel }, root)
end

--- `:PseudoClaudeAsk [prompt]`: run the agent; the answer streams into the transcript. With a
--- range (`:'<,'>PseudoClaudeAsk`) the selection goes with the prompt (`opts.range`; its
--- positions in the encoding of the client, started first when none runs).
--- @param prompt? string
--- @param opts? {range?: integer[], context?: pseudoclaude.EditorContext}
function M.ask(prompt, opts)
  opts = opts or {}
  if opts.range then
    local bufnr = vim.api.nvim_get_current_buf()
    return client.ensure(function(c, err)
      if not c then
        return client.fail('Ask', err)
      end
      M.ask(prompt, { context = range_context(bufnr, opts.range, c) })
    end)
  end
  local context = opts.context
  if is_blank(prompt) then
    return ask_for('Ask PseudoClaude: ', function(text)
      M.ask(text, { context = context })
    end)
  end
  M.run(prompt, { context = context })
end

--- `:PseudoClaudeChat`: the chat buffer of the current folder, with its prompt; the current file
--- (and with a range, the selection) as the context of the next prompt.
--- @param opts? {range?: integer[]}
function M.chat(opts)
  require('pseudoclaude.chat').open(opts)
end

--- `:PseudoClaudeProposals`: review pending memory proposals (a diff split each).
--- @param workspace? string
function M.proposals(workspace)
  require('pseudoclaude.proposals').open(workspace)
end

--- The server exited: the runs it had in flight end (Neovim never answers their handlers).
--- @param client_id integer
--- @param code integer
--- @param signal integer
function M.on_client_exit(client_id, code, signal)
  require('pseudoclaude.approvals').client_exit(client_id)
  local prompt = package.loaded['pseudoclaude.chat.prompt']
  if prompt then
    prompt.forget() -- the next server may offer other slash commands
  end
  for _, run in pairs(M.runs) do
    if run.client.id == client_id and run.finish then
      local how = (signal and signal ~= 0) and ('signal ' .. signal) or ('code ' .. tostring(code))
      run.finish({ message = string.format('the server exited (%s) during the run', how) })
    end
  end
end

--- `:PseudoClaudeCancel`: cancel the run(s) in flight (`$/cancelRequest`); only the one of
--- `workspace` when given.
--- @param workspace? string
function M.cancel(workspace)
  local any = false
  for ws, run in pairs(M.runs) do
    if workspace == nil or ws == workspace then
      any = true
      run.cancelled = true
      run.client:cancel_request(run.id)
    end
  end
  if not any then
    notify('PseudoClaude: no run in progress.')
  end
end

--- `:PseudoClaudeCompact [instructions]`: summarize the conversation now.
--- @param instructions? string
--- @param workspace? string (default: the current buffer's folder)
function M.compact(instructions, workspace)
  local params = { workspace = workspace }
  if not is_blank(instructions) then
    params.instructions = vim.trim(instructions)
  end
  notify('PseudoClaude: compacting…')
  client.request_or_fail(protocol.requests.compact, params, 'Compact', function(r)
    views('note', params.workspace, r.message)
    notify(ctx.message(r, 'compacted.'))
  end, function(err, r)
    M.refresh_context(params.workspace)
    fire('PseudoClaudeCompactDone', { error = err, result = r })
  end)
end

--- `:PseudoClaudePreview [instructions]`: what a compaction would do now (summarized and kept
--- messages, the estimate after, tool results that would be offloaded) in a float, then
--- `vim.ui.select` Compact / Cancel; only a message when there is nothing to compact.
--- @param instructions? string
--- @param workspace? string
function M.preview(instructions, workspace)
  local params = { workspace = workspace }
  if not is_blank(instructions) then
    params.instructions = vim.trim(instructions)
  end
  client.request_or_fail(protocol.requests.compact_preview, params, 'Preview', function(p)
    local plan = ctx.preview_plan(p, fmt.basename(params.workspace))
    fire('PseudoClaudePreview', { result = p, plan = plan })
    if plan.kind == 'nothing' then
      return notify(plan.message)
    end
    local lines = vim.list_extend({ plan.message, '' }, plan.lines)
    ctx.open_float(lines, 'PseudoClaude preview', { enter = false })
    vim.ui.select({ 'Compact', 'Cancel' }, { prompt = plan.message, kind = 'pseudoclaude_compact' }, function(choice)
      ctx.close_float()
      if choice == 'Compact' then
        M.compact(params.instructions, params.workspace)
      end
    end)
  end, function(err)
    if err then
      fire('PseudoClaudePreview', { error = err })
    end
  end)
end

--- `:PseudoClaudeUndo`: undo the last compaction of the session (the summarized messages come
--- back); a second undo goes one compaction further back.
--- @param workspace? string
function M.undo(workspace)
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.compact_undo, params, 'Undo', function(r)
    if r.restored then
      views('note', params.workspace, r.message)
    end
    notify(ctx.message(r, r.restored and 'compaction undone.' or 'nothing to undo.'))
  end, function(err, r)
    M.refresh_context(params.workspace)
    fire('PseudoClaudeUndoDone', { error = err, result = r })
  end)
end

local function edit_uri(uri)
  local path = vim.uri_to_fname(uri)
  vim.cmd.edit(vim.fn.fnameescape(path))
  if vim.fn.filereadable(path) == 0 then
    notify('PseudoClaude: ' .. path .. ' does not exist yet (:PseudoClaudeRemember creates it).', vim.log.levels.WARN)
  end
end

local function show_scratch(name, text)
  local b = vim.fn.bufnr(name)
  if b < 0 then
    b = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(b, name)
  end
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[b].modifiable = false
  vim.bo[b].filetype = 'markdown'
  vim.api.nvim_set_current_buf(b)
end

--- The items of the memory picker: the injected index, then per store MEMORY.md and its notes.
function M.memory_items(shown)
  local items = { { label = 'Memory index as the model sees it' .. (shown.truncated and ' (truncated)' or ''), index = true } }
  for _, store in ipairs(shown.stores or {}) do
    local level = store.level == 'user' and 'User' or 'Project'
    items[#items + 1] = { label = string.format('%s · MEMORY.md (%s)', level, store.dir), uri = store.indexUri }
    for _, note in ipairs(store.notes or {}) do
      local summary = (note.summary and note.summary ~= '') and (' — ' .. note.summary) or ''
      items[#items + 1] = {
        label = string.format('%s · [%s] %s%s', level, note.type, note.title ~= '' and note.title or note.filename, summary),
        uri = note.uri,
        level = store.level,
        filename = note.filename,
      }
    end
  end
  return items
end

--- Pick one of `items` (shown by their `label`) with `vim.ui.select`; `on_pick(item)` unless dismissed.
local function pick_item(items, prompt, kind, on_pick)
  vim.ui.select(items, {
    prompt = prompt,
    kind = kind,
    format_item = function(item)
      return item.label
    end,
  }, function(item)
    if item then
      on_pick(item)
    end
  end)
end

--- A window for a file picked from the chat: not the chat's own (one beside it, else a new one).
local function leave_chat()
  local chat = package.loaded['pseudoclaude.chat']
  if not (chat and chat.of_buf(vim.api.nvim_get_current_buf())) then
    return
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local cfg = vim.api.nvim_win_get_config(win)
    if cfg.relative == '' and not chat.of_buf(vim.api.nvim_win_get_buf(win)) then
      return vim.api.nvim_set_current_win(win)
    end
  end
  vim.cmd('topleft vnew')
end

--- `:PseudoClaudeMemory`: pick the injected index, a MEMORY.md or a note to open.
--- @param workspace? string (default: the current buffer's folder)
function M.memory(workspace)
  client.request_or_fail(protocol.requests.memory_show, { workspace = workspace }, 'Memory', function(shown)
    pick_item(M.memory_items(shown), 'PseudoClaude memory', 'pseudoclaude_memory', function(item)
      leave_chat()
      if item.index then
        show_scratch('pseudoclaude://memory-index', shown.index ~= '' and shown.index or '(the memory index is empty)')
      else
        edit_uri(item.uri)
      end
    end)
  end)
end

local function pick_level_and_type(cb)
  vim.ui.select(protocol.memory_levels, {
    prompt = 'Remember for this project or for all your projects?',
    kind = 'pseudoclaude_level',
  }, function(level)
    if not level then
      return
    end
    local opts = { prompt = 'What kind of memory is it?', kind = 'pseudoclaude_type' }
    vim.ui.select(protocol.memory_types, opts, function(kind)
      if kind then
        cb(level, kind)
      end
    end)
  end)
end

--- `:PseudoClaudeRemember [text]`: store a memory note (asks for the level and type).
--- @param text? string
function M.remember(text)
  if is_blank(text) then
    return ask_for('Remember: ', M.remember)
  end
  pick_level_and_type(function(level, kind)
    local params = { text = vim.trim(text), level = level, type = kind }
    client.request_or_fail(protocol.requests.memory_remember, params, 'Remember', function(r)
      notify(string.format('PseudoClaude: remembered in %s (%s memory).', r.filename, level))
    end, function(err, r)
      fire('PseudoClaudeRemembered', { error = err, result = r })
    end)
  end)
end

--- `:PseudoClaudeForget`: pick a note and forget it.
function M.forget()
  client.request_or_fail(protocol.requests.memory_show, {}, 'Forget', function(shown)
    local notes = vim.tbl_filter(function(i)
      return i.filename ~= nil
    end, M.memory_items(shown))
    if #notes == 0 then
      return notify('PseudoClaude: no memory notes to forget.')
    end
    pick_item(notes, 'Forget which note?', 'pseudoclaude_forget', function(item)
      local params = { level = item.level, filename = item.filename }
      client.request_or_fail(protocol.requests.memory_forget, params, 'Forget', function(r)
        notify(
          r.removed and ('PseudoClaude: forgot ' .. item.filename .. '.')
            or ('PseudoClaude: ' .. item.filename .. ' was already gone.')
        )
      end)
    end)
  end)
end

local function replay_history(c, ws, session_id)
  local head = { workspace = ws, sessionId = session_id, offset = 0, limit = 1 }
  c:request(protocol.requests.sessions_messages, head, function(e1, first)
    if e1 or not first then
      return
    end
    local offset = math.max(0, (first.total or 0) - M.HISTORY_MESSAGES)
    local params = { workspace = ws, sessionId = session_id, offset = offset, limit = M.HISTORY_MESSAGES }
    c:request(protocol.requests.sessions_messages, params, function(err, page)
      if not err and page then
        transcript.history(page.items or {}, offset)
      end
    end)
  end)
end

--- `:PseudoClaudeResume [id]`: continue a session (default `latest`). `opts.message`: the
--- notification instead of `resumed session ...` (a fork says what it made); `opts.done(err,
--- result)` after.
--- @param session_id? string
--- @param workspace? string
--- @param opts? {message?: string, done?: fun(err: table?, result: pseudoclaude.ResumeResult?)}
function M.resume(session_id, workspace, opts)
  opts = opts or {}
  session_id = is_blank(session_id) and 'latest' or vim.trim(session_id)
  local params = { sessionId = session_id, workspace = workspace }
  client.request_or_fail(protocol.requests.sessions_resume, params, 'Resume', function(r, c)
    transcript.note(string.format('resumed session %s (%s)', r.sessionId, fmt.plural(r.messageCount, 'message')))
    if opts.message and r.badLines == 0 and r.repaired == 0 then
      notify(opts.message)
    elseif r.badLines > 0 or r.repaired > 0 then
      notify(
        string.format(
          'PseudoClaude: resumed %s: %s skipped, %s made to the history.',
          r.sessionId,
          fmt.plural(r.badLines, 'unreadable line'),
          fmt.plural(r.repaired, 'repair')
        ),
        vim.log.levels.WARN
      )
    else
      notify(string.format('PseudoClaude: resumed session %s (%s).', r.sessionId, fmt.plural(r.messageCount, 'message')))
    end
    if c then
      replay_history(c, params.workspace, r.sessionId)
    end
    require('pseudoclaude.chat').session_changed(params.workspace)
  end, function(err, r)
    M.refresh_context(params.workspace)
    fire('PseudoClaudeResumed', { error = err, result = r })
    if opts.done then
      opts.done(err, r)
    end
  end)
end

--- `:PseudoClaudeRewind [turn] [mode]`: take the code, the conversation or both back to before a
--- prompt (picked when not given), after a preview in a float (`<CR>` rewinds, `q` cancels).
--- @param arg? string a prompt's number and `code`, `conversation` or `both`, each optional
--- @param workspace? string
function M.rewind(arg, workspace)
  require('pseudoclaude.rewind').start(arg, workspace)
end

--- `:PseudoClaudeFork [turn]`: continue in a new session with the conversation before prompt
--- `turn` (default: all of it); the new session becomes the current one.
--- @param turn? string|integer
--- @param workspace? string
function M.fork(turn, workspace)
  local n
  if type(turn) == 'number' then
    n = turn
  elseif not is_blank(turn) then
    n = tonumber(vim.trim(turn))
    if not n or n < 1 or n % 1 ~= 0 then
      return notify("PseudoClaude: Fork takes a prompt's number (none: the whole conversation).", vim.log.levels.WARN)
    end
  end
  require('pseudoclaude.rewind').fork(n, workspace)
end

--- One line per session for the picker: title · age · messages · model.
function M.session_label(s, now)
  local title = (s.title and s.title ~= '') and s.title or '(no messages yet)'
  local bits = { fmt.age(s.updatedAt, now), fmt.plural(s.messageCount or 0, 'message') }
  if type(s.model) == 'string' and s.model ~= '' then
    bits[#bits + 1] = s.model
  end
  return string.format('%s%s · %s', s.active and '● ' or '', title, table.concat(bits, ' · '))
end

--- `:PseudoClaudeSessions`: pick a session (`vim.ui.select`) and resume it.
--- @param workspace? string
function M.sessions(workspace)
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.sessions_list, params, 'Sessions', function(list)
    if #list.sessions == 0 then
      return notify('PseudoClaude: no sessions yet.')
    end
    local now = os.time()
    vim.ui.select(list.sessions, {
      prompt = 'Resume which PseudoClaude session?',
      kind = 'pseudoclaude_session',
      format_item = function(s)
        return M.session_label(s, now)
      end,
    }, function(s)
      if s then
        M.resume(s.id, params.workspace)
      end
    end)
  end)
end

--- `:PseudoClaudeNew`: start a new session.
--- @param workspace? string
function M.new_session(workspace)
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.sessions_new, params, 'New session', function(r)
    transcript.note('new session ' .. r.sessionId)
    require('pseudoclaude.chat').new_session(params.workspace, r.sessionId)
    notify('PseudoClaude: new session ' .. r.sessionId .. '.')
    M.refresh_context(params.workspace)
  end)
end

--- `:PseudoClaudeContext`: what fills the context (the breakdown: tokens, share of the window and
--- a bar per category; free and reserved), the window, the threshold and the breaker, in a float.
--- @param workspace? string
function M.context(workspace)
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.context, params, 'Context', function(c)
    local ws = params.workspace
    meter.context(ws, c)
    ctx.open_float(ctx.breakdown_lines(c), 'PseudoClaude context · ' .. fmt.basename(ws))
    if c.autoCompactTripped then
      notify(meter.describe(ws, c), vim.log.levels.WARN)
    end
  end)
end

--- `:PseudoClaudeMcp`: the MCP servers of the folder (status, where configured, tools) in a
--- float: `a` approves one, `r` restarts one, `<CR>` shows its tools, `R` refreshes.
--- @param workspace? string
function M.mcp(workspace)
  require('pseudoclaude.mcp').open(workspace)
end

--- `:PseudoClaudeTranscript`: show the transcript buffer.
function M.open_transcript()
  local how = config.options.transcript.open
  transcript.open(how == 'none' and 'vsplit' or how)
end

--- The context meter for a statusline: `''` without a server, `PseudoClaude` before numbers are
--- known, else `12k/200k` (`! ` in front when auto-compact stopped, `… ` during a run).
--- Example: `vim.o.statusline = "%f %= %{v:lua.require'pseudoclaude'.statusline()}"`
--- @return string
function M.statusline()
  local c = client.get(0)
  if not c then
    return ''
  end
  local ws = client.workspace(c, 0)
  return ws and meter.text(ws) or ''
end

--- `normal`, `warning` or `error`, for coloring the meter.
function M.statusline_level()
  local c = client.get(0)
  local ws = c and client.workspace(c, 0)
  return ws and meter.level(meter.get(ws)) or 'normal'
end

return M
