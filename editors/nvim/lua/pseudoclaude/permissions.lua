--- Permission modes and rules: `:PseudoClaudeMode` (set a session's mode, or pick one),
--- `<S-Tab>` in a chat's prompt (the next allowed mode), the mode each session is in (from
--- `pseudoclaude/context` answers, `mode` events and the plugin's own requests, shown in the
--- chat's winbar), and `:PseudoClaudePermissions` (the mode, the sandbox, the rules by decision
--- with their source, problems and the folder's files waiting for approval, in a float).
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')
local util = require('pseudoclaude.util')

local M = {}

local MODES = protocol.permission_modes

--- Every mode, in the order the server lists them (and `<S-Tab>` cycles them).
M.ORDER = { MODES.strict, MODES.default, MODES.accept_edits, MODES.plan, MODES.bypass_permissions }

--- What each mode does, in one line (the picker, the float, messages).
M.MEANINGS = {
  [MODES.strict] = 'every tool asks first',
  [MODES.default] = 'edits and commands follow your approval settings',
  [MODES.accept_edits] = 'edits run without asking; commands still ask',
  [MODES.plan] = 'only reading tools run until you approve a plan',
  [MODES.bypass_permissions] = 'nothing asks; deny rules still hold',
}

--- Where a rule comes from, in words (`pseudoclaude/permissions` rules' `source`).
M.SOURCES = {
  user = '~/.PseudoClaude/permissions.yaml',
  project = '.PseudoClaude/permissions.yaml',
  ['local'] = '.PseudoClaude/permissions.local.yaml',
  settings = 'the permissions setting',
  session = 'this session',
  mode = 'the mode',
  blacklist = 'dangerous commands',
  sandbox = 'the sandbox',
}

--- The float's keys, as its last line says them.
M.HELP = 'm change the mode · R refresh · q close'

--- The highlight groups (`default`: a colorscheme may set them).
M.HIGHLIGHTS = {
  PseudoClaudeMode = 'Special',
  PseudoClaudeModeBypass = 'WarningMsg',
  PseudoClaudePermissionsHeading = 'Title',
  PseudoClaudePermissionsDeny = 'DiagnosticError',
  PseudoClaudePermissionsAsk = 'DiagnosticWarn',
  PseudoClaudePermissionsAllow = 'DiagnosticOk',
  PseudoClaudePermissionsDim = 'Comment',
}
util.link_highlights('permissions', M.HIGHLIGHTS)

--- The mode of each session as last heard: `<folder>\n<session id>` (no id: the mode a folder's
--- next session starts in) -> mode.
--- @type table<string, string>
M.known = {}

--- The modes each folder's sessions may switch to (the last `pseudoclaude/permissions` answer).
--- @type table<string, string[]>
M.allowed = {}

local function ws_key(workspace)
  return (tostring(workspace or ''):gsub('/+$', ''))
end

local function key(workspace, session)
  return ws_key(workspace) .. '\n' .. (session or '')
end

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

--- Remember the mode of a session (nil: the folder's next session) and redraw the winbars.
--- @param workspace string
--- @param session? string
--- @param mode? string
function M.remember(workspace, session, mode)
  if not given(mode) or workspace == nil then
    return
  end
  local k = key(workspace, given(session))
  if M.known[k] ~= mode then
    M.known[k] = mode
    pcall(vim.cmd, 'redrawstatus!')
  end
end

--- The mode of a session as last heard (a session not heard of yet: the mode the folder's next
--- session starts in, which it started in), nil when unknown.
--- @param workspace string
--- @param session? string
--- @return string?
function M.mode_of(workspace, session)
  return M.known[key(workspace, given(session))] or M.known[key(workspace, nil)]
end

--- A `pseudoclaude/context` answer (it says the session's mode).
--- @param workspace string
--- @param c pseudoclaude.ContextResult
function M.context(workspace, c)
  if type(c) == 'table' then
    M.remember(workspace, given(c.sessionId), c.mode)
  end
end

--- A `mode` event: the session's mode changed (a request, another client, an approved plan).
--- @param e {workspace: string, sessionId?: string, mode: string}
function M.event(e)
  if type(e) == 'table' then
    M.remember(e.workspace, given(e.sessionId), e.mode)
  end
end

--- A `pseudoclaude/permissions` answer: the session's mode and the modes allowed.
local function heard(workspace, session, r)
  if type(r) ~= 'table' then
    return
  end
  M.remember(workspace, session, r.mode)
  if type(r.modes) == 'table' and #r.modes > 0 then
    M.allowed[ws_key(workspace)] = r.modes
  end
end

--- `acceptEdits  edits run without asking; commands still ask` (`· now` after the current one).
--- @param mode string
--- @param current? string
--- @return string
function M.label(mode, current)
  local meaning = M.MEANINGS[mode]
  return string.format('%-18s %s%s', mode, meaning or '', mode == current and '  · now' or '')
end

--- The mode after `current` among `modes` (wrapping; the first when `current` is not there).
--- @param modes string[]
--- @param current? string
--- @return string?
function M.next_mode(modes, current)
  if type(modes) ~= 'table' or #modes == 0 then
    return nil
  end
  for i, m in ipairs(modes) do
    if m == current then
      return modes[i % #modes + 1]
    end
  end
  return modes[1]
end

--- The words of a mode for a winbar: `plan mode`.
--- @param mode? string
--- @return string?
function M.words(mode)
  return given(mode) and (mode .. ' mode') or nil
end

--- The highlight group a mode is shown with (`bypassPermissions` stands out).
--- @param mode string
--- @return string
function M.group(mode)
  return mode == MODES.bypass_permissions and 'PseudoClaudeModeBypass' or 'PseudoClaudeMode'
end

--- The session a command is about: the chat of the current buffer's, else the folder's current
--- chat's (nil: the folder's current session).
local function target_session(workspace)
  local chat = package.loaded['pseudoclaude.chat']
  local shown = chat and chat.of_buf(vim.api.nvim_get_current_buf())
  if shown and (workspace == nil or ws_key(shown.workspace) == ws_key(workspace)) then
    return shown.session_id
  end
  return require('pseudoclaude').chat_session(workspace)
end

--- Ask the server for the permissions of a session: `cb(err, result, workspace)`.
--- @param workspace? string
--- @param session? string
--- @param cb fun(err: table?, result: pseudoclaude.PermissionsResult?, workspace: string?)
function M.request(workspace, session, cb)
  local params = { workspace = workspace, sessionId = session }
  client.request(protocol.requests.permissions, params, function(err, r)
    if not err then
      heard(params.workspace, session, r)
    end
    cb(err, r, params.workspace)
  end)
end

--- Set the mode of a session (nil: the folder's current one; with no session yet, the mode the
--- next one starts in). `opts.quiet`: no message on success (`<S-Tab>`: the winbar shows it);
--- a failure is always shown. `opts.done(err, result)` after.
--- @param mode string
--- @param workspace? string
--- @param session? string
--- @param opts? {quiet?: boolean, done?: fun(err: table?, result: pseudoclaude.ModeResult?)}
function M.set(mode, workspace, session, opts)
  opts = opts or {}
  local params = { workspace = workspace, sessionId = session, mode = mode }
  client.request(protocol.requests.mode, params, function(err, r)
    if err then
      client.fail('Mode', err)
    else
      M.remember(params.workspace, session, r.mode)
      if not session then
        -- Which session it was (the folder's current one, or the next): the context says.
        require('pseudoclaude').refresh_context(params.workspace)
      end
      local message = given(r.message) or (r.mode .. ' mode: ' .. (M.MEANINGS[r.mode] or ''))
      if opts.quiet then
        vim.api.nvim_echo({ { 'PseudoClaude: ' .. message } }, false, {})
      else
        util.notify('PseudoClaude: ' .. message)
      end
    end
    util.fire('PseudoClaudeMode', { workspace = params.workspace, sessionId = session, mode = mode, error = err,
      result = r })
    if opts.done then
      opts.done(err, r)
    end
  end)
end

--- Pick a mode among the allowed ones (`vim.ui.select`, kind `pseudoclaude_mode`), each with
--- what it means, and set it.
--- @param workspace? string
--- @param session? string
function M.pick(workspace, session)
  M.request(workspace, session, function(err, r, ws)
    if err then
      return client.fail('Mode', err)
    end
    local modes = type(r.modes) == 'table' and #r.modes > 0 and r.modes or M.ORDER
    util.fire('PseudoClaudeModePicker', { workspace = ws, sessionId = session, result = r })
    vim.ui.select(modes, {
      prompt = string.format('PseudoClaude permission mode (now %s):', tostring(r.mode)),
      kind = 'pseudoclaude_mode',
      format_item = function(m)
        return M.label(m, r.mode)
      end,
    }, function(choice)
      if choice then
        M.set(choice, ws, session)
      end
    end)
  end)
end

--- `:PseudoClaudeMode [mode]`: set the mode of the session (a chat's, else the folder's current
--- one), or pick it.
--- @param arg? string
--- @param workspace? string
--- @param session? string
function M.command(arg, workspace, session)
  session = session or target_session(workspace)
  arg = vim.trim(arg or '')
  if arg == '' then
    return M.pick(workspace, session)
  end
  M.set(arg, workspace, session)
end

--- `<S-Tab>` in a chat's prompt: the chat's session goes to the next allowed mode. Presses while
--- the server answers count: each goes one mode further.
--- @param chat pseudoclaude.Chat
function M.cycle(chat)
  if chat.mode_cycling then
    chat.mode_presses = (chat.mode_presses or 0) + 1
    return
  end
  chat.mode_cycling = true
  local ws, session = chat.workspace, chat.session_id
  local function finish(err)
    chat.mode_cycling = false
    local more = chat.mode_presses or 0
    chat.mode_presses = 0
    if not err and more > 0 then
      chat.mode_presses = more - 1
      M.cycle(chat)
    end
  end
  local function step(modes, current)
    local nxt = M.next_mode(modes, current)
    if not nxt then
      return finish({ message = 'no modes' })
    end
    M.set(nxt, ws, session, { quiet = true, done = finish })
  end
  local modes, current = M.allowed[ws_key(ws)], M.known[key(ws, session)]
  if modes and current then
    return step(modes, current)
  end
  M.request(ws, session, function(err, r)
    if err then
      client.fail('Mode', err)
      return finish(err)
    end
    step(type(r.modes) == 'table' and #r.modes > 0 and r.modes or M.ORDER, r.mode)
  end)
end

--- The modes `:PseudoClaudeMode` completes: those the server allows (all of them when it does
--- not answer at once).
--- @param arg_lead string
--- @return string[]
function M.complete(arg_lead)
  local modes
  local c = client.get(0)
  if c and c.initialized then
    local ws = client.workspace(c, 0)
    local resp = c:request_sync(protocol.requests.permissions, { workspace = ws, sessionId = target_session(ws) }, 1000)
    local r = resp and resp.result
    if type(r) == 'table' and type(r.modes) == 'table' and #r.modes > 0 then
      modes = r.modes
      M.allowed[ws_key(ws)] = r.modes
    end
  end
  return vim.tbl_filter(function(m)
    return vim.startswith(m, arg_lead)
  end, modes or M.ORDER)
end

-- :PseudoClaudePermissions ---------------------------------------------------------------------

--- The sandbox in words: `on`/`off` and why (`nil` reason: none given).
--- @param sandbox? pseudoclaude.SandboxState
--- @return string
function M.sandbox_text(sandbox)
  if type(sandbox) ~= 'table' then
    return 'not reported by this server'
  end
  local reason = given(sandbox.reason)
  if sandbox.enabled then
    return 'on: commands run in the sandbox' .. (reason and (' (' .. reason .. ')') or '')
  end
  return 'off' .. (reason and (': ' .. reason) or ': commands run without a sandbox')
end

local DECISION_ORDER = {
  { 'deny', 'Deny', 'PseudoClaudePermissionsDeny' },
  { 'ask', 'Ask', 'PseudoClaudePermissionsAsk' },
  { 'allow', 'Allow', 'PseudoClaudePermissionsAllow' },
}

--- The lines of `:PseudoClaudePermissions` and their highlights (`{line (0-based), group}`): the
--- mode (and the others allowed), the sandbox, the rules by decision with their source, the
--- problems, the folder's files waiting for approval, then the keys.
--- @param r pseudoclaude.PermissionsResult
--- @return string[] lines, {[1]: integer, [2]: string}[] highlights
function M.lines(r)
  local lines, marks = {}, {}
  local function add(text, group, col)
    lines[#lines + 1] = text
    if group then
      marks[#marks + 1] = { #lines - 1, group, col }
    end
  end
  local mode = tostring(r.mode)
  add(string.format('Mode      %s: %s', mode, M.MEANINGS[mode] or ''), M.group(mode), 10)
  local others = vim.tbl_filter(function(m)
    return m ~= mode
  end, type(r.modes) == 'table' and r.modes or {})
  if #others > 0 then
    add('          also allowed: ' .. table.concat(others, ', ') .. ' (m, or :PseudoClaudeMode)',
      'PseudoClaudePermissionsDim')
  end
  local sandbox = type(r.sandbox) == 'table' and r.sandbox or nil
  add('Sandbox   ' .. M.sandbox_text(sandbox), sandbox and not sandbox.enabled and 'PseudoClaudePermissionsAsk' or nil,
    10)
  local rules = type(r.rules) == 'table' and r.rules or {}
  if #rules == 0 then
    add('')
    add('No permission rules: the mode decides.', 'PseudoClaudePermissionsDim')
  end
  local width = 0
  for _, rule in ipairs(rules) do
    width = math.max(width, vim.fn.strdisplaywidth(tostring(rule.rule)))
  end
  width = math.min(width, 48)
  for _, d in ipairs(DECISION_ORDER) do
    local these = vim.tbl_filter(function(rule)
      return rule.decision == d[1]
    end, rules)
    if #these > 0 then
      add('')
      add(string.format('%s (%d)', d[2], #these), d[3])
      for _, rule in ipairs(these) do
        local text = tostring(rule.rule)
        local pad = string.rep(' ', math.max(1, width - vim.fn.strdisplaywidth(text) + 2))
        add('  ' .. text .. pad .. (M.SOURCES[rule.source] or tostring(rule.source)))
      end
    end
  end
  local problems = type(r.problems) == 'table' and r.problems or {}
  if #problems > 0 then
    add('')
    add(string.format('Problems (%d): these rules do not apply', #problems), 'PseudoClaudePermissionsDeny')
    for _, p in ipairs(problems) do
      add('  ! ' .. fmt.one_line(tostring(p), 200))
    end
  end
  local waiting = type(r.waiting) == 'table' and r.waiting or {}
  if #waiting > 0 then
    add('')
    add('Waiting for your approval: their allow rules do not apply yet', 'PseudoClaudePermissionsAsk')
    for _, w in ipairs(waiting) do
      add('  ? ' .. tostring(w))
    end
    add('  (restart the server with :LspRestart to be asked, or run `pseudoclaude permissions approve`)',
      'PseudoClaudePermissionsDim')
  end
  add('')
  add(M.HELP, 'PseudoClaudePermissionsDim')
  -- The section titles.
  for i, l in ipairs(lines) do
    if l:match('^Mode  ') or l:match('^Sandbox ') then
      marks[#marks + 1] = { i - 1, 'PseudoClaudePermissionsHeading', 0, 9 }
    end
  end
  return lines, marks
end

local NS = vim.api.nvim_create_namespace('pseudoclaude_permissions')

--- `:PseudoClaudePermissions`: the mode, the sandbox, the rules, the problems and the files that
--- wait for approval, in a float (`m` changes the mode, `R` refreshes, `q` closes).
--- @param workspace? string
--- @param session? string
function M.open(workspace, session)
  session = session or target_session(workspace)
  M.request(workspace, session, function(err, r, ws)
    if err then
      client.fail('Permissions', err)
      return util.fire('PseudoClaudePermissions', { workspace = ws, error = err })
    end
    local ctx = require('pseudoclaude.context')
    local lines, marks = M.lines(r)
    local buf, win = ctx.open_float(lines, 'PseudoClaude permissions · ' .. fmt.basename(ws),
      { filetype = 'pseudoclaude_permissions' })
    for _, m in ipairs(marks) do
      pcall(vim.api.nvim_buf_set_extmark, buf, NS, m[1], m[3] or 0, {
        end_col = m[4] or #lines[m[1] + 1],
        hl_group = m[2],
      })
    end
    vim.keymap.set('n', 'm', function()
      ctx.close_float()
      M.pick(ws, session)
    end, { buffer = buf, nowait = true, desc = 'PseudoClaude permissions: change the mode' })
    vim.keymap.set('n', 'R', function()
      M.open(ws, session)
    end, { buffer = buf, nowait = true, desc = 'PseudoClaude permissions: refresh' })
    util.fire('PseudoClaudePermissions', { workspace = ws, sessionId = session, result = r, lines = lines, buf = buf,
      win = win })
  end)
end

return M
