
local scoped = redis.call("GET", KEYS[1])
if scoped then
	return {1, scoped}
end

local legacy = redis.call("GET", KEYS[3])
if not legacy then
	return {1, false}
end
local ok, decoded = pcall(cjson.decode, legacy)
if ok and type(decoded) == "table" and decoded.deleted == true then
	return {1, false}
end
local legacy_ttl = redis.call("PTTL", KEYS[3])
if legacy_ttl == -1 then
	legacy_ttl = tonumber(ARGV[3])
elseif legacy_ttl < 1 then
	legacy_ttl = 1
end

local now = tonumber(ARGV[1])
local max_entries = tonumber(ARGV[2])
local index_ttl = tonumber(ARGV[3])
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
redis.call("ZREM", KEYS[2], KEYS[3])
local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
if not indexed and redis.call("ZCARD", KEYS[2]) >= max_entries then
	return {0, false}
end

redis.call("SET", KEYS[1], legacy, "PX", legacy_ttl)
redis.call("ZADD", KEYS[2], now + legacy_ttl, KEYS[1])
redis.call("PEXPIRE", KEYS[2], index_ttl)
return {1, legacy}
