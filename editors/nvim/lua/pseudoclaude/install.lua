--- `:PseudoClaudeInstall`: the server in a private virtual environment,
--- `stdpath('data')/pseudoclaude/venv`, installed with pip from the plugin's own checkout.
--- Built in a temporary folder beside it and renamed into place only when everything worked.
local util = require('pseudoclaude.util')
local version = require('pseudoclaude.version')

local M = {}

--- The oldest Python the server runs on.
M.MIN_PYTHON = { 3, 11 }

--- How many lines of a failed step's output the error message quotes.
M.TAIL_LINES = 6

local win = vim.fn.has('win32') == 1

--- `stdpath('data')/pseudoclaude`
function M.data_dir()
  return vim.fs.joinpath(vim.fn.stdpath('data'), 'pseudoclaude')
end

--- The installed environment (which may not exist).
function M.venv_dir()
  return vim.fs.joinpath(M.data_dir(), 'venv')
end

--- The full install log of the last `:PseudoClaudeInstall`.
function M.log_path()
  return vim.fs.joinpath(vim.fn.stdpath('log'), 'pseudoclaude-install.log')
end

local function venv_python(dir)
  return win and vim.fs.joinpath(dir, 'Scripts', 'python.exe') or vim.fs.joinpath(dir, 'bin', 'python')
end

--- The server command of the installed environment, or nil when there is none: its
--- `pseudoclaude` script (`<venv>/Scripts/python.exe -m pseudoclaude lsp` on Windows).
--- @return string[]?
function M.server_cmd()
  local dir = M.venv_dir()
  if win then
    local py = venv_python(dir)
    return vim.fn.executable(py) == 1 and { py, '-m', 'pseudoclaude', 'lsp' } or nil
  end
  local exe = vim.fs.joinpath(dir, 'bin', 'pseudoclaude')
  return vim.fn.executable(exe) == 1 and { exe, 'lsp' } or nil
end

--- The version of a Python (`{3, 11, 7}`), or nil and why not.
--- @param python string
--- @return integer[]?, string?
function M.python_version(python)
  local exe = vim.fn.exepath(vim.fn.expand(python))
  if exe == '' then
    return nil, 'not found'
  end
  local ok, res = pcall(function()
    return vim.system({ exe, '-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])' }, { text = true })
      :wait(15000)
  end)
  local out = ok and res.code == 0 and res.stdout or ''
  local a, b, c = out:match('(%d+)%.(%d+)%.(%d+)')
  if not a then
    return nil, 'does not run'
  end
  return { tonumber(a), tonumber(b), tonumber(c) }
end

local function new_enough(v)
  return v[1] > M.MIN_PYTHON[1] or (v[1] == M.MIN_PYTHON[1] and v[2] >= M.MIN_PYTHON[2])
end

