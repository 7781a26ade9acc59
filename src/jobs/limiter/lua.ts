/**
 * The limiter's Redis scripts. Each runs atomically on the Redis server and reads the clock with
 * `TIME`, so every worker, process and machine shares one clock and one decision; client clocks
 * never enter. Times and durations are whole MICROseconds (epoch times ~1.8e15 < 2^53, so every
 * sum is exact in Lua's doubles; fractional milliseconds at that size are not), written with
 * '%.0f' because Lua's tostring ('%.14g') would drop digits.
 *
 * Per key (by fingerprint only; the key itself never reaches Redis):
 *   <prefix>:key:<fp>   hash: tat (next free slot, GCRA), coolUntil (429), parkedUntil + reason
 *                       (403/402/exhausted → 'quota'), disabled + reason 'auth' (401),
 *                       validUntil (from the usage call), granted, rateLimited (counters)
 *   <prefix>:quota:<fp> remaining quota units; absent = unknown (granted, but should be synced)
 * Shared: <prefix>:watch-waiting (zset waiter → expiry), <prefix>:budget:<jobId> (remaining).
 */

const PRELUDE = `
local function fmt(x) return string.format('%.0f', x) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
`;

/**
 * Rate is GCRA without burst: a key's grants are at least `interval` = (1000 + headroom) / rate ms
 * apart, so no span of 1000 + headroom ms holds more than `rate` of them, wherever the service's
 * window starts (the caller rounds the interval up to a whole microsecond). A slot may be
 * reserved up to `lookahead` ahead (the caller sleeps until it):
 * that keeps slots back to back under load instead of losing the wake-up latency on every grant,
 * and bounds how long a newly waiting watch can be kept behind backfills (interval + lookahead).
 *
 * KEYS: watch-waiting, budget, then (state hash, quota) per key.
 * ARGV: mode ('watch' | 'backfill' | 'sync'), waiter id, interval µs, lookahead µs, reserve,
 *       has budget ('1'/'0'), waiter ttl µs, recheck µs, then one fingerprint per key.
 * Reply: {'ok', fp, delayUs, grantedBefore, quotaUnknown, slotAtUs} | {'wait', us} |
 *        {'exhausted', retryAtUs or ''} | {'budget'}
 */
export const ACQUIRE_LUA = `${PRELUDE}
local mode = ARGV[1]
local waiter = ARGV[2]
local interval = tonumber(ARGV[3])
local lookahead = tonumber(ARGV[4])
local reserve = tonumber(ARGV[5])
local hasBudget = ARGV[6] == '1'
local waiterTtl = tonumber(ARGV[7])
local recheck = tonumber(ARGV[8])
local n = #ARGV - 8

local function leave()
  if mode == 'watch' then redis.call('ZREM', KEYS[1], waiter) end
end

local budget = nil
if hasBudget then
  budget = tonumber(redis.call('GET', KEYS[2]) or '')
  if budget and budget <= 0 then
    leave()
    return {'budget'}
  end
end

-- Backfills leave the last 'reserve' units of each key to watches.
local floor = 0
if mode == 'backfill' then floor = reserve end

local bestIdx, bestSlot, earliest, retryAt = nil, nil, nil, nil
local live = false
for i = 1, n do
  local h = KEYS[1 + 2 * i]
  local q = KEYS[2 + 2 * i]
  local st = redis.call('HMGET', h, 'tat', 'parkedUntil', 'disabled', 'reason', 'coolUntil', 'validUntil')
  if st[3] ~= '1' then
    local parked = tonumber(st[2] or '')
    if parked and parked <= now then
      redis.call('HDEL', h, 'parkedUntil', 'reason')
      -- A quota park ends in a recheck: the next grant goes out with the quota unknown.
      if st[4] == 'quota' then redis.call('DEL', q) end
      parked = nil
    end
    if parked then
      if not retryAt or parked < retryAt then retryAt = parked end
    else
      local quota = tonumber(redis.call('GET', q) or '')
      if mode ~= 'sync' and quota and quota <= floor then
        -- At its floor (spent, or down to the watch reserve): try again at the earlier of
        -- validUntil and a recheck, since an account can be topped up at any time.
        local vu = tonumber(st[6] or '')
        local at = now + recheck
        if vu and vu > now and vu < at then at = vu end
        if not retryAt or at < retryAt then retryAt = at end
      else
        live = true
        local slot = math.max(tonumber(st[1] or '') or 0, tonumber(st[5] or '') or 0, now)
        if slot - now <= lookahead and (not bestSlot or slot < bestSlot) then
          bestIdx = i
          bestSlot = slot
        end
        local opens = slot - lookahead
        if not earliest or opens < earliest then earliest = opens end
      end
    end
  end
end

if not live then
  leave()
  if retryAt then return {'exhausted', fmt(retryAt)} end
  return {'exhausted', ''}
end

if mode == 'backfill' then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. fmt(now))
  if redis.call('ZCARD', KEYS[1]) > 0 then
    return {'wait', fmt(math.max(earliest - now, interval / 2))}
  end
end

if not bestIdx then
  if mode == 'watch' then
    redis.call('ZADD', KEYS[1], fmt(now + waiterTtl), waiter)
    redis.call('PEXPIRE', KEYS[1], math.ceil(waiterTtl * 2))
  end
  return {'wait', fmt(earliest - now)}
end

leave()
local h = KEYS[1 + 2 * bestIdx]
local q = KEYS[2 + 2 * bestIdx]
redis.call('HSET', h, 'tat', fmt(bestSlot + interval))
local grantedBefore = redis.call('HINCRBY', h, 'granted', 1) - 1
local unknown = 1
local left = tonumber(redis.call('GET', q) or '')
if left then
  unknown = 0
  if left > 0 then left = redis.call('DECR', q) end
  if left <= 0 then
    local vu = tonumber(redis.call('HGET', h, 'validUntil') or '')
    local untilMs = now + recheck
    if vu and vu > now and vu < untilMs then untilMs = vu end
    redis.call('HSET', h, 'parkedUntil', fmt(untilMs), 'reason', 'quota')
  end
end
if budget then redis.call('DECR', KEYS[2]) end
return {'ok', ARGV[8 + bestIdx], fmt(bestSlot - now), grantedBefore, unknown, fmt(bestSlot)}
`;

