/**
 * The limiter's Redis scripts. Each runs atomically on the Redis server and reads the clock with
 * `TIME`, so every worker, process and machine shares one clock and one decision; client clocks
 * never enter. Times and durations are whole MICROseconds (epoch times ~1.8e15 < 2^53, so every
 * sum is exact in Lua's doubles; fractional milliseconds at that size are not), written with
 * '%.0f' because Lua's tostring ('%.14g') would drop digits.
 *
 * Per key, by fingerprint only (the key itself never reaches Redis), in ONE namespace `<ns>` that
 * every deployment on this Redis shares whatever its HARVEST_REDIS_PREFIX (the service counts a
 * key's requests, not ours, so two deployments using one key must share its rate):
 *   {<ns>}:key:<fp>   hash: tat (next free slot, GCRA), coolUntil (429), strikes (consecutive
 *                     429s), parkedUntil + reason (403/402/exhausted → 'quota'), disabled + reason
 *                     'auth' (401), validUntil (from the usage call), granted, rateLimited,
 *                     syncedAt + grantedAtSync (the last usage call: SYNC_DUE_LUA)
 *   {<ns>}:quota:<fp> remaining quota units; absent = unknown (synced before backfills use it)
 * Per deployment (<prefix>:{<ns>}): watch-waiting (zset waiter → expiry), budget:<jobId>
 * (remaining), epoch (written by reconcile: its absence means Redis lost the schedule).
 * Every key a script touches is passed in KEYS and carries the hash tag {<ns>}, so on Redis
 * Cluster each call runs on the one node that owns that slot (key-layout.ts).
 */

const PRELUDE = `
local function fmt(x) return string.format('%.0f', x) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
`;

/**
 * Calls that spend (ACQUIRE_LUA's grants, GIVE_BACK_LUA) must not spend twice when ioredis sends
 * them again: a connection that drops after Redis ran a call but before its answer arrived has
 * the call resent on reconnect (autoResendUnfulfilledCommands; turning that off leaves the call's
 * promise unsettled), and a grant would then take two quota and budget units, a give-back return
 * two. Each process numbers its calls and keeps, in a hash of its own (`<prefix>:{<ns>}:once:<id>`,
 * KEYS like any other, so it shares the slot on a cluster), what those of its last ONCE_KEEP calls
 * that spent did (every call forgets the one ONCE_KEEP before it).
 * A process has far fewer calls than that unanswered at any moment (one per open key and line),
 * and ioredis resends them first on reconnecting, so a resent call always finds its entry; the
 * hash lives a day past its process's last call.
 */
export const ONCE_KEEP = 256;
const ONCE = `
local function forget(hash, seq)
  redis.call('HDEL', hash, string.format('%.0f', tonumber(seq) - ${ONCE_KEEP}))
end
local function remember(hash, seq, value)
  redis.call('HSET', hash, seq, value)
  redis.call('PEXPIRE', hash, 86400000)
end
`;

