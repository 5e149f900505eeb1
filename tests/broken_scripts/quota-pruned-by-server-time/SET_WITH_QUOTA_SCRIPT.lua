
local now = tonumber(ARGV[1])
local max_entries = tonumber(ARGV[2])
local expires_at = tonumber(ARGV[3])
local index_ttl = tonumber(ARGV[4])
local envelope = ARGV[5]

local server_time = redis.call("TIME")
local server_now = tonumber(server_time[1]) * 1000 + math.floor(tonumber(server_time[2]) / 1000)
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", server_now)
local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
if not indexed and redis.call("ZCARD", KEYS[2]) >= max_entries then
	return {0, false}
end

redis.call("SET", KEYS[1], envelope, "PXAT", expires_at)
redis.call("ZADD", KEYS[2], expires_at, KEYS[1])
redis.call("PEXPIRE", KEYS[2], index_ttl)
return {1, envelope}
