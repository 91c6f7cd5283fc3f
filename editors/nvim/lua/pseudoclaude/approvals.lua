--- Approvals asked by `pseudoclaude/approve` (SPEC §11 "Diff approvals"): a write opens a diff
--- split (`before` | `after`, keys `a` allow once, `s` allow for this session, `A` always allow
--- (when the request names the rule it would add), `d`/`q` deny, `D` deny with a message for the
--- model; closing the tab denies); a plan (kind `plan`) opens a float with the plan
--- (`pseudoclaude.plan`: approve, approve and accept edits, keep planning with feedback); a
--- command, a read, a hook, a call of an MCP server's tool (kind `mcp`) and starting a
--- project's MCP server (kind `mcpServer`) ask with
--- `vim.ui.select` (`Always allow <rule>` among the choices when the request has a `rule`; the
--- request's `reason` in the prompt; `Deny` asks for the optional message). The answer is sent
--- exactly once: the user's decision, or RequestCancelled when the server cancels the request
--- (`$/cancelRequest`, the run was cancelled), which closes what was shown. A dismissed question
--- about an MCP server is no answer (RequestCancelled): the server keeps it waiting, for
--- `:PseudoClaudeMcp`.
local util = require('pseudoclaude.util')
local config = require('pseudoclaude.config')
local diff = require('pseudoclaude.diff')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')
local render = require('pseudoclaude.render')

local M = {}

local DECISION = protocol.approval_decisions

--- Approvals waiting for the user, oldest first.
--- @type pseudoclaude.PendingApproval[]
M.pending = {}

--- @class pseudoclaude.PendingApproval
--- @field client_id integer
--- @field request_id any the JSON-RPC id of the server's request (nil when it cannot be known)
--- @field params pseudoclaude.ApproveParams
--- @field view? pseudoclaude.DiffView|pseudoclaude.PlanView
--- @field done boolean
--- @field dismissed? boolean a question about an MCP server left unanswered
--- @field settle fun(decision?: string, err?: table, message?: string, extra?: table)

local fire = util.fire

--- The JSON-RPC id of the server request being handled: Neovim gives handlers only the method and
--- the params, so it is read from the RPC client's decoded message up the coroutine's stack
--- (`vim/lsp/rpc.lua`, Neovim 0.11). `nil` when that is not found.
--- @return any
function M.request_id()
  for level = 2, 40 do
    local info = debug.getinfo(level, 'f')
    if not info then
      break
    end
    for i = 1, 80 do
      local name, value = debug.getupvalue(info.func, i)
      if not name then
        break
      end
      if name == 'decoded' and type(value) == 'table' and value.id ~= nil and value.method ~= nil then
        return value.id
      end
    end
  end
  return nil
end

--- The words of a command approval (`vim.ui.select` prompt).
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.command_prompt(p)
  local command = type(p.command) == 'string' and p.command ~= '' and p.command or fmt.arguments(p.arguments, 300)
  local where = type(p.cwd) == 'string' and p.cwd ~= '' and (' (in ' .. p.cwd .. ')') or ''
  return string.format('PseudoClaude: %s wants to run: %s%s', p.tool, command, where)
end

--- The words of an MCP tool call's approval (`vim.ui.select` prompt): the tool by its own name,
--- its server and the arguments.
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.mcp_prompt(p)
  local args = fmt.arguments(p.arguments, 300)
  return string.format('PseudoClaude wants to call %s on the MCP server %s%s', tostring(p.tool),
    tostring(p.server or '?'), args ~= '' and (': ' .. args) or ' (no arguments)')
end

--- The words of the question about starting a project's MCP server (kind `mcpServer`).
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.mcp_server_prompt(p)
  local name = tostring(p.server or p.tool)
  if type(p.url) == 'string' and p.url ~= '' and not (type(p.command) == 'string' and p.command ~= '') then
    return string.format("PseudoClaude: This project's .mcp.json wants to connect to the MCP server %s at %s", name,
      p.url)
  end
  local command = type(p.command) == 'string' and p.command ~= '' and (': ' .. p.command) or ''
  return string.format("PseudoClaude: This project's .mcp.json wants to start the MCP server %s%s", name, command)
end

--- The words of the question about a folder's own settings file (kind `permissions`): what it
--- asks for, the URL first, one `;` apart.
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.settings_prompt(p)
  local rules = type(p.rules) == 'table' and table.concat(p.rules, '; ') or ''
  return string.format("PseudoClaude: this folder's %s asks to use its own settings (yours stand until you allow it): %s",
    tostring(p.path or '.PseudoClaude/config.yaml'), rules)
end

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

--- The rule "always allow" would add (nil: it is not offered).
--- @param p pseudoclaude.ApproveParams
--- @return string?
function M.rule(p)
  return given(p.rule)
end

--- `Always allow Bash(npm run test:*)`.
--- @param rule string
--- @return string
function M.always_label(rule)
  return protocol.approval_actions.always .. ' ' .. rule
end

--- The words of a read approval (strict mode asks before reading too).
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.read_prompt(p)
  local args = type(p.arguments) == 'table' and p.arguments or {}
  local what = given(p.path) or given(args.path) or given(args.pattern) or fmt.arguments(p.arguments, 300)
  return string.format('PseudoClaude: %s wants to read %s', tostring(p.tool), what)
end

--- The words of a plan's approval (plan mode: nothing but reading runs until it is approved).
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.plan_prompt(p)
  local args = type(p.arguments) == 'table' and p.arguments or {}
  local plan = given(p.plan) or given(args.plan) or given(args.summary) or fmt.arguments(p.arguments, 300)
  return 'PseudoClaude: approve this plan and leave plan mode? ' .. fmt.one_line(plan, 300)
end

--- The words of the question about a folder's own hooks file (kind `hooks`): each hook's name,
--- event and what it runs, one `;` apart.
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.hooks_prompt(p)
  local hooks = {}
  for _, h in ipairs(type(p.hooks) == 'table' and p.hooks or {}) do
    hooks[#hooks + 1] = string.format('%s (%s): %s', tostring(h.name), tostring(h.event), fmt.one_line(tostring(h.action), 200))
  end
  return string.format("PseudoClaude: this folder's %s has hooks that would run on your machine (they do not until you allow them): %s",
    tostring(p.path or '.PseudoClaude/hooks.yaml'), table.concat(hooks, '; '))
end

--- The prompt with the reason it is asked (`… — default mode asks before commands`).
local function with_reason(prompt, p)
  local reason = given(p.reason)
  return reason and (prompt .. ' — ' .. fmt.one_line(reason, 200)) or prompt
end

--- What `vim.ui.select` offers for an approval: `{label, decision}` each, and its prompt.
--- Commands, writes, reads and plans: `Allow once`, `Allow for this session`, `Always
--- allow <rule>` (when the request names the rule it would add), `Deny`; an MCP tool: the
--- session's allowance is for that tool; an MCP server, a folder's settings or hooks file:
--- `Allow for this project` (remembered).
--- The prompt ends with why it is asked (the request's `reason`), when it says.
--- @param p pseudoclaude.ApproveParams
--- @return {label: string, decision: string}[], string
function M.choices(p)
  local actions, kinds = protocol.approval_actions, protocol.approve_kinds
  if p.kind == kinds.mcp_server then
    return require('pseudoclaude.mcp').APPROVE_CHOICES, M.mcp_server_prompt(p)
  end
  if p.kind == kinds.permissions then
    return require('pseudoclaude.mcp').APPROVE_CHOICES, M.settings_prompt(p)
  end
  if p.kind == kinds.hooks then
    return require('pseudoclaude.mcp').APPROVE_CHOICES, M.hooks_prompt(p)
  end
  local session = actions.session
  local prompt
  if p.kind == kinds.mcp then
    session = string.format('Allow %s for this session', tostring(p.tool))
    prompt = M.mcp_prompt(p)
  elseif p.kind == kinds.write then
    prompt = string.format('PseudoClaude: %s wants to write %s', p.tool, p.path or fmt.arguments(p.arguments))
  elseif p.kind == kinds.read then
    prompt = M.read_prompt(p)
  elseif p.kind == kinds.plan then
    prompt = M.plan_prompt(p)
  else
    prompt = M.command_prompt(p)
  end
  local choices = {
    { label = actions.once, decision = DECISION.allow_once },
    { label = session, decision = DECISION.allow_session },
  }
  local rule = M.rule(p)
  if rule then
    choices[#choices + 1] = { label = M.always_label(rule), decision = DECISION.allow_always }
  end
  choices[#choices + 1] = { label = actions.deny, decision = DECISION.deny }
  return choices, with_reason(prompt, p)
end

--- The hint of a write approval's diff split (the keys).
M.WRITE_HINT = 'a allow once · s allow for this session · d deny'

--- The hint of a write approval's diff split: the keys, `A` when the request names a rule.
--- @param p pseudoclaude.ApproveParams
--- @return string
function M.write_hint(p)
  local rule = M.rule(p)
  local always = rule and (' · A ' .. M.always_label(rule):gsub('^%u', string.lower)) or ''
  return M.WRITE_HINT .. always .. ' · D deny with a message'
end

--- The prompt of the message a denial may tell the model.
M.DENY_PROMPT = 'Denied. Tell the model why, or what to do instead (optional): '

--- Deny, after asking for the optional message the model is told (empty or dismissed: none).
--- @param pending pseudoclaude.PendingApproval
function M.deny_with_message(pending)
  if pending.done then
    return
  end
  vim.ui.input({ prompt = M.DENY_PROMPT }, function(text)
    local message = type(text) == 'string' and vim.trim(text) or ''
    pending.settle(DECISION.deny, nil, message ~= '' and message or nil)
  end)
end

--- What the left and right windows of a write approval are called and titled.
--- @param p pseudoclaude.ApproveParams
--- @return table left, table right
function M.write_sides(p)
  local path = type(p.path) == 'string' and p.path ~= '' and p.path or 'file'
  local before, after = p.before or '', p.after or ''
  local ft = diff.filetype(path, diff.lines(after))
  local new = before == '' and ' (new file)' or ''
  local eol = ''
  if before ~= '' and after ~= '' and diff.ends_with_newline(before) ~= diff.ends_with_newline(after) then
    eol = diff.ends_with_newline(after) and ' (adds the final newline)' or ' (removes the final newline)'
  end
  return { name = 'pseudoclaude://approve/' .. path .. '.before', text = before, filetype = ft,
      title = 'PseudoClaude · before', detail = p.tool .. ' ' .. path .. new },
    { name = 'pseudoclaude://approve/' .. path .. '.after', text = after, filetype = ft,
      title = 'after' .. eol }
end

local function remove(pending)
  for i, p in ipairs(M.pending) do
    if p == pending then
      table.remove(M.pending, i)
      return
    end
  end
end

local function open_diff(pending)
  local p = pending.params
  local left, right = M.write_sides(p)
  local function decide(decision)
    return function()
      pending.settle(decision)
    end
  end
  local keys = {
    { 'a', decide(DECISION.allow_once), 'PseudoClaude: allow this change once' },
    { 's', decide(DECISION.allow_session), 'PseudoClaude: allow writes for this session' },
    { 'd', decide(DECISION.deny), 'PseudoClaude: deny this change' },
    { 'D', function()
      M.deny_with_message(pending)
    end, 'PseudoClaude: deny this change and tell the model why' },
    { 'q', decide(DECISION.deny), 'PseudoClaude: deny this change' },
  }
  local rule = M.rule(p)
  if rule then
    keys[#keys + 1] = { 'A', decide(DECISION.allow_always), 'PseudoClaude: always allow ' .. rule }
  end
  pending.view = diff.open({
    left = left,
    right = right,
    hint = M.write_hint(p),
    keys = keys,
    on_close = decide(DECISION.deny),
  })
  -- Why it is asked, below the split (the winbars hold the file and the keys).
  local reason = given(p.reason)
  if reason then
    vim.schedule(function()
      if not pending.done then
        vim.api.nvim_echo({ { string.format('PseudoClaude: %s %s — %s', tostring(p.tool), tostring(p.path or ''),
          fmt.one_line(reason, 200)) } }, false, {})
      end
    end)
  end
end

--- The project MCP servers whose question was dismissed, by server process and folder, then
--- name: the command line (or URL) it was about. The server asks again when it reads its
--- configuration again (a settings change): the same question is not shown twice to the same
--- server; `a` in `:PseudoClaudeMcp` answers it.
--- @type table<string, table<string, string>>
M.dismissed = {}

local function server_key(client_id, p)
  local ws = tostring(p.workspace or ''):gsub('/+$', '')
  return tostring(client_id) .. ' ' .. ws, tostring(p.server or p.tool), tostring(p.command or p.url or '')
end

--- Was this question about an MCP server dismissed already (same server process, folder, server
--- and command)?
--- @param client_id integer
--- @param p pseudoclaude.ApproveParams
--- @return boolean
function M.was_dismissed(client_id, p)
  local ws, name, what = server_key(client_id, p)
  return M.dismissed[ws] ~= nil and M.dismissed[ws][name] == what
end

local function dismiss(pending, quietly)
  local p = pending.params
  local ws, name, what = server_key(pending.client_id, p)
  M.dismissed[ws] = M.dismissed[ws] or {}
  M.dismissed[ws][name] = what
  pending.dismissed = true
  if not quietly then
    util.notify(string.format('PseudoClaude: the MCP server %s waits for your approval: :PseudoClaudeMcp, then a.',
      name))
  end
  -- No answer: the server keeps it waiting.
  pending.settle(nil, vim.lsp.rpc_response_error(protocol.errors.request_cancelled, 'the question was dismissed'))
end

--- A plan (kind `plan`): the float of `pseudoclaude.plan`; its answer is `approve` with a mode,
--- or `keepPlanning` with the feedback typed (if any).
local function open_plan(pending)
  local p = pending.params
  local args = type(p.arguments) == 'table' and p.arguments or {}
  local text = given(p.plan) or given(args.plan) or ''
  local ws = given(p.workspace)
  pending.view = require('pseudoclaude.plan').open(text, function(a)
    pending.settle(a.decision, nil, nil, { mode = a.mode, feedback = a.feedback })
  end, { title = 'PseudoClaude plan' .. (ws and (' · ' .. fmt.basename(ws)) or '') })
end

local function ask_select(pending)
  local p = pending.params
  local choices, prompt = M.choices(p)
  local kinds = protocol.approve_kinds
  if p.kind == kinds.mcp_server and M.was_dismissed(pending.client_id, p) then
    return dismiss(pending, true)
  end
  local function decided(decision)
    if decision == DECISION.deny and p.kind ~= kinds.mcp_server and p.kind ~= kinds.permissions
      and p.kind ~= kinds.hooks then
      return M.deny_with_message(pending)
    end
    pending.settle(decision)
  end
  if p.kind ~= kinds.mcp and p.kind ~= kinds.mcp_server and p.kind ~= kinds.permissions
    and p.kind ~= kinds.hooks then
    -- The labels themselves, as before (what UI plugins and scripts see).
    local labels, by_label = {}, {}
    for i, c in ipairs(choices) do
      labels[i], by_label[c.label] = c.label, c.decision
    end
    return vim.ui.select(labels, { prompt = prompt, kind = 'pseudoclaude_approval' }, function(choice)
      if choice == nil then
        return pending.settle(DECISION.deny) -- dismissed: denied, nothing more asked
      end
      decided(by_label[choice] or render.decision_of_title[choice] or DECISION.deny)
    end)
  end
  vim.ui.select(choices, {
    prompt = prompt,
    kind = 'pseudoclaude_approval',
    format_item = function(c)
      return c.label
    end,
  }, function(choice)
    if choice then
      return decided(choice.decision)
    end
    if p.kind == kinds.mcp_server then
      return dismiss(pending, false)
    end
    pending.settle(DECISION.deny)
  end)
end

--- The handler of `pseudoclaude/approve`: runs in the coroutine Neovim gives server requests,
--- waits for the decision and returns `{decision}` (or the RequestCancelled error).
function M.handle(_, params, ctx)
  local co, is_main = coroutine.running()
  if not co or is_main then
    -- Not resumable here (called directly): nobody can be asked.
    return { decision = DECISION.deny }
  end
  --- @type pseudoclaude.PendingApproval
  local pending = { client_id = ctx.client_id, request_id = M.request_id(), params = params, done = false }
  function pending.settle(decision, err, message, extra)
    if pending.done then
      return
    end
    extra = extra or {}
    pending.done = true
    remove(pending)
    if pending.view then
      pending.view:close()
    end
    require('pseudoclaude.chat').approval(params, false)
    fire('PseudoClaudeApproval', { params = params, decision = decision, message = message,
      mode = extra.mode, feedback = extra.feedback,
      cancelled = err ~= nil and not pending.dismissed, dismissed = pending.dismissed })
    vim.schedule(function()
      coroutine.resume(co, decision, err, message, extra)
    end)
  end
  M.pending[#M.pending + 1] = pending
  if params.kind == protocol.approve_kinds.mcp_server then
    require('pseudoclaude.mcp').remember_asked(params)
  end
  local shown_as_diff = params.kind == protocol.approve_kinds.write
    and config.options.approvals.diff ~= false
    and type(params.after) == 'string'
  local is_plan = params.kind == protocol.approve_kinds.plan
  -- The card says it waits before the question shows (a select may wait right there: Neovim's
  -- own asks with inputlist()); the answer puts it back.
  require('pseudoclaude.chat').approval(params, true)
  if not shown_as_diff and not is_plan then
    pcall(vim.cmd.redraw)
  end
  local ok, failure = pcall(shown_as_diff and open_diff or is_plan and open_plan or ask_select, pending)
  if not ok then
    vim.notify('PseudoClaude: could not show the approval: ' .. tostring(failure), vim.log.levels.ERROR,
      { title = 'PseudoClaude' })
    pending.settle(is_plan and DECISION.keep_planning or DECISION.deny)
  elseif not pending.done then
    fire('PseudoClaudeApprovalShown', { params = params, diff = shown_as_diff, plan = is_plan,
      view = pending.view })
  end
  local decision, err, message, extra = coroutine.yield()
  if err then
    return nil, err
  end
  extra = extra or {}
  if is_plan then
    if decision == DECISION.approve then
      return { decision = decision, mode = extra.mode or protocol.permission_modes.default }
    end
    return { decision = DECISION.keep_planning, feedback = extra.feedback }
  end
  return { decision = decision, message = message }
end

--- `$/cancelRequest` from the server: the run was cancelled while its approval was pending. Its
--- split (or prompt) goes, and the request is answered RequestCancelled. Without a known id,
--- every approval of that client whose id is unknown goes.
--- @param client_id integer
--- @param id any
function M.cancel(client_id, id)
  for _, pending in ipairs(vim.list_slice(M.pending)) do
    if pending.client_id == client_id and (pending.request_id == nil or pending.request_id == id) then
      pending.settle(nil, vim.lsp.rpc_response_error(protocol.errors.request_cancelled, 'cancelled by the server'))
    end
  end
end

--- The server exited: what it was asking goes.
--- @param client_id integer
function M.client_exit(client_id)
  for _, pending in ipairs(vim.list_slice(M.pending)) do
    if pending.client_id == client_id then
      pending.settle(nil, vim.lsp.rpc_response_error(protocol.errors.request_cancelled, 'the server exited'))
    end
  end
end

return M
