
local at = tonumber(ARGV[1])
local applied = {}
for i = 1, tonumber(ARGV[3]) do
  local field = ARGV[3 + (i - 1) * 2 + 1]
  local value = ARGV[3 + (i - 1) * 2 + 2]
  local existing = redis.call('HGET', KEYS[1], field)
  if not existing or tonumber(cjson.decode(existing)['a']) < at then
    if value == '' then
      redis.call('HDEL', KEYS[1], field)
    else
      redis.call('HSET', KEYS[1], field, value)
    end
    applied[#applied + 1] = tostring(i)
  end
end
if #applied > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return applied
