
local now = tonumber(ARGV[1])
local rows = redis.call('HGETALL', KEYS[1])
local live = {}
for i = 1, #rows, 2 do
  if tonumber(cjson.decode(rows[i + 1])['e']) <= now then
    redis.call('HDEL', KEYS[1], rows[i])
  else
    live[#live + 1] = rows[i]
    live[#live + 1] = rows[i + 1]
  end
end
return live