--- The Python to build the environment with: `python` when given, else `setup({ python })`, else
--- the first of `python3`, `python` that is new enough.
--- @param python? string
--- @return string? path, string version or why none
function M.find_python(python)
  local configured = require('pseudoclaude.config').options.python
  local candidates = python and { python } or configured and { configured } or { 'python3', 'python' }
  local tried = {}
  for _, name in ipairs(candidates) do
    local v, why = M.python_version(name)
    if v and new_enough(v) then
      return vim.fn.exepath(vim.fn.expand(name)), table.concat(v, '.')
    end
    tried[#tried + 1] = string.format('%s: %s', name, v and table.concat(v, '.') or why)
  end
  return nil,
    string.format(
      'no Python %d.%d or newer (%s). Install one, or name it: :PseudoClaudeInstall /path/to/python3.12',
      M.MIN_PYTHON[1],
      M.MIN_PYTHON[2],
      table.concat(tried, '; ')
    )
end

--- Calls `on_line` with every whole line of a stream (a line split across chunks stays whole).
local function lines_of(on_line)
  local partial = ''
  return function(_, data)
    if not data then
      if partial ~= '' then
        on_line(partial)
      end
      partial = ''
      return
    end
    partial = partial .. data
    while true do
      local i = partial:find('[\r\n]')
      if not i then
        break
      end
      local line = partial:sub(1, i - 1)
      partial = partial:sub(i + 1)
      if line ~= '' then
        on_line(line)
      end
    end
  end
end

--- Run `cmd` inside the install coroutine: waits (sync) or yields until it exits (async).
--- @return {code: integer, lines: string[]}
local function exec(job, cmd)
  local out = {}
  job.log[#job.log + 1] = '$ ' .. table.concat(cmd, ' ')
  local collect = lines_of(function(line)
    out[#out + 1] = line
    job.log[#job.log + 1] = line
    job.progress(line)
  end)
  local opts = { text = true, stdout = collect, stderr = collect }
  local co = coroutine.running()
  local ok, proc = pcall(vim.system, cmd, opts, not job.sync and function(r)
    vim.schedule(function()
      coroutine.resume(co, r)
    end)
  end or nil)
  if not ok then
    out[#out + 1] = tostring(proc)
    job.log[#job.log + 1] = tostring(proc)
    return { code = -1, lines = out }
  end
  local r
  if job.sync then
    r = proc:wait()
  else
    job.proc = proc
    r = coroutine.yield()
    job.proc = nil
  end
  return { code = r.code, lines = out }
end

--- The last lines of a failed step: its `ERROR:` lines when pip wrote some, else the last lines.
local function tail(lines)
  local errors = vim.tbl_filter(function(l)
    return l:match('^%s*ERROR:') ~= nil
  end, lines)
  local pick = #errors > 0 and errors or lines
  local from = math.max(1, #pick - M.TAIL_LINES + 1)
  return table.concat(vim.tbl_map(vim.trim, vim.list_slice(pick, from)), '\n')
end

--- A renamed environment's scripts still name the temporary folder in their `#!` line (and
--- `activate` in VIRTUAL_ENV): point them at the final one.
local function relocate_scripts(from, to)
  if win then
    return
  end
  local bin = vim.fs.joinpath(to, 'bin')
  for name, kind in vim.fs.dir(bin) do
    local path = vim.fs.joinpath(bin, name)
    local stat = kind == 'file' and vim.uv.fs_stat(path)
    if stat and stat.size < 1024 * 1024 then
      local f = io.open(path, 'rb')
      local text = f and f:read('*a') or ''
      if f then
        f:close()
      end
      if text:find(from, 1, true) and not text:find('\0', 1, true) then
        local fixed = table.concat(vim.split(text, from, { plain = true }), to)
        local w = io.open(path, 'wb')
        if w then
          w:write(fixed)
          w:close()
        end
      end
    end
  end
end

local function alive(pid)
  return pid and vim.uv.kill(pid, 0) == 0
end

--- Leftovers of installs that died (their Neovim gone), and environments replaced earlier.
local function clean_leftovers(data)
  for name in vim.fs.dir(data) do
    local pid = tonumber(name:match('^venv%.tmp%-(%d+)$'))
    if name:match('^venv%.old%-%d+$') or (pid and not alive(pid)) then
      vim.fn.delete(vim.fs.joinpath(data, name), 'rf')
    end
  end
end

local function running_servers()
  return #vim.lsp.get_clients({ name = require('pseudoclaude.client').NAME })
end

--- The steps; returns ok and the message to show.
local function steps(job, opts)
  local root = version.repo_root()
  if not vim.uv.fs_stat(vim.fs.joinpath(root, 'pyproject.toml')) then
    return false,
      string.format(
        'the plugin is not inside a checkout of pseudoclaude-lsp (no pyproject.toml in %s): '
          .. 'install the server yourself (pip install pseudoclaude-lsp) or set setup({ cmd = ... })',
        root
      )
  end
  local python, pyver = M.find_python(opts.python)
  if not python then
    return false, pyver
  end
  local data = M.data_dir()
  vim.fn.mkdir(data, 'p')
  clean_leftovers(data)
  local final = M.venv_dir()
  local tmp = vim.fs.joinpath(data, 'venv.tmp-' .. vim.fn.getpid())
  job.tmp = tmp
  vim.fn.delete(tmp, 'rf')

  job.say(string.format('creating a virtual environment with %s (%s)…', python, pyver))
  local r = exec(job, { python, '-m', 'venv', tmp })
  if r.code ~= 0 then
    local text = table.concat(r.lines, '\n')
    if text:find('ensurepip') or text:find('No module named venv') then
      return false,
        string.format(
          '%s cannot create a virtual environment: its venv module is missing '
            .. '(Debian/Ubuntu: sudo apt install python3-venv, or python%d.%d-venv).',
          python,
          pyver:match('^(%d+)'),
          tonumber(pyver:match('^%d+%.(%d+)'))
        )
    end
    return false, string.format('%s -m venv failed (exit %d):\n%s', python, r.code, tail(r.lines))
  end

  job.say('installing the server and its dependencies with pip (a minute or two)…')
  local py = venv_python(tmp)
  r = exec(job, { py, '-m', 'pip', 'install', '--disable-pip-version-check', root })
  if r.code ~= 0 then
    return false,
      string.format('pip install failed (exit %d):\n%s\nThe whole log: %s', r.code, tail(r.lines), M.log_path())
  end
  r = exec(job, {
    py,
    '-c',
    'import importlib.metadata as m, pseudoclaude; print("pseudoclaude", m.version("pseudoclaude-lsp"))',
  })
  local installed = r.code == 0 and version.parse(table.concat(r.lines, '\n'))
  if not installed then
    return false, string.format('the installed package does not import:\n%s', tail(r.lines))
  end

  local old
  if vim.uv.fs_stat(final) then
    old = vim.fs.joinpath(data, 'venv.old-' .. vim.fn.getpid())
    local ok, err = vim.uv.fs_rename(final, old)
    if not ok then
      return false, string.format('cannot move the old environment %s aside: %s', final, err)
    end
  end
  local ok, err = vim.uv.fs_rename(tmp, final)
  if not ok then
    if old then
      vim.uv.fs_rename(old, final)
    end
    return false, string.format('cannot rename %s to %s: %s', tmp, final, err)
  end
  job.tmp = nil
  relocate_scripts(tmp, final)
  local busy = running_servers() > 0
  if old and not busy then
    vim.fn.delete(old, 'rf')
  end

  -- `setup()` without `cmd` / `python` picked PATH's `pseudoclaude` before; now the new one.
  local config = require('pseudoclaude.config')
  if config.options.cmd == nil and config.options.python == nil then
    vim.lsp.config(require('pseudoclaude.client').NAME, { cmd = config.server_cmd() })
  end
  return true,
    string.format(
      'installed pseudoclaude %s in %s.%s',
      installed,
      final,
      busy and ' The running server still uses the old one: restart Neovim to switch.'
        or ' It starts with the next file you open.'
    )
end

local function write_log(lines)
  local path = M.log_path()
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  pcall(vim.fn.writefile, lines, path)
end

--- The install in flight (one at a time).
M.job = nil

--- Install (or re-install) the server. `sync = true` waits for it (the default without a UI:
--- headless, `nvim --headless "+Lazy! sync" +qa`); else it runs in the background with progress.
--- Ends with the `User PseudoClaudeInstalled` event (`data = {ok, message, venv}`).
--- @param opts? {python?: string, sync?: boolean}
--- @return boolean? ok (nil while an async install runs), string? message
function M.install(opts)
  opts = opts or {}
  if M.job then
    util.notify('PseudoClaude: an install is already running.', vim.log.levels.WARN)
    return false, 'an install is already running'
  end
  local sync = opts.sync
  if sync == nil then
    sync = #vim.api.nvim_list_uis() == 0
  end
  local job = { sync = sync, log = { 'PseudoClaude install ' .. os.date('%Y-%m-%d %H:%M:%S') } }
  job.say = function(msg)
    job.log[#job.log + 1] = '# ' .. msg
    util.notify('PseudoClaude: ' .. msg)
  end
  -- pip's lines, shown in passing (not kept in :messages) when there is a screen to show them on.
  job.progress = function(line)
    if sync or not (line:match('^Collecting') or line:match('^Installing') or line:match('^%s*Building')) then
      return
    end
    vim.schedule(function()
      if M.job == job then
        vim.api.nvim_echo({ { 'PseudoClaude: ' .. vim.trim(line):sub(1, vim.o.columns - 20) } }, false, {})
      end
    end)
  end
  M.job = job
  local result
  local co = coroutine.create(function()
    local ok, okay, msg = xpcall(steps, debug.traceback, job, opts)
    if not ok then
      okay, msg = false, 'unexpected error: ' .. tostring(okay)
    end
    if job.tmp then
      vim.fn.delete(job.tmp, 'rf')
    end
    M.job = nil
    job.log[#job.log + 1] = (okay and 'OK: ' or 'FAILED: ') .. msg
    write_log(job.log)
    local text = 'PseudoClaude: ' .. (okay and msg or ('install failed: ' .. msg))
    util.notify(text, okay and vim.log.levels.INFO or vim.log.levels.ERROR)
    result = { okay, text }
    util.fire('PseudoClaudeInstalled', { ok = okay, message = text, venv = M.venv_dir() })
  end)
  local ok, err = coroutine.resume(co)
  if not ok then
    M.job = nil
    error(err)
  end
  if result then
    return result[1], result[2]
  end
  return nil
end

--- Neovim quits during an async install: stop pip and remove the half-made environment.
function M.abort()
  local job = M.job
  if job and job.proc then
    pcall(job.proc.kill, job.proc, 15)
  end
  if job and job.tmp then
    vim.fn.delete(job.tmp, 'rf')
  end
end

return M
