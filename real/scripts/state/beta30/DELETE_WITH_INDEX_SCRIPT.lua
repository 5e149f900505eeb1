
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
redis.call("ZREM", KEYS[2], KEYS[1])
return 1
