-- What the end-to-end scripts share (nvim_e2e.lua, nvim_e2e_compaction.lua): the environment,
-- steps with a JSON report, polling, the recorded vim.notify / vim.ui.select / vim.ui.input, the
-- plugin's User events, and the plugin set up against the real server and the fake model.
-- Loaded with `dofile`; returns a table `h`.
-- Environment: PC_PLUGIN (editors/nvim), PC_WORKSPACE (a folder with README.md), PC_PYTHON (a
-- Python with the pseudoclaude package), PC_BASE_URL (the fake model), PC_REPORT (a JSON file
-- written at the end), PC_TIMEOUT_MS (per step).
local env = vim.env
local h = {}

h.plugin, h.workspace = assert(env.PC_PLUGIN), assert(env.PC_WORKSPACE)
h.python, h.base_url = assert(env.PC_PYTHON), assert(env.PC_BASE_URL)
h.report_path = assert(env.PC_REPORT)
h.TIMEOUT = tonumber(env.PC_TIMEOUT_MS or '') or 90000

h.report = { steps = {}, notifications = {}, events = {} }
local report = h.report
local step_name = 'start'

local function write_report(ok, err)
  report.ok = ok
  report.error = err
  report.failed_step = not ok and step_name or nil
  report.transcript = vim.api.nvim_buf_is_valid(vim.fn.bufnr('pseudoclaude://transcript'))
      and vim.api.nvim_buf_get_lines(vim.fn.bufnr('pseudoclaude://transcript'), 0, -1, false)
    or {}
  local f = assert(io.open(h.report_path, 'w'))
  f:write(vim.json.encode(report))
  f:close()
end