/**
 * Rate is GCRA without burst: a key's grants are at least `interval` = (1000 + headroom) / rate ms
 * apart, so no span of 1000 + headroom ms holds more than `rate` of them, wherever the service's
 * window starts (intervals are rounded up to a whole microsecond). The headroom doubles with each
 * consecutive 429 on the key (`strikes`, capped) and shrinks back after clean answers (REPORT_LUA),
 * so a key the service keeps refusing is spaced wider until it stops. A slot may be reserved up to
 * `lookahead` ahead (the caller sleeps until it): that keeps slots back to back under load instead
 * of losing the wake-up latency on every grant, and bounds how long a newly waiting watch can be
 * kept behind backfills (interval + lookahead).
 *
 * A line is told to ask again `lead` before a key's next slot (`nextUs`, and the wait of a 'wait'
 * answer). For keys at 10 requests a second or more the gate passes one interval as the lead (a
 * few ms more as the lookahead), so a saturated line asks for the next slot at the very moment its
 * last grant is due to be sent: the two timers fire in one wake-up of the process (issue 13: a
 * wake-up at 20 a second is worth more than the half interval the next grant now waits). A process
 * of an older version, which asks half an interval ahead, gets almost no slot of a key it shares
 * with this one: upgrade every process that uses a key together (README, "Scaling out").
 *
 * Fail closed (ARCHITECTURE invariant 3): with `check epoch`, a grant needs the deployment's epoch
 * key, which only a reconcile from Postgres writes, so a Redis that lost its keys (FLUSHDB, a
 * failover to an empty replica) grants nothing to a job until it has been reconciled; with
 * `budget expected` a grant needs the job's budget key. Either missing answers {'lost', what}.
 *
 * A process lines its waiters up (wait-line.ts) and asks for them one call at a time per open key,
 * so a grant also tells it what to do next: `ready` = how many keys have a slot within the
 * lookahead now, the one just granted included (an idle key's next slot is one interval away,
 * within the lookahead: that many more calls may go at once), `nextUs` = when to ask for the
 * earliest slot of the keys that are not ready ('' when every live key is ready, or none is live:
 * ask at once), so the line sleeps until then instead of polling. The granted key's
 * `strikes` ride along: a clean answer on a key without strikes need not be reported (REPORT_LUA
 * would change nothing).
 *
 * A watch waiter id stands for a process's whole line of watches: with `keep` ('1', more watches
 * queued behind this one) a grant or refusal leaves it registered, so backfills keep yielding
 * until the line's next watch has asked.
 *
 * A grant is remembered under the call's sequence number in its process's once hash (ONCE), and
 * a call that comes again with that number answers the same grant instead of spending again.
 *
 * KEYS: watch-waiting, budget, epoch, once hash, then (state hash, quota) per key.
 * ARGV: mode ('watch' | 'backfill' | 'sync'), waiter id, rate per key, base headroom µs, headroom
 *       cap µs, lookahead µs, reserve, budget ('0' none, '1' when present, '2' expected), check
 *       epoch ('1'/'0'), waiter ttl µs, recheck µs, state ttl ms, keep ('1'/'0'), lead µs, call
 *       sequence number, then one fingerprint per key.
 * Reply: {'ok', fp, delayUs, grantedBefore, quotaUnknown, slotAtUs, strikes, ready, nextUs} | {'wait', us} |
 *        {'exhausted', retryAtUs or ''} | {'budget'} | {'lost', 'epoch' | 'budget'} |
 *        {'unknown', fp...} (backfill with a reserve, and every usable key's quota unknown)
 */
