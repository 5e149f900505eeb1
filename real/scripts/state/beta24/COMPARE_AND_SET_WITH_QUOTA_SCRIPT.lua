
local current = redis.call("GET", KEYS[1])
local scoped_present = current and true or false
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
local allow_legacy_claim = ARGV[7] == "1"
local legacy_tombstone = ARGV[8]

if not scoped_present then
	local legacy = redis.call("GET", KEYS[3])
	if legacy then
		local ok, decoded = pcall(cjson.decode, legacy)
		if ok and type(decoded) == "table" and decoded.deleted == true then
			legacy = false
		end
	end
	if legacy and not allow_legacy_claim then
		return {-1, false}
	end
	if legacy then
		local legacy_ttl = redis.call("PTTL", KEYS[3])
		if legacy_ttl == -1 then
			legacy_ttl = index_ttl
		elseif legacy_ttl < 1 then
			legacy_ttl = 1
		end
		if legacy_ttl > 0 then
			redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
			redis.call("ZREM", KEYS[2], KEYS[3])
			local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
			if not indexed and redis.call("ZCARD", KEYS[2]) >= max_entries then
				return {0, false}
			end
			redis.call("SET", KEYS[1], legacy, "PX", legacy_ttl)
			redis.call("ZADD", KEYS[2], now + legacy_ttl, KEYS[1])
			redis.call("PEXPIRE", KEYS[2], index_ttl)
			redis.call("SET", KEYS[3], legacy_tombstone, "PX", index_ttl)
			current = legacy
		end
	end
end

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
redis.call("ZREM", KEYS[2], KEYS[3])
local indexed = redis.call("ZSCORE", KEYS[2], KEYS[1])
if not indexed and redis.call("ZCARD", KEYS[2]) >= max_entries then
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
if allow_legacy_claim then
	redis.call("SET", KEYS[3], legacy_tombstone, "PX", index_ttl)
end
return {1, envelope}
