--- `:PseudoClaudeWorktree [status|apply|remove[!]]`: a session that works in a git worktree of its
--- own (`/worktree`, `:PseudoClaudeNew` with `worktree`) and whose changes reach the folder only
--- when applied. `status` lists its changes in a scratch buffer (`<CR>` compares a file with the
--- folder's in a new tab, `a` applies, `R` removes, `r` refreshes, `q` closes); `apply` writes them
--- into the folder (nothing when one of them changed there too: the conflicts are named);
--- `remove` deletes the worktree and its branch (refused with changes not applied: asked whether
--- to remove it anyway). The session is the chat's (in a chat buffer), else the folder's current.
local client = require('pseudoclaude.client')
local fmt = require('pseudoclaude.format')
local protocol = require('pseudoclaude.protocol')
local util = require('pseudoclaude.util')

local M = {}

M.ACTIONS = { 'status', 'apply', 'remove' }
M.USAGE = ':PseudoClaudeWorktree [status|apply|remove[!]]'

--- A file's action in the status buffer (the wire's `create`, `modify`, `delete`).
M.WORDS = { create = 'new', modify = 'changed', delete = 'deleted' }

M.HIGHLIGHTS = {
  PseudoClaudeWorktreeTitle = 'Title',
  PseudoClaudeWorktreeDim = 'Comment',
  PseudoClaudeWorktreeCreate = 'Added',
  PseudoClaudeWorktreeModify = 'Changed',
  PseudoClaudeWorktreeDelete = 'Removed',
}

M.NS = vim.api.nvim_create_namespace('pseudoclaude_worktree')

util.link_highlights('worktree', M.HIGHLIGHTS)

local notify = util.notify
local fire = util.fire

--- The session a command in buffer `bufnr` is about: a chat's own (a status buffer's), else the
--- session of the folder's current chat (none: the server's current session).
--- @param bufnr? integer
--- @return string?
function M.session_of(bufnr)
  local chat = package.loaded['pseudoclaude.chat']
  local shown = chat and chat.of_buf(bufnr or vim.api.nvim_get_current_buf())
  if shown then
    return shown.session_id
  end
  local status = M.shown[bufnr or vim.api.nvim_get_current_buf()]
  if status then
    return status.sessionId
  end
  return require('pseudoclaude').chat_session()
end

--- `:PseudoClaudeWorktree` arguments: `{action, force}` (`status` by default; `remove!` forces), or
--- nil and why.
--- @param arg? string
--- @param bang? boolean
--- @return {action: string, force: boolean}?, string?
function M.parse(arg, bang)
  local word = vim.trim(arg or '')
  local force = bang == true
  if word:sub(-1) == '!' then
    word, force = word:sub(1, -2), true
  end
  word = word == '' and 'status' or word:lower()
  if not vim.tbl_contains(M.ACTIONS, word) then
    return nil, string.format('%s: "%s" is not one of status, apply, remove', M.USAGE, word)
  end
  if force and word ~= 'remove' then
    return nil, M.USAGE .. ': only remove takes !'
  end
  return { action = word, force = force }
end

--- Where a worktree is, in words: relative to the folder when it is inside it.
local function where(path, root)
  local rel = root and vim.fs.relpath(root, path)
  return rel or path
end

