--- The chat's prompt: sending a prompt, the slash commands (the server's list,
--- `pseudoclaude/commands`, and a few of the chat's own), their completion after `/`, and recalling
--- earlier prompts.
local client = require('pseudoclaude.client')
local protocol = require('pseudoclaude.protocol')
local state = require('pseudoclaude.chat.state')

local M = {}

M.PROMPT = '❯ '

--- The chat's own commands (beside the server's; a server command of the same name wins).
--- @type pseudoclaude.SlashCommand[]
M.LOCAL = {
  { name = 'preview', description = 'Preview a compaction, then compact or not', hint = 'what the summary should focus on (optional)' },
  { name = 'sessions', description = 'Pick a session to continue' },
  { name = 'resume', description = 'Continue a session', hint = 'a session id (default: the latest)' },
  { name = 'fork', description = 'Continue in a new session with this conversation', hint = "a prompt's number: only what came before it (none: all of it)" },
  { name = 'proposals', description = 'Review the pending memory proposals' },
  { name = 'cancel', description = 'Cancel the run' },
  { name = 'help', description = 'The commands and keys of the chat' },
}

--- What each command does in the chat of `ws` (`arg`: the text after its name, or nil; `chat`:
--- the chat it was typed in: its session is the one acted on).
local ACTIONS = {
  compact = function(pc, ws, arg, chat)
    pc.compact(arg, ws, chat and chat.session_id)
  end,
  undo = function(pc, ws, _, chat)
    pc.undo(ws, chat and chat.session_id)
  end,
  context = function(pc, ws, _, chat)
    pc.context(ws, chat and chat.session_id)
  end,
  status = function(_, ws, _, chat)
    require('pseudoclaude.status').open(ws, chat and chat.session_id)
  end,
  memory = function(pc, ws)
    pc.memory(ws)
  end,
  new = function(pc, ws)
    pc.new_session(ws)
  end,
  worktree = function(pc, ws)
    pc.new_session(ws, { worktree = true })
  end,
  preview = function(pc, ws, arg, chat)
    pc.preview(arg, ws, chat and chat.session_id)
  end,
  sessions = function(pc, ws)
    pc.sessions(ws)
  end,
  resume = function(pc, ws, arg)
    pc.resume(arg, ws)
  end,
  rewind = function(pc, ws, arg, chat)
    require('pseudoclaude.rewind').start(arg, ws, chat and chat.session_id)
  end,
  fork = function(pc, ws, arg, chat)
    pc.fork(arg, ws, chat and chat.session_id)
  end,
  proposals = function(pc, ws)
    pc.proposals(ws)
  end,
  mcp = function(pc, ws)
    pc.mcp(ws)
  end,
  hooks = function(pc, ws)
    pc.hooks(ws)
  end,
  -- (when the server offers them)
  plan = function(_, ws, arg, chat)
    -- plan mode; with a task, the task is sent once the mode is set
    require('pseudoclaude.permissions').set('plan', ws, chat and chat.session_id, {
      done = function(err)
        if not err and chat and arg and vim.trim(arg) ~= '' then
          M.send(chat, vim.trim(arg))
        end
      end,
    })
  end,
  ['do'] = function(_, ws, _, chat)
    require('pseudoclaude.permissions').set('default', ws, chat and chat.session_id)
  end,
  mode = function(pc, ws, arg, chat)
    pc.mode(arg, ws, chat and chat.session_id)
  end,
  permissions = function(pc, ws, _, chat)
    pc.permissions(ws, chat and chat.session_id)
  end,
  cancel = function(pc, ws, _, chat)
    pc.cancel(ws, chat)
  end,
  help = function(_, ws)
    local chat = state.get(ws)
    state.notify(table.concat(M.help_lines(chat), '\n'))
  end,
}
M.ACTIONS = ACTIONS

--- The server's slash commands of each folder (`pseudoclaude/commands`), once asked.
--- @type table<string, pseudoclaude.SlashCommand[]>
M.server_commands = {}

--- Ask the server for its slash commands (once per folder and server); `cb(list)` after.
--- @param chat pseudoclaude.Chat
--- @param cb? fun(list: pseudoclaude.SlashCommand[]?)
function M.load(chat, cb)
  local key = state.key(chat.workspace)
  if M.server_commands[key] then
    return cb and cb(M.server_commands[key])
  end
  client.request(protocol.requests.slash_commands, { workspace = chat.workspace }, function(err, r)
    if not err and type(r) == 'table' and type(r.commands) == 'table' then
      M.server_commands[key] = r.commands
    end
    if cb then
      cb(M.server_commands[key])
    end
  end)
end

--- Forget the server's commands (a new server may have others).
function M.forget()
  M.server_commands = {}
end

