--- `:checkhealth pseudoclaude`: Neovim, the server and its version, provider credentials (whether
--- they are set, never their values; none needed for a local server), the workspace root of the current buffer and its data folder,
--- what checkpoints cover (the `git` command found or not), the state of the folder's MCP
--- servers, what the folder's own settings file asks for that waits for an approval, and the
--- permission mode, the sandbox (on, or off and why) and the permission rules' problems (when the
--- server runs), and whether the agent sees the current buffer as it is in the editor (the
--- client attached, the server syncing documents, the diagnostics it may ask for).
local M = {}

local health = vim.health

--- The buffer `:checkhealth` was called from (it runs in its own new buffer).
local function user_buf()
  local function is_file_buf(b)
    return b and b > 0 and vim.api.nvim_buf_is_valid(b) and vim.bo[b].buftype == '' and vim.bo[b].filetype ~= 'checkhealth'
  end
  local cur = vim.api.nvim_get_current_buf()
  if is_file_buf(cur) then
    return cur
  end
  local alt = vim.fn.bufnr('#')
  if is_file_buf(alt) then
    return alt
  end
  local tab = vim.fn.tabpagenr('#')
  if tab > 0 then
    local b = vim.fn.tabpagebuflist(tab)[vim.fn.tabpagewinnr(tab)]
    if is_file_buf(b) then
      return b
    end
  end
  return nil
end

--- The server's `--version` (`pseudoclaude <version>`), or nil when it does not say.
local function server_version(cmd)
  local probe = vim.deepcopy(cmd)
  if probe[#probe] == 'lsp' then
    probe[#probe] = '--version'
  else
    return nil
  end
  local ok, res = pcall(function()
    return vim.system(probe, { text = true }):wait(20000)
  end)
  if not ok or res.code ~= 0 then
    return nil
  end
  return require('pseudoclaude.version').parse((res.stdout or '') .. (res.stderr or ''))
end

local function check_neovim()
  health.start('Neovim')
  local v = vim.version()
  local text = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. text)
  else
    health.error('Neovim ' .. text .. ': the plugin needs 0.11 or newer')
  end
end

local function check_server()
  health.start('Server')
  local config = require('pseudoclaude.config')
  local install = require('pseudoclaude.install')
  local version = require('pseudoclaude.version')
  local cmd, source = config.server_cmd(config.options)
  local from = ({
    cmd = 'setup({ cmd })',
    python = 'setup({ python })',
    install = 'the environment :PseudoClaudeInstall made',
    PATH = 'PATH',
  })[source]
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    health.error(
      string.format('server command %q not found (from %s)', table.concat(cmd, ' '), from),
      { 'Run :PseudoClaudeInstall, or pip install the repository, or set setup({ cmd = ... })' }
    )
  else
    health.ok(string.format('server command: %s (from %s)', table.concat(cmd, ' '), from))
    local plugin = version.plugin() or 'unknown'
    local server = server_version(cmd) or 'unknown'
    if server == 'unknown' or plugin == 'unknown' then
      health.info(string.format('server version %s, plugin version %s', server, plugin))
    elseif server == plugin then
      health.ok(string.format('server version %s (same as the plugin)', server))
    else
      health.warn(
        string.format('server version %s, plugin version %s', server, plugin),
        { 'Run :PseudoClaudeInstall to install the server of this checkout' }
      )
    end
  end
  if source ~= 'install' then
    health.info('no environment from :PseudoClaudeInstall (' .. install.venv_dir() .. ')')
  end
  local python, why = install.find_python()
  if python then
    health.ok(string.format(':PseudoClaudeInstall would use %s (%s)', python, why))
  else
    health.warn(':PseudoClaudeInstall: ' .. why)
  end
end

--- Whether `url` is a server on this machine: localhost (or a name under it), 127.x.x.x, ::1.
--- @param url string
--- @return boolean
function M.is_local_url(url)
  local authority = type(url) == 'string' and url:match('^%a[%w+.-]*://([^/?#]+)') or nil
  if not authority then
    return false
  end
  authority = authority:gsub('^.*@', '') -- user information
  local host = authority:match('^%[([^%]]+)%]') or authority:gsub(':%d*$', '')
  host = host:lower():gsub('%.$', '')
  return host == 'localhost'
    or vim.endswith(host, '.localhost')
    or host:match('^127%.%d+%.%d+%.%d+$') ~= nil
    or host == '::1'
    or host == '0:0:0:0:0:0:0:1'
end

--- The OpenAI API's own address (the provider's default base URL).
local OPENAI_HOST = 'api.openai.com'

