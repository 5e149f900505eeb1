
local function lane_field(lane, suffix)
  return '__lane:' .. tostring(string.len(lane)) .. ':' .. lane .. ':' .. suffix
end
local function settle(field)
  redis.call('ZREM', KEYS[3], field)
  redis.call('ZREM', KEYS[4], field)
  local lane = redis.call('HGET', KEYS[2], field .. ':l') or ''
  if lane == '' then return end
  local head_key = lane_field(lane, 'head')
  if redis.call('HGET', KEYS[2], head_key) ~= field then return end
  local next_field = redis.call('HGET', KEYS[2], field .. ':next')
  while next_field and redis.call('HEXISTS', KEYS[2], next_field .. ':p') == 1 do
    next_field = redis.call('HGET', KEYS[2], next_field .. ':next')
  end
  if next_field then
    redis.call('HSET', KEYS[2], head_key, next_field)
    if redis.call('HEXISTS', KEYS[2], next_field .. ':f') == 0 then
      redis.call('ZADD', KEYS[4], tonumber(next_field), next_field)
    end
  else
    redis.call('HDEL', KEYS[2], head_key, lane_field(lane, 'tail'))
  end
end
local idx = tonumber(ARGV[1])
if idx < 1 or idx > tonumber(redis.call('GET', KEYS[1]) or '0') then
  return { 'missing', '0' }
end
local field = ARGV[1]
local failures = tonumber(redis.call('HGET', KEYS[2], field .. ':a') or '0')
local dispatches = tonumber(redis.call('HGET', KEYS[2], field .. ':d') or '0')
if redis.call('HEXISTS', KEYS[2], field .. ':p') == 1 or dispatches ~= tonumber(ARGV[2]) then
  return { 'superseded', tostring(failures) }
end
if redis.call('HEXISTS', KEYS[2], field .. ':f') == 1 then
  return { 'dead_lettered', tostring(failures) }
end
if redis.call('HEXISTS', KEYS[2], field .. ':lfa') == 1 and
   tonumber(redis.call('HGET', KEYS[2], field .. ':lfa')) == tonumber(ARGV[2]) and
   redis.call('HEXISTS', KEYS[2], field .. ':ch') == 0 then
  return { 'failed', tostring(failures) }
end
if redis.call('HEXISTS', KEYS[2], field .. ':ch') == 0 then
  return { 'superseded', tostring(failures) }
end
failures = redis.call('HINCRBY', KEYS[2], field .. ':a', 1)
redis.call('HSET', KEYS[2],
  field .. ':e', ARGV[3],
  field .. ':lf', ARGV[5],
  field .. ':lfa', ARGV[2])
redis.call('HDEL', KEYS[2], field .. ':ch', field .. ':ce')
if failures > tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[2], field .. ':f', ARGV[5])
  redis.call('ZREM', KEYS[4], field)
  return { 'dead_lettered', tostring(failures) }
end
return { 'failed', tostring(failures) }
