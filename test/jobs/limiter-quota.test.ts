import { describe, expect, it } from 'vitest';
import { NotFoundError, TransientError } from '../../src/api-client/errors.ts';
import { ErrorCode } from '../../src/errors.ts';
import { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from '../../src/jobs/limiter/errors.ts';
import { limiterLayout } from '../../src/jobs/limiter/key-layout.ts';
import { createRedisGate, type RedisGateOptions } from '../../src/jobs/limiter/redis-gate.ts';
import { apiKeys, redisNowMs, useLimiterRedis } from './fixtures/limiter-redis.ts';

const limiter = useLimiterRedis();

const [ONE] = apiKeys('quota-key');
const [A, B] = apiKeys('key-a', 'key-b');

/** A fast gate so quota tests are not slowed by the rate. */
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

const DEFAULT_RECHECK = 10 * 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RedisGate quota', () => {
  it('decrements the quota per grant and throws QuotaExhaustedError once it is spent', async () => {
    const gate = gateWith({ recheckMs: 60_000 });
    await gate.setQuota(ONE!.fingerprint, 3);
    for (let i = 0; i < 3; i++) expect((await gate.acquire({ priority: 'watch' })).key).toBe('quota-key');
    const before = await redisNowMs(limiter.redis);
    const error = await rejection(gate.acquire({ priority: 'watch' }));
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    expect((error as QuotaExhaustedError).code).toBe(ErrorCode.KEYS_EXHAUSTED);
    const retryAt = (error as QuotaExhaustedError).retryAt?.getTime() ?? 0;
    expect(retryAt).toBeGreaterThan(before + 55_000);
    const [state] = await gate.keyStates();
    expect(state).toMatchObject({ remaining: 0, granted: 3, reason: 'quota', disabled: false });
  });

  it('stops backfills at the watch reserve while watches still get grants', async () => {
    const gate = gateWith({ watchReserve: 3 });
    await gate.setQuota(ONE!.fingerprint, 5);
    await gate.acquire({ priority: 'backfill' });
    await gate.acquire({ priority: 'backfill' });
    const before = Date.now();
    const error = await rejection(gate.acquire({ priority: 'backfill' }));
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    // Backfills try again at the recheck (a top-up and a quota sync may lift the floor), never
    // at the end of the billing period.
    const retryAt = (error as QuotaExhaustedError).retryAt!.getTime();
    expect(retryAt).toBeGreaterThanOrEqual(before + DEFAULT_RECHECK - 1000);
    expect(retryAt).toBeLessThanOrEqual(Date.now() + DEFAULT_RECHECK + 1000);
    for (let i = 0; i < 3; i++) await gate.acquire({ priority: 'watch' });
    expect(await rejection(gate.acquire({ priority: 'watch' }))).toBeInstanceOf(QuotaExhaustedError);
    expect((await gate.keyStates())[0]?.remaining).toBe(0);
  });

  it('gives a job exactly its budget under concurrency, then BudgetExhaustedError', async () => {
    const gate = gateWith();
    expect(await gate.setBudget('job-7', 7)).toBe(7);
    let granted = 0;
    const errors: unknown[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (;;) {
          try {
            await gate.acquire({ jobId: 'job-7' });
            granted++;
          } catch (error) {
            errors.push(error);
            return;
          }
        }
      }),
    );
    expect(granted).toBe(7);
    expect(errors).toHaveLength(10);
    for (const error of errors) {
      expect(error).toBeInstanceOf(BudgetExhaustedError);
      expect((error as BudgetExhaustedError).code).toBe(ErrorCode.BUDGET_EXHAUSTED);
    }
    expect(await gate.budgetRemaining('job-7')).toBe(0);
    // A re-run of the job must not refill its budget.
    expect(await gate.setBudget('job-7', 7)).toBe(0);
    expect(await gate.budgetRemaining('other-job')).toBeNull();
    await gate.acquire({ jobId: 'other-job' });
  });

  it('a budget Redis restored from an older snapshot is lowered to what Postgres says is left, never raised', async () => {
    const gate = gateWith();
    await gate.setBudget('job-9', 10);
    for (let i = 0; i < 8; i++) await gate.acquire({ jobId: 'job-9' });
    expect(await gate.budgetRemaining('job-9')).toBe(2);
    // Redis comes back from a snapshot taken before those 8 grants (the epoch survives with it).
    await limiter.redis.set(limiterLayout(limiter.prefix, limiter.prefix).budget('job-9'), '10');
    // What a reconcile passes: max_requests − requests_spent from Postgres.
    expect(await gate.setBudget('job-9', 2)).toBe(2);
    expect(await gate.setBudget('job-9', 5)).toBe(2);
    await gate.acquire({ jobId: 'job-9' });
    await gate.acquire({ jobId: 'job-9' });
    expect(await rejection(gate.acquire({ jobId: 'job-9' }))).toBeInstanceOf(BudgetExhaustedError);
  });

  it('seeds the quota from a usage call made through the gate, minus grants issued meanwhile', async () => {
    const gate = gateWith({ recheckMs: 7_200_000 });
    expect((await gate.keyStates())[0]?.remaining).toBeNull();
    const validUntil = new Date(Date.now() + 3_600_000);
    const results = await gate.syncQuota(async (grant) => {
      expect(grant.key).toBe('quota-key');
      await gate.acquire();
      await gate.acquire();
      return { remaining: 100, validUntil };
    });
    // The usage call and the two grants issued while it ran are all subtracted.
    expect(results).toEqual([{ fingerprint: ONE!.fingerprint, remaining: 97, validUntil, error: null }]);
    expect((await gate.keyStates())[0]).toMatchObject({ remaining: 97, granted: 3 });
    // A 403 now parks the key until the known validUntil, which comes before the recheck.
    const grant = await gate.acquire();
    await gate.report(grant, { status: 403 });
    const error = await rejection(gate.acquire({ priority: 'watch' }));
    expect((error as QuotaExhaustedError).retryAt?.getTime()).toBe(validUntil.getTime());
  });

  it('a usage call that fails with a 5xx is tried again on a grant of its own; a 404 is not', async () => {
    const gate = gateWith();
    const ctx = { endpoint: 'GET /v3/key-usage-info', keyFingerprint: ONE!.fingerprint };
    let calls = 0;
    const [synced] = await gate.syncQuota(async () => {
      if (++calls === 1) throw new TransientError({ ...ctx, status: 502 });
      return { remaining: 300, validUntil: null };
    });
    // Two tries, each on a grant of its own; the answer counts from the second's (300 less it).
    expect([calls, synced]).toEqual([2, expect.objectContaining({ remaining: 299, error: null })]);
    expect((await gate.keyStates())[0]).toMatchObject({ granted: 2 });
    calls = 0;
    const [refused] = await gate.syncQuota(async () => {
      calls++;
      throw new NotFoundError({ ...ctx, status: 404 });
    });
    expect(calls).toBe(1);
    expect(refused?.error).toBeInstanceOf(NotFoundError);
  });

  it('a quota sync asks through a quota park, and a topped-up account is usable at once', async () => {
    const gate = gateWith({ recheckMs: DEFAULT_RECHECK });
    await gate.setQuota(ONE!.fingerprint, 1);
    await gate.acquire({ priority: 'watch' });
    // The last unit spent: parked until the recheck, ten minutes away.
    expect(await rejection(gate.acquire({ priority: 'watch' }))).toBeInstanceOf(QuotaExhaustedError);
    expect((await gate.keyStates())[0]).toMatchObject({ remaining: 0, reason: 'quota' });
    // The operator tops the account up and runs `harvest quota`.
    const [synced] = await gate.syncQuota(() => Promise.resolve({ remaining: 500, validUntil: null }));
    // 500 as the service answered, less the usage call's own unit.
    expect(synced).toMatchObject({ remaining: 499, error: null });
    expect((await gate.keyStates())[0]).toMatchObject({ remaining: 499, reason: null });
    expect((await gate.acquire({ priority: 'watch' })).key).toBe('quota-key');
  });

  it('a sync if due asks the service once an interval whoever asks, not for an idle key, and always for an unknown or spent quota', async () => {
    const gate = gateWith();
    let asked = 0;
    const usage = async () => {
      asked++;
      return { remaining: 100, validUntil: null };
    };
    const ifDue = { intervalMs: 300, idleMs: 1500 };
    await gate.syncQuota(usage, { ifDue });
    expect(asked).toBe(1); // unknown: asked
    // Another process (another gate on the same keys) within the interval: not asked again.
    await gateWith().syncQuota(usage, { ifDue });
    expect(asked).toBe(1);
    await sleep(400);
    // Past the interval, but nothing granted since the last sync (its own grant aside): idle.
    await gate.syncQuota(usage, { ifDue });
    expect(asked).toBe(1);
    // A grant since: asked.
    await gate.acquire();
    await gate.syncQuota(usage, { ifDue });
    expect(asked).toBe(2);
    // Idle past idleMs: asked again (use elsewhere, a new billing period).
    await sleep(1600);
    await gate.syncQuota(usage, { ifDue });
    expect(asked).toBe(3);
    // A spent quota is asked for at once (a top-up shows at the next start); without ifDue, always.
    await gate.setQuota(ONE!.fingerprint, 0);
    await gate.syncQuota(usage, { ifDue });
    expect(asked).toBe(4);
    await gate.syncQuota(usage);
    expect(asked).toBe(5);
  });

  it('a sync if due asks again once the period the service gave has ended, though nothing was granted since (backfills held at the watch reserve)', async () => {
    const gate = gateWith({ watchReserve: 3 });
    let asked = 0;
    const ends = new Date(Date.now() + 400);
    const usage = async () => {
      asked++;
      // The first answer: 4 left until the period ends; then the renewed plan.
      return asked === 1 ? { remaining: 4, validUntil: ends } : { remaining: 1000, validUntil: new Date(Date.now() + 30 * 86_400_000) };
    };
    const ifDue = { intervalMs: 100, idleMs: 3_600_000 };
    await gate.syncQuota(usage, { ifDue });
    // At the reserve (4 less the sync's own unit): backfills are refused, nothing is granted.
    expect(await rejection(gate.acquire({ priority: 'backfill' }))).toBeInstanceOf(QuotaExhaustedError);
    await sleep(200);
    await gate.syncQuota(usage, { ifDue });
    expect(asked).toBe(1); // idle, and the period runs on
    await sleep(300);
    await gate.syncQuota(usage, { ifDue });
    expect(asked).toBe(2); // the period ended: asked, and backfills go on
    expect((await gate.acquire({ priority: 'backfill' })).key).toBe('quota-key');
  });

  it('a sync whose key state was lost while the usage call was out does not add the lost grant history to the quota', async () => {
    const gate = gateWith();
    for (let i = 0; i < 5; i++) await gate.acquire();
    const layout = limiterLayout(limiter.prefix, limiter.prefix);
    const results = await gate.syncQuota(async () => {
      // Redis flushed (or failed over to an empty replica) meanwhile; one grant after it.
      await limiter.redis.del(layout.key(ONE!.fingerprint).state, layout.key(ONE!.fingerprint).quota);
      await gate.acquire().catch(() => undefined);
      return { remaining: 150, validUntil: null };
    });
    // Before: 150 - (0 - 6) = 156, the key's whole grant history added back. The grants since
    // the loss may or may not be in the answer: subtracted.
    expect(results[0]?.remaining).toBeLessThanOrEqual(150);
    expect((await gate.keyStates())[0]?.remaining).toBeLessThanOrEqual(150);
  });

  it('a waiting watch registers for about two seconds, not half an hour (the TTL is in ms)', async () => {
    const gate = gateWith({ ratePerKey: 1 });
    await gate.syncQuota(async () => ({ remaining: 100, validUntil: null }));
    await gate.acquire({ priority: 'watch' });
    const waiting = gate.acquire({ priority: 'watch' });
    const name = limiterLayout(limiter.prefix, limiter.prefix).watchWaiting;
    let ttl = -2;
    for (let i = 0; i < 50 && ttl < 0; i++) {
      ttl = await limiter.redis.pttl(name);
      if (ttl < 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2_000);
    await waiting;
  });

  it('never parks a key for longer than the recheck: an account can be topped up at any time', async () => {
    const gate = gateWith({ recheckMs: 60_000 });
    const validUntil = new Date(Date.now() + 30 * 24 * 3_600_000);
    await gate.syncQuota(async () => ({ remaining: 100, validUntil }));
    const grant = await gate.acquire();
    await gate.report(grant, { status: 403 });
    const error = await rejection(gate.acquire({ priority: 'watch' }));
    const retryAt = (error as QuotaExhaustedError).retryAt!.getTime();
    expect(retryAt).toBeLessThan(Date.now() + 61_000);
    expect(retryAt).toBeGreaterThan(Date.now() + 58_000);
  });
});

