
local total = tonumber(redis.call('GET', KEYS[1]) or '0')
local renewed = {}
local superseded = {}
for i = 1, tonumber(ARGV[4]) do
  local field = ARGV[4 + (i - 1) * 2 + 1]
  local attempt = tonumber(ARGV[4 + (i - 1) * 2 + 2])
  local idx = tonumber(field)
  if idx >= 1 and idx <= total then
    local dispatches = tonumber(redis.call('HGET', KEYS[2], field .. ':d') or '0')
    if dispatches > attempt then
      superseded[#superseded + 1] = field
    else
      local expires = tonumber(redis.call('HGET', KEYS[2], field .. ':ce') or '0')
      if tonumber(ARGV[3]) > tonumber(ARGV[2]) and
         redis.call('HEXISTS', KEYS[2], field .. ':p') == 0 and
         redis.call('HEXISTS', KEYS[2], field .. ':f') == 0 and
         expires > tonumber(ARGV[2]) then
        redis.call('HSET', KEYS[2], field .. ':ce', ARGV[3])
        renewed[#renewed + 1] = field
      end
    end
  end
end
local result = { tostring(#renewed) }
for i = 1, #renewed do result[#result + 1] = renewed[i] end
for i = 1, #superseded do result[#result + 1] = superseded[i] end
return result
