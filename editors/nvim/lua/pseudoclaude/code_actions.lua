--- The code actions the server offers on a range (`vim.lsp.buf.code_action()`, also on a visual
--- selection): *Explain*, *Fix* and *Ask about selection*. Their commands are the plugin's own
--- (`vim.lsp.commands`): each opens the chat of the folder with the selection as the context of
--- the prompt; Explain and Fix send their prompt at once, Ask waits for your question.
local client = require('pseudoclaude.client')
local protocol = require('pseudoclaude.protocol')
local util = require('pseudoclaude.util')

local M = {}

local function valid_position(p)
  return type(p) == 'table' and type(p.line) == 'number' and type(p.character) == 'number'
end

--- The argument of a code action's command (`CodeActionArguments`), checked: nil and why when
--- it is not one.
--- @param args any
--- @return pseudoclaude.CodeActionArguments?, string?
function M.arguments(args)
  if type(args) ~= 'table' then
    return nil, 'no selection in the command'
  end
  if type(args.path) ~= 'string' or args.path == '' then
    return nil, 'no path in the command'
  end
  local range = args.range
  if type(range) ~= 'table' or not valid_position(range.start) or not valid_position(range['end']) then
    return nil, 'no range in the command'
  end
  if type(args.text) ~= 'string' then
    return nil, 'no text in the command'
  end
  local diagnostics = type(args.diagnostics) == 'table' and #args.diagnostics > 0 and args.diagnostics or nil
  return { path = args.path, range = range, text = args.text, diagnostics = diagnostics }
end

--- The chip of a code action (the file, the selection, the range's problems) and the context its
--- prompt is sent with.
--- @param args pseudoclaude.CodeActionArguments
--- @return pseudoclaude.Chip chip, pseudoclaude.EditorContext context
function M.context(args)
  local selection = { path = args.path, range = args.range, text = args.text }
  local chip = { activeFile = args.path, selection = selection, diagnostics = args.diagnostics }
  return chip, { activeFile = args.path, selection = selection, diagnostics = args.diagnostics }
end

--- Run the code action `command` (a key of `protocol.code_actions`) on `args`, offered by the
--- client `ctx.client_id` in buffer `ctx.bufnr`.
--- @param command string
--- @param args any
--- @param ctx? {bufnr?: integer, client_id?: integer}
function M.run(command, args, ctx)
  ctx = ctx or {}
  local title = protocol.code_actions[command] or command
  local checked, why = M.arguments(args)
  if not checked then
    return util.notify(string.format('PseudoClaude: %s: %s.', title, why), vim.log.levels.ERROR)
  end
  local bufnr = ctx.bufnr or vim.api.nvim_get_current_buf()
  local c = ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id) or client.get(bufnr)
  local workspace = c and client.workspace(c, bufnr)
  if not workspace then
    return util.notify(string.format('PseudoClaude: %s: the server is not running.', title), vim.log.levels.ERROR)
  end
  local chat = require('pseudoclaude.chat')
  local chip, context = M.context(checked)
  local text = protocol.code_action_prompts[command] or ''
  if text == '' then
    chat.show(workspace, { chip = chip })
    return
  end
  chat.show(workspace, {
    chip = chip,
    enter = false,
    done = function(shown)
      if not require('pseudoclaude.chat.prompt').send(shown, text, context) then
        chat.offer_prompt(workspace, text) -- to send once the run is over
      end
    end,
  })
end

--- Register the commands in `vim.lsp.commands` (once, from plugin/pseudoclaude.lua).
function M.register()
  for command in pairs(protocol.code_actions) do
    vim.lsp.commands[command] = function(cmd, ctx)
      M.run(command, type(cmd) == 'table' and type(cmd.arguments) == 'table' and cmd.arguments[1] or nil, ctx)
    end
  end
end

return M
