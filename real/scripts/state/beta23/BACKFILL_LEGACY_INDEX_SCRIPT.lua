
local now = tonumber(ARGV[1])
local index_ttl = tonumber(ARGV[2])
local next_cursor = ARGV[3]

redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
for i = 4, #ARGV, 3 do
	local key = ARGV[i]
	local expected = ARGV[i + 1]
	local expires_at = tonumber(ARGV[i + 2])
	if redis.call("GET", key) == expected then
		redis.call("ZADD", KEYS[1], "NX", expires_at, key)
	end
end
if redis.call("EXISTS", KEYS[1]) == 1 then
	redis.call("PEXPIRE", KEYS[1], index_ttl)
end
redis.call("SET", KEYS[2], next_cursor, "PX", index_ttl)
return redis.call("ZCARD", KEYS[1])
