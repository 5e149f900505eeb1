
local current = redis.call("GET", KEYS[1])
if current then
	local ok, decoded = pcall(cjson.decode, current)
	if ok and type(decoded) == "table" and decoded.deleted == true then
		current = false
	end
end

local now = tonumber(ARGV[2])
local max_entries = tonumber(ARGV[3])
local expires_at = tonumber(ARGV[4])
local index_ttl = tonumber(ARGV[5])
local envelope = ARGV[6]

local current_version = 0
local current_decoded = false
if current then
	local ok, decoded = pcall(cjson.decode, current)
	if not ok or type(decoded) ~= "table" or type(decoded.version) ~= "number" then
		return {-2, current}
	end
	current_version = decoded.version
	current_decoded = decoded
end
if current_version ~= tonumber(ARGV[1]) then
	return {-1, current or false}
end

redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
if not indexed and redis.call("ZCARD", KEYS[2]) > max_entries then
	return {0, false}
end

if current_decoded and type(current_decoded.createdAt) == "string" then
	local next_decoded = cjson.decode(envelope)
	next_decoded.createdAt = current_decoded.createdAt
	envelope = cjson.encode(next_decoded)
end
redis.call("SET", KEYS[1], envelope, "PXAT", expires_at)
redis.call("ZADD", KEYS[2], expires_at, KEYS[1])
redis.call("PEXPIRE", KEYS[2], index_ttl)
return {1, envelope}