/**
 * KEYS: state hash, quota. ARGV: status, headroom µs, recheck µs.
 * 429: no grant until the next whole second plus headroom (the service's window is fixed and
 * one second long). 403/402: quota 0, parked until the earlier of validUntil and a recheck (an
 * account can be topped up at any time, so a park never outlasts the recheck). 401: disabled.
 */
export const REPORT_LUA = `${PRELUDE}
local status = tonumber(ARGV[1])
if status == 429 then
  local cool = (math.floor(now / 1000000) + 1) * 1000000 + tonumber(ARGV[2])
  local prev = tonumber(redis.call('HGET', KEYS[1], 'coolUntil') or '')
  if not prev or prev < cool then redis.call('HSET', KEYS[1], 'coolUntil', fmt(cool)) end
  redis.call('HINCRBY', KEYS[1], 'rateLimited', 1)
  return {'cooled', fmt(cool)}
elseif status == 403 or status == 402 then
  local vu = tonumber(redis.call('HGET', KEYS[1], 'validUntil') or '')
  local untilMs = now + tonumber(ARGV[3])
  if vu and vu > now and vu < untilMs then untilMs = vu end
  redis.call('HSET', KEYS[1], 'parkedUntil', fmt(untilMs), 'reason', 'quota')
  redis.call('SET', KEYS[2], '0')
  return {'parked', fmt(untilMs)}
elseif status == 401 then
  redis.call('HSET', KEYS[1], 'disabled', '1', 'reason', 'auth')
  redis.call('HDEL', KEYS[1], 'parkedUntil')
  return {'disabled', ''}
end
return {'ignored', ''}
`;

/**
 * Seeds the quota from a usage call. KEYS: state hash, quota.
 * ARGV: remaining as reported, granted counter before the usage call's own grant, validUntil µs
 * or '', recheck µs. Every grant issued since the usage call began (itself included) may or may
 * not be counted in the answer; subtracting them all keeps the counter on the safe side.
 */
export const SYNC_QUOTA_LUA = `${PRELUDE}
local granted = tonumber(redis.call('HGET', KEYS[1], 'granted') or '') or 0
local left = math.floor(tonumber(ARGV[1]) - (granted - tonumber(ARGV[2])))
if left < 0 then left = 0 end
redis.call('SET', KEYS[2], tostring(left))
local vu = tonumber(ARGV[3])
if vu then redis.call('HSET', KEYS[1], 'validUntil', fmt(vu)) else redis.call('HDEL', KEYS[1], 'validUntil') end
if left <= 0 then
  local untilMs = now + tonumber(ARGV[4])
  if vu and vu > now and vu < untilMs then untilMs = vu end
  redis.call('HSET', KEYS[1], 'parkedUntil', fmt(untilMs), 'reason', 'quota')
elseif redis.call('HGET', KEYS[1], 'reason') == 'quota' then
  redis.call('HDEL', KEYS[1], 'parkedUntil', 'reason')
end
return left
`;

/**
 * Operator override. KEYS: state hash, quota. ARGV: 'unpark' | 'set', remaining ('' = unknown).
 * Unparking also forgets a spent quota, so the next grant rechecks the service.
 */
export const ADMIN_LUA = `
local op = ARGV[1]
if op == 'unpark' then
  redis.call('HDEL', KEYS[1], 'parkedUntil', 'reason', 'disabled', 'coolUntil')
  local q = tonumber(redis.call('GET', KEYS[2]) or '')
  if q and q <= 0 then redis.call('DEL', KEYS[2]) end
  return 1
end
if ARGV[2] == '' then redis.call('DEL', KEYS[2]) else redis.call('SET', KEYS[2], ARGV[2]) end
if (ARGV[2] == '' or tonumber(ARGV[2]) > 0) and redis.call('HGET', KEYS[1], 'reason') == 'quota' then
  redis.call('HDEL', KEYS[1], 'parkedUntil', 'reason')
end
return 1
`;
