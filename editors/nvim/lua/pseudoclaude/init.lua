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

--- Runs in flight: `<workspace URI>\n<session id>` (no id: the folder's current session) ->
--- {client, id, workspace, session, chat, cancelled, done, finish}. Several sessions of a folder
--- run at once; one run per session.
--- @type table<string, {client: vim.lsp.Client, id: integer?, workspace: string, session?: string, chat?: pseudoclaude.Chat, cancelled: boolean, done: boolean, finish: function?}>
M.runs = {}

--- Prompts waiting for a busy session to be free (another process writes it): same keys ->
--- {workspace, session, chat, stop(reason?)}.
M.waits = {}

--- How often a prompt that waits for a busy session asks whether it is free (ms).
M.BUSY_POLL_MS = 1000

--- The key of a run (and of a wait) of session `session` (nil: the folder's current one).
function M.run_key(workspace, session)
  return tostring(workspace or ''):gsub('/+$', '') .. '\n' .. (session or '')
end

--- Whether a run of the folder is in flight (the statusline's `…`).
local function folder_runs(workspace)
  local prefix = M.run_key(workspace, nil)
  for key in pairs(M.runs) do
    if vim.startswith(key, prefix) then
      return true
    end
  end
  return false
end

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

--- The session of the folder's current chat (the one shown or entered last), which the folder's
--- commands act on; nil without one (then the server's current session).
--- @param workspace? string (default: the current buffer's folder)
--- @return string?
function M.chat_session(workspace)
  local chat = package.loaded['pseudoclaude.chat']
  if not chat then
    return nil
  end
  local ws = workspace
  if not ws then
    local c = client.get(0)
    ws = c and client.workspace(c, 0) or nil
  end
  local current = ws and chat.get(ws)
  return current and current.session_id or nil
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
--- chat buffer of its session (`target`: the chat that sent it, or its session; none: the
--- folder's current chat), when one is open.
--- @param target? {chat?: pseudoclaude.Chat, session?: string}
local function views(method, workspace, target, a, b)
  local chat = require('pseudoclaude.chat')
  if method == 'begin_run' then
    transcript.begin_run(workspace, a, b)
    chat.begin_run(workspace, a, b, target)
    return
  end
  transcript[method](a)
  chat[method](workspace, a, target)
end

--- The refusal when `err` is `SessionBusy` (another writer holds the session): `{sessionId, pid,
--- message}` (`pid` nil when not known), else nil.
--- @param err any
--- @param session? string the session the request was about
--- @return {sessionId: string, pid: integer?, message: string}?
function M.session_busy(err, session)
  local code = protocol.errors.session_busy
  if type(err) ~= 'table' or err.code ~= code then
    return nil
  end
  local data = type(err.data) == 'table' and err.data or {}
  local message = client.error_message(err)
  local sid = type(data.sessionId) == 'string' and data.sessionId ~= '' and data.sessionId
    or message:match('session (%S+) is busy') or session or ''
  return { sessionId = sid, pid = type(data.pid) == 'number' and data.pid or nil, message = message }
end

--- Run the agent on `prompt` in a folder (`opts.workspace`, else the current buffer's); the
--- answer streams into the transcript (shown unless `opts.transcript == false`) and the chat of
--- its session. `opts.session`: the session (default: the folder's current one); `opts.chat`: the
--- chat that sends it. One run per session: several sessions of a folder run at once. A session
--- another process (or request) is writing refuses the prompt: `vim.ui.select` offers Fork, Wait
--- and Cancel. `opts.context`: what the user is looking at (`EditorContext`: the active file, the
--- selection, the open files), sent with the prompt and shown with it.
--- @param prompt string
--- @param opts? {workspace?: string, transcript?: boolean, context?: pseudoclaude.EditorContext, session?: string, chat?: pseudoclaude.Chat}
function M.run(prompt, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  client.ensure(function(c, start_err)
    if not c then
      return client.fail('Ask', start_err)
    end
    local ws = opts.workspace or client.workspace(c, bufnr)
    if opts.session == nil and opts.chat == nil then
      -- `:PseudoClaudeAsk`: the session of the folder's chat, shown in that chat.
      local current = require('pseudoclaude.chat').get(ws)
      if current and current.session_id then
        opts = vim.tbl_extend('force', opts, { session = current.session_id, chat = current })
      end
    end
    local key = M.run_key(ws, opts.session)
    if M.runs[key] or M.waits[key] then
      return notify(
        string.format(
          'PseudoClaude: a run is already in progress in %s%s: wait for it or use :PseudoClaudeCancel',
          fmt.basename(ws), opts.session and (' (session ' .. opts.session .. ')') or ''
        ),
        vim.log.levels.WARN
      )
    end
    if opts.transcript ~= false then
      transcript.open(config.options.transcript.open)
    end
    local target = { chat = opts.chat, session = opts.session }
    views('begin_run', ws, target, prompt, opts.context)
    local run = { client = c, id = nil, cancelled = false, done = false, autocmd = nil, workspace = ws,
      session = opts.session, chat = opts.chat }
    local function finish(err, result)
      if run.done then
        return
      end
      run.done = true
      if run.autocmd then
        pcall(vim.api.nvim_del_autocmd, run.autocmd)
      end
      M.runs[key] = nil
      meter.set_running(ws, folder_runs(ws))
      local busy = err and not run.cancelled and M.session_busy(err, opts.session)
      if busy then
        transcript.abort_run('not sent: ' .. busy.message)
        require('pseudoclaude.chat').refused_run(ws, '✗ not sent: ' .. busy.message, target)
        M.busy_choice(prompt, vim.tbl_extend('force', opts, { workspace = ws }), busy)
      elseif err then
        if client.is_cancelled(err) or run.cancelled then
          views('abort_run', ws, target, 'canceled')
        else
          views('abort_run', ws, target, 'failed: ' .. client.error_message(err))
          client.fail('Ask', err)
        end
      else
        views('end_run', ws, target, result)
        report_stop(result)
      end
      M.refresh_context(ws)
      fire('PseudoClaudeRunDone', { workspace = ws, error = err, result = result })
    end
    local params = { prompt = prompt, workspace = ws, context = opts.context, sessionId = opts.session }
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
    M.runs[key] = run
    meter.set_running(ws, true)
  end)
end

--- Put a prompt that was not sent back on the prompt line of its chat (when it has one).
local function offer_back(ws, prompt, opts)
  local chat = require('pseudoclaude.chat')
  local target = chat.run_chat(ws, { chat = opts.chat, session = opts.session })
  if target then
    require('pseudoclaude.chat.prompt').offer(target, prompt)
  end
end

--- A prompt refused because its session is busy (another process writes it): `vim.ui.select`
--- Fork (a new session with the conversation so far; the prompt is sent there), Wait (sent in the
--- session once it is free) or Cancel (the prompt goes back on the chat's prompt line).
--- @param prompt string
--- @param opts table the run's options (`workspace` set)
--- @param busy {sessionId: string, pid: integer?, message: string}
function M.busy_choice(prompt, opts, busy)
  local who = busy.pid and ('process ' .. busy.pid) or 'another process'
  local words = {
    Fork = 'Fork: go on in a new session with this conversation so far, your prompt sent there',
    Wait = string.format('Wait: send it in this session once %s is done', who),
    Cancel = 'Cancel: keep the prompt (back on the prompt line)',
  }
  vim.ui.select({ 'Fork', 'Wait', 'Cancel' }, {
    prompt = string.format('PseudoClaude: session %s is busy: %s is writing it (another window or a terminal). '
      .. 'Your prompt was not sent.', busy.sessionId, who),
    kind = 'pseudoclaude_busy',
    format_item = function(item)
      return words[item]
    end,
  }, function(choice)
    if choice == 'Fork' then
      M.fork_and_send(prompt, opts, busy)
    elseif choice == 'Wait' then
      M.wait_and_send(prompt, opts, busy)
    else
      offer_back(opts.workspace, prompt, opts)
    end
    fire('PseudoClaudeBusy', { workspace = opts.workspace, sessionId = busy.sessionId, pid = busy.pid, choice = choice })
  end)
end

--- Fork a busy session (`sessions/fork`: the conversation so far; the busy one goes on as it is),
--- make the fork the current session (its chat takes the busy one's place) and send the prompt
--- there.
function M.fork_and_send(prompt, opts, busy)
  local ws = opts.workspace
  local params = { workspace = ws, sessionId = busy.sessionId }
  client.request_or_fail(protocol.requests.sessions_fork, params, 'Fork', function(r)
    local message = string.format('PseudoClaude: forked the busy session %s into %s: your prompt goes on there.',
      busy.sessionId, r.sessionId)
    local chats = require('pseudoclaude.chat').get(ws) ~= nil
    local function send(chat)
      M.run(prompt, vim.tbl_extend('force', opts, { session = r.sessionId, chat = chat or false }))
    end
    M.resume(r.sessionId, ws, {
      message = message,
      shown = send, -- the fork's chat shows the conversation so far, then the prompt
      done = function(err)
        if err then
          return offer_back(ws, prompt, opts)
        end
        if not chats then
          send(nil)
        end
      end,
    })
  end, function(err)
    if err then
      offer_back(ws, prompt, opts)
    end
  end)
end

--- Wait until a busy session is free (`sessions/list` every `BUSY_POLL_MS`: its `running`), then
--- send the prompt in it (the chat shows what the other process added first). `:PseudoClaudeCancel`
--- (Ctrl-C in the chat) stops waiting: the prompt goes back on the prompt line.
function M.wait_and_send(prompt, opts, busy)
  local ws = opts.workspace
  local chat_mod = require('pseudoclaude.chat')
  local chat = chat_mod.run_chat(ws, { chat = opts.chat, session = busy.sessionId })
  local key = M.run_key(ws, busy.sessionId)
  if M.waits[key] then
    return
  end
  local who = busy.pid and ('process ' .. busy.pid) or 'another process'
  local timer = assert(vim.uv.new_timer())
  local wait = { workspace = ws, session = busy.sessionId, chat = chat, done = false, asking = false }
  local function finish()
    if wait.done then
      return false
    end
    wait.done = true
    M.waits[key] = nil
    timer:stop()
    timer:close()
    if chat then
      chat.waiting = nil
    end
    meter.set_running(ws, folder_runs(ws))
    return true
  end
  --- Stop waiting (nothing is sent): `reason` in the chat, the prompt back on its prompt line.
  function wait.stop(reason)
    if finish() then
      chat_mod.note(ws, reason or 'stopped waiting: your prompt was not sent (it is back on the prompt line)',
        { chat = chat })
      offer_back(ws, prompt, opts)
      fire('PseudoClaudeWaitDone', { workspace = ws, sessionId = busy.sessionId, sent = false })
    end
  end
  M.waits[key] = wait
  if chat then
    chat.waiting = true
  end
  meter.set_running(ws, true)
  chat_mod.note(ws, string.format('waiting for session %s to be free (%s is writing it): your prompt is sent'
    .. ' as soon as it is done; Ctrl-C stops waiting', busy.sessionId, who), { chat = chat })
  timer:start(M.BUSY_POLL_MS, M.BUSY_POLL_MS, vim.schedule_wrap(function()
    if wait.done or wait.asking then
      return
    end
    wait.asking = true
    client.request(protocol.requests.sessions_list, { workspace = ws }, function(err, list)
      wait.asking = false
      if wait.done then
        return
      end
      if err then
        return wait.stop('stopped waiting: ' .. client.error_message(err) .. ' (your prompt was not sent)')
      end
      local found
      for _, s in ipairs(type(list) == 'table' and list.sessions or {}) do
        if s.id == busy.sessionId then
          found = s
        end
      end
      if not found then
        return wait.stop(string.format('stopped waiting: session %s is not listed any more', busy.sessionId))
      end
      if found.running == true then
        return
      end
      finish()
      fire('PseudoClaudeWaitDone', { workspace = ws, sessionId = busy.sessionId, sent = true })
      local send = function()
        M.run(prompt, vim.tbl_extend('force', opts, { session = busy.sessionId, chat = chat or false }))
      end
      if chat then
        -- What the other process added comes first.
        chat.prompts = {}
        require('pseudoclaude.chat.history').reload(chat, send)
      else
        send()
      end
    end)
  end))
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
  for _, wait in pairs(M.waits) do
    wait.stop('stopped waiting: the server exited (your prompt was not sent)')
  end
end

--- Whether a run (or a wait) belongs to `chat`: sent by it, of its session, or (none named) of
--- the folder's current session, which the folder's current chat shows.
local function of_chat(run, chat)
  if run.chat == chat or (run.session and run.session == chat.session_id) then
    return true
  end
  return not run.chat and not run.session and require('pseudoclaude.chat').get(chat.workspace) == chat
end

--- `:PseudoClaudeCancel`: cancel the run(s) in flight (`$/cancelRequest`) and stop the prompts
--- waiting for a busy session; only those of `workspace` when given, and of `chat` (its session's)
--- when given.
--- @param workspace? string
--- @param chat? pseudoclaude.Chat
function M.cancel(workspace, chat)
  local any = false
  local function mine(run)
    return (workspace == nil or M.run_key(run.workspace) == M.run_key(workspace)) and (chat == nil or of_chat(run, chat))
  end
  for _, run in pairs(M.runs) do
    if mine(run) then
      any = true
      run.cancelled = true
      run.client:cancel_request(run.id)
    end
  end
  for _, wait in pairs(M.waits) do
    if mine(wait) then
      any = true
      wait.stop()
    end
  end
  if not any then
    notify('PseudoClaude: no run in progress.')
  end
end

--- `:PseudoClaudeCompact [instructions]`: summarize the conversation now.
--- @param instructions? string
--- @param workspace? string (default: the current buffer's folder)
--- @param session? string (default: the folder's current session)
function M.compact(instructions, workspace, session)
  session = session or M.chat_session(workspace)
  local params = { workspace = workspace, sessionId = session }
  if not is_blank(instructions) then
    params.instructions = vim.trim(instructions)
  end
  notify('PseudoClaude: compacting…')
  client.request_or_fail(protocol.requests.compact, params, 'Compact', function(r)
    views('note', params.workspace, session and { session = session } or nil, r.message)
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
--- @param session? string (default: the folder's current session)
function M.preview(instructions, workspace, session)
  session = session or M.chat_session(workspace)
  local params = { workspace = workspace, sessionId = session }
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
        M.compact(params.instructions, params.workspace, session)
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
--- @param session? string (default: the folder's current session)
function M.undo(workspace, session)
  session = session or M.chat_session(workspace)
  local params = { workspace = workspace, sessionId = session }
  client.request_or_fail(protocol.requests.compact_undo, params, 'Undo', function(r)
    if r.restored then
      views('note', params.workspace, session and { session = session } or nil, r.message)
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
--- `opts.shown(chat)`: once the session's chat (when the folder has one open) shows its history.
--- @param opts? {message?: string, done?: fun(err: table?, result: pseudoclaude.ResumeResult?), beside?: boolean, title?: string, worktree?: string|false, shown?: fun(chat: pseudoclaude.Chat)}
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
    require('pseudoclaude.chat').session_changed(params.workspace, r.sessionId,
      { beside = opts.beside, title = opts.title, worktree = opts.worktree, done = opts.shown })
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
  require('pseudoclaude.rewind').start(arg, workspace, M.chat_session(workspace))
end

--- `:PseudoClaudeFork [turn]`: continue in a new session with the conversation before prompt
--- `turn` (default: all of it); the new session becomes the current one.
--- @param turn? string|integer
--- @param workspace? string
--- @param session? string the session forked (default: the folder's current one)
function M.fork(turn, workspace, session)
  local n
  if type(turn) == 'number' then
    n = turn
  elseif not is_blank(turn) then
    n = tonumber(vim.trim(turn))
    if not n or n < 1 or n % 1 ~= 0 then
      return notify("PseudoClaude: Fork takes a prompt's number (none: the whole conversation).", vim.log.levels.WARN)
    end
  end
  require('pseudoclaude.rewind').fork(n, workspace, { session = session or M.chat_session(workspace) })
end

--- One line per session for the picker: `●` when it runs (here or in another process), title,
--- the branch of its worktree, age, messages, model; the current one says so.
function M.session_label(s, now)
  local title = (s.title and s.title ~= '') and s.title or '(no messages yet)'
  local bits = { fmt.age(s.updatedAt, now), fmt.plural(s.messageCount or 0, 'message') }
  if type(s.model) == 'string' and s.model ~= '' then
    bits[#bits + 1] = s.model
  end
  if type(s.worktree) == 'string' and s.worktree ~= '' then
    table.insert(bits, 1, 'worktree ' .. s.worktree)
  end
  return string.format('%s%s · %s%s', s.running == true and '● ' or '', fmt.one_line(title, 60),
    table.concat(bits, ' · '), s.active and ' · current' or '')
end

--- `:PseudoClaudeSessions`: pick a session (`vim.ui.select`) and resume it: its chat takes the
--- folder's chat window (`opts.beside`, `:PseudoClaudeSessions!`: it opens beside it).
--- @param workspace? string
--- @param opts? {beside?: boolean}
function M.sessions(workspace, opts)
  opts = opts or {}
  local params = { workspace = workspace }
  client.request_or_fail(protocol.requests.sessions_list, params, 'Sessions', function(list)
    if #list.sessions == 0 then
      return notify('PseudoClaude: no sessions yet.')
    end
    local now = os.time()
    vim.ui.select(list.sessions, {
      prompt = opts.beside and 'Open which PseudoClaude session beside this one?' or 'Resume which PseudoClaude session?',
      kind = 'pseudoclaude_session',
      format_item = function(s)
        return M.session_label(s, now)
      end,
    }, function(s)
      if s then
        M.resume(s.id, params.workspace, { beside = opts.beside, title = s.title,
          worktree = type(s.worktree) == 'string' and s.worktree or false })
      end
    end)
  end)
end

--- `:PseudoClaudeNew`: start a new session (its own chat buffer). `opts.worktree` (`/worktree`):
--- in a git worktree of its own, whose changes reach the folder when applied
--- (`:PseudoClaudeWorktree`).
--- @param workspace? string
--- @param opts? {worktree?: boolean}
function M.new_session(workspace, opts)
  opts = opts or {}
  local params = { workspace = workspace, worktree = opts.worktree or nil }
  local what = opts.worktree and 'New session in a worktree' or 'New session'
  client.request_or_fail(protocol.requests.sessions_new, params, what, function(r)
    local worktree = type(r.worktree) == 'table' and r.worktree or nil
    transcript.note('new session ' .. r.sessionId .. (worktree and (' in worktree ' .. worktree.branch) or ''))
    require('pseudoclaude.chat').new_session(params.workspace, r.sessionId, worktree)
    if worktree then
      notify(string.format('PseudoClaude: new session %s in a git worktree (branch %s, in %s): its changes reach the'
        .. ' folder when you apply them (:PseudoClaudeWorktree apply).', r.sessionId, worktree.branch, worktree.path))
    else
      notify('PseudoClaude: new session ' .. r.sessionId .. '.')
    end
    M.refresh_context(params.workspace)
  end, function(err, r)
    fire('PseudoClaudeNewSession', { workspace = params.workspace, error = err, result = r })
  end)
end

--- `:PseudoClaudeWorktree [status|apply|remove[!]]`: the worktree of the session (a chat's, else
--- the folder's current one): its changes in a buffer, applied to the folder, or removed.
--- @param action? string
--- @param workspace? string
--- @param opts? {session?: string, force?: boolean}
function M.worktree(action, workspace, opts)
  require('pseudoclaude.worktree').command(action, workspace, opts)
end

--- `:PseudoClaudeContext`: what fills the context (the breakdown: tokens, share of the window and
--- a bar per category; free and reserved), the window, the threshold and the breaker, in a float.
--- @param workspace? string
--- @param session? string (default: the folder's current session)
function M.context(workspace, session)
  local params = { workspace = workspace, sessionId = session or M.chat_session(workspace) }
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

--- `:PseudoClaudeAgents`: the sub-agents of the session (the current chat's), in a list: `<CR>`
--- opens one's transcript, `x` stops a background one.
--- @param workspace? string
--- @param session? string
function M.agents(workspace, session)
  require('pseudoclaude.agents').open(workspace, session)
end

--- `:PseudoClaudeHooks`: the folder's hooks by event (what each runs, where it is defined,
--- whether it runs, and the entries that cannot be read), in a float.
--- @param workspace? string
function M.hooks(workspace)
  require('pseudoclaude.hooks').open(workspace)
end

--- `:PseudoClaudeSkills`: the folder's skills (where each is defined, loaded or not, what it
--- does), in a float; `<CR>` on one puts `/<name> ` in the chat's prompt.
--- @param workspace? string
function M.skills(workspace)
  require('pseudoclaude.skills').open(workspace)
end

--- `:PseudoClaudeMode [mode]`: set the permission mode of the session (the chat's, else the
--- folder's current one; with no session yet, the mode the next one starts in), or pick one of
--- the allowed modes with `vim.ui.select`.
--- @param mode? string
--- @param workspace? string
--- @param session? string
function M.mode(mode, workspace, session)
  require('pseudoclaude.permissions').command(mode, workspace, session)
end

--- `:PseudoClaudePermissions`: the session's mode, the sandbox, the permission rules by decision
--- with their source, the problems and the files waiting for approval, in a float.
--- @param workspace? string
--- @param session? string
function M.permissions(workspace, session)
  require('pseudoclaude.permissions').open(workspace, session)
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