--- The status buffer's lines (pure): the branch, how many files changed since which commit and
--- where the worktree is, one line per file (its action and path), the keys. Returns the lines,
--- the file of each file line (by line number) and the highlights (`{line, col, end_col,
--- group}`, 0-based).
--- @param st pseudoclaude.WorktreeStatusResult
--- @param folder string the folder's name
--- @param root? string the folder's path (the worktree's shows relative to it)
--- @return string[], table<integer, pseudoclaude.WorktreeFile>, table[]
function M.status_lines(st, folder, root)
  local lines = {
    'Worktree ' .. st.branch,
    string.format('%s since %s', #st.files == 0 and 'no change yet' or (fmt.plural(#st.files, 'file') .. ' changed'),
      tostring(st.base or ''):sub(1, 12)),
    'in ' .. where(st.path, root),
    '',
  }
  local marks = { { 0, 0, #lines[1], 'PseudoClaudeWorktreeTitle' }, { 1, 0, #lines[2], 'PseudoClaudeWorktreeDim' },
    { 2, 0, #lines[3], 'PseudoClaudeWorktreeDim' } }
  local files = {}
  for _, f in ipairs(st.files) do
    local word = M.WORDS[f.action] or f.action
    lines[#lines + 1] = string.format('  %-8s %s', word, f.path)
    files[#lines] = f
    local group = 'PseudoClaudeWorktree' .. (f.action:sub(1, 1):upper() .. f.action:sub(2))
    marks[#marks + 1] = { #lines - 1, 2, 2 + #word, group }
  end
  if #st.files > 0 then
    lines[#lines + 1] = ''
  end
  for _, hint in ipairs({ string.format("<CR> diff with %s's file · a apply to %s", folder, folder),
    'R remove the worktree · r refresh · q close' }) do
    lines[#lines + 1] = hint
    marks[#marks + 1] = { #lines - 1, 0, #hint, 'PseudoClaudeWorktreeDim' }
  end
  return lines, files, marks
end

--- The status buffers shown: buffer -> {workspace, sessionId, status, files}.
--- @type table<integer, table>
M.shown = {}

--- Close the status buffer's window (its buffer goes).
local function close(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if #vim.api.nvim_tabpage_list_wins(vim.api.nvim_win_get_tabpage(win)) > 1 then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  if vim.api.nvim_buf_is_valid(buf) then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
end

--- An empty scratch buffer (the side of a diff a file does not exist on).
local function empty_side(name)
  local b = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, b, name)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'wipe'
  vim.bo[b].modifiable = false
  return b
end

--- Compare a file of the worktree with the folder's, in a new tab: the folder's file (left) and
--- the worktree's (right), both with `:diffthis`; a side the file does not exist on is empty.
--- @param workspace string
--- @param st pseudoclaude.WorktreeStatusResult
--- @param file pseudoclaude.WorktreeFile
function M.open_diff(workspace, st, file)
  local root = vim.uri_to_fname(workspace)
  vim.cmd('tabnew')
  local tab_first = vim.api.nvim_get_current_buf()
  if file.action == 'create' then
    vim.api.nvim_set_current_buf(empty_side(string.format('pseudoclaude://worktree/%s/not in %s/%s', st.sessionId,
      fmt.basename(workspace), file.path)))
  else
    vim.cmd('edit ' .. vim.fn.fnameescape(vim.fs.joinpath(root, file.path)))
  end
  if vim.api.nvim_buf_is_valid(tab_first) and tab_first ~= vim.api.nvim_get_current_buf()
    and vim.api.nvim_buf_get_name(tab_first) == '' and not vim.bo[tab_first].modified then
    pcall(vim.api.nvim_buf_delete, tab_first, { force = true })
  end
  vim.cmd('diffthis')
  local left = vim.api.nvim_get_current_win()
  vim.cmd('rightbelow vsplit')
  if file.action == 'delete' then
    vim.api.nvim_set_current_buf(empty_side(string.format('pseudoclaude://worktree/%s/deleted/%s', st.sessionId,
      file.path)))
  else
    vim.cmd('edit ' .. vim.fn.fnameescape(vim.fs.joinpath(st.path, file.path)))
  end
  vim.cmd('diffthis')
  vim.api.nvim_win_set_var(left, 'pseudoclaude_worktree_side', 'folder')
  vim.api.nvim_win_set_var(0, 'pseudoclaude_worktree_side', 'worktree')
  fire('PseudoClaudeWorktreeDiff', { workspace = workspace, sessionId = st.sessionId, path = file.path,
    action = file.action, tab = vim.api.nvim_get_current_tabpage() })
end

--- Draw the status buffer `buf` from `st`.
local function draw(buf, workspace, st)
  local lines, files, marks = M.status_lines(st, fmt.basename(workspace), vim.uri_to_fname(workspace))
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.api.nvim_buf_clear_namespace(buf, M.NS, 0, -1)
  for _, m in ipairs(marks) do
    pcall(vim.api.nvim_buf_set_extmark, buf, M.NS, m[1], m[2], { end_col = m[3], hl_group = m[4] })
  end
  M.shown[buf] = { workspace = workspace, sessionId = st.sessionId, status = st, files = files }
  return lines, files
end

--- The window for the status buffer: a split above the current window (not a chat's own: the
--- window beside it, else a new one).
local function status_window(height)
  local chat = package.loaded['pseudoclaude.chat']
  if chat and chat.of_buf(vim.api.nvim_get_current_buf()) then
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_config(win).relative == '' and not chat.of_buf(vim.api.nvim_win_get_buf(win)) then
        vim.api.nvim_set_current_win(win)
        break
      end
    end
  end
  vim.cmd('aboveleft ' .. height .. 'split')
  return vim.api.nvim_get_current_win()
end

--- Show a worktree's status in its scratch buffer (`pseudoclaude://worktree/<session id>`).
--- @param workspace string
--- @param st pseudoclaude.WorktreeStatusResult
--- @return integer buf
function M.show(workspace, st)
  local name = 'pseudoclaude://worktree/' .. st.sessionId
  local buf = vim.fn.bufnr(name)
  if buf < 0 or not M.shown[buf] then
    if buf > 0 then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = 'pseudoclaude_worktree'
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        M.shown[buf] = nil
      end,
    })
    local function on_file(fn)
      return function()
        local shown = M.shown[buf]
        local file = shown and shown.files[vim.fn.line('.')]
        if not file then
          return notify('PseudoClaude: <CR> on a file line compares it with the folder\'s.')
        end
        fn(shown, file)
      end
    end
    local keys = {
      { '<CR>', on_file(function(shown, file)
        M.open_diff(shown.workspace, shown.status, file)
      end), 'compare the file with the folder\'s (a new tab)' },
      { 'a', function()
        local shown = M.shown[buf]
        M.apply(shown.workspace, { session = shown.sessionId })
      end, 'apply the changes to the folder' },
      { 'R', function()
        local shown = M.shown[buf]
        M.remove(shown.workspace, { session = shown.sessionId })
      end, 'remove the worktree and its branch' },
      { 'r', function()
        local shown = M.shown[buf]
        M.status(shown.workspace, { session = shown.sessionId })
      end, 'refresh' },
      { 'q', function()
        close(buf)
      end, 'close' },
    }
    for _, k in ipairs(keys) do
      vim.keymap.set('n', k[1], k[2], { buffer = buf, nowait = true, desc = 'PseudoClaude worktree: ' .. k[3] })
    end
  end
  local lines = draw(buf, workspace, st)
  local wins = vim.fn.win_findbuf(buf)
  local win = wins[1] or status_window(math.min(#lines + 1, 15))
  vim.api.nvim_win_set_buf(win, buf)
  vim.api.nvim_set_current_win(win)
  vim.wo[win].wrap = false
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].cursorline = true
  local first = next(M.shown[buf].files) and math.huge or 1
  for lnum in pairs(M.shown[buf].files) do
    first = math.min(first, lnum)
  end
  pcall(vim.api.nvim_win_set_cursor, win, { first == math.huge and 1 or first, 2 })
  return buf
end

--- `:PseudoClaudeWorktree status`: the worktree's changes in the status buffer.
--- @param workspace? string
--- @param opts? {session?: string}
function M.status(workspace, opts)
  opts = opts or {}
  local params = { workspace = workspace, sessionId = opts.session or M.session_of() }
  client.request_or_fail(protocol.requests.worktree_status, params, 'Worktree', function(st)
    local buf = M.show(params.workspace, st)
    fire('PseudoClaudeWorktreeStatus', { workspace = params.workspace, result = st, buf = buf })
  end, function(err)
    if err then
      fire('PseudoClaudeWorktreeStatus', { workspace = params.workspace, error = err })
    end
  end)
end

--- The words of an apply's result: the message and its level.
--- @param r pseudoclaude.WorktreeApplyResult
--- @param folder string the folder's name
--- @return string, integer
function M.apply_message(r, folder)
  if #r.conflicts > 0 then
    local lines = { string.format('PseudoClaude: nothing applied: %s changed in %s too since the worktree was made:',
      fmt.plural(#r.conflicts, 'file'), folder) }
    for _, path in ipairs(r.conflicts) do
      lines[#lines + 1] = '  ' .. path
    end
    lines[#lines + 1] = "Undo your change there (or bring the session's change over by hand), then apply again."
    return table.concat(lines, '\n'), vim.log.levels.WARN
  end
  if #r.applied == 0 then
    local said = tostring(r.message or ''):gsub('the main tree', folder):gsub('main tree', folder)
    return 'PseudoClaude: ' .. said .. '.', vim.log.levels.INFO
  end
  return string.format('PseudoClaude: applied %s to %s (written, not committed): %s.', fmt.plural(#r.applied, 'file'),
    folder, table.concat(r.applied, ', ')), vim.log.levels.INFO
end

--- Refresh the status buffers of `session` (after an apply, a remove).
local function refresh(workspace, session, removed)
  for buf, shown in pairs(M.shown) do
    if shown.sessionId == session and vim.api.nvim_buf_is_valid(buf) then
      if removed then
        close(buf)
      else
        M.status(workspace, { session = session })
      end
    end
  end
end

--- `:PseudoClaudeWorktree apply`: the session's changes written into the folder's files (all, or
--- none when one of them changed in the folder too: the conflicts are named).
--- @param workspace? string
--- @param opts? {session?: string}
function M.apply(workspace, opts)
  opts = opts or {}
  local params = { workspace = workspace, sessionId = opts.session or M.session_of() }
  client.request_or_fail(protocol.requests.worktree_apply, params, 'Apply', function(r)
    local message, level = M.apply_message(r, fmt.basename(params.workspace))
    notify(message, level)
    if #r.applied > 0 then
      require('pseudoclaude.handlers').reload_unmodified(params.workspace)
    end
    refresh(params.workspace, r.sessionId)
  end, function(err, r)
    fire('PseudoClaudeWorktreeApplied', { workspace = params.workspace, error = err, result = r })
  end)
end

--- Whether a failed remove was refused for changes not applied (the server's RequestFailed).
function M.refused_for_changes(err)
  return type(err) == 'table' and err.code == protocol.errors.request_failed
    and type(err.message) == 'string' and (err.message:find('not applied', 1, true) ~= nil
      or err.message:find('with force', 1, true) ~= nil)
end

--- `:PseudoClaudeWorktree remove[!]`: the worktree and its branch deleted; the session goes on in
--- the folder itself. Refused with changes not applied: `vim.ui.select` asks whether to remove it
--- anyway (`!`: without asking).
--- @param workspace? string
--- @param opts? {session?: string, force?: boolean}
function M.remove(workspace, opts)
  opts = opts or {}
  local params = { workspace = workspace, sessionId = opts.session or M.session_of(), force = opts.force or nil }
  client.request(protocol.requests.worktree_remove, params, function(err, r)
    local ws = params.workspace
    if err and not params.force and M.refused_for_changes(err) then
      local said = client.error_message(err):gsub(':%s*apply them or remove with force%.?$', '')
        :gsub('the main tree', fmt.basename(ws))
      return vim.ui.select({ 'Keep the worktree', 'Remove it anyway (its changes are lost)' }, {
        prompt = 'PseudoClaude: ' .. said .. '. Remove the worktree anyway?',
        kind = 'pseudoclaude_worktree_remove',
      }, function(_, idx)
        if idx == 2 then
          M.remove(ws, { session = params.sessionId, force = true })
        else
          notify('PseudoClaude: the worktree stays; :PseudoClaudeWorktree apply brings its changes into '
            .. fmt.basename(ws) .. '.')
          fire('PseudoClaudeWorktreeRemoved', { workspace = ws, error = err, kept = true })
        end
      end)
    end
    if err then
      client.fail('Remove the worktree', err)
    else
      local said = tostring(r.message or ''):gsub('the main tree', fmt.basename(ws))
      notify('PseudoClaude: ' .. said .. '.')
      local chat = package.loaded['pseudoclaude.chat'] and require('pseudoclaude.chat').get(ws, r.sessionId)
      if chat then
        chat.worktree = nil
        pcall(vim.cmd, 'redrawstatus!')
      end
      refresh(ws, r.sessionId, true)
    end
    fire('PseudoClaudeWorktreeRemoved', { workspace = ws, error = err, result = r, force = params.force == true })
  end)
end

--- `:PseudoClaudeWorktree [status|apply|remove[!]]` (the action's words; `bang`: remove with force).
--- @param arg? string
--- @param workspace? string
--- @param opts? {session?: string, bang?: boolean}
function M.command(arg, workspace, opts)
  opts = opts or {}
  local parsed, why = M.parse(arg, opts.bang)
  if not parsed then
    return notify('PseudoClaude: ' .. why .. '.', vim.log.levels.WARN)
  end
  local session = opts.session or M.session_of()
  if parsed.action == 'status' then
    return M.status(workspace, { session = session })
  elseif parsed.action == 'apply' then
    return M.apply(workspace, { session = session })
  end
  M.remove(workspace, { session = session, force = parsed.force })
end

return M
