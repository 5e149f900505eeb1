
local function lane_field(lane, suffix)
  return '__lane:' .. tostring(string.len(lane)) .. ':' .. lane .. ':' .. suffix
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
local n = tonumber(ARGV[3])
local base = tonumber(redis.call('GET', KEYS[2]) or '0')
local has_pending = redis.call('ZCARD', KEYS[6]) > 0 and '1' or '0'
if n == 0 then return { 'empty', has_pending } end
local dups = {}
for i = 1, n do
  local id = ARGV[3 + (i - 1) * 6 + 1]
  local existing = redis.call('HGET', KEYS[3], id)
  if existing then
    local rec = cjson.decode(existing)
    if rec[1] ~= ARGV[1] then return { 'foreign', id } end
    dups[#dups + 1] = tostring(rec[2])
  end
end
if #dups == n then
  local res = { 'dup', has_pending }
  for i = 1, #dups do res[#res + 1] = dups[i] end
  return res
end
if #dups > 0 then return { 'partial', tostring(#dups) } end
for i = 1, n do
  local cause = ARGV[3 + (i - 1) * 6 + 4]
  if cause ~= '' then
    local parsed = cjson.decode(cause)
    local pidx = tonumber(parsed.index)
    if pidx < 1 or pidx > base then
      return { 'no_parent', tostring(parsed.index) }
    end
    local field = tostring(pidx)
    local dispatches = tonumber(redis.call('HGET', KEYS[5], field .. ':d') or '0')
    if dispatches ~= tonumber(parsed.attempt) or
       redis.call('HEXISTS', KEYS[5], field .. ':f') == 1 then
      return { 'superseded', field }
    end
  end
end
for i = 1, n do
  local id = ARGV[3 + (i - 1) * 6 + 1]
  local typ = ARGV[3 + (i - 1) * 6 + 2]
  local payload = ARGV[3 + (i - 1) * 6 + 3]
  local cause = ARGV[3 + (i - 1) * 6 + 4]
  local lane = ARGV[3 + (i - 1) * 6 + 5]
  local settled = ARGV[3 + (i - 1) * 6 + 6]
  local idx = base + i
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
redis.call('SET', KEYS[2], tostring(base + n))
redis.call('ZADD', KEYS[4], 0, ARGV[1])
has_pending = redis.call('ZCARD', KEYS[6]) > 0 and '1' or '0'
return { 'ok', tostring(base), has_pending,
  tostring(redis.call('EXISTS', KEYS[8])) }