--- Whether a server at `url` for `provider` works without an API key: one on this machine, or,
--- for provider openai, any server but OpenAI's own (Ollama, vLLM, LM Studio on another host).
--- @return boolean needs_none, string why
function M.keyless(provider, url)
  if type(url) ~= 'string' or url == '' then
    return false, ''
  end
  if M.is_local_url(url) then
    return true, 'a server on this machine'
  end
  local host = (url:match('^%a[%w+.-]*://([^/?#]+)') or ''):gsub('^.*@', ''):gsub(':%d*$', ''):lower()
  if provider == 'openai' and host ~= '' and host ~= OPENAI_HOST then
    return true, "an OpenAI-compatible server, not OpenAI's own API"
  end
  return false, ''
end

--- The top-level `key: value` lines of a YAML file (plain scalars: quotes and comments removed),
--- or {} when it cannot be read. Enough for `provider`, `baseUrl` and whether `apiKey` is set.
--- @return table<string, string>
function M.read_top_level(path)
  local out = {}
  local ok, lines = pcall(vim.fn.readfile, path)
  if not ok or type(lines) ~= 'table' then
    return out
  end
  for _, line in ipairs(lines) do
    local key, value = line:match('^([%a_][%w_]*):%s*(.-)%s*$')
    if key then
      value = value:gsub('%s+#.*$', '')
      value = value:match('^"(.*)"$') or value:match("^'(.*)'$") or value
      if value ~= '' and value ~= 'null' and value ~= '~' then
        out[key] = value
      end
    end
  end
  return out
end

