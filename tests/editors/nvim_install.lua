-- :PseudoClaudeInstall and :checkhealth pseudoclaude, run by test_nvim.py as
-- `nvim --headless --clean -l nvim_install.lua` with XDG_DATA_HOME private.
-- Environment: PC_PLUGIN (editors/nvim), PC_WORKSPACE (a folder with .git and README.md),
-- PC_OLD_PYTHON (a fake Python 3.9), PC_DEPS_SITE (when set: pip runs with PIP_NO_DEPS and the
-- new environment gets a .pth to this site-packages for the dependencies), PC_REPORT.
local env = vim.env
local plugin, workspace = assert(env.PC_PLUGIN), assert(env.PC_WORKSPACE)
local report = { steps = {} }

local function finish(ok, err)
  report.ok, report.error = ok, err
  local f = assert(io.open(assert(env.PC_REPORT), 'w'))
  f:write(vim.json.encode(report))
  f:close()
end

local function step(name, fn)
  local t0 = vim.uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  report.steps[#report.steps + 1] = { name = name, ms = math.floor((vim.uv.hrtime() - t0) / 1e6) }
  if not ok then
    finish(false, name .. ': ' .. tostring(err))
    io.stderr:write(string.format('step %q failed: %s\n', name, err))
    os.exit(1)
  end
end

local function contains(hay, needle, what)
  if not hay:find(needle, 1, true) then
    error(string.format('%s: %q not in:\n%s', what, needle, hay), 2)
  end
end

local notes = {}
vim.notify = function(msg, level)
  notes[#notes + 1] = { msg = msg, level = level }
end

vim.opt.rtp:prepend(plugin)
vim.cmd.runtime('plugin/pseudoclaude.lua')
local install = require('pseudoclaude.install')
local data = install.data_dir()

local function leftovers()
  return vim.fn.glob(data .. '/venv*', true, true)
end

step('a Python too old: one clear error, nothing made', function()
  vim.cmd('PseudoClaudeInstall ' .. assert(env.PC_OLD_PYTHON)) -- headless: waits
  assert(#notes == 1 and notes[1].level == vim.log.levels.ERROR, vim.inspect(notes))
  local err = notes[1].msg
  report.old_python = err
  contains(err, 'PseudoClaude: install failed: no Python 3.11 or newer', 'error')
  contains(err, '3.9.7', 'error')
  assert(#leftovers() == 0, vim.inspect(leftovers()))
end)

step('pip fails: its last lines, nothing half-made', function()
  vim.env.PIP_NO_INDEX, vim.env.PIP_FIND_LINKS = '1', vim.fn.tempname()
  local ok, msg = install.install({ sync = true })
  vim.env.PIP_NO_INDEX, vim.env.PIP_FIND_LINKS = nil, nil
  assert(ok == false, 'the install did not fail')
  report.pip_failed = msg
  contains(msg, 'PseudoClaude: install failed: pip install failed (exit 1):\nERROR: ', 'message')
  contains(msg, 'The whole log: ' .. install.log_path(), 'message')
  assert(notes[#notes].level == vim.log.levels.ERROR, 'not shown as an error')
  assert(#leftovers() == 0, vim.inspect(leftovers()))
  assert(install.server_cmd() == nil, 'a server command without an environment')
end)

step(':PseudoClaudeInstall from the checkout', function()
  if env.PC_DEPS_SITE then
    vim.env.PIP_NO_DEPS = '1'
  end
  notes = {}
  vim.cmd('PseudoClaudeInstall') -- headless: waits
  vim.env.PIP_NO_DEPS = nil
  report.install_notes = notes
  local last = notes[#notes]
  assert(last.level == vim.log.levels.INFO, vim.inspect(notes))
  contains(last.msg, 'PseudoClaude: installed pseudoclaude ', 'message')
  contains(notes[1].msg, 'creating a virtual environment', 'progress')
  assert(vim.deep_equal(leftovers(), { install.venv_dir() }), vim.inspect(leftovers()))
  local cmd = assert(install.server_cmd(), 'no server command after the install')
  assert(cmd[1] == install.venv_dir() .. '/bin/pseudoclaude', cmd[1])
  -- The renamed environment's script names its own folder, not the temporary one.
  local head = io.open(cmd[1]):read('*l')
  assert(head == '#!' .. install.venv_dir() .. '/bin/python' or head:find(install.venv_dir(), 1, true), head)
  if env.PC_DEPS_SITE then
    local site = vim.fn.glob(install.venv_dir() .. '/lib/python3*/site-packages', true, true)[1]
    vim.fn.writefile({ env.PC_DEPS_SITE }, site .. '/zz-test-deps.pth')
  end
  local res = vim.system({ cmd[1], '--version' }, { text = true }):wait(60000)
  report.version_output = res.stdout .. res.stderr
  assert(res.code == 0, report.version_output)
end)

step('setup({}) starts the installed server', function()
  vim.cmd('filetype on')
  require('pseudoclaude').setup({})
  vim.cmd.edit(vim.fn.fnameescape(workspace .. '/README.md'))
  local client
  local ok = vim.wait(90000, function()
    client = vim.lsp.get_clients({ name = 'pseudoclaude', bufnr = 0 })[1]
    return client ~= nil and client.initialized
  end, 50)
  assert(ok, 'the client did not initialize')
  assert(client.config.cmd[1] == install.venv_dir() .. '/bin/pseudoclaude', vim.inspect(client.config.cmd))
  report.server_name = client.server_info and client.server_info.name
end)

step(':checkhealth pseudoclaude', function()
  vim.cmd('checkhealth pseudoclaude')
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local text = table.concat(lines, '\n')
  report.health = lines
  assert(not text:find(assert(env.ANTHROPIC_API_KEY), 1, true), 'the API key is in the report')
  for _, want in ipairs({
    'Neovim ~',
    'Server ~',
    'Provider credentials ~',
    'Workspace ~',
    'OK Neovim 0.',
    'OK server command: ' .. install.venv_dir() .. '/bin/pseudoclaude lsp (from the environment :PseudoClaudeInstall made)',
    'OK ANTHROPIC_API_KEY is set',
    'OPENAI_API_KEY is not set',
    'workspace root: ' .. workspace .. ' (it holds .git)',
    'data folder ' .. workspace .. '/.PseudoClaude (from the workspace root)',
  }) do
    contains(text, want, ':checkhealth')
  end
  assert(not text:find('ERROR', 1, true), text)
end)

finish(true)
io.stdout:write(string.format('nvim install: %d steps passed\n', #report.steps))
vim.cmd('qall!')
