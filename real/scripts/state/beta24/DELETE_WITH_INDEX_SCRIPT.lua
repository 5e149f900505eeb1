
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
if ARGV[3] == "1" then
	redis.call("SET", KEYS[3], ARGV[1], "PX", ARGV[2])
end
redis.call("ZREM", KEYS[2], KEYS[1], KEYS[3])
return 1
