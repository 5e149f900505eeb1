
local function lane_field(lane, suffix)
  return '__lane:' .. tostring(string.len(lane)) .. ':' .. lane .. ':' .. suffix
end
local function settle(field)
  redis.call('ZREM', KEYS[6], field)
  redis.call('ZREM', KEYS[7], field)
  local lane = redis.call('HGET', KEYS[5], field .. ':l') or ''
  if lane == '' then return end
  local head_key = lane_field(lane, 'head')
  if redis.call('HGET', KEYS[5], head_key) ~= field then return end
  local next_field = redis.call('HGET', KEYS[5], field .. ':next')
  while next_field and redis.call('HEXISTS', KEYS[5], next_field .. ':p') == 1 do
    next_field = redis.call('HGET', KEYS[5], next_field .. ':next')
  end
  if next_field then
    redis.call('HSET', KEYS[5], head_key, next_field)
    if redis.call('HEXISTS', KEYS[5], next_field .. ':f') == 0 then
      redis.call('ZADD', KEYS[7], tonumber(next_field), next_field)
    end
  else
    redis.call('HDEL', KEYS[5], head_key, lane_field(lane, 'tail'))
  end
end
local function enqueue(field, idx, lane)
  redis.call('ZADD', KEYS[6], idx, field)
  if lane == '' then
    redis.call('ZADD', KEYS[7], idx, field)
    return
  end
  local tail_key = lane_field(lane, 'tail')
  local tail = redis.call('HGET', KEYS[5], tail_key)
  if tail then
    redis.call('HSET', KEYS[5], tail .. ':next', field)
  else
    redis.call('HSET', KEYS[5], lane_field(lane, 'head'), field)
    redis.call('ZADD', KEYS[7], idx, field)
  end
  redis.call('HSET', KEYS[5], tail_key, field)
end
local parent = ARGV[3]
local attempt = tonumber(ARGV[4])
local n = tonumber(ARGV[5])
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(parent) < 1 or tonumber(parent) > total then return { 'missing' } end
local dispatches = tonumber(redis.call('HGET', KEYS[5], parent .. ':d') or '0')
local processed = redis.call('HGET', KEYS[5], parent .. ':p')
local processed_attempt = tonumber(redis.call('HGET', KEYS[5], parent .. ':pa') or '0')
if processed then
  if processed_attempt ~= attempt then return { 'superseded' } end
  local raw_recorded_ids = redis.call('HGET', KEYS[5], parent .. ':ri')
  if not raw_recorded_ids then return { 'partial' } end
  local recorded_ids = cjson.decode(raw_recorded_ids)
  if #recorded_ids == n then return { 'partial' } end
  local indexes = {}
  for i = 1, n do
    local id = ARGV[5 + (i - 1) * 5 + 1]
    if recorded_ids[i] ~= id then return { 'partial' } end
    local existing = redis.call('HGET', KEYS[3], id)
    if not existing then return { 'partial' } end
    local rec = cjson.decode(existing)
    if rec[1] ~= ARGV[1] then return { 'partial' } end
    local entries = redis.call('XRANGE', KEYS[1], tostring(rec[2]) .. '-0', tostring(rec[2]) .. '-0')
    if #entries == 0 then return { 'partial' } end
    local values = entries[1][2]
    local cause = nil
    for j = 1, #values, 2 do
      if values[j] == 'cause' then cause = values[j + 1] break end
    end
    if not cause or cause == '' then return { 'partial' } end
    local decoded = cjson.decode(cause)
    if tonumber(decoded['index']) ~= tonumber(parent) or
       tonumber(decoded['attempt']) ~= attempt then return { 'partial' } end
    indexes[#indexes + 1] = tostring(rec[2])
  end
  local result = { 'duplicate' }
  for _, idx in ipairs(indexes) do result[#result + 1] = idx end
  return result
end
if dispatches ~= attempt then return { 'superseded' } end
if redis.call('HEXISTS', KEYS[5], parent .. ':ch') == 0 or
   redis.call('HEXISTS', KEYS[5], parent .. ':f') == 1 or
   tonumber(redis.call('HGET', KEYS[5], parent .. ':lfa') or '0') == attempt then
  return { 'superseded' }
end
for i = 1, n do
  local id = ARGV[5 + (i - 1) * 5 + 1]
  if redis.call('HEXISTS', KEYS[3], id) == 1 then return { 'partial' } end
end
local returned_ids = {}
for i = 1, n do returned_ids[i] = ARGV[5 + (i - 1) * 5 + 1] end
local returned_json = '[]'
if n > 0 then returned_json = cjson.encode(returned_ids) end
redis.call('HSET', KEYS[5],
  parent .. ':p', ARGV[2],
  parent .. ':pa', ARGV[4],
  parent .. ':ri', returned_json)
redis.call('HDEL', KEYS[5], parent .. ':ch', parent .. ':ce')
settle(parent)
local cause = cjson.encode({ index = tonumber(parent), attempt = attempt })
for i = 1, n do
  local id = ARGV[5 + (i - 1) * 5 + 1]
  local typ = ARGV[5 + (i - 1) * 5 + 2]
  local payload = ARGV[5 + (i - 1) * 5 + 3]
  local lane = ARGV[5 + (i - 1) * 5 + 4]
  local settled = ARGV[5 + (i - 1) * 5 + 5]
  local idx = total + i
  redis.call('XADD', KEYS[1], tostring(idx) .. '-0',
    'id', id, 'type', typ, 'payload', payload, 'created_at', ARGV[2],
    'cause', cause, 'lane', lane)
  redis.call('HSET', KEYS[3], id, cjson.encode({ ARGV[1], idx }))
  redis.call('HSET', KEYS[5], tostring(idx) .. ':l', lane)
  if settled == '1' then
    redis.call('HSET', KEYS[5], tostring(idx) .. ':p', ARGV[2])
  else
    enqueue(tostring(idx), idx, lane)
  end
end
redis.call('SET', KEYS[2], tostring(total + n))
redis.call('ZADD', KEYS[4], 0, ARGV[1])
return { 'ok', tostring(total + 1),
  tostring(redis.call('EXISTS', KEYS[8])) }
