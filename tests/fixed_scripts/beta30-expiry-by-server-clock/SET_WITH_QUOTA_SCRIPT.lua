
local now = tonumber(ARGV[1])
local max_entries = tonumber(ARGV[2])
local expires_at = tonumber(ARGV[3])
local index_ttl = tonumber(ARGV[4])
local envelope = ARGV[5]
-- The fix: the caller's ttl (expires_at and now come from the same clock) measured on the
-- server's clock, for the key and for its index score.
local time = redis.call("TIME")
local ttl = expires_at - now
now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
expires_at = now + ttl

redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
if not indexed and redis.call("ZCARD", KEYS[2]) >= max_entries then
	return {0, false}
end

redis.call("SET", KEYS[1], envelope, "PX", ttl)
redis.call("ZADD", KEYS[2], expires_at, KEYS[1])
redis.call("PEXPIRE", KEYS[2], index_ttl)
return {1, envelope}