--- Run one step; a failure writes the report and exits 1.
function h.step(name, fn)
  step_name = name
  local t0 = vim.uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    write_report(false, err)
    io.stderr:write(string.format('step %q failed: %s\n', name, err))
    os.exit(1)
  end
  report.steps[#report.steps + 1] = { name = name, ms = math.floor((vim.uv.hrtime() - t0) / 1e6) }
end

--- Write the report and print `<label>: N steps passed`.
function h.done(label)
  write_report(true)
  io.stdout:write(string.format('%s: %d steps passed\n', label, #report.steps))
end

--- Wait (processing events) until `cond()` is truthy; fail with `what` after the timeout.
function h.wait_for(what, cond, timeout)
  local value
  local ok = vim.wait(timeout or h.TIMEOUT, function()
    value = cond()
    return value ~= nil and value ~= false
  end, 20)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
  return value
end

function h.transcript_text()
  local b = vim.fn.bufnr('pseudoclaude://transcript')
  if b < 0 then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
end

function h.contains(haystack, needle, what)
  if not haystack:find(needle, 1, true) then
    error(string.format('%s: %q not found in:\n%s', what or 'text', needle, haystack), 2)
  end
end

-- Record what the plugin shows, and answer its prompts from a queue.
h.selects, h.inputs = {}, {}
local answers = {}

--- The answers of the next prompts (`vim.ui.select`: an item whose label contains the text).
function h.answer(list)
  answers = list
end

vim.notify = function(msg, level)
  report.notifications[#report.notifications + 1] = { msg = msg, level = level or vim.log.levels.INFO }
end
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  h.selects[#h.selects + 1] = { prompt = opts.prompt, kind = opts.kind, labels = labels }
  local pick = table.remove(answers, 1)
  assert(pick, 'unexpected vim.ui.select: ' .. tostring(opts.prompt))
  for i, label in ipairs(labels) do
    if label:find(pick, 1, true) then
      return on_choice(items[i], i)
    end
  end
  error(string.format('no item with %q in %s', pick, vim.inspect(labels)))
end
vim.ui.input = function(opts, on_confirm)
  h.inputs[#h.inputs + 1] = opts.prompt
  on_confirm(table.remove(answers, 1))
end

--- The first notification containing `pattern` (at `level`, when given).
function h.notified(pattern, level)
  for _, n in ipairs(report.notifications) do
    if n.msg:find(pattern, 1, true) and (level == nil or n.level == level) then
      return n
    end
  end
end

function h.errors_shown()
  local out = {}
  for _, n in ipairs(report.notifications) do
    if n.level == vim.log.levels.ERROR then
      out[#out + 1] = n.msg
    end
  end
  return out
end

--- Fails when the plugin showed an error.
function h.no_errors()
  local shown = h.errors_shown()
  assert(#shown == 0, 'errors shown: ' .. vim.inspect(shown))
end

-- Capture the plugin's User events.
local last = {}
for _, pattern in ipairs({ 'PseudoClaudeEvent', 'PseudoClaudeRunDone', 'PseudoClaudeCompactDone',
  'PseudoClaudeRemembered', 'PseudoClaudeResumed', 'PseudoClaudeContext', 'PseudoClaudePreview',
  'PseudoClaudeUndoDone', 'PseudoClaudeApprovalShown', 'PseudoClaudeApproval', 'PseudoClaudeProposals',
  'PseudoClaudeReviewing', 'PseudoClaudeReviewed', 'PseudoClaudeChatLoaded', 'PseudoClaudeNewSession',
  'PseudoClaudeBusy', 'PseudoClaudeWaitDone', 'PseudoClaudeWorktreeStatus', 'PseudoClaudeWorktreeApplied',
  'PseudoClaudeWorktreeRemoved', 'PseudoClaudeWorktreeDiff' }) do
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = function(ev)
      last[pattern] = ev.data
      if pattern == 'PseudoClaudeEvent' then
        report.events[#report.events + 1] = ev.data.kind
      end
    end,
  })
end

--- Wait for the next User event `pattern` and return its data.
function h.take(pattern)
  return h.wait_for(pattern, function()
    local v = last[pattern]
    if v ~= nil then
      last[pattern] = nil
    end
    return v
  end)
end

--- Forget a recorded User event (before triggering the action that fires it again).
function h.forget(pattern)
  last[pattern] = nil
end

--- Set the plugin up against the fake model, open README.md and wait for the client; checks that
--- the server advertises what protocol.lua names. Returns the client. `extra`: options merged
--- over the defaults here (`settings` too).
function h.setup_plugin(extra)
  if env.PC_LSP_DEBUG then
    vim.lsp.set_log_level('debug')
  end
  vim.cmd('filetype on')
  vim.opt.rtp:prepend(h.plugin)
  vim.cmd.runtime('plugin/pseudoclaude.lua')
  vim.o.statusline = "%f %=%{v:lua.require'pseudoclaude'.statusline()}"
  require('pseudoclaude').setup(vim.tbl_deep_extend('force', {
    python = h.python,
    settings = {
      provider = 'anthropic',
      apiKey = 'sk-test',
      baseUrl = h.base_url,
      approvals = { runCommand = 'ask' },
      sandbox = { autoAllow = false }, -- commands ask (a sandboxed command would run unasked)
    },
    transcript = { open = 'vsplit' },
  }, extra or {}))
  vim.cmd.edit(vim.fn.fnameescape(h.workspace .. '/README.md'))
  local client = h.wait_for('the pseudoclaude client to initialize', function()
    local c = vim.lsp.get_clients({ name = 'pseudoclaude', bufnr = 0 })[1]
    return c and c.initialized and c
  end)
  assert(client.root_dir == h.workspace, 'root_dir ' .. tostring(client.root_dir))
  local exp = client.server_capabilities.experimental
  assert(exp and exp.pseudoclaude and exp.pseudoclaude.version == 1, 'experimental capability missing')
  -- What the server advertises is what protocol.lua names.
  local protocol = require('pseudoclaude.protocol')
  local function sorted(t)
    local out = vim.deepcopy(t)
    table.sort(out)
    return out
  end
  for _, key in ipairs({ 'requests', 'notifications', 'commands' }) do
    local mine = sorted(vim.tbl_values(protocol[key]))
    assert(vim.deep_equal(sorted(exp.pseudoclaude[key]), mine),
      key .. ': server ' .. vim.inspect(sorted(exp.pseudoclaude[key])) .. ', protocol.lua ' .. vim.inspect(mine))
  end
  assert(exp.pseudoclaude.version == protocol.version, 'protocol version')
  return client
end

--- Stop the client and wait until it has (and is gone from the clients, so that the next
--- request starts a new one).
function h.stop(client)
  client:stop()
  h.wait_for('the client to stop', function()
    return client:is_stopped() and vim.lsp.get_client_by_id(client.id) == nil
  end, 30000)
end

return h
