--- Small text formatters shared by the statusline, pickers and transcript.
local M = {}

local function trim_zero(s)
  return (s:gsub('%.0$', ''))
end

--- `850`, `1.5k`, `12k`, `200k`, `1.2M`: compact token counts for the context meter.
--- @param n number
--- @return string
function M.tokens(n)
  if type(n) ~= 'number' or n ~= n or n < 0 then
    return '?'
  end
  if n < 1000 then
    return tostring(math.floor(n + 0.5))
  elseif n < 10000 then
    return trim_zero(string.format('%.1f', n / 1000)) .. 'k'
  elseif n < 999500 then
    return string.format('%d', math.floor(n / 1000 + 0.5)) .. 'k'
  end
  return trim_zero(string.format('%.1f', n / 1000000)) .. 'M'
end

--- `12,345`
function M.count(n)
  local s = tostring(math.floor(n + 0.5))
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end

--- `1 message`, `3 messages`
function M.plural(n, word, many)
  return string.format('%d %s', n, n == 1 and word or (many or word .. 's'))
end

--- `512 B`, `4.2 KB`, `1.3 MB`
function M.bytes(n)
  if n < 1024 then
    return string.format('%d B', n)
  elseif n < 1024 * 1024 then
    return string.format('%.1f KB', n / 1024)
  end
  return string.format('%.1f MB', n / (1024 * 1024))
end

--- Seconds since the epoch of an RFC 3339 time (`2025-06-10T11:55:00Z`, `...+02:00`), or nil.
function M.parse_time(iso)
  if type(iso) ~= 'string' then
    return nil
  end
  local y, mo, d, h, mi, s, rest = iso:match('^(%d+)-(%d+)-(%d+)[T ](%d+):(%d+):(%d+)%.?%d*(.*)$')
  if not y then
    return nil
  end
  local days_before = { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 }
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  local leap = (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
  local yday = days_before[mo] + d - 1 + ((leap and mo > 2) and 1 or 0)
  local years = y - 1970
  local days = years * 365 + math.floor((y - 1969) / 4) - math.floor((y - 1901) / 100)
    + math.floor((y - 1601) / 400) + yday
  local t = ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60 + tonumber(s)
  local sign, oh, om = rest:match('^([+-])(%d%d):?(%d%d)$')
  if sign then
    local offset = (tonumber(oh) * 60 + tonumber(om)) * 60
    t = sign == '+' and t - offset or t + offset
  end
  return t
end

--- `just now`, `5 min ago`, `3 h ago`, `yesterday`, `9 days ago` (of an RFC 3339 time, or of
--- seconds since the epoch)
function M.age(iso, now)
  local t = type(iso) == 'number' and iso or M.parse_time(iso)
  if not t then
    return tostring(iso)
  end
  local seconds = math.max(0, (now or os.time()) - t)
  if seconds < 60 then
    return 'just now'
  end
  local minutes = math.floor(seconds / 60)
  if minutes < 60 then
    return minutes .. ' min ago'
  end
  local hours = math.floor(minutes / 60)
  if hours < 24 then
    return hours .. ' h ago'
  end
  local days = math.floor(hours / 24)
  return days == 1 and 'yesterday' or (days .. ' days ago')
end

--- One line, at most `max` characters, ending in `…` when cut.
function M.one_line(text, max)
  local flat = vim.trim((tostring(text or ''):gsub('%s+', ' ')))
  if vim.fn.strchars(flat) <= max then
    return flat
  end
  return vim.fn.strcharpart(flat, 0, max - 1) .. '…'
end

--- The words of `text` (on one line) in lines of at most `width` display cells (a longer word
--- gets a line of its own).
--- @param text string
--- @param width integer
--- @return string[]
function M.wrap(text, width)
  local lines, cur = {}, ''
  for word in tostring(text or ''):gmatch('%S+') do
    if cur == '' then
      cur = word
    elseif vim.fn.strdisplaywidth(cur .. ' ' .. word) <= width then
      cur = cur .. ' ' .. word
    else
      lines[#lines + 1] = cur
      cur = word
    end
  end
  if cur ~= '' or #lines == 0 then
    lines[#lines + 1] = cur
  end
  return lines
end

--- `path: README.md, limit: 20` from a tool call's arguments (an object or a raw string).
function M.arguments(args, max)
  max = max or 100
  if args == nil or args == vim.NIL then
    return ''
  end
  if type(args) ~= 'table' then
    return M.one_line(tostring(args), max)
  end
  local keys = vim.tbl_keys(args)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = args[k]
    parts[#parts + 1] = string.format('%s: %s', k, type(v) == 'string' and v or vim.json.encode(v))
  end
  return M.one_line(table.concat(parts, ', '), max)
end

--- The last path segment of a folder URI or path.
function M.basename(uri)
  local path = uri
  if type(uri) == 'string' and uri:match('^file:') then
    path = vim.uri_to_fname(uri)
  end
  return vim.fs.basename((tostring(path):gsub('/+$', '')))
end

return M
