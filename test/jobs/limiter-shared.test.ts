/**
 * The limiter's stricter rules (issue 11, items 1 and 6): it fails closed when Redis lost the
 * schedule, its per-key state is one namespace whatever the deployment's prefix, and backfills
 * keep the watch reserve while a key's quota is unknown.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.ts';
import { QuotaExhaustedError } from '../../src/jobs/limiter/errors.ts';
import { limiterLayout } from '../../src/jobs/limiter/key-layout.ts';
import { DEFAULT_KEY_NAMESPACE } from '../../src/jobs/limiter/namespace.ts';
import { createRedisGate, type RedisGateOptions, type RedisGrant, type Usage } from '../../src/jobs/limiter/redis-gate.ts';
import { LimiterStateLostError } from '../../src/jobs/limiter/state-lost.ts';
import { apiKeys, deletePrefix, maxInSpan, randomPrefix, useLimiterRedis } from './fixtures/limiter-redis.ts';

const limiter = useLimiterRedis();

const [ONE] = apiKeys('shared-test-key');

function gateWith(options: Partial<RedisGateOptions> = {}) {
  return createRedisGate({ redis: limiter.redis, prefix: limiter.prefix, keyNamespace: limiter.prefix, keys: [ONE!], ratePerKey: 1000, watchReserve: 0, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('RedisGate fails closed when Redis lost the schedule', () => {
  it('refuses job grants until a reconcile wrote the epoch, and tells its listeners', async () => {
    const gate = gateWith({ schedule: { budgetExpected: async () => false } });
    const heard: LimiterStateLostError[] = [];
    gate.onStateLost((e) => heard.push(e));
    const error = await rejection(gate.acquire({ jobId: '7' }));
    expect(error).toBeInstanceOf(LimiterStateLostError);
    expect(error).toMatchObject({ code: ErrorCode.LIMITER_STATE_LOST, missing: 'epoch', jobId: '7' });
    expect(heard).toHaveLength(1);
    // Requests outside any job (usage calls, estimates) spend no budget and are not held back.
    expect((await gate.acquire()).fingerprint).toBe(ONE!.fingerprint);
    await gate.markReconciled();
    expect(await gate.isReconciled()).toBe(true);
    expect((await gate.acquire({ jobId: '7' })).fingerprint).toBe(ONE!.fingerprint);
  });

  it('refuses a job that Postgres says has a budget while Redis has none, and spends it once restored', async () => {
    const asked: string[] = [];
    const gate = gateWith({
      schedule: {
        budgetExpected: async (jobId) => {
          asked.push(jobId);
          return jobId === '8';
        },
      },
    });
    await gate.markReconciled();
    const error = await rejection(gate.acquire({ jobId: '8' }));
    expect(error).toMatchObject({ code: ErrorCode.LIMITER_STATE_LOST, missing: 'budget' });
    // A job without a budget runs as before.
    expect((await gate.acquire({ jobId: '9' })).fingerprint).toBe(ONE!.fingerprint);
    await gate.setBudget('8', 2);
    await gate.acquire({ jobId: '8' });
    await gate.acquire({ jobId: '8' });
    expect(await rejection(gate.acquire({ jobId: '8' }))).toMatchObject({ code: ErrorCode.BUDGET_EXHAUSTED });
    // Whether a job has a budget is asked once per job (max_requests never changes).
    expect(asked.sort()).toEqual(['8', '9']);
  });

  it('refuses again after every key of the deployment was deleted on a live connection', async () => {
    const gate = gateWith({ schedule: { budgetExpected: async () => true } });
    await gate.markReconciled();
    await gate.setBudget('5', 100);
    await gate.acquire({ jobId: '5' });
    await deletePrefix(limiter.redis, limiter.prefix);
    expect(await gate.isReconciled()).toBe(false);
    expect(await rejection(gate.acquire({ jobId: '5' }))).toMatchObject({ missing: 'epoch' });
  });
});

describe('RedisGate key state is shared across deployment prefixes', () => {
  const key = `shared-${randomBytes(4).toString('hex')}`;
  const [K] = apiKeys(key);
  afterEach(async () => {
    const names = limiterLayout('unused', DEFAULT_KEY_NAMESPACE).key(K!.fingerprint);
    await limiter.redis.del(names.state, names.quota);
  });

  it('two prefixes using one key together stay within its rate in every one-second span', async () => {
    const rate = 10;
    const gates = [randomPrefix(), randomPrefix()].map((p) => createRedisGate({ redis: limiter.redis, prefix: p, keys: [K!], ratePerKey: rate, watchReserve: 0 }));
    const slots: number[] = [];
    const until = Date.now() + 2200;
    const loop = async (gate: (typeof gates)[number]) => {
      while (Date.now() < until) slots.push((await gate.acquire()).slotAt);
    };
    await Promise.all(gates.flatMap((g) => [loop(g), loop(g)]));
    // Apart, each prefix would take `rate` a second on its own: twice the key's rate.
    expect(slots.length).toBeGreaterThanOrEqual(2 * rate - 2);
    expect(maxInSpan(slots, 1000)).toBeLessThanOrEqual(rate);
  });
});

describe('RedisGate keeps the watch reserve while the quota is unknown', () => {
  it('does not grant a backfill on an unknown quota without asking the service first', async () => {
    const gate = gateWith({ watchReserve: 3 });
    const error = await rejection(gate.acquire({ priority: 'backfill' }));
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    expect(error).toMatchObject({ unknownQuota: 'no usage source to ask' });
    expect((await gate.keyStates())[0]).toMatchObject({ granted: 0, remaining: null });
    // Watches may use the reserve, so they are granted while it is unknown.
    expect((await gate.acquire({ priority: 'watch' })).fingerprint).toBe(ONE!.fingerprint);
  });

  it('syncs the quota once for many waiting backfills, then grants them above the reserve', async () => {
    const gate = gateWith({ watchReserve: 3 });
    const calls: RedisGrant[] = [];
    gate.setUsageSource(async (grant): Promise<Usage> => {
      calls.push(grant as RedisGrant);
      await new Promise((r) => setTimeout(r, 30));
      return { remaining: 6, validUntil: null };
    });
    const grants = await Promise.all(Array.from({ length: 2 }, () => gate.acquire({ priority: 'backfill' })));
    expect(grants).toHaveLength(2);
    expect(calls).toHaveLength(1);
    // 6 reported, minus the usage call's own grant, minus two backfills = 3: the reserve.
    expect((await gate.keyStates())[0]).toMatchObject({ remaining: 3 });
    expect(await rejection(gate.acquire({ priority: 'backfill' }))).toBeInstanceOf(QuotaExhaustedError);
    expect((await gate.acquire({ priority: 'watch' })).fingerprint).toBe(ONE!.fingerprint);
  });

  it('parks the backfill when the usage call fails, instead of eating into the reserve', async () => {
    const gate = gateWith({ watchReserve: 3 });
    let calls = 0;
    gate.setUsageSource(async () => {
      calls++;
      throw new Error('usage endpoint down');
    });
    const error = await rejection(gate.acquire({ priority: 'backfill' }));
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    expect((error as QuotaExhaustedError).retryAt?.getTime()).toBeGreaterThan(Date.now());
    // The job's note names why the quota is unknown: the key's own failed sync.
    expect(error).toMatchObject({ unknownQuota: 'usage endpoint down' });
    // A failed sync is not repeated on every acquire, and the refusal while it backs off still
    // names it.
    expect(await rejection(gate.acquire({ priority: 'backfill' }))).toMatchObject({ unknownQuota: 'usage endpoint down' });
    expect(calls).toBe(1);
  });
});
