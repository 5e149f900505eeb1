
local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cjson.decode(cur)['index']) > 1e18 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
