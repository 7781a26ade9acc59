/**
 * What a grant costs in Redis calls (issue 13, items 3 and 4). Waiters of one process line up and
 * only the front asks, sleeping until the slot it was told about; a clean answer on a key without
 * strikes is not reported. Lua calls are counted on the connection itself (every EVALSHA/EVAL by
 * script), so the figures hold whatever the gate says of itself; `stats()` must agree with them.
 * Before the line: 16 waiters on one key made ~31 acquire calls per grant, 100 on 10 keys ~14.
 */
import { setMaxListeners } from 'node:events';
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.ts';
import { ACQUIRE_LUA, REPORT_LUA } from '../../src/jobs/limiter/lua.ts';
import { createRedisGate, type RedisGateOptions, type RedisGrant } from '../../src/jobs/limiter/redis-gate.ts';
import { apiKeys, connectRedis, deletePrefix, paceOf, randomPrefix } from './fixtures/limiter-redis.ts';

/** One key's interval at 20 a second with the gate's default 25 ms of headroom a second. */
const INTERVAL_MS = 1025 / 20;

const sha = (lua: string) => createHash('sha1').update(lua).digest('hex');
const ACQUIRE_SHA = sha(ACQUIRE_LUA);
const REPORT_SHA = sha(REPORT_LUA);

/** A connection that counts the limiter's script runs (ioredis sends EVALSHA, EVAL on a cache miss). */
function countingRedis(): { redis: Redis; calls: { acquire: number; report: number } } {
  const redis = connectRedis();
  const calls = { acquire: 0, report: 0 };
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string; args: unknown[] }, ...rest: unknown[]) => {
    if (command.name === 'evalsha' || command.name === 'eval') {
      const first = String(command.args[0]);
      const id = command.name === 'evalsha' ? first : sha(first);
      if (id === ACQUIRE_SHA) calls.acquire++;
      else if (id === REPORT_SHA) calls.report++;
    }
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
  return { redis, calls };
}

let counted: ReturnType<typeof countingRedis>;
const prefixes: string[] = [];
beforeAll(() => {
  counted = countingRedis();
});
afterAll(async () => {
  for (const prefix of prefixes) await deletePrefix(counted.redis, prefix);
  await counted.redis.quit();
});

function gateOn(keys: readonly string[], options: Partial<RedisGateOptions> = {}) {
  const prefix = randomPrefix();
  prefixes.push(prefix);
  return createRedisGate({ redis: counted.redis, prefix, keyNamespace: prefix, keys: apiKeys(...keys), ratePerKey: 20, watchReserve: 0, ...options });
}

/** `loops` acquirers back to back for `ms`; returns each grant's slot time per key and the calls made. */
async function saturate(gate: ReturnType<typeof gateOn>, loops: number, ms: number) {
  const before = counted.calls.acquire;
  const controller = new AbortController();
  // Every loop's waiting acquire listens on it, as on the Harvester's signal (which lifts the limit too).
  setMaxListeners(0, controller.signal);
  const timer = setTimeout(() => controller.abort(), ms);
  const slots = new Map<string, number[]>();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (!controller.signal.aborted) {
        try {
          const grant = await gate.acquire({ signal: controller.signal });
          slots.set(grant.fingerprint, [...(slots.get(grant.fingerprint) ?? []), grant.slotAt]);
        } catch (error) {
          if (!controller.signal.aborted) throw error;
        }
      }
    }),
  );
  clearTimeout(timer);
  const grants = [...slots.values()].reduce((n, s) => n + s.length, 0);
  return { slots, grants, calls: counted.calls.acquire - before };
}