export const ACQUIRE_LUA = `${PRELUDE}${ONCE}
local seq = ARGV[15]
-- Every call forgets the one ONCE_KEEP before it, whatever it answers: only grants are kept, and
-- a forget tied to them left a grant followed by refusals in the hash for good.
forget(KEYS[4], seq)
local prior = redis.call('HGET', KEYS[4], seq)
if prior then
  -- The same call again (ioredis resent it after a reconnect) and its first run granted: the same
  -- grant, its delay read from now. Its slot has usually passed, so the caller gives it back.
  local again = cjson.decode(prior)
  again[3] = fmt(tonumber(again[6]) - now)
  return again
end
local mode = ARGV[1]
local waiter = ARGV[2]
local rate = tonumber(ARGV[3])
local headroom = tonumber(ARGV[4])
local headroomCap = tonumber(ARGV[5])
local lookahead = tonumber(ARGV[6])
local reserve = tonumber(ARGV[7])
local budgetMode = ARGV[8]
local checkEpoch = ARGV[9] == '1'
local waiterTtl = tonumber(ARGV[10]) -- microseconds (PEXPIRE takes milliseconds)
local recheck = tonumber(ARGV[11])
local stateTtl = tonumber(ARGV[12])
local keep = ARGV[13] == '1'
local lead = tonumber(ARGV[14])
local n = #ARGV - 15

local function leave()
  if mode == 'watch' and not keep then redis.call('ZREM', KEYS[1], waiter) end
end

if checkEpoch and redis.call('EXISTS', KEYS[3]) == 0 then
  leave()
  return {'lost', 'epoch'}
end

local budget = nil
if budgetMode ~= '0' then
  budget = tonumber(redis.call('GET', KEYS[2]) or '')
  if not budget and budgetMode == '2' then
    leave()
    return {'lost', 'budget'}
  end
  if budget and budget <= 0 then
    leave()
    return {'budget'}
  end
end

local function intervalOf(strikes)
  local hr = headroom * (2 ^ math.min(strikes, 30))
  if hr > headroomCap then hr = math.max(headroomCap, headroom) end
  return math.ceil((1000000 + hr) / rate)
end

-- Backfills leave the last 'reserve' units of each key to watches; while a key's quota is
-- unknown (before the first sync, after a park or a Redis loss) they cannot tell, so they wait
-- for a sync instead of eating into the reserve.
local floor = 0
if mode == 'backfill' then floor = reserve end

local bestIdx, bestSlot, bestInterval, bestStrikes, earliest, retryAt = nil, nil, nil, nil, nil, nil
local live = false
local slots = {}
local unknownKeys = {}
for i = 1, n do
  local h = KEYS[3 + 2 * i]
  local q = KEYS[4 + 2 * i]
  local st = redis.call('HMGET', h, 'tat', 'parkedUntil', 'disabled', 'reason', 'coolUntil', 'validUntil', 'strikes')
  if st[3] ~= '1' then
    local parked = tonumber(st[2] or '')
    if parked and parked <= now then
      redis.call('HDEL', h, 'parkedUntil', 'reason')
      -- A quota park ends in a recheck: the next grant goes out with the quota unknown.
      if st[4] == 'quota' then redis.call('DEL', q) end
      parked = nil
    end
    -- A quota sync asks through a quota park: the account may have been topped up, and the sync
    -- is how anyone finds out before the recheck (\`harvest quota\` right after a top-up). Its
    -- answer parks the key again, or lifts the park (SYNC_QUOTA_LUA).
    if parked and mode == 'sync' and st[4] == 'quota' then parked = nil end
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
      elseif mode == 'backfill' and floor > 0 and not quota then
        unknownKeys[#unknownKeys + 1] = ARGV[15 + i]
      else
        live = true
        local slot = math.max(tonumber(st[1] or '') or 0, tonumber(st[5] or '') or 0, now)
        slots[i] = slot
        if slot - now <= lookahead and (not bestSlot or slot < bestSlot) then
          bestIdx = i
          bestSlot = slot
          bestStrikes = tonumber(st[7] or '') or 0
          bestInterval = intervalOf(bestStrikes)
        end
        local opens = slot - lead
        if not earliest or opens < earliest then earliest = opens end
      end
    end
  end
end

if not live then
  leave()
  if #unknownKeys > 0 then
    table.insert(unknownKeys, 1, 'unknown')
    return unknownKeys
  end
  if retryAt then return {'exhausted', fmt(retryAt)} end
  return {'exhausted', ''}
end

if mode == 'backfill' then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. fmt(now))
  if redis.call('ZCARD', KEYS[1]) > 0 then
    return {'wait', fmt(math.max(earliest - now, lookahead))}
  end
end

if not bestIdx then
  if mode == 'watch' then
    redis.call('ZADD', KEYS[1], fmt(now + waiterTtl), waiter)
    redis.call('PEXPIRE', KEYS[1], math.ceil(waiterTtl * 2 / 1000))
  end
  return {'wait', fmt(earliest - now)}
end

if keep then
  redis.call('ZADD', KEYS[1], fmt(now + waiterTtl), waiter)
  redis.call('PEXPIRE', KEYS[1], math.ceil(waiterTtl * 2 / 1000))
else
  leave()
end
local h = KEYS[3 + 2 * bestIdx]
local q = KEYS[4 + 2 * bestIdx]
redis.call('HSET', h, 'tat', fmt(bestSlot + bestInterval))
-- Key state is shared by every deployment on this Redis and outlives none of them for long.
redis.call('PEXPIRE', h, stateTtl)
local grantedBefore = redis.call('HINCRBY', h, 'granted', 1) - 1
local unknown = 1
local left = tonumber(redis.call('GET', q) or '')
if left then
  unknown = 0
  if left > 0 then left = redis.call('DECR', q) end
  redis.call('PEXPIRE', q, stateTtl)
  if left <= 0 then
    local vu = tonumber(redis.call('HGET', h, 'validUntil') or '')
    local untilMs = now + recheck
    if vu and vu > now and vu < untilMs then untilMs = vu end
    redis.call('HSET', h, 'parkedUntil', fmt(untilMs), 'reason', 'quota')
  end
end
if budget then redis.call('DECR', KEYS[2]) end
-- What the caller's line does next: the granted key is usable again at its new tat unless this
-- grant spent its quota (parked above).
slots[bestIdx] = nil
if not (left and left <= 0) then slots[bestIdx] = bestSlot + bestInterval end
local ready, nextOpen = 0, nil
for _, slot in pairs(slots) do
  if slot - now <= lookahead then ready = ready + 1
  elseif not nextOpen or slot - lead < nextOpen then nextOpen = slot - lead end
end
local nextUs = ''
if nextOpen then nextUs = fmt(nextOpen - now) end
local reply = {'ok', ARGV[15 + bestIdx], fmt(bestSlot - now), grantedBefore, unknown, fmt(bestSlot), bestStrikes, ready, nextUs}
remember(KEYS[4], seq, cjson.encode(reply))
return reply
`;