--- What `:checkhealth` says about the provider's credentials, as { level, text, advice? } entries
--- (level: 'ok', 'info' or 'warn'): whether each key is set (never its value), and whether one is
--- needed at all. `settings`: setup()'s; `getenv(name)`: the environment; `file`: the top-level
--- values of ~/.PseudoClaude/config.yaml (setup() wins over it, as in the server).
--- @return table[]
function M.credential_report(settings, getenv, file)
  settings, file = settings or {}, file or {}
  local out = {}
  local function add(level, text, advice)
    out[#out + 1] = { level, text, advice }
  end
  local function set(v)
    return type(v) == 'string' and v ~= ''
  end
  local env = {}
  for _, name in ipairs({ 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY' }) do
    env[name] = set(getenv(name))
    add(env[name] and 'ok' or 'info', name .. (env[name] and ' is set' or ' is not set'))
  end
  local any = env.ANTHROPIC_API_KEY or env.OPENAI_API_KEY
  if set(settings.apiKey) then
    any = true
    add('ok', 'settings.apiKey is set in setup()')
  elseif set(file.apiKey or file.api_key) then
    any = true
    add('ok', 'apiKey is set in ~/.PseudoClaude/config.yaml')
  end
  local provider, base, from
  if set(settings.provider) then
    provider, from = settings.provider, 'setup()'
  elseif set(file.provider) then
    provider, from = file.provider, '~/.PseudoClaude/config.yaml'
  end
  if set(settings.baseUrl) then
    base = settings.baseUrl
  elseif set(file.baseUrl or file.base_url) then
    base = file.baseUrl or file.base_url
  end
  if provider then
    add('info', string.format('provider: %s (from %s)', provider, from))
  end
  if base then
    add('info', 'baseUrl: ' .. base)
  end
  if any then
    return out
  end
  local keyless, why = M.keyless(provider, base)
  if provider and keyless then
    add('ok', string.format('no API key needed: provider %s at %s (%s)', provider, base, why))
    add('info', 'the server sends a placeholder key there; set apiKey if that server asks for one')
  elseif base and not provider then
    add('warn', 'baseUrl is set but no provider: the server does not know which protocol to speak',
      { 'Set provider: openai (Ollama, vLLM, LM Studio) or anthropic beside baseUrl' })
  else
    add('warn', 'no API key in the environment, in setup() or in ~/.PseudoClaude/config.yaml', {
      'Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or apiKey in ~/.PseudoClaude/config.yaml',
      'For a local server (Ollama, vLLM), set provider: openai and its baseUrl: no key is needed',
    })
  end
  return out
end

local function check_credentials()
  health.start('Provider credentials')
  local settings = require('pseudoclaude.config').options.settings or {}
  local file = M.read_top_level(vim.fs.joinpath(vim.fn.expand('~'), '.PseudoClaude', 'config.yaml'))
  for _, entry in ipairs(M.credential_report(settings, function(name)
    return vim.env[name]
  end, file)) do
    health[entry[1]](entry[2], entry[3])
  end
end

--- The nearest folder that exists, starting at `dir`.
local function existing(dir)
  local d = dir
  while d and not vim.uv.fs_stat(d) do
    local up = vim.fs.dirname(d)
    d = up ~= d and up or nil
  end
  return d
end

local function check_workspace()
  health.start('Workspace')
  local config = require('pseudoclaude.config')
  local buf = user_buf()
  local root, why = config.root_info(buf or 0)
  local name = buf and vim.api.nvim_buf_get_name(buf) or ''
  health.info(string.format('buffer: %s', name ~= '' and name or '(no file)'))
  health.ok(string.format('workspace root: %s (%s)', root, why))
  local data_dir = (config.options.settings or {}).dataDir
  local data, whence
  if type(data_dir) == 'string' and data_dir ~= '' then
    data = vim.fs.normalize(vim.fn.expand(data_dir))
    if not vim.startswith(data, '/') and not data:match('^%a:') then
      data = vim.fs.joinpath(root, data)
    end
    whence = 'the dataDir setting'
  else
    data, whence = vim.fs.joinpath(root, '.PseudoClaude'), 'the workspace root'
  end
  local stat = vim.uv.fs_stat(data)
  if stat and stat.type ~= 'directory' then
    health.error(string.format('data folder %s (from %s) is not a folder', data, whence))
  elseif stat then
    if vim.fn.filewritable(data) == 2 then
      health.ok(string.format('data folder %s (from %s) is writable', data, whence))
    else
      health.error(string.format('data folder %s (from %s) is not writable', data, whence))
    end
  else
    local parent = existing(data)
    if parent and vim.fn.filewritable(parent) == 2 then
      health.ok(string.format('data folder %s (from %s) will be created', data, whence))
    else
      health.error(
        string.format('data folder %s (from %s) cannot be created: %s is not writable', data, whence, parent)
      )
    end
  end
end

--- What a rewind of code can restore: every file with the `git` command (the server snapshots
--- the folder in a repository of its own), else only the agent's own writes.
local function check_checkpoints()
  health.start('Checkpoints (rewind)')
  local git = vim.fn.exepath('git')
  if git ~= '' then
    health.ok(string.format('git found (%s): checkpoints cover every file, a rewind restores what commands changed too', git))
  else
    health.warn("git not found: checkpoints cover only the agent's own writes (what commands change is not restored)",
      { 'Install git (on the PATH the server starts with) so that :PseudoClaudeRewind can restore every file' })
  end
end

--- The folder's MCP servers, as the running server lists them (nothing is started for this).
--- The result of `method` for the current buffer's folder, asked of the running server (3 s);
--- nil after saying why (not running: `idle`; no answer: `failed` and the reason).
--- @return table?
local function ask_server(method, idle, failed)
  local client = require('pseudoclaude.client')
  local buf = user_buf() or 0
  local c = client.get(buf)
  if not (c and c.initialized) then
    health.info(idle)
    return nil
  end
  local resp = c:request_sync(method, { workspace = client.workspace(c, buf) }, 3000)
  if not resp or resp.err then
    health.warn(failed .. (resp and client.error_message(resp.err) or 'no answer within 3 s'))
    return nil
  end
  return resp.result or {}
end

local function check_mcp()
  health.start('MCP servers')
  local protocol = require('pseudoclaude.protocol')
  local result = ask_server(protocol.requests.mcp_list,
    'the server is not running: :PseudoClaudeMcp shows the servers once it is',
    'the server did not list its MCP servers: ')
  if not result then
    return
  end
  local servers = result.servers or {}
  if #servers == 0 then
    health.info("no MCP servers: add them to the folder's .mcp.json or to the mcp.servers setting")
    return
  end
  local mcp = require('pseudoclaude.mcp')
  for _, s in ipairs(servers) do
    local line = string.format('%s (%s): %s', s.name, mcp.source_label(s.source), mcp.status_text(s))
    if s.status == 'failed' then
      health.warn(line, { ':PseudoClaudeMcp, then r on it, restarts it' })
    elseif s.status == 'ready' then
      health.ok(line)
    elseif s.status == 'needsApproval' then
      health.info(line .. ' (:PseudoClaudeMcp, then a)')
    else
      health.info(line)
    end
  end
end

--- The agent in the editor: the current buffer attached (the server reads its unsaved text and
--- edits it in place), the server syncing open documents, the client answering diagnostics.
local function check_editor()
  health.start('Editor (unsaved buffers, diagnostics)')
  local client = require('pseudoclaude.client')
  local editor = require('pseudoclaude.editor')
  local buf = user_buf()
  local c = client.get(buf or 0)
  if not (c and c.initialized) then
    health.info('the server is not running: every file buffer of the folder is attached once it is')
    return
  end
  local caps = c.server_capabilities or {}
  if caps.textDocumentSync then
    health.ok('the server syncs open documents: the agent reads and edits your buffers, unsaved changes included')
  else
    health.warn('the server does not sync open documents (an older server?): the agent reads the files on disk',
      { 'Run :PseudoClaudeInstall to install the server of this checkout' })
  end
  if buf and editor.file_of(buf) then
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':~:.')
    if vim.lsp.get_clients({ name = client.NAME, bufnr = buf })[1] then
      health.ok(string.format('%s is attached to the pseudoclaude client', name))
    else
      health.warn(string.format('%s is not attached to the pseudoclaude client: the agent reads it from disk', name),
        { 'Reopen it with :edit, or check :LspInfo (a `filetypes` list in your configuration limits it)' })
    end
  end
  local exp = vim.tbl_get(c.capabilities or {}, 'experimental', 'pseudoclaude') or {}
  if exp.diagnostics then
    health.ok('the agent can ask for the diagnostics vim.diagnostic shows (get_diagnostics)')
  end
  if caps.codeActionProvider then
    health.info('code actions: PseudoClaude: Explain, Fix, Ask about selection (vim.lsp.buf.code_action())')
  end
end

--- What the folder's own settings file asks for that is not applied (it waits for an approval).
local function check_settings()
  health.start("The folder's own settings")
  local protocol = require('pseudoclaude.protocol')
  local result = ask_server(protocol.requests.context,
    "the server is not running: this shows what a folder's .PseudoClaude/config.yaml asks for once it is",
    'the server did not answer: ')
  if not result then
    return
  end
  local ignored = result.ignoredSettings or {}
  if #ignored == 0 then
    health.ok("nothing in the folder's .PseudoClaude/config.yaml waits for your approval")
    return
  end
  for _, i in ipairs(ignored) do
    health.warn(string.format('not applied: %s: %s (%s)', i.key, i.value, i.reason),
      { 'Restart the server (:LspRestart) to be asked again, or run `pseudoclaude permissions approve` in the folder' })
  end
end

--- What `:checkhealth` says about permissions, as { level, text, advice? } entries (level `ok`,
--- `info` or `warn`), from a `pseudoclaude/permissions` answer: the sandbox (ok when commands run
--- in it; a warning with the reason when they do not), the mode, the rules' problems and the
--- folder's files whose rules wait for an approval.
--- @param r pseudoclaude.PermissionsResult
--- @return table[]
function M.permissions_report(r)
  local out = {}
  local function add(level, text, advice)
    out[#out + 1] = { level, text, advice }
  end
  local sandbox = type(r.sandbox) == 'table' and r.sandbox or nil
  local reason = sandbox and type(sandbox.reason) == 'string' and sandbox.reason ~= '' and sandbox.reason or nil
  if not sandbox then
    add('info', 'the server does not say whether commands run in a sandbox (an older server?)')
  elseif sandbox.enabled then
    add('ok', 'sandbox on: commands run in the sandbox' .. (reason and (' (' .. reason .. ')') or ''))
  elseif reason == 'being checked' then
    add('info', 'sandbox: being checked (run :checkhealth again in a moment)')
  else
    add('warn', 'sandbox off: ' .. (reason or 'commands run without a sandbox'), {
      'Commands the agent runs can reach every file you can; approve them with care',
      'Install bubblewrap (bwrap) for the sandbox, or see the sandbox.enabled setting',
    })
  end
  local meanings = require('pseudoclaude.permissions').MEANINGS
  if type(r.mode) == 'string' then
    local line = string.format('permission mode: %s (%s)', r.mode, meanings[r.mode] or '')
    if r.mode == 'bypassPermissions' then
      add('warn', line, { ':PseudoClaudeMode default goes back to asking' })
    else
      add('info', line)
    end
  end
  local rules = type(r.rules) == 'table' and #r.rules or 0
  add('info', string.format('%d permission rule%s (:PseudoClaudePermissions lists them)', rules, rules == 1 and '' or 's'))
  for _, problem in ipairs(type(r.problems) == 'table' and r.problems or {}) do
    add('warn', 'permission rules: ' .. tostring(problem), { 'Fix the rule in its file: the other rules apply' })
  end
  for _, w in ipairs(type(r.waiting) == 'table' and r.waiting or {}) do
    add('warn', string.format('%s: its allow rules wait for your approval', tostring(w)),
      { 'Restart the server (:LspRestart) to be asked again, or run `pseudoclaude permissions approve` in the folder' })
  end
  return out
end

--- The permission mode, the sandbox and the rules' problems, as the running server reports them.
local function check_permissions()
  health.start('Permissions and sandbox')
  local protocol = require('pseudoclaude.protocol')
  local result = ask_server(protocol.requests.permissions,
    'the server is not running: this shows the permission mode and the sandbox once it is',
    'the server did not answer: ')
  if not result then
    return
  end
  for _, entry in ipairs(M.permissions_report(result)) do
    health[entry[1]](entry[2], entry[3])
  end
end

function M.check()
  check_neovim()
  check_server()
  check_credentials()
  check_workspace()
  check_checkpoints()
  check_mcp()
  check_settings()
  check_permissions()
  check_editor()
end

return M