describe('RedisGate Lua calls per grant', () => {
  it('16 acquirers on one key at 20/s: the full rate for at most 3 acquire calls per grant', async () => {
    const gate = gateOn(['calls-one']);
    const { slots, grants, calls } = await saturate(gate, 16, 1500);
    // The line keeps the key's pace (a busy machine may start it late, which is not the gate's doing).
    expect(paceOf([...slots.values()].flat(), INTERVAL_MS)).toBeGreaterThanOrEqual(0.9);
    expect(grants).toBeGreaterThanOrEqual(0.8 * 20 * 1.5);
    expect(calls / grants).toBeLessThanOrEqual(3);
    // The gate's own count: the connection may count one more (an EVALSHA that met NOSCRIPT is sent again as EVAL).
    expect(gate.stats().grants).toBe(grants);
    expect(calls - gate.stats().acquireCalls).toBeGreaterThanOrEqual(0);
    expect(calls - gate.stats().acquireCalls).toBeLessThanOrEqual(1);
  });

  /** How far (ms) each ask of a saturated line at `rate` goes out from the nearest grant's send, past its first few. */
  async function askDistances(rate: number, ms: number): Promise<number[]> {
    const gate = gateOn([`calls-lead-${rate}`], { ratePerKey: rate });
    // When each acquire call goes out, and when each grant is handed to its caller (its send time).
    const asked: number[] = [];
    const sent: number[] = [];
    const send = counted.redis.sendCommand.bind(counted.redis);
    counted.redis.sendCommand = ((command: { name: string; args: unknown[] }, ...rest: unknown[]) => {
      if (command.name === 'evalsha' && String(command.args[0]) === ACQUIRE_SHA) asked.push(performance.now());
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as typeof counted.redis.sendCommand;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), ms);
    try {
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (!controller.signal.aborted) {
            await gate.acquire({ signal: controller.signal }).then(
              () => sent.push(performance.now()),
              (error: unknown) => {
                if (!controller.signal.aborted) throw error;
              },
            );
          }
        }),
      );
    } finally {
      clearTimeout(timer);
      counted.redis.sendCommand = send as typeof counted.redis.sendCommand;
    }
    return asked.slice(5).map((t) => Math.min(...sent.map((s) => Math.abs(s - t))));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  it('a saturated line asks for the next slot as the last grant goes out (10/s and faster): one wake-up for both, not two', async () => {
    // With half an interval of lead the asks went ~25 ms after a send at 20/s, ~51 ms at 10/s.
    for (const [rate, ms] of [
      [20, 1500],
      [10, 2200],
    ] as const) {
      const distances = await askDistances(rate, ms);
      expect(distances.length).toBeGreaterThan(12);
      // Same timer run: well under a ms apart (a lead 2.5 ms short of 10/s's interval read 2.4).
      expect(median(distances)).toBeLessThan(1.5);
    }
  });

  it('a key slower than 10 a second is asked half an interval ahead, as before (no grant held longer)', async () => {
    const interval = 1025 / 8;
    const distances = await askDistances(8, 2500);
    expect(distances.length).toBeGreaterThan(10);
    expect(median(distances)).toBeGreaterThan(interval / 2 - 10);
    expect(median(distances)).toBeLessThan(interval / 2 + 10);
  });

  it('100 acquirers on 10 keys at 20/s each: every key kept at 0.9 of its pace or better, at most 3 calls per grant', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `calls-many-${i}`);
    const gate = gateOn(keys);
    const { slots, grants, calls } = await saturate(gate, 100, 2000);
    for (const key of apiKeys(...keys)) {
      const own = slots.get(key.fingerprint) ?? [];
      expect(paceOf(own, INTERVAL_MS)).toBeGreaterThanOrEqual(0.9);
      expect(own.length).toBeGreaterThanOrEqual(0.8 * 20 * 2);
    }
    expect(calls / grants).toBeLessThanOrEqual(3);
  });
});

describe('RedisGate reports', () => {
  it('reports no clean answer on a key without strikes, but every 429/401/402/403 and clean answers while struck', async () => {
    const gate = gateOn(['report-key'], { ratePerKey: 1000 });
    const before = counted.calls.report;
    const clean = await gate.acquire();
    expect(clean.strikes).toBe(0);
    await gate.report(clean, { status: 200 });
    await gate.report(clean, { status: 404 });
    await gate.report(clean, { status: 503 });
    await gate.report(clean, { status: 0 });
    expect(counted.calls.report - before).toBe(0);
    await gate.report(clean, { status: 429 });
    expect(counted.calls.report - before).toBe(1);
    // The key has a strike now: the next grant says so, and its clean answer takes it away.
    const struck: RedisGrant = await gate.acquire();
    expect(struck.strikes).toBe(1);
    await gate.report(struck, { status: 200 });
    expect(counted.calls.report - before).toBe(2);
    expect((await gate.acquire()).strikes).toBe(0);
    // A grant from elsewhere (no strikes known) is reported as before.
    await gate.report({ key: 'report-key', fingerprint: struck.fingerprint }, { status: 200 });
    for (const status of [401, 402, 403]) await gate.report(struck, { status });
    expect(counted.calls.report - before).toBe(6);
    expect(gate.stats()).toMatchObject({ reportCalls: 6, reportsSkipped: 4 });
  });
});