--- The commands of a chat: the server's (in its order), then the chat's own.
--- @param chat? pseudoclaude.Chat
--- @return pseudoclaude.SlashCommand[]
function M.commands(chat)
  local out, seen = {}, {}
  local from_server = chat and M.server_commands[state.key(chat.workspace)] or {}
  for _, list in ipairs({ from_server, M.LOCAL }) do
    for _, c in ipairs(list) do
      if type(c.name) == 'string' and not seen[c.name] then
        seen[c.name] = true
        out[#out + 1] = c
      end
    end
  end
  return out
end

--- Parse a prompt: `{command, argument}` for `/command argument`, else nil.
--- @param text string
--- @return {command: string, argument: string}?
function M.slash(text)
  local command, argument = text:match('^/(%a[%w_-]*)%s*(.-)%s*$')
  if not command then
    return nil
  end
  return { command = command:lower(), argument = argument }
end

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

--- The completion items of the commands starting with `base` (`/co` or `co`).
--- @param chat? pseudoclaude.Chat
--- @param base string
--- @return table[]
function M.matches(chat, base)
  base = (base or ''):gsub('^/', ''):lower()
  local out = {}
  for _, c in ipairs(M.commands(chat)) do
    if vim.startswith(c.name, base) then
      out[#out + 1] = {
        word = '/' .. c.name,
        abbr = '/' .. c.name .. (given(c.hint) and ' …' or ''),
        menu = c.description,
        info = given(c.hint) and ('/' .. c.name .. ' <' .. c.hint .. '>\n' .. c.description) or c.description,
        icase = 1,
        dup = 0,
      }
    end
  end
  return out
end

--- 'completefunc' (and 'omnifunc') of the prompt: the commands, when the prompt starts with `/`.
function M.completefunc(findstart, base)
  local buf = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  local prefix = vim.startswith(line, M.PROMPT) and #M.PROMPT or 0
  if findstart == 1 then
    local before = line:sub(prefix + 1, col)
    if before:match('^/[%w_-]*$') then
      return prefix
    end
    return -3
  end
  return M.matches(state.of_buf(buf), base)
end

--- The help of the chat: its keys and commands.
--- @param chat? pseudoclaude.Chat
--- @return string[]
function M.help_lines(chat)
  local lines = { 'Enter sends · Ctrl-C cancels the run · Up/Down recall earlier prompts · / completes a command',
    'Ctrl-D sends the next prompt without the context (the file and selection shown above the prompt)',
    'Shift-Tab switches to the next permission mode (the winbar shows it; :PseudoClaudeMode picks one)' }
  for _, c in ipairs(M.commands(chat)) do
    local head = '/' .. c.name .. (given(c.hint) and ' [' .. c.hint .. ']' or '')
    lines[#lines + 1] = string.format('%-24s %s', head, c.description)
  end
  vim.list_extend(lines, {
    'In the chat: i/a/o prompt · <Tab> or za opens a tool card · C compact · U undo · N new',
    '             S sessions (its chat takes this window) · gS a session beside this one',
    '             R reload the history · <C-c> cancel · q close · g? this help',
    '             on a prompt: r rewind to before it · F fork from before it',
  })
  return lines
end

--- Run a `/command` of the chat (`true`); `false` when it is not one (then the text is a prompt,
--- as in every other PseudoClaude chat), or when it is a skill (`/review src`: the server turns
--- the prompt into the skill's instructions).
local function run_command(chat, slash)
  local known
  for _, c in ipairs(M.commands(chat)) do
    if c.name == slash.command then
      known = known or c
    end
  end
  if not known or known.skill == true then
    return false
  end
  local action = ACTIONS[slash.command]
  if not action then
    state.notify('PseudoClaude: /' .. slash.command .. ' is not supported by this version of the plugin', vim.log.levels.WARN)
    return true
  end
  local arg = slash.argument ~= '' and slash.argument or nil
  action(require('pseudoclaude'), chat.workspace, arg, chat)
  return true
end

--- Send a prompt from the chat with the context of its chip (the file, the selection, the open
--- files; nothing when the chip was removed), or with `context` when given (a code action). The
--- selection and problems go once: the file stays the context of the next prompt. While a run
--- is in progress this says so and sends nothing (a code action's prompt waits on the prompt line).
--- @param chat pseudoclaude.Chat
--- @param text string
--- @param context? pseudoclaude.EditorContext
--- @return boolean sent
function M.send(chat, text, context)
  local pc = require('pseudoclaude')
  if chat.running or chat.waiting then
    state.notify(chat.waiting and 'PseudoClaude: a prompt waits for this session to be free: Ctrl-C stops waiting.'
      or 'PseudoClaude: a run is in progress: wait for it, or Ctrl-C to cancel it.', vim.log.levels.WARN)
    return false
  end
  local window = require('pseudoclaude.chat.window')
  context = context or window.context(chat)
  chat.prompts[#chat.prompts + 1] = text
  chat.recall = nil
  if chat.chip and (chat.chip.selection or chat.chip.diagnostics) then
    window.set_chip(chat, { activeFile = chat.chip.activeFile })
  end
  pc.run(text, { workspace = chat.workspace, transcript = false, context = context, session = chat.session_id,
    chat = chat })
  return true
end

local send = M.send

--- Send a prompt (or run a `/command`) from the chat. A `/word` that is not a command goes to
--- the model like any prompt.
--- @param chat pseudoclaude.Chat
--- @param text string
function M.submit(chat, text)
  text = vim.trim(text or '')
  if text == '' then
    return
  end
  state.set_current(chat) -- the folder's commands act on the chat they are typed in
  local slash = M.slash(text)
  if slash then
    if M.server_commands[state.key(chat.workspace)] then
      if not run_command(chat, slash) then
        send(chat, text)
      end
      return
    end
    return M.load(chat, function()
      if not run_command(chat, slash) then
        send(chat, text)
      end
    end)
  end
  send(chat, text)
end

local function set_prompt_text(chat, text)
  local buf = chat.prompt_buf
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last - 1, last, false, { M.PROMPT .. text })
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { last, #M.PROMPT + #text })
  end
end

--- Put `text` on the prompt line when nothing is typed there (a prompt a rewind or a fork took
--- back, to edit and send again).
--- @param chat pseudoclaude.Chat
--- @param text string
function M.offer(chat, text)
  local buf = chat.prompt_buf
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local last = vim.api.nvim_buf_line_count(buf)
  local line = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ''
  if vim.trim(line:sub(#M.PROMPT + 1)) ~= '' and vim.startswith(line, M.PROMPT) then
    return
  end
  -- A multi-line prompt goes on one line (Enter sends).
  set_prompt_text(chat, (text:gsub('%s*\n%s*', ' ')))
end

--- Put `text` before what is typed on the prompt line (a skill's `/<name> ` chosen elsewhere).
--- @param chat pseudoclaude.Chat
--- @param text string
function M.prepend(chat, text)
  local buf = chat.prompt_buf
  local last = vim.api.nvim_buf_line_count(buf)
  local line = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ''
  local typed = vim.startswith(line, M.PROMPT) and line:sub(#M.PROMPT + 1) or ''
  set_prompt_text(chat, text .. typed:gsub('^%s+', ''))
end

--- Recall an earlier prompt (`step` -1: older, 1: newer) into the prompt line.
function M.recall(chat, step)
  local n = #chat.prompts
  if n == 0 then
    return
  end
  local i = (chat.recall or (n + 1)) + step
  if i < 1 then
    i = 1
  end
  if i > n then
    chat.recall = nil
    return set_prompt_text(chat, '')
  end
  chat.recall = i
  set_prompt_text(chat, chat.prompts[i])
end

--- `recall` in the chat of prompt buffer `pb`.
function M.recall_in(pb, step)
  local chat = state.of_buf(pb)
  if chat then
    M.recall(chat, step)
  end
end

--- Set up the prompt buffer of a chat: its prompt, what Enter and Ctrl-C do, and the completion
--- of the commands (`/` at the start of the prompt opens it; <C-x><C-u> and <C-x><C-o> too).
--- @param chat pseudoclaude.Chat
function M.setup(chat)
  local pb = chat.prompt_buf
  vim.fn.prompt_setprompt(pb, M.PROMPT)
  vim.fn.prompt_setcallback(pb, function(text)
    -- The prompt buffer keeps what was sent above the new prompt line: only the prompt stays.
    vim.api.nvim_buf_set_lines(pb, 0, -2, false, {})
    M.submit(chat, text)
  end)
  vim.fn.prompt_setinterrupt(pb, function()
    require('pseudoclaude').cancel(chat.workspace, chat)
  end)
  local func = "v:lua.require'pseudoclaude.chat.prompt'.completefunc"
  vim.bo[pb].completefunc = func
  vim.bo[pb].omnifunc = func
  -- Enter sends what is typed even while the menu is open (nothing is chosen until you pick).
  pcall(function()
    vim.bo[pb].completeopt = 'menuone,noselect,popup'
  end)
  vim.keymap.set('i', '/', function()
    local line = vim.api.nvim_get_current_line()
    local col = vim.api.nvim_win_get_cursor(0)[2]
    if line:sub(1, col) == M.PROMPT and vim.trim(line:sub(col + 1)) == '' then
      return '/' .. vim.keycode('<C-x><C-u>')
    end
    return '/'
  end, { buffer = pb, expr = true, desc = 'PseudoClaude chat: complete a command' })
  -- Up and Down recall prompts, or move in the menu while it is open.
  for lhs, step in pairs({ ['<Up>'] = -1, ['<Down>'] = 1 }) do
    vim.keymap.set('i', lhs, function()
      if vim.fn.pumvisible() == 1 then
        return vim.keycode(lhs)
      end
      return string.format("<Cmd>lua require'pseudoclaude.chat.prompt'.recall_in(%d, %d)<CR>", pb, step)
    end, { buffer = pb, expr = true, desc = step < 0 and 'PseudoClaude chat: the prompt before'
      or 'PseudoClaude chat: the prompt after' })
  end
end

return M
