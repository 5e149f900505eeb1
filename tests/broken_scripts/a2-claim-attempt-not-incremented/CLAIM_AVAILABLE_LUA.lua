
if redis.call('ZCARD', KEYS[4]) == 0 then return { 'settled' } end
local ready = redis.call('ZRANGE', KEYS[5], 0, -1)
local excluded = {}
for i = 1, tonumber(ARGV[4]) do excluded[ARGV[4 + i]] = true end
local claimed = {}
local retry_at = nil
for _, field in ipairs(ready) do
  if not excluded[field] then
    local expires = tonumber(redis.call('HGET', KEYS[3], field .. ':ce') or '0')
    if expires > tonumber(ARGV[2]) then
      if not retry_at or expires < retry_at then retry_at = expires end
    else
      local entries = redis.call('XRANGE', KEYS[1], field .. '-0', field .. '-0')
      if #entries == 0 then return { 'missing', field } end
      local attempt = redis.call('HINCRBY', KEYS[3], field .. ':d', 0) + 1
      redis.call('HSETNX', KEYS[3], field .. ':fc', ARGV[2])
      redis.call('HSET', KEYS[3],
        field .. ':lc', ARGV[2],
        field .. ':ch', ARGV[1],
        field .. ':ce', ARGV[3])
      claimed[#claimed + 1] = {
        tostring(attempt),
        redis.call('HGET', KEYS[3], field .. ':a') or '0',
        redis.call('HGET', KEYS[3], field .. ':e') or false,
        redis.call('HGET', KEYS[3], field .. ':fc') or false,
        ARGV[2],
        redis.call('HGET', KEYS[3], field .. ':lf') or false,
        redis.call('HGET', KEYS[3], field .. ':lfa') or false,
        ARGV[1],
        ARGV[3],
        entries[1]
      }
    end
  end
end
if #claimed > 0 then
  local result = { 'claimed', tostring(#claimed) }
  for _, claim in ipairs(claimed) do
    for _, value in ipairs(claim) do result[#result + 1] = value end
  end
  return result
end
if retry_at then return { 'busy', tostring(retry_at) } end
return { 'settled' }