describe('RedisGate waiting line', () => {
  it("refuses a job with no budget left without failing or delaying the waiters behind it", async () => {
    const gate = gateOn(['budget-line'], { ratePerKey: 10 });
    await gate.setBudget('spent', 0);
    await gate.setBudget('live', 10);
    await gate.acquire();
    const results = await Promise.allSettled([
      gate.acquire({ jobId: 'live' }),
      gate.acquire({ jobId: 'spent' }),
      gate.acquire({ jobId: 'live' }),
      gate.acquire({ jobId: 'live' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: ErrorCode.BUDGET_EXHAUSTED });
    // The refusal cost no slot: the three grants are back to back, one interval apart.
    const slots = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.slotAt] : []));
    expect(slots[2]! - slots[0]!).toBeLessThan(2 * (1025 / 10) + 5);
    expect(await gate.budgetRemaining('live')).toBe(7);
  });

  it("refuses a job whose budget Redis lost without failing the line behind it", async () => {
    const gate = gateOn(['lost-line'], { ratePerKey: 10, schedule: { budgetExpected: async (jobId) => jobId === 'gone' } });
    await gate.markReconciled();
    const results = await Promise.allSettled([gate.acquire({ jobId: 'a' }), gate.acquire({ jobId: 'gone' }), gate.acquire({ jobId: 'b' })]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: ErrorCode.LIMITER_STATE_LOST, missing: 'budget' });
  });

  it('takes an aborted waiter out of the line at once, and the line goes on', async () => {
    const gate = gateOn(['abort-line'], { ratePerKey: 5 });
    await gate.acquire();
    const controller = new AbortController();
    const first = gate.acquire();
    const aborted = gate.acquire({ signal: controller.signal });
    const last = gate.acquire();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const calls = gate.stats().acquireCalls;
    const started = performance.now();
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: ErrorCode.ABORTED });
    // At once: well before the 205 ms slot the line waits for.
    expect(performance.now() - started).toBeLessThan(100);
    expect(gate.stats().acquireCalls).toBe(calls);
    const [a, b] = await Promise.all([first, last]);
    expect(b.slotAt - a.slotAt).toBeLessThan(2 * (1025 / 5));
  });

  it('puts watches ahead of a long line of backfills, several watches in a row included', async () => {
    const gate = gateOn(['watch-line']);
    const controller = new AbortController();
    setMaxListeners(0, controller.signal);
    const backfillSlots: number[] = [];
    const loops = Array.from({ length: 64 }, async () => {
      while (!controller.signal.aborted) {
        await gate.acquire({ priority: 'backfill', signal: controller.signal }).then(
          (g) => backfillSlots.push(g.slotAt),
          (error: unknown) => {
            if (!controller.signal.aborted) throw error;
          },
        );
      }
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = performance.now();
      const watches = await Promise.all(Array.from({ length: 3 }, () => gate.acquire({ priority: 'watch' })));
      // Three slots at 20/s (51.25 ms apart) plus at most one backfill slot already booked ahead,
      // with room for a busy machine: behind the 64 backfills they would wait over 3 s.
      expect(performance.now() - started).toBeLessThan(1000);
      const first = Math.min(...watches.map((w) => w.slotAt));
      const lastWatch = Math.max(...watches.map((w) => w.slotAt));
      expect(backfillSlots.filter((t) => t > first && t < lastWatch)).toEqual([]);
      expect(backfillSlots.length).toBeGreaterThan(3);
    } finally {
      controller.abort();
      await Promise.all(loops);
    }
  });
});
