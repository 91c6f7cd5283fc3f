-- MCP servers in a real Neovim, against the real server and real MCP servers: a user server
-- (tests/fixtures/mcp/echo_server.py, from the settings setup() passes), one whose command does
-- not exist, and a project server in the folder's .mcp.json (written by test_nvim.py) that needs
-- an approval. The question about the project server (kind mcpServer) comes when the folder
-- opens: dismissed, the server keeps it waiting. A run calls mcp__echo__echo, approved through the
-- kind mcp question. :PseudoClaudeMcp lists the three; `a` approves the project server (it starts,
-- the float follows mcpChanged); `r` on the missing one restarts it (it stays failed, its error
-- shown); <CR> shows all the tools; /mcp in the chat opens the float; :checkhealth lists them.
-- Run by test_nvim.py:  nvim --headless --clean -l nvim_e2e_mcp.lua
local h = dofile(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), 'nvim_harness.lua'))
local report, step, wait_for, take = h.report, h.step, h.wait_for, h.take
local contains, errors_shown = h.contains, h.errors_shown
local workspace = h.workspace

local ECHO = vim.fs.normalize(vim.fs.joinpath(vim.fs.dirname(_G.arg[0]), '..', 'fixtures', 'mcp', 'echo_server.py'))
local MARKER = vim.fs.joinpath(vim.fs.dirname(workspace), 'proj-started')
assert(vim.uv.fs_stat(ECHO), 'no echo server at ' .. ECHO)

local client

-- The answers of the next questions: the harness's (an item whose label contains the text), or
-- `<dismiss>`: the question is dismissed.
local queue = {}
local harness_answer, harness_select = h.answer, vim.ui.select
function h.answer(list)
  queue = vim.list_slice(list)
end
vim.ui.select = function(items, opts, on_choice)
  local pick = table.remove(queue, 1)
  if pick ~= '<dismiss>' then
    harness_answer({ pick })
    return harness_select(items, opts, on_choice)
  end
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  h.selects[#h.selects + 1] = { prompt = opts.prompt, kind = opts.kind, labels = labels, dismissed = true }
  on_choice(nil)
end

local last = {}
for _, pattern in ipairs({ 'PseudoClaudeMcp', 'PseudoClaudeMcpApproved', 'PseudoClaudeMcpRestarted',
  'PseudoClaudeMcpChanged' }) do
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = function(ev)
      last[pattern] = ev.data or true
    end,
  })
end
local function take_mcp(pattern)
  return wait_for(pattern, function()
    local v = last[pattern]
    last[pattern] = nil
    return v
  end)
end

local function float_text()
  local state = require('pseudoclaude.mcp').current
  assert(state and vim.api.nvim_win_is_valid(state.win), 'the MCP float is not open')
  return table.concat(vim.api.nvim_buf_get_lines(state.buf, 0, -1, false), '\n'), state
end

--- Put the cursor of the float on the line of server `name` and press `keys`.
local function press_on(name, keys)
  local _, state = float_text()
  local lnum
  for l = 1, vim.api.nvim_buf_line_count(state.buf) do
    if state.rows[l] and state.rows[l].name == name then
      lnum = l
      break
    end
  end
  assert(lnum, 'no line for ' .. name)
  vim.api.nvim_set_current_win(state.win)
  vim.api.nvim_win_set_cursor(state.win, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.keycode(keys), 'x', false)
end

local function server(state, name)
  for _, s in ipairs(state.servers) do
    if s.name == name then
      return s
    end
  end
end