/**
 * KEYS: state hash, quota. ARGV: status, headroom µs, recheck µs, headroom cap µs.
 * 429: no grant for a full second from now plus the key's headroom (the service counts fixed
 * one-second windows, and our clock's idea of where they start may be off), and one more strike,
 * which doubles the headroom of the next cool-down and of the key's grant spacing, up to the cap.
 * Any other answer from the service takes a strike away. 403/402: quota 0, parked until the
 * earlier of validUntil and a recheck (an account can be topped up at any time, so a park never
 * outlasts the recheck). 401: disabled.
 */
export const REPORT_LUA = `${PRELUDE}
local status = tonumber(ARGV[1])
if status == 429 then
  local strikes = tonumber(redis.call('HGET', KEYS[1], 'strikes') or '') or 0
  local hr = tonumber(ARGV[2]) * (2 ^ math.min(strikes, 30))
  local cap = math.max(tonumber(ARGV[4]), tonumber(ARGV[2]))
  if hr > cap then hr = cap end
  local cool = now + 1000000 + hr
  local prev = tonumber(redis.call('HGET', KEYS[1], 'coolUntil') or '')
  if not prev or prev < cool then redis.call('HSET', KEYS[1], 'coolUntil', fmt(cool)) end
  if hr < cap then redis.call('HINCRBY', KEYS[1], 'strikes', 1) end
  redis.call('HINCRBY', KEYS[1], 'rateLimited', 1)
  return {'cooled', fmt(cool)}
elseif status == 403 or status == 402 then
  local vu = tonumber(redis.call('HGET', KEYS[1], 'validUntil') or '')
  local untilMs = now + tonumber(ARGV[3])
  if vu and vu > now and vu < untilMs then untilMs = vu end
  redis.call('HSET', KEYS[1], 'parkedUntil', fmt(untilMs), 'reason', 'quota')
  -- The counter expires with the key's state (a day after its last grant): a SET without PX left
  -- it for ever once the key was retired from the config after running out.
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('SET', KEYS[2], '0', 'PX', ttl) else redis.call('SET', KEYS[2], '0', 'KEEPTTL') end
  return {'parked', fmt(untilMs)}
elseif status == 401 then
  redis.call('HSET', KEYS[1], 'disabled', '1', 'reason', 'auth')
  redis.call('HDEL', KEYS[1], 'parkedUntil')
  return {'disabled', ''}
end
if status >= 200 and status < 500 then
  local strikes = tonumber(redis.call('HGET', KEYS[1], 'strikes') or '') or 0
  if strikes > 1 then redis.call('HSET', KEYS[1], 'strikes', strikes - 1)
  elseif strikes == 1 then redis.call('HDEL', KEYS[1], 'strikes') end
end
return {'ignored', ''}
`;

