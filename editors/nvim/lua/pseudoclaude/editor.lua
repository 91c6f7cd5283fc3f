--- What the editor tells the agent: the files of a workspace as the wire names them (relative,
--- `/`), a selection as an LSP range and its text, the open files, the context a prompt is sent
--- with (its chip's words) and the diagnostics Neovim shows (`pseudoclaude/diagnostics`).
---
--- Positions are LSP positions: 0-based line and character, the character in the client's
--- offset encoding (`client.offset_encoding`, utf-16 unless the server chose another). Neovim's
--- own columns are 0-based byte indexes.
local fmt = require('pseudoclaude.format')

local M = {}

--- At most this many open files go with a prompt (the most recently used first).
M.MAX_OPEN_FILES = 20

--- The severities of `vim.diagnostic` on the wire.
M.SEVERITY = { 'error', 'warning', 'info', 'hint' }

local function given(s)
  return type(s) == 'string' and s ~= '' and s or nil
end

--- The folder of a workspace URI (or path), without a trailing `/`.
--- @param workspace string
--- @return string
function M.root(workspace)
  local path = workspace:match('^file:') and vim.uri_to_fname(workspace) or workspace
  local root = vim.fs.normalize(path)
  return #root > 1 and (root:gsub('/+$', '')) or root
end

--- The file of a buffer that holds one (`buftype` empty, a name that is not a `scheme://`
--- URI), as an absolute normalized path; nil for the others.
--- @param bufnr integer
--- @return string?
function M.file_of(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
end

--- `src/app.py` for a file under `root`; nil for the root itself and for a file outside it.
--- @param root string
--- @param file string
--- @return string?
function M.relative(root, file)
  local rel = vim.fs.relpath(root, file)
  if not rel then
    local real_root, real_file = vim.uv.fs_realpath(root), vim.uv.fs_realpath(file)
    rel = real_root and real_file and vim.fs.relpath(real_root, real_file) or nil
  end
  if not rel or rel == '.' or rel == '' then
    return nil
  end
  return rel
end

--- The wire's path of a buffer's file in a workspace (nil: no file, or not in that folder).
--- @param bufnr integer
--- @param root string
--- @return string?
function M.path_of(bufnr, root)
  local file = M.file_of(bufnr)
  return file and M.relative(root, file) or nil
end

local function line_of(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
end

--- The LSP character of byte `col` of `line` (clamped to the line; a byte inside a character
--- counts from that character's start).
--- @param line string
--- @param col integer 0-based byte index
--- @param encoding string
--- @return integer
function M.character(line, col, encoding)
  col = math.max(0, math.min(col, #line))
  if col > 0 and col < #line then
    col = col + vim.str_utf_start(line, col + 1)
  end
  return vim.str_utfindex(line, encoding or 'utf-16', col, false)
end

--- The LSP position of (0-based row, byte col) in a buffer.
--- @return pseudoclaude.Position
function M.position(bufnr, row, col, encoding)
  local count = vim.api.nvim_buf_line_count(bufnr)
  if row >= count then -- past the last line: its end
    row = count - 1
    col = #line_of(bufnr, row)
  end
  return { line = row, character = M.character(line_of(bufnr, math.max(row, 0)), col, encoding) }
end

--- The selection of a buffer between two marks (`{row, col}`: 1-based row, 0-based byte col,
--- the end's character included, as `nvim_buf_get_mark()` gives them), selected as visual mode
--- `mode` does: `v` the characters between them (an end past the line takes its line break),
--- anything else whole lines. Returns the LSP range and the text it covers.
--- @param bufnr integer
--- @param mode string
--- @param from integer[]
--- @param to integer[]
--- @param encoding string
--- @return pseudoclaude.Range range, string text
function M.region(bufnr, mode, from, to, encoding)
  if to[1] < from[1] or (to[1] == from[1] and to[2] < from[2]) then
    from, to = to, from
  end
  local count = vim.api.nvim_buf_line_count(bufnr)
  local srow = math.min(math.max(from[1], 1), count) - 1
  local erow = math.min(math.max(to[1], 1), count) - 1
  local scol, ecol_row, ecol
  if mode == 'v' then
    local sl = line_of(bufnr, srow)
    scol = math.min(from[2], #sl)
    if scol > 0 and scol < #sl then
      scol = scol + vim.str_utf_start(sl, scol + 1)
    end
    local el = line_of(bufnr, erow)
    if to[2] >= #el then -- the line break too
      if erow + 1 < count then
        ecol_row, ecol = erow + 1, 0
      else
        ecol_row, ecol = erow, #el
      end
    else
      ecol_row, ecol = erow, to[2] + vim.str_utf_end(el, to[2] + 1) + 1
    end
  else
    scol = 0
    if erow + 1 < count then
      ecol_row, ecol = erow + 1, 0
    else
      ecol_row, ecol = erow, #line_of(bufnr, erow)
    end
  end
  local text = table.concat(vim.api.nvim_buf_get_text(bufnr, srow, scol, ecol_row, ecol, {}), '\n')
  local range = {
    start = { line = srow, character = M.character(line_of(bufnr, srow), scol, encoding) },
    ['end'] = { line = ecol_row, character = M.character(line_of(bufnr, ecol_row), ecol, encoding) },
  }
  return range, text
end

--- The selection of a command's range (`:'<,'>PseudoClaudeChat`): the last visual selection
--- when the range is its lines (charwise when it was), else the lines `line1`..`line2`.
--- @param bufnr integer
--- @param path string the file's path on the wire
--- @param line1 integer
--- @param line2 integer
--- @param encoding string
--- @return pseudoclaude.Selection
function M.selection(bufnr, path, line1, line2, encoding)
  local vs = vim.api.nvim_buf_get_mark(bufnr, '<')
  local ve = vim.api.nvim_buf_get_mark(bufnr, '>')
  local mode, from, to = 'V', { line1, 0 }, { line2, vim.v.maxcol }
  if vs[1] == math.min(line1, line2) and ve[1] == math.max(line1, line2) and vs[1] > 0 then
    mode, from, to = vim.fn.visualmode(), vs, ve
  end
  local range, text = M.region(bufnr, mode == 'v' and 'v' or 'V', from, to, encoding)
  return { path = path, range = range, text = text }
end

--- `12` or `12-15`: the 1-based lines a range covers (an end at the start of a line does not
--- count that line), as the model reads them.
--- @param range pseudoclaude.Range
--- @return string
function M.lines_label(range)
  local first = range.start.line + 1
  local stop = range['end']
  local last = stop.line + ((stop.character > 0 or stop.line == range.start.line) and 1 or 0)
  return last <= first and tostring(first) or (first .. '-' .. last)
end

--- The listed, loaded file buffers of a workspace, relative, the most recently used first, at
--- most `MAX_OPEN_FILES`, without `except` (the active file, named on its own).
--- @param root string
--- @param except? string
--- @return string[]
function M.open_files(root, except)
  local infos = vim.fn.getbufinfo({ buflisted = 1, bufloaded = 1 })
  table.sort(infos, function(a, b)
    if a.lastused ~= b.lastused then
      return a.lastused > b.lastused
    end
    return a.bufnr < b.bufnr
  end)
  local out, seen = {}, { [except or ''] = true }
  for _, info in ipairs(infos) do
    local rel = M.path_of(info.bufnr, root)
    if rel and not seen[rel] then
      seen[rel] = true
      out[#out + 1] = rel
      if #out >= M.MAX_OPEN_FILES then
        break
      end
    end
  end
  return out
end

--- The context a prompt goes with (`EditorContext`): the chip's file, selection and problems,
--- and the workspace's open files; nil without a chip (removed), or when it names nothing.
--- @param chip? {activeFile?: string, selection?: pseudoclaude.Selection, diagnostics?: pseudoclaude.Diagnostic[]}
--- @param root string
--- @return pseudoclaude.EditorContext?
function M.context(chip, root)
  if not chip then
    return nil
  end
  local ctx = {}
  ctx.activeFile = given(chip.activeFile)
  ctx.selection = chip.selection
  if type(chip.diagnostics) == 'table' and #chip.diagnostics > 0 then
    ctx.diagnostics = chip.diagnostics
  end
  local open = M.open_files(root, ctx.activeFile)
  if #open > 0 then
    ctx.openFiles = open
  end
  return next(ctx) ~= nil and ctx or nil
end

--- The words of a context, as its chip and the chat's echo of a prompt show it:
--- `app.py:10-14 · 2 problems · 3 open files` (`''` for nothing).
--- @param ctx? pseudoclaude.EditorContext|table
--- @return string
function M.label(ctx)
  if type(ctx) ~= 'table' then
    return ''
  end
  local parts = {}
  local sel = type(ctx.selection) == 'table' and ctx.selection or nil
  if sel and given(sel.path) and type(sel.range) == 'table' then
    parts[#parts + 1] = sel.path .. ':' .. M.lines_label(sel.range)
    if given(ctx.activeFile) and ctx.activeFile ~= sel.path then
      parts[#parts + 1] = ctx.activeFile
    end
  elseif given(ctx.activeFile) then
    parts[#parts + 1] = ctx.activeFile
  end
  if type(ctx.diagnostics) == 'table' and #ctx.diagnostics > 0 then
    parts[#parts + 1] = fmt.plural(#ctx.diagnostics, 'problem')
  end
  if type(ctx.openFiles) == 'table' and #ctx.openFiles > 0 then
    parts[#parts + 1] = fmt.plural(#ctx.openFiles, 'open file')
  end
  return table.concat(parts, ' · ')
end

--- The namespaces of the diagnostics the pseudoclaude clients published (left out).
local function own_namespaces()
  local out = {}
  for id, ns in pairs(vim.diagnostic.get_namespaces()) do
    if type(ns.name) == 'string' and ns.name:find('^vim%.lsp%.pseudoclaude%.') then
      out[id] = true
    end
  end
  return out
end

--- One `vim.diagnostic` item on the wire.
--- @return pseudoclaude.Diagnostic
function M.diagnostic(bufnr, path, d, encoding)
  local lnum, col = d.lnum or 0, d.col or 0
  local end_lnum, end_col = d.end_lnum or lnum, d.end_col or col
  local out = {
    path = path,
    range = { start = M.position(bufnr, lnum, col, encoding), ['end'] = M.position(bufnr, end_lnum, end_col, encoding) },
    severity = M.SEVERITY[d.severity] or 'error',
    message = tostring(d.message or ''),
  }
  if given(d.source) then
    out.source = d.source
  end
  return out
end

--- The diagnostics of a buffer on the lines of an LSP range (an end at the start of a line
--- leaves that line out), of every source but the pseudoclaude clients, as LSP diagnostics
--- (`textDocument/codeAction` context), after `existing` (kept, not repeated).
--- @param bufnr integer
--- @param range lsp.Range
--- @param encoding string
--- @param existing? lsp.Diagnostic[]
--- @return lsp.Diagnostic[]
function M.range_diagnostics(bufnr, range, encoding, existing)
  local out, seen = {}, {}
  for _, d in ipairs(type(existing) == 'table' and existing or {}) do
    out[#out + 1] = d
    if type(d) == 'table' and type(d.range) == 'table' then
      seen[tostring(d.message) .. '\0' .. tostring(d.range.start and d.range.start.line)] = true
    end
  end
  local first, last = range.start.line, range['end'].line
  if last > first and range['end'].character == 0 then
    last = last - 1
  end
  local own = own_namespaces()
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local key = tostring(d.message) .. '\0' .. tostring(d.lnum)
    if not own[d.namespace] and d.lnum <= last and (d.end_lnum or d.lnum) >= first and not seen[key] then
      seen[key] = true
      local wire = M.diagnostic(bufnr, '', d, encoding)
      local lsp_d = { range = wire.range, severity = d.severity or 1, message = wire.message, source = wire.source }
      if type(d.code) == 'string' or type(d.code) == 'number' then
        lsp_d.code = d.code
      end
      out[#out + 1] = lsp_d
    end
  end
  return out
end

--- The diagnostics Neovim shows in the loaded buffers of a workspace (`pseudoclaude/diagnostics`):
--- only `paths` when given, without those of the pseudoclaude clients, by path and position.
--- @param root string
--- @param paths? string[]
--- @param encoding string
--- @return pseudoclaude.Diagnostic[]
function M.diagnostics(root, paths, encoding)
  local wanted
  if type(paths) == 'table' then
    wanted = {}
    for _, p in ipairs(paths) do
      wanted[p] = true
    end
  end
  local own = own_namespaces()
  local out = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local rel = vim.api.nvim_buf_is_loaded(bufnr) and M.path_of(bufnr, root) or nil
    if rel and (not wanted or wanted[rel]) then
      for _, d in ipairs(vim.diagnostic.get(bufnr)) do
        if not own[d.namespace] then
          out[#out + 1] = M.diagnostic(bufnr, rel, d, encoding)
        end
      end
    end
  end
  table.sort(out, function(a, b)
    if a.path ~= b.path then
      return a.path < b.path
    end
    if a.range.start.line ~= b.range.start.line then
      return a.range.start.line < b.range.start.line
    end
    if a.range.start.character ~= b.range.start.character then
      return a.range.start.character < b.range.start.character
    end
    return a.message < b.message
  end)
  return out
end

return M
