--- Finding, starting and talking to the PseudoClaude language client.
local protocol = require('pseudoclaude.protocol')

local M = {}

M.NAME = 'pseudoclaude'

--- How long `ensure` waits for a starting server (ms).
M.START_TIMEOUT = 30000

local function buf_file(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and vim.fs.normalize(name) or nil
end

--- The client for a buffer: the one attached to it, else one whose root holds its file, else any.
--- @param bufnr? integer
--- @return vim.lsp.Client?
function M.get(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local attached = vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr })
  if attached[1] then
    return attached[1]
  end
  local all = vim.lsp.get_clients({ name = M.NAME })
  local file = buf_file(bufnr)
  if file then
    for _, c in ipairs(all) do
      if c.root_dir and vim.fs.relpath(c.root_dir, file) then
        return c
      end
    end
  end
  return all[1]
end

--- The workspace folder URI a request is about: the chat's folder in a chat buffer, the folder
--- holding the buffer's file, else the client's first folder.
--- @param client vim.lsp.Client
--- @param bufnr? integer
--- @return string?
function M.workspace(client, bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local chat = package.loaded['pseudoclaude.chat']
  local shown = chat and chat.of_buf(bufnr)
  if shown then
    return shown.workspace
  end
  local folders = client.workspace_folders or {}
  local file = buf_file(bufnr)
  if file and #folders > 1 then
    for _, f in ipairs(folders) do
      if vim.fs.relpath(vim.uri_to_fname(f.uri), file) then
        return f.uri
      end
    end
  end
  if folders[1] then
    return folders[1].uri
  end
  if client.root_dir then
    return vim.uri_from_fname(client.root_dir)
  end
  return nil
end

--- The root a buffer's client has: the configuration's `root_dir` for it when it answers at
--- once (the plugin's does), else `config.root_dir()` of the plugin.
local function root_of_buf(config, bufnr)
  local root = type(config.root_dir) == 'string' and config.root_dir or nil
  if type(config.root_dir) == 'function' then
    config.root_dir(bufnr, function(dir)
      root = root or dir
    end)
  end
  return vim.fs.normalize(root or require('pseudoclaude.config').root_dir(bufnr))
end

--- The root a new client gets when no buffer started one: the current buffer's.
local function root_for(config)
  return root_of_buf(config, vim.api.nvim_get_current_buf())
end

--- `fn(workspace)` with the folder a command is about: `workspace` when given, else the current
--- buffer's (a client started when none runs); a failure is notified, naming `what`.
--- @param workspace string?
--- @param what string
--- @param fn fun(workspace: string)
function M.with_workspace(workspace, what, fn)
  if workspace then
    return fn(workspace)
  end
  local bufnr = vim.api.nvim_get_current_buf()
  M.ensure(function(c, err)
    if not c then
      return M.fail(what, err)
    end
    fn(M.workspace(c, bufnr))
  end)
end

--- Call `cb(client)` with an initialized client, starting one for the current directory if none
--- runs (so the commands work before any file is opened); `cb(nil, message)` on failure.
--- @param cb fun(client: vim.lsp.Client?, err: string?)
function M.ensure(cb)
  local client = M.get(0)
  if not client then
    local config = vim.lsp.config[M.NAME]
    if not config then
      return cb(nil, 'no configuration named pseudoclaude: is the plugin on the runtimepath?')
    end
    config = vim.deepcopy(config)
    config.root_dir = root_for(config)
    local id = vim.lsp.start(config, { attach = false })
    client = id and vim.lsp.get_client_by_id(id) or nil
    if not client then
      return cb(nil, 'the server did not start: ' .. table.concat(config.cmd or {}, ' '))
    end
  end
  if client.initialized then
    return cb(client)
  end
  local waited = 0
  local timer = assert(vim.uv.new_timer())
  timer:start(
    50,
    50,
    vim.schedule_wrap(function()
      waited = waited + 50
      if client.initialized then
        timer:close()
        cb(client)
      elseif client:is_stopped() or waited >= M.START_TIMEOUT then
        timer:close()
        cb(nil, 'the server did not start (see :checkhealth vim.lsp and :LspLog)')
      end
    end)
  )
end

local function same_root(a, b)
  return a ~= nil and b ~= nil and vim.fs.normalize(a) == vim.fs.normalize(b)
end

--- Attach the pseudoclaude client of a file buffer's folder to it, so that the server syncs
--- the document (the agent reads its unsaved text, and edits it in the buffer): the running
--- client of that folder, else (with `vim.lsp.enable('pseudoclaude')`) a new one. Neovim's own
--- `FileType` autocommand attaches buffers that have a filetype; this one also takes the others
--- (a file without an extension Neovim knows), and buffers loaded before the client started.
--- @param bufnr integer
function M.attach_buffer(bufnr)
  local editor = require('pseudoclaude.editor')
  if not vim.api.nvim_buf_is_loaded(bufnr) or not editor.file_of(bufnr) then
    return
  end
  if vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr, _uninitialized = true })[1] then
    return
  end
  local config = vim.lsp.config[M.NAME]
  if not config then
    return
  end
  local root = root_of_buf(config, bufnr)
  for _, c in ipairs(vim.lsp.get_clients({ name = M.NAME, _uninitialized = true })) do
    if not c:is_stopped() and same_root(c.root_dir, root) then
      vim.lsp.buf_attach_client(bufnr, c.id)
      return
    end
  end
  if vim.lsp.is_enabled(M.NAME) and vim.bo[bufnr].filetype == '' then
    config = vim.deepcopy(config)
    config.root_dir = root
    vim.lsp.start(config, { bufnr = bufnr, silent = true })
  end
