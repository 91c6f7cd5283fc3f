--- `:PseudoClaudeMcp` (and `/mcp`): the MCP servers of a folder in a float.
---
--- One line per server (`pseudoclaude/mcp/list`): its name, where it is configured (your
--- settings, the folder's `.mcp.json` or `.PseudoClaude/config.yaml`, the editor) and its status
--- in words, then what goes with it on the lines below: its tools (folded to one line; `<CR>`
--- shows them all), the command a server waiting for your approval would run, why one failed.
--- Keys: `a` approves the server under the cursor (`pseudoclaude/mcp/approve`), `r` restarts it
--- (`pseudoclaude/mcp/restart`), `<CR>` its tools, `R` refreshes, `q`/`<Esc>` close. The float
--- follows `pseudoclaude/mcpChanged` while it is open.
local util = require('pseudoclaude.util')
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')

local M = {}

local notify, fire = util.notify, util.fire

--- Where a server is configured, in words.
M.SOURCES = {
  user = 'your settings',
  project = '.mcp.json',
  workspace = 'config.yaml',
  acp = 'the editor',
}

--- The mark in front of a server, by status.
M.ICONS = {
  ready = '✓',
  starting = '○',
  needsApproval = '?',
  failed = '✗',
  disabled = '⊘',
}

--- The answers of `a` (and of the question asked when the folder opens), in order.
M.APPROVE_CHOICES = {
  { label = 'Allow once', decision = protocol.approval_decisions.allow_once },
  { label = 'Allow for this project', decision = protocol.approval_decisions.allow_session },
  { label = 'Deny', decision = protocol.approval_decisions.deny },
}

--- The widest the float gets, in cells.
M.WIDTH = 96

--- The keys, as the float's last line says them.
M.HELP = 'a approve · r restart · <CR> tools · R refresh · q close'

--- The float's highlight groups (`default`: a colorscheme may set them).
M.HIGHLIGHTS = {
  PseudoClaudeMcpTitle = 'Title',
  PseudoClaudeMcpName = 'Identifier',
  PseudoClaudeMcpSource = 'Comment',
  PseudoClaudeMcpReady = 'DiagnosticOk',
  PseudoClaudeMcpStarting = 'DiagnosticInfo',
  PseudoClaudeMcpApproval = 'DiagnosticWarn',
  PseudoClaudeMcpFailed = 'DiagnosticError',
  PseudoClaudeMcpDisabled = 'Comment',
  PseudoClaudeMcpDetail = 'Comment',
  PseudoClaudeMcpHelp = 'Comment',
}

local STATUS_GROUPS = {
  ready = 'PseudoClaudeMcpReady',
  starting = 'PseudoClaudeMcpStarting',
  needsApproval = 'PseudoClaudeMcpApproval',
  failed = 'PseudoClaudeMcpFailed',
  disabled = 'PseudoClaudeMcpDisabled',
}

M.NS = vim.api.nvim_create_namespace('pseudoclaude_mcp')

util.link_highlights('mcp', M.HIGHLIGHTS)

-- Pure parts ------------------------------------------------------------------------------------

local function given(s)
  return type(s) == 'string' and vim.trim(s) ~= '' and s or nil
end

local function key(uri)
  return (tostring(uri or ''):gsub('/+$', ''))
end

local function tools_of(s)
  return type(s.tools) == 'table' and s.tools or {}
end

--- Where a server is configured, in words (`your settings`, `.mcp.json`...).
--- @param source string
--- @return string
function M.source_label(source)
  return M.SOURCES[source] or tostring(source)
end

--- The status of a server in words: `ready · 3 tools`, `not started yet`, `waits for your
--- approval`, `failed: <why>`, `disabled` (`disabled: <why>` when the server says why).
--- @param s pseudoclaude.McpServer
--- @return string
function M.status_text(s)
  local status, why = s.status, given(s.error)
  if status == 'ready' then
    local n = #tools_of(s)
    return 'ready · ' .. (n == 0 and 'no tools' or fmt.plural(n, 'tool'))
  elseif status == 'starting' then
    return 'not started yet'
  elseif status == 'needsApproval' then
    return 'waits for your approval'
  elseif status == 'failed' then
    return 'failed: ' .. (why and fmt.one_line(why, 400) or 'it did not start')
  elseif status == 'disabled' then
    return 'disabled' .. (why and (': ' .. fmt.one_line(why, 400)) or '')
  end
  return tostring(status)
end

--- One line about the servers: `3 MCP servers: 1 ready, 1 waits for your approval, 1 failed`.
--- @param servers pseudoclaude.McpServer[]
--- @return string
function M.summary(servers)
  local order = {
    { 'ready', 'ready' },
    { 'starting', 'not started yet' },
    { 'needsApproval', 'waiting for your approval' },
    { 'failed', 'failed' },
    { 'disabled', 'disabled' },
  }
  local counts = {}
  for _, s in ipairs(servers) do
    counts[s.status] = (counts[s.status] or 0) + 1
  end
  local parts = {}
  for _, o in ipairs(order) do
    if counts[o[1]] then
      parts[#parts + 1] = string.format('%d %s', counts[o[1]], o[2])
    end
  end
  local head = fmt.plural(#servers, 'MCP server')
  return #parts > 0 and (head .. ': ' .. table.concat(parts, ', ')) or head
end

--- The tools of a server in lines of at most `width` cells: all of them (`expanded`), else one
--- line ending in `… +N` when they do not fit (`tools: echo, big, … +9`).
--- @param tools string[]
--- @param width integer
--- @param expanded? boolean
--- @return string[]
function M.tools_lines(tools, width, expanded)
  if #tools == 0 then
    return {}
  end
  local all = 'tools: ' .. table.concat(tools, ', ')
  if expanded then
    return fmt.wrap(all, width)
  end
  if vim.fn.strdisplaywidth(all) <= width then
    return { all }
  end
  local line = 'tools:'
  for i, name in ipairs(tools) do
    local rest = #tools - i
    local try = line .. (i == 1 and ' ' or ', ') .. name
    local tail = string.format(', … +%d', rest)
    if vim.fn.strdisplaywidth(try .. tail) > width then
      return { line .. (i == 1 and ' ' or ', ') .. string.format('… +%d', #tools - i + 1) }
    end
    line = try
  end
  return { line }
end

local function pad(s, width)
  return s .. string.rep(' ', math.max(0, width - vim.fn.strdisplaywidth(s)))
end

--- `M.lines` without the margin.
local function body(servers, opts)
  servers = vim.list_slice(servers)
  table.sort(servers, function(a, b)
    return tostring(a.name) < tostring(b.name)
  end)
  local width = opts.width or M.WIDTH
  local expanded, busy, commands = opts.expanded or {}, opts.busy or {}, opts.commands or {}
  local lines, rows, marks = {}, {}, {}
  local function add(line, group)
    lines[#lines + 1] = line
    if group and line ~= '' then
      marks[#marks + 1] = { #lines - 1, 0, #line, group }
    end
    return #lines
  end
  if #servers == 0 then
    local where = opts.folder and (' in ' .. opts.folder) or ''
    add('No MCP servers' .. where .. '.', 'PseudoClaudeMcpTitle')
    add('')
    add("Add one to the folder's .mcp.json (each entry needs your approval once):")
    add('  {"mcpServers": {"docs": {"command": "npx", "args": ["-y", "some-mcp-server"]}}}')
    add('or to your own settings, for every folder:')
    add("  setup({ settings = { mcp = { servers = { docs = { command = 'npx', args = { ... } } } } } })")
    add('then R here refreshes the list.')
    add('')
    add('R refresh · q close', 'PseudoClaudeMcpHelp')
    return lines, rows, marks
  end
  add(M.summary(servers), 'PseudoClaudeMcpTitle')
  add('')
  local name_w, src_w = 4, 4
  for _, s in ipairs(servers) do
    name_w = math.max(name_w, math.min(24, vim.fn.strdisplaywidth(s.name)))
    src_w = math.max(src_w, vim.fn.strdisplaywidth(M.source_label(s.source)))
  end
  local indent = 2 + name_w + 2 + src_w + 2
  local room = math.max(20, width - indent)
  local gap = string.rep(' ', indent)
  for _, s in ipairs(servers) do
    local name = fmt.one_line(s.name, 24)
    local status = busy[s.name] or M.status_text(s)
    local said = fmt.wrap(status, room)
    if #said > 3 then
      said = { said[1], said[2], fmt.one_line(said[3] .. ' ' .. said[4], room) }
      if not vim.endswith(said[3], '…') then
        said[3] = fmt.one_line(said[3] .. ' …', room)
      end
    end
    local icon = M.ICONS[s.status] or '·'
    local head = icon .. ' ' .. pad(name, name_w) .. '  '
    local src = pad(M.source_label(s.source), src_w) .. '  '
    local lnum = add(head .. src .. said[1])
    rows[lnum] = s
    local row = lnum - 1
    local group = busy[s.name] and 'PseudoClaudeMcpStarting' or (STATUS_GROUPS[s.status] or 'PseudoClaudeMcpDetail')
    marks[#marks + 1] = { row, 0, #icon, group }
    marks[#marks + 1] = { row, #icon + 1, #icon + 1 + #name, 'PseudoClaudeMcpName' }
    marks[#marks + 1] = { row, #head, #head + #src, 'PseudoClaudeMcpSource' }
    marks[#marks + 1] = { row, #head + #src, #lines[lnum], group }
    for i = 2, #said do
      rows[add(gap .. said[i], group)] = s
    end
    local details = {}
    if s.status == 'ready' and not busy[s.name] then
      details = M.tools_lines(tools_of(s), room, expanded[s.name])
    elseif s.status == 'needsApproval' or (s.status == 'disabled' and commands[s.name]) then
      local what = commands[s.name]
      if what then
        details = { fmt.one_line('runs ' .. what, room) }
      end
    end
    for _, d in ipairs(details) do
      rows[add(gap .. d, 'PseudoClaudeMcpDetail')] = s
    end
  end
  add('')
  add(M.HELP, 'PseudoClaudeMcpHelp')
  return lines, rows, marks
end

--- What the float shows: a summary line, one block per server by name (its line, then its
--- tools, the command it would run, or the rest of why it failed, aligned under the status),
--- the keys; each line after a one-cell margin.
--- `opts.expanded[name]`: all the tools; `opts.busy[name]`: what is being done to it (shown
--- instead of its status); `opts.commands[name]`: what a server waiting for approval runs.
--- Returns the lines, the server of each line (by line number) and the highlights
--- (`{row, col, end_col, group}`, 0-based rows, byte columns).
--- @param servers pseudoclaude.McpServer[]
--- @param opts? {width?: integer, expanded?: table<string, boolean>, busy?: table<string, string>, commands?: table<string, string>, folder?: string}
--- @return string[], table<integer, pseudoclaude.McpServer>, table[]
function M.lines(servers, opts)
  opts = opts or {}
  local lines, rows, marks = body(servers, opts)
  for i, l in ipairs(lines) do
    lines[i] = l ~= '' and (' ' .. l) or l
  end
  for _, m in ipairs(marks) do
    m[2], m[3] = m[2] + 1, m[3] + 1
  end
  return lines, rows, marks
end

--- The prompt of `a` on a server: what it would run, when known.
--- @param s pseudoclaude.McpServer
--- @param command? string
--- @return string
function M.approve_prompt(s, command)
  local who = ({
    project = "This project's .mcp.json wants",
    workspace = "This project's config.yaml wants",
    user = 'Your settings ask',
  })[s.source] or 'The editor asks'
  local what = given(command) and (': ' .. command) or ''
  return string.format('PseudoClaude: %s to start the MCP server %s%s', who, s.name, what)
end

-- What the project servers run ------------------------------------------------------------------

--- What each server waiting for approval runs, by folder then name: from the server's question
--- (`pseudoclaude/approve`, kind `mcpServer`), else read from the folder's `.mcp.json`.
--- @type table<string, table<string, string>>
M.asked = {}

--- The server asked to approve a project's MCP server: remember what it runs (for `a`).
--- @param params pseudoclaude.ApproveParams
function M.remember_asked(params)
  local name = given(params.server) or given(params.tool)
  local what = given(params.command) or given(params.url)
  if not name or not what then
    return
  end
  local ws = key(params.workspace)
  M.asked[ws] = M.asked[ws] or {}
  M.asked[ws][name] = what
end

--- The command line (or URL) of an entry of the folder's `.mcp.json`, as written there.
--- @param workspace string
--- @param name string
--- @return string?
function M.project_command(workspace, name)
  local ok, path = pcall(vim.uri_to_fname, workspace)
  if not ok then
    return nil
  end
  local f = io.open(vim.fs.joinpath(path, '.mcp.json'), 'r')
  if not f then
    return nil
  end
  local text = f:read('*a')
  f:close()
  local decoded, data = pcall(vim.json.decode, text, { luanil = { object = true, array = true } })
  local entry = decoded and type(data) == 'table' and type(data.mcpServers) == 'table' and data.mcpServers[name]
  if type(entry) ~= 'table' then
    return nil
  end
  if type(entry.command) == 'string' then
    local words = { entry.command }
    for _, a in ipairs(type(entry.args) == 'table' and entry.args or {}) do
      words[#words + 1] = tostring(a)
    end
    return table.concat(words, ' ')
  end
  return given(entry.url)
end

--- What a server of the folder runs, when known.
--- @param workspace string
--- @param s pseudoclaude.McpServer
--- @return string?
function M.command_of(workspace, s)
  local asked = M.asked[key(workspace)]
  if asked and asked[s.name] then
    return asked[s.name]
  end
  if s.source == 'project' then
    return M.project_command(workspace, s.name)
  end
  return nil
end

-- The float -------------------------------------------------------------------------------------

--- The float on screen: `{workspace, servers, buf, win, rows, expanded, busy, closed}`.
M.current = nil


local function win_ok(state)
  return state.win ~= nil and vim.api.nvim_win_is_valid(state.win)
end

--- Close the float.
--- @param state? table (default: the one on screen)
function M.close(state)
  state = state or M.current
  if not state or state.closed then
    return
  end
  state.closed = true
  if M.current == state then
    M.current = nil
  end
  if win_ok(state) then
    pcall(vim.api.nvim_win_close, state.win, true)
  end
  if vim.api.nvim_buf_is_valid(state.buf) then
    pcall(vim.api.nvim_buf_delete, state.buf, { force = true })
  end
end

local function commands_of(state)
  local out = {}
  for _, s in ipairs(state.servers) do
    if s.status == 'needsApproval' or s.status == 'disabled' then
      out[s.name] = M.command_of(state.workspace, s)
    end
  end
  return out
end

local function server_under_cursor(state)
  if not win_ok(state) then
    return nil
  end
  return state.rows[vim.api.nvim_win_get_cursor(state.win)[1]]
end

local function title_of(state)
  return string.format(' PseudoClaude MCP servers · %s ', fmt.basename(state.workspace))
end

--- Draw the servers of `state` into its float (made here the first time), the cursor staying on
--- the server it was on.
local function render(state)
  if state.closed then
    return
  end
  local keep = server_under_cursor(state)
  local width = math.max(40, math.min(M.WIDTH, vim.o.columns - 8))
  local lines, rows, marks = M.lines(state.servers, {
    width = width - 2,
    expanded = state.expanded,
    busy = state.busy,
    commands = commands_of(state),
    folder = fmt.basename(state.workspace),
  })
  state.rows, state.lines = rows, lines
  local buf = state.buf
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, M.NS, 0, -1)
  for _, m in ipairs(marks) do
    pcall(vim.api.nvim_buf_set_extmark, buf, M.NS, m[1], m[2], { end_col = m[3], hl_group = m[4] })
  end
  local title = title_of(state)
  local w = vim.fn.strdisplaywidth(title) + 2
  for _, l in ipairs(lines) do
    w = math.max(w, vim.fn.strdisplaywidth(l))
  end
  w = math.max(1, math.min(w + 2, vim.o.columns - 4))
  local h = math.max(1, math.min(#lines, vim.o.lines - 4))
  local cfg = {
    relative = 'editor',
    width = w,
    height = h,
    row = math.max(0, math.floor((vim.o.lines - h) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - w) / 2)),
    style = 'minimal',
    border = 'rounded',
    title = title,
    title_pos = 'center',
  }
  if win_ok(state) then
    cfg.style = nil
    vim.api.nvim_win_set_config(state.win, cfg)
  else
    state.win = vim.api.nvim_open_win(buf, true, cfg)
    vim.wo[state.win].wrap = false
    vim.wo[state.win].cursorline = true
  end
  -- The cursor: on the server it was on, else on the first one that waits for the user (its
  -- approval, else a failed one), else on the first server.
  local target
  local wanted = keep and { keep.name } or {}
  for _, status in ipairs(keep and {} or { 'needsApproval', 'failed' }) do
    for lnum = 1, #lines do
      if rows[lnum] and rows[lnum].status == status then
        wanted[1] = wanted[1] or rows[lnum].name
      end
    end
  end
  for lnum = 1, #lines do
    local s = rows[lnum]
    if s and (wanted[1] == nil or s.name == wanted[1]) then
      target = lnum
      break
    end
  end
  if target then
    local cur = vim.api.nvim_win_get_cursor(state.win)[1]
    if not (keep and rows[cur] and rows[cur].name == keep.name) then
      vim.api.nvim_win_set_cursor(state.win, { target, 0 })
    end
  end
  fire('PseudoClaudeMcp', { workspace = state.workspace, servers = state.servers, lines = lines, buf = buf,
    win = state.win })
end

--- Replace one server of the list by the server's newer entry.
local function update(state, server)
  if type(server) ~= 'table' or type(server.name) ~= 'string' then
    return
  end
  for i, s in ipairs(state.servers) do
    if s.name == server.name then
      state.servers[i] = server
      return
    end
  end
  state.servers[#state.servers + 1] = server
end

--- Ask the server for the list again and draw it.
--- @param state? table (default: the one on screen)
function M.refresh(state)
  state = state or M.current
  if not state or state.closed then
    return
  end
  state.seq = (state.seq or 0) + 1
  local seq = state.seq
  client.request(protocol.requests.mcp_list, { workspace = state.workspace }, function(err, r)
    if state.closed or seq ~= state.seq then
      return
    end
    if err then
      return client.fail('MCP', err)
    end
    state.servers = type(r) == 'table' and type(r.servers) == 'table' and r.servers or {}
    render(state)
  end)
end

--- `a`: approve (or deny) the server under the cursor, after saying what it runs.
--- @param state table
--- @param s pseudoclaude.McpServer
function M.approve(state, s)
  if s.status ~= 'needsApproval' and s.status ~= 'disabled' then
    local why = s.status == 'failed' and (s.name .. ' failed: r restarts it')
      or (s.name .. ' needs no approval (' .. M.status_text(s) .. ')')
    return notify('PseudoClaude: ' .. why .. '.')
  end
  local prompt = M.approve_prompt(s, M.command_of(state.workspace, s))
  state.asking = true
  vim.ui.select(M.APPROVE_CHOICES, {
    prompt = prompt,
    kind = 'pseudoclaude_mcp_approval',
    format_item = function(c)
      return c.label
    end,
  }, function(choice)
    state.asking = false
    if not state.closed and win_ok(state) then
      pcall(vim.api.nvim_set_current_win, state.win)
    end
    if not choice then
      return
    end
    if choice.decision ~= protocol.approval_decisions.deny then
      state.busy[s.name] = 'starting after your approval…'
      render(state)
    end
    local params = { workspace = state.workspace, server = s.name, decision = choice.decision }
    client.request(protocol.requests.mcp_approve, params, function(err, r)
      state.busy[s.name] = nil
      local data = { workspace = state.workspace, server = s.name, decision = choice.decision, error = err,
        result = r }
      if err then
        client.fail('MCP approve', err)
      else
        local got = r.server or {}
        update(state, got)
        if choice.decision == protocol.approval_decisions.deny then
          notify(string.format('PseudoClaude: %s stays off (denied).', s.name))
        elseif got.status == 'disabled' then
          notify(string.format('PseudoClaude: %s is still %s.', s.name, M.status_text(got)), vim.log.levels.WARN)
        else
          local how = choice.decision == protocol.approval_decisions.allow_session and 'for this project'
            or 'for now'
          notify(string.format('PseudoClaude: %s approved %s: %s.', s.name, how, M.status_text(got)))
        end
      end
      render(state)
      fire('PseudoClaudeMcpApproved', data)
    end)
  end)
end

--- `r`: restart the server under the cursor (after a failure, or to start it now).
--- @param state table
--- @param s pseudoclaude.McpServer
function M.restart(state, s)
  if s.status == 'needsApproval' then
    return notify('PseudoClaude: ' .. s.name .. ' waits for your approval: a approves it.')
  elseif s.status == 'disabled' then
    return notify('PseudoClaude: ' .. s.name .. ' is ' .. M.status_text(s) .. ': nothing to restart.')
  end
  if state.busy[s.name] then
    return
  end
  state.busy[s.name] = s.status == 'starting' and 'starting…' or 'restarting…'
  render(state)
  client.request(protocol.requests.mcp_restart, { workspace = state.workspace, server = s.name }, function(err, r)
    state.busy[s.name] = nil
    if err then
      client.fail('MCP restart', err)
    else
      local got = r.server or {}
      update(state, got)
      if got.status == 'failed' then
        notify(string.format('PseudoClaude: %s %s', s.name, M.status_text(got)), vim.log.levels.WARN)
      else
        notify(string.format('PseudoClaude: %s restarted: %s.', s.name, M.status_text(got)))
      end
    end
    render(state)
    fire('PseudoClaudeMcpRestarted', { workspace = state.workspace, server = s.name, error = err, result = r })
  end)
end

--- `<CR>`: show all the tools of the server under the cursor, or fold them again.
--- @param state table
--- @param s pseudoclaude.McpServer
function M.toggle(state, s)
  if #tools_of(s) == 0 then
    return notify('PseudoClaude: ' .. s.name .. ' has no tools to show (' .. M.status_text(s) .. ').')
  end
  state.expanded[s.name] = not state.expanded[s.name] or nil
  render(state)
end

--- Show the servers of `workspace` in the float (replacing one open), with its keys.
--- @param workspace string
--- @param servers pseudoclaude.McpServer[]
--- @return table state
function M.show(workspace, servers)
  M.close()
  require('pseudoclaude.context').close_float()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'pseudoclaude_mcp'
  local state = { workspace = workspace, servers = servers or {}, buf = buf, rows = {}, expanded = {}, busy = {},
    closed = false }
  M.current = state
  render(state)
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, function()
      local s = server_under_cursor(state)
      if fn == M.refresh or fn == M.close then
        return fn(state)
      end
      if not s then
        return notify('PseudoClaude: put the cursor on a server.')
      end
      fn(state, s)
    end, { buffer = buf, nowait = true, desc = desc })
  end
  map('a', M.approve, 'PseudoClaude: approve the MCP server under the cursor')
  map('r', M.restart, 'PseudoClaude: restart the MCP server under the cursor')
  map('<CR>', M.toggle, 'PseudoClaude: show or fold the tools of the MCP server under the cursor')
  map('R', M.refresh, 'PseudoClaude: refresh the MCP servers')
  for _, lhs in ipairs({ 'q', '<Esc>' }) do
    map(lhs, M.close, 'PseudoClaude: close the MCP servers')
  end
  -- Leaving the float closes it, except for the question of `a`.
  vim.api.nvim_create_autocmd('WinLeave', {
    buffer = buf,
    callback = vim.schedule_wrap(function()
      if state.closed or state.asking then
        return
      end
      if vim.api.nvim_get_current_win() ~= state.win then
        M.close(state)
      end
    end),
  })
  return state
end

--- `:PseudoClaudeMcp` and `/mcp`: the MCP servers of the folder (`workspace`, else the current
--- buffer's) in a float.
--- @param workspace? string
function M.open(workspace)
  client.with_workspace(workspace, 'MCP', function(ws)
    client.request_or_fail(protocol.requests.mcp_list, { workspace = ws }, 'MCP', function(r)
      M.show(ws, type(r) == 'table' and type(r.servers) == 'table' and r.servers or {})
    end, function(err)
      if err then
        fire('PseudoClaudeMcp', { workspace = ws, error = err })
      end
    end)
  end)
end

local pending_refresh = false

--- `pseudoclaude/mcpChanged`: the float of that folder, when open, asks again (once for a burst).
--- @param params pseudoclaude.McpChangedParams
function M.changed(params)
  local state = M.current
  if not state or state.closed or key(params.workspace) ~= key(state.workspace) or pending_refresh then
    return
  end
  pending_refresh = true
  vim.defer_fn(function()
    pending_refresh = false
    if M.current == state then
      M.refresh(state)
    end
  end, 50)
end

return M