/**
 * Seeds the quota from a usage call. KEYS: state hash, quota.
 * ARGV: remaining as reported, granted counter before the usage call's own grant, validUntil µs
 * or '', recheck µs, state ttl ms. Every grant issued since the usage call began (itself included) may or may
 * not be counted in the answer; subtracting them all keeps the counter on the safe side, also when
 * the key's state was lost while the call was out (its counter then starts again from 0).
 */
export const SYNC_QUOTA_LUA = `${PRELUDE}
local granted = tonumber(redis.call('HGET', KEYS[1], 'granted') or '') or 0
-- A counter below the one read before the call: the key's state was lost meanwhile (a flush, a
-- failover to an empty replica) and counts from 0 again, every grant of it after the call began.
local since = granted - tonumber(ARGV[2])
if since < 0 then since = granted end
local left = math.floor(tonumber(ARGV[1]) - since)
if left < 0 then left = 0 end
redis.call('SET', KEYS[2], tostring(left), 'PX', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
-- When, and at which grant count, the key was last synced (by any process): SYNC_DUE_LUA.
redis.call('HSET', KEYS[1], 'syncedAt', fmt(now), 'grantedAtSync', fmt(granted))
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
 * Whether the periodic quota sync should ask the service for this key now (every call costs a
 * request of quota, the usage call too). Not when any process synced it within `interval`, nor
 * when no grant went out on it since its last sync (harvest's count of what is left is exact)
 * and that sync is younger than `idle`: an idle worker asked every 10 minutes for each key, 4,320
 * requests a month of a 10,000 plan, and each process on its own. Always when the quota is
 * unknown or spent (a top-up shows at the next start), and once its period has ended (past the
 * validUntil the service gave): backfills held at the watch reserve grant nothing, so without it
 * the renewed plan went unseen for up to a day. KEYS: state hash, quota. ARGV: interval µs, idle
 * µs. Reply: 1 due, 0 not.
 */
export const SYNC_DUE_LUA = `${PRELUDE}
local q = tonumber(redis.call('GET', KEYS[2]) or '')
if not q or q <= 0 then return 1 end
local h = redis.call('HMGET', KEYS[1], 'syncedAt', 'granted', 'grantedAtSync', 'validUntil')
local vu = tonumber(h[4] or '')
if vu and vu <= now then return 1 end
local at = tonumber(h[1] or '')
if not at then return 1 end
local age = now - at
if age < tonumber(ARGV[1]) then return 0 end
local granted = tonumber(h[2] or '') or 0
if tonumber(h[3] or '') == granted and age < tonumber(ARGV[2]) then return 0 end
return 1
`;

/**
 * Operator override. KEYS: state hash, quota. ARGV: 'unpark' | 'set' | 'enable', remaining
 * ('' = unknown). Unparking also forgets a spent quota, so the next grant rechecks the service.
 * 'enable' lifts a 401's disable alone (the quota's park and a 429's cool-down stay): `harvest
 * quota` asks the service again about a key it refused, which nothing else did for the day the
 * key's state lives.
 */
export const ADMIN_LUA = `
local op = ARGV[1]
if op == 'enable' then
  if redis.call('HGET', KEYS[1], 'disabled') == '1' then redis.call('HDEL', KEYS[1], 'disabled', 'reason') end
  return 1
end
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

/**
 * A grant that was never used (its request would have gone out past its slot): its quota unit
 * and its job's budget unit come back; its rate slot stays spent. KEYS: quota, budget (absent for
 * none), once hash. ARGV: call sequence number (a call that comes again gives nothing back twice).
 * A quota at 0 is not raised: the key may have been parked by the service's 403 since.
 */
export const GIVE_BACK_LUA = `${ONCE}
forget(KEYS[3], ARGV[1])
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return 0 end
remember(KEYS[3], ARGV[1], '1')
local q = tonumber(redis.call('GET', KEYS[1]) or '')
if q and q > 0 then redis.call('INCR', KEYS[1]) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('INCR', KEYS[2]) end
return 1
`;