step('setup: the project server is asked about when the folder opens; dismissed, it waits', function()
  h.answer({ '<dismiss>' })
  h.forget('PseudoClaudeApproval')
  client = h.setup_plugin({
    settings = {
      approvals = { runCommand = 'ask', mcp = 'ask' },
      mcp = {
        servers = {
          echo = { command = h.python, args = { ECHO } },
          missing = { command = 'pseudoclaude-no-such-mcp' },
        },
        startTimeout = 30,
      },
    },
  })
  local asked = take('PseudoClaudeApproval')
  assert(asked.params.kind == 'mcpServer' and asked.params.server == 'proj', vim.inspect(asked))
  assert(asked.dismissed == true and asked.decision == nil, vim.inspect(asked))
  local q = h.selects[#h.selects]
  assert(q.dismissed and q.kind == 'pseudoclaude_approval', vim.inspect(q))
  contains(q.prompt, "PseudoClaude: This project's .mcp.json wants to start the MCP server proj: ", 'prompt')
  contains(q.prompt, ECHO, 'the command in the prompt')
  assert(vim.deep_equal(q.labels, { 'Allow once', 'Allow for this project', 'Deny' }), vim.inspect(q.labels))
  report.server_question = q
  assert(h.notified('the MCP server proj waits for your approval: :PseudoClaudeMcp'), vim.inspect(report.notifications))
  assert(not vim.uv.fs_stat(MARKER), 'the project server ran before it was approved')
end)

step('a run calls mcp__echo__echo after its approval (kind mcp)', function()
  local before = #h.selects
  h.answer({ 'Allow once' })
  h.forget('PseudoClaudeRunDone')
  vim.cmd('PseudoClaudeAsk MCP-ECHO: say hello through the echo server')
  local done = take('PseudoClaudeRunDone')
  assert(done.error == nil, vim.inspect(done))
  local q = h.selects[before + 1]
  assert(q and q.kind == 'pseudoclaude_approval', vim.inspect(h.selects))
  assert(q.prompt == 'PseudoClaude wants to call echo on the MCP server echo: text: hello from MCP'
    .. ' — default mode asks before MCP tools', q.prompt)
  assert(vim.deep_equal(q.labels, { 'Allow once', 'Allow echo for this session', 'Always allow mcp__echo__echo',
    'Deny' }), vim.inspect(q.labels))
  report.tool_question = q
  contains(h.transcript_text(), '▸ mcp__echo__echo(text: hello from MCP)', 'transcript')
  contains(h.transcript_text(), '✓ mcp__echo__echo · ', 'transcript')
end)

step(':PseudoClaudeMcp lists the servers with their states', function()
  vim.cmd('PseudoClaudeMcp')
  local shown = take_mcp('PseudoClaudeMcp')
  assert(shown.error == nil, vim.inspect(shown))
  local text, state = float_text()
  report.float = vim.split(text, '\n')
  assert(vim.api.nvim_get_current_win() == state.win, 'the float is not current')
  contains(vim.api.nvim_win_get_config(state.win).title[1][1], 'PseudoClaude MCP servers · project', 'title')
  assert(server(state, 'echo').status == 'ready', vim.inspect(state.servers))
  assert(server(state, 'proj').status == 'needsApproval', vim.inspect(state.servers))
  assert(server(state, 'missing').status == 'failed', vim.inspect(state.servers))
  contains(text, '3 MCP servers: 1 ready, 1 waiting for your approval, 1 failed', 'summary')
  contains(text, 'echo     your settings  ready · 13 tools', 'echo')
  contains(text, 'tools: echo, dotted.name, ', 'folded tools')
  contains(text, 'proj     .mcp.json      waits for your approval', 'proj')
  contains(text, 'runs ' .. h.python, 'what proj runs')
  contains(text, 'missing  your settings  failed: ', 'missing')
  contains(text, 'pseudoclaude-no-such-mcp', 'the error')
  contains(text, 'a approve · r restart · <CR> tools · R refresh · q close', 'help')
  -- `a` on a ready server approves nothing.
  press_on('echo', 'a')
  assert(h.notified('echo needs no approval (ready · 13 tools)'), vim.inspect(report.notifications))
end)

step('a on the project server: allowed for this project, it starts', function()
  local before = #h.selects
  h.answer({ 'Allow for this project' })
  last.PseudoClaudeMcpChanged = nil
  press_on('proj', 'a')
  local approved = take_mcp('PseudoClaudeMcpApproved')
  assert(approved.error == nil and approved.decision == 'allowSession', vim.inspect(approved))
  local q = h.selects[before + 1]
  assert(q.kind == 'pseudoclaude_mcp_approval', vim.inspect(q))
  contains(q.prompt, "PseudoClaude: This project's .mcp.json wants to start the MCP server proj: " .. h.python, 'prompt')
  assert(vim.deep_equal(q.labels, { 'Allow once', 'Allow for this project', 'Deny' }), vim.inspect(q.labels))
  -- It starts in the background; the float follows pseudoclaude/mcpChanged.
  local state = require('pseudoclaude.mcp').current
  wait_for('proj ready in the float', function()
    local s = server(state, 'proj')
    return s and s.status == 'ready'
  end)
  assert(last.PseudoClaudeMcpChanged, 'no pseudoclaude/mcpChanged')
  local text = float_text()
  contains(text, 'proj     .mcp.json      ready · 13 tools', 'proj ready')
  assert(vim.uv.fs_stat(MARKER), 'the project server did not start')
  assert(h.notified('proj approved for this project'), vim.inspect(report.notifications))
end)

step('r on the failed server: it stays failed, its error shown', function()
  press_on('missing', 'r')
  local restarted = take_mcp('PseudoClaudeMcpRestarted')
  assert(restarted.error == nil, vim.inspect(restarted))
  assert(restarted.result.server.status == 'failed', vim.inspect(restarted.result))
  contains(restarted.result.server.error, 'pseudoclaude-no-such-mcp', 'error')
  local text = float_text()
  contains(text, 'missing  your settings  failed: ', 'still failed')
  local warned = h.notified('PseudoClaude: missing failed: ', vim.log.levels.WARN)
  assert(warned, vim.inspect(report.notifications))
  report.restart_message = warned.msg
end)

step('<CR> shows every tool; R refreshes; q closes', function()
  press_on('echo', '<CR>')
  local text = float_text()
  contains(text, 'crash', 'all the tools')
  press_on('echo', '<CR>')
  press_on('echo', 'R')
  take_mcp('PseudoClaudeMcp')
  local _, state = float_text()
  press_on('echo', 'q')
  assert(state.closed and not vim.api.nvim_win_is_valid(state.win), 'the float did not close')
end)

step('/mcp in the chat opens the float', function()
  h.forget('PseudoClaudeChatLoaded')
  vim.cmd('PseudoClaudeChat')
  take('PseudoClaudeChatLoaded')
  vim.cmd('stopinsert')
  local chat = require('pseudoclaude.chat').get(vim.uri_from_fname(workspace))
  require('pseudoclaude.chat').submit(chat, '/mcp')
  take_mcp('PseudoClaudeMcp')
  local text = float_text()
  contains(text, '3 MCP servers: 2 ready, 1 failed', 'summary')
  require('pseudoclaude.mcp').close()
end)

step(':checkhealth pseudoclaude lists the servers', function()
  vim.cmd('checkhealth pseudoclaude')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  contains(text, 'MCP servers ~', 'section')
  contains(text, 'echo (your settings): ready · 13 tools', 'echo')
  contains(text, 'missing (your settings): failed: ', 'missing')
  vim.cmd('tabclose')
end)

step('stop', function()
  assert(vim.tbl_isempty(errors_shown()), vim.inspect(errors_shown()))
  h.stop(client)
end)

h.done('nvim mcp e2e')