end

--- Attach a (new) client to the loaded file buffers of its folder it is not attached to yet.
--- @param c vim.lsp.Client
function M.attach_all(c)
  local config = vim.lsp.config[M.NAME]
  if not config or c:is_stopped() then
    return
  end
  local editor = require('pseudoclaude.editor')
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and editor.file_of(bufnr)
      and not vim.lsp.get_clients({ name = M.NAME, bufnr = bufnr, _uninitialized = true })[1]
      and same_root(c.root_dir, root_of_buf(config, bufnr)) then
      vim.lsp.buf_attach_client(bufnr, c.id)
    end
  end
end

--- Neovim sends a code action request only the diagnostics its own client published, at the
--- cursor; the server's *Fix* is about every source's (a language server, a linter): a client's
--- `textDocument/codeAction` requests get those of the range's lines.
--- @param c vim.lsp.Client
function M.send_range_diagnostics(c)
  if c._pseudoclaude_requests then
    return
  end
  c._pseudoclaude_requests = true
  local request = c.request
  c.request = function(self, method, params, handler, bufnr)
    if method == 'textDocument/codeAction' and type(params) == 'table' and type(params.range) == 'table' then
      local buf = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
      pcall(function()
        params.context = type(params.context) == 'table' and params.context or {}
        params.context.diagnostics = require('pseudoclaude.editor').range_diagnostics(buf, params.range,
          self.offset_encoding or 'utf-16', params.context.diagnostics)
      end)
    end
    return request(self, method, params, handler, bufnr)
  end
end

--- The running client of a workspace folder URI (one whose folders hold it), else `get(0)`.
--- @param workspace? string
--- @return vim.lsp.Client?
function M.for_workspace(workspace)
  if workspace then
    local key = workspace:gsub('/+$', '')
    for _, c in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
      for _, f in ipairs(c.workspace_folders or {}) do
        if f.uri:gsub('/+$', '') == key then
          return c
        end
      end
      if c.root_dir and vim.uri_from_fname(c.root_dir):gsub('/+$', '') == key then
        return c
      end
    end
  end
  return M.get(0)
end

--- The position encoding of the client of a workspace (`utf-16` until one says otherwise).
--- @param workspace? string
--- @return string
function M.encoding(workspace)
  local c = M.for_workspace(workspace)
  return c and c.offset_encoding or 'utf-16'
end

--- One-line message of an LSP error.
function M.error_message(err)
  if type(err) == 'table' then
    local msg = tostring(err.message or vim.inspect(err))
    return (msg:match('^[^\n]*'))
  end
  return tostring(err)
end

--- Send a request with the workspace filled in. `cb(err, result, client)`; returns nothing (the
--- request id arrives through `on_sent(client, id)` once the client is ready).
--- @param method string
--- @param params? table
--- @param cb fun(err: table?, result: any, client: vim.lsp.Client?)
--- @param on_sent? fun(client: vim.lsp.Client, id: integer, workspace: string?)
function M.request(method, params, cb, on_sent)
  local bufnr = vim.api.nvim_get_current_buf()
  M.ensure(function(client, err)
    if not client then
      return cb({ message = err }, nil, nil)
    end
    params = params or {}
    params.workspace = params.workspace or M.workspace(client, bufnr)
    local ok, id = client:request(method, params, function(e, result)
      cb(e, result, client)
    end)
    if not ok then
      return cb({ message = 'the server is not running' }, nil, client)
    end
    if on_sent then
      on_sent(client, id, params.workspace)
    end
  end)
end

--- Show a failed request: `PseudoClaude: <what> failed: <message>` (an error notification).
--- @param what string
--- @param err any
function M.fail(what, err)
  vim.notify(
    string.format('PseudoClaude: %s failed: %s', what, M.error_message(err)),
    vim.log.levels.ERROR,
    { title = 'PseudoClaude' }
  )
end

--- `M.request` for a command: a failure is shown by `M.fail(what, err)`, a result goes to
--- `on_result(result, client)`; `after(err, result, client)`, when given, runs after either (to
--- refresh the meter or fire an event).
--- @param method string one of `require('pseudoclaude.protocol').requests`
--- @param params? table
--- @param what string the command, as failures name it (`Compact`, `Resume`, ...)
--- @param on_result? fun(result: any, client: vim.lsp.Client?)
--- @param after? fun(err: table?, result: any, client: vim.lsp.Client?)
function M.request_or_fail(method, params, what, on_result, after)
  M.request(method, params, function(err, result, client)
    if err then
      M.fail(what, err)
    elseif on_result then
      on_result(result, client)
    end
    if after then
      after(err, result, client)
    end
  end)
end

--- Is this request error a cancellation (JSON-RPC RequestCancelled)?
--- @param err any
--- @return boolean
function M.is_cancelled(err)
  return type(err) == 'table' and err.code == protocol.errors.request_cancelled
end

return M
