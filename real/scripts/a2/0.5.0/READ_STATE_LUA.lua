
local snapshot = redis.call('GET', KEYS[1])
local frontier = redis.call('GET', KEYS[2]) or '0'
return { snapshot or '', frontier }