describe('RedisGate reports', () => {
  it('cools a key after 429 for a full second from now plus headroom, not to the next whole second', async () => {
    const gate = gateWith({ headroomMs: 25 });
    const grant = await gate.acquire();
    const before = await redisNowMs(limiter.redis);
    await gate.report(grant, { status: 429 });
    const next = await gate.acquire();
    // The next whole second plus 25 ms is at most before + 1025 and almost always sooner.
    expect(next.slotAt).toBeGreaterThanOrEqual(before + 1025);
    expect(next.slotAt).toBeLessThan(before + 1025 + 200);
    expect((await gate.keyStates())[0]).toMatchObject({ rateLimited: 1, parkedUntil: null, disabled: false });
  });

  it('widens the headroom while 429s keep coming, up to the cap, and narrows it after clean answers', async () => {
    const gate = gateWith({ headroomMs: 25, headroomCapMs: 100 });
    const coolAfter429 = async (): Promise<number> => {
      const grant = await gate.acquire();
      const before = await redisNowMs(limiter.redis);
      await gate.report(grant, { status: 429 });
      const stateKey = limiterLayout(limiter.prefix, limiter.prefix).key(ONE!.fingerprint).state;
      const [state] = await limiter.redis.hmget(stateKey, 'coolUntil');
      await limiter.redis.hdel(stateKey, 'coolUntil', 'tat');
      return Number(state) / 1000 - before;
    };
    const cools: number[] = [];
    for (let i = 0; i < 4; i++) cools.push(await coolAfter429());
    // 25, 50, 100, then capped at 100 ms past the full second (a few ms for the round trip).
    expect(cools[0]).toBeGreaterThanOrEqual(1025);
    expect(cools[1]).toBeGreaterThanOrEqual(1050);
    expect(cools[2]).toBeGreaterThanOrEqual(1100);
    expect(cools[3]).toBeGreaterThanOrEqual(1100);
    expect(cools[3]).toBeLessThan(1150);
    // While struck, the key's grants are spaced by the wider headroom too: (1000 + 100) / 1000 ms.
    const a = await gate.acquire();
    const b = await gate.acquire();
    expect(b.slotAt - a.slotAt).toBeGreaterThanOrEqual(1.1 - 0.001);
    // Clean answers take the strikes away one by one: back to 25 ms after enough of them.
    for (let i = 0; i < 3; i++) await gate.report(await gate.acquire(), { status: 200 });
    expect(await coolAfter429()).toBeLessThan(1050);
  });

  it('parks a key on 403 (grants move to the other key) and rechecks it later', async () => {
    const gate = createRedisGate({ redis: limiter.redis, prefix: limiter.prefix, keyNamespace: limiter.prefix, keys: [A!, B!], ratePerKey: 1000, watchReserve: 0, recheckMs: 300 });
    await gate.report({ key: A!.key, fingerprint: A!.fingerprint }, { status: 403 });
    for (let i = 0; i < 5; i++) expect((await gate.acquire()).fingerprint).toBe(B!.fingerprint);
    const states = await gate.keyStates();
    expect(states[0]).toMatchObject({ fingerprint: A!.fingerprint, remaining: 0, reason: 'quota', disabled: false });
    expect(states[0]?.parkedUntil).toBeInstanceOf(Date);
    await gate.report({ key: B!.key, fingerprint: B!.fingerprint }, { status: 402 });
    const error = await rejection(gate.acquire());
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    const retryAt = (error as QuotaExhaustedError).retryAt?.getTime() ?? 0;
    expect(retryAt).toBe(states[0]?.parkedUntil?.getTime());
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, retryAt - Date.now()) + 50));
    // The park ended in a recheck: the key grants again with its quota unknown.
    expect((await gate.acquire()).fingerprint).toBe(A!.fingerprint);
    expect((await gate.keyStates())[0]).toMatchObject({ remaining: null, parkedUntil: null });
  });

  it("a 403 keeps the quota counter's expiry: a key retired after running out leaves nothing for ever", async () => {
    const gate = gateWith();
    await gate.report(await gate.acquire(), { status: 403 });
    const quotaKey = limiterLayout(limiter.prefix, limiter.prefix).key(ONE!.fingerprint).quota;
    expect(await limiter.redis.get(quotaKey)).toBe('0');
    // The key's state expires a day after its last grant; the counter with it (it was -1: no TTL).
    const ttl = await limiter.redis.pttl(quotaKey);
    expect(ttl).toBeGreaterThan(23 * 3_600_000);
    expect(ttl).toBeLessThanOrEqual(24 * 3_600_000);
  });

  it('disables a key on 401 until an operator unparks it', async () => {
    const gate = gateWith();
    await gate.report(await gate.acquire(), { status: 401 });
    expect((await gate.keyStates())[0]).toMatchObject({ disabled: true, reason: 'auth', parkedUntil: null });
    // With every key refused, waiting cannot help: the job must fail (401), not park for quota.
    const error = await rejection(gate.acquire({ priority: 'watch' }));
    expect(error).toBeInstanceOf(KeysRefusedError);
    expect((error as KeysRefusedError).code).toBe(ErrorCode.KEYS_REFUSED);
    expect((error as Error).message).toContain(ONE!.fingerprint);
    await gate.unparkKey(ONE!.fingerprint);
    expect((await gate.acquire()).key).toBe('quota-key');
    expect((await gate.keyStates())[0]).toMatchObject({ disabled: false, reason: null });
  });

  it('honours an abort signal while waiting, and an aborted watch stops holding backfills back', async () => {
    const gate = gateWith({ ratePerKey: 1 });
    await gate.acquire();
    const pre = new AbortController();
    pre.abort();
    expect((await rejection(gate.acquire({ signal: pre.signal }))) as Error).toMatchObject({ code: ErrorCode.ABORTED });
    const started = performance.now();
    const error = await rejection(gate.acquire({ priority: 'watch', signal: AbortSignal.timeout(100) }));
    expect(error).toMatchObject({ code: ErrorCode.ABORTED });
    expect(performance.now() - started).toBeLessThan(300);
    expect(await limiter.redis.zcard(limiterLayout(limiter.prefix, limiter.prefix).watchWaiting)).toBe(0);
  });
});
