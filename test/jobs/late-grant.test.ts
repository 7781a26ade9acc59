/**
 * A grant the process could not use in time (it stalled between grant and send) is given back,
 * not sent: sent late, a request can share one of the service's one-second windows with `rate`
 * more of its key, and the service answers 429 (seen in the three-process many-keys bench: sends
 * up to 157 ms late while three workers started at once, 429s one second later). Real limiter on
 * real Redis, real HTTP to the simulator; the stall is a busy loop right after the grant.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { LateGrantError } from '../../src/api-client/errors.ts';
import { AbortedError } from '../../src/errors.ts';
import type { AttemptRecord } from '../../src/api-client/executor.ts';
import { localNow, type AcquireOptions, type Grant, type RequestGate } from '../../src/api-client/gate.ts';
import { createHttpClient } from '../../src/api-client/http.ts';
import { MAX_LATE_GRANTS } from '../../src/api-client/retry.ts';
import type { RedisGate } from '../../src/jobs/limiter/redis-gate.ts';
import { RateWaitTracker } from '../../src/jobs/rate-wait.ts';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.ts';
import { apiKeys, limiterGate, useLimiterRedis } from './fixtures/limiter-redis.ts';

const limiter = useLimiterRedis();
const [KEY] = apiKeys('late-grant-key');

/**
 * The limiter's gate as the worker's client has it (wrapped by the rate-wait tracker, see
 * openServices), with the process stalling (event loop blocked) past the send-by time of the
 * first `stalls` grants.
 */
function stallingGate(gate: RedisGate, stalls: number): RequestGate {
  const wrapped = new RateWaitTracker(limiter.redis, limiter.prefix).wrap(gate);
  let left = stalls;
  return {
    async acquire(options?: AcquireOptions) {
      const grant = await wrapped.acquire(options);
      if (left-- > 0) {
        while (localNow() <= grant.sendBy! + 2) {
          // A stall: nothing else runs, as in a long GC pause or a compile.
        }
      }
      return grant;
    },
    report: (grant, outcome) => wrapped.report(grant, outcome),
    giveBack: (grant, options) => wrapped.giveBack(grant, options),
  };
}

describe('late grants', () => {
  let sim: RunningSimulator;
  let gate: RedisGate;
  const attempts: AttemptRecord[] = [];
  const givenBack: string[] = [];

  beforeEach(async () => {
    sim = await startSimulator({ port: 0, keys: [KEY!.key], seed: 7, scale: 'small' });
    gate = limiterGate(limiter, [KEY!], { onGiveBack: (fingerprint) => givenBack.push(fingerprint) });
    await gate.setQuota(KEY!.fingerprint, 100);
    attempts.length = 0;
    givenBack.length = 0;
  });
  afterEach(async () => {
    await sim.close();
  });

  const clientWith = (g: RequestGate): ApiClient => new ApiClient({ baseUrl: sim.url, gate: g, timeoutMs: 5000, onAttempt: (a) => attempts.push(a) });
  const handle = (): string => sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted)!.username;

  it('the HTTP client sends nothing once the send-by time has passed', async () => {
    const http = createHttpClient({ baseUrl: sim.url });
    try {
      const request = { method: 'GET' as const, path: '/v3/info', query: { username: handle() }, key: KEY!.key, keyFingerprint: KEY!.fingerprint, endpoint: 'GET /v3/info' };
      const error = await http.send({ ...request, sendBy: localNow() - 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LateGrantError);
      expect(sim.control.requestLog()).toHaveLength(0);
      // In time, the same request goes out.
      expect((await http.send({ ...request, sendBy: localNow() + 60_000 })).status).toBe(200);
      expect(sim.control.requestLog()).toHaveLength(1);
    } finally {
      await http.close();
    }
  });

  it('a request that waited for a connection past its send-by time is not sent', async () => {
    await sim.close();
    sim = await startSimulator({ port: 0, keys: [KEY!.key], seed: 7, scale: 'small', latencyMs: [300, 300] });
    const http = createHttpClient({ baseUrl: sim.url, connections: 1 });
    try {
      const request = { method: 'GET' as const, path: '/v3/info', query: { username: handle() }, key: KEY!.key, keyFingerprint: KEY!.fingerprint, endpoint: 'GET /v3/info' };
      // The one connection is busy for 300 ms; the second request's send-by passes while it waits.
      const first = http.send(request);
      const second = http.send({ ...request, sendBy: localNow() + 100 }).catch((e: unknown) => e);
      expect((await first).status).toBe(200);
      expect(await second).toBeInstanceOf(LateGrantError);
      expect(sim.control.requestLog()).toHaveLength(1);
    } finally {
      await http.close();
    }
  });

  it('a late grant is given back (quota and budget) and the call goes out on the next one, once', async () => {
    await gate.setBudget('job-1', 10);
    const client = clientWith(stallingGate(gate, 1));
    try {
      const user = await client.info({ username: handle() }, { jobId: 'job-1' });
      expect(user.username).toBe(handle());
    } finally {
      await client.close();
    }
    expect(sim.control.requestLog()).toHaveLength(1);
    // One attempt, numbered 1: the late grant sent nothing and is not an attempt.
    expect(attempts.map((a) => [a.status, a.attempt])).toEqual([[200, 1]]);
    expect(gate.stats()).toMatchObject({ grants: 2, givenBack: 1 });
    expect(givenBack).toEqual([KEY!.fingerprint]);
    // Two grants taken, one given back: one unit of each spent.
    expect((await gate.keyStates())[0]?.remaining).toBe(99);
    expect(await gate.budgetRemaining('job-1')).toBe(9);
  });

  it('a grant that arrives after its call was aborted is given back, not sent (a dropped fetch-ahead, a stopping worker)', async () => {
    await gate.setBudget('job-1', 10);
    const controller = new AbortController();
    const wrapped = new RateWaitTracker(limiter.redis, limiter.prefix).wrap(gate);
    // The abort comes while the limiter's answer is on its way: the wait line hands the grant out
    // all the same (quota and budget already spent), so the call must not spend it.
    const abortingGate: RequestGate = {
      async acquire(options?: AcquireOptions) {
        const grant = await wrapped.acquire(options);
        controller.abort();
        return grant;
      },
      report: (grant, outcome) => wrapped.report(grant, outcome),
      giveBack: (grant, options) => wrapped.giveBack(grant, options),
    };
    const client = clientWith(abortingGate);
    try {
      const error = await client.info({ username: handle() }, { jobId: 'job-1', signal: controller.signal }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortedError);
      expect((error as AbortedError).sent).toBe(false);
    } finally {
      await client.close();
    }
    expect(sim.control.requestLog()).toHaveLength(0);
    expect(attempts).toHaveLength(0);
    expect(gate.stats()).toMatchObject({ grants: 1, givenBack: 1 });
    expect((await gate.keyStates())[0]?.remaining).toBe(100);
    expect(await gate.budgetRemaining('job-1')).toBe(10);
  });

  it(`after ${MAX_LATE_GRANTS} late grants in a row the next is sent however late`, async () => {
    const client = clientWith(stallingGate(gate, 100));
    try {
      await client.info({ username: handle() });
    } finally {
      await client.close();
    }
    expect(sim.control.requestLog()).toHaveLength(1);
    expect(attempts).toHaveLength(1);
    expect(gate.stats()).toMatchObject({ grants: MAX_LATE_GRANTS + 1, givenBack: MAX_LATE_GRANTS });
    expect((await gate.keyStates())[0]?.remaining).toBe(99);
  });

  it('grants used at once are not given back, and their send-by time is their slot plus the headroom', async () => {
    const client = clientWith(new RateWaitTracker(limiter.redis, limiter.prefix).wrap(gate));
    // A loaded machine (CI runs many files at once) can stall this process past a grant's 25 ms
    // of headroom, and then the grant is rightly given back: every round sends its 5 requests and
    // spends a grant for each, and at least one of three rounds gives nothing back.
    const clean: boolean[] = [];
    try {
      for (let round = 0; round < 3 && !clean.includes(true); round++) {
        const [before, sent] = [gate.stats(), sim.control.requestLog().length];
        for (let i = 0; i < 5; i++) await client.info({ username: handle() });
        const after = gate.stats();
        expect(sim.control.requestLog().length - sent).toBe(5);
        expect(after.grants - before.grants - (after.givenBack - before.givenBack)).toBe(5);
        clean.push(after.givenBack === before.givenBack);
      }
    } finally {
      await client.close();
    }
    expect(clean).toContain(true);
    // One host: the clocks agree to within a few ms, so send-by ≈ slot + 25 ms of headroom.
    const grant = await gate.acquire();
    expect(grant.sendBy - grant.slotAt).toBeGreaterThanOrEqual(20);
    expect(grant.sendBy - grant.slotAt).toBeLessThanOrEqual(45);
  });

  it('a spent quota is not raised by a give-back (the service may have parked the key since)', async () => {
    const grant: Grant = await gate.acquire();
    await gate.setQuota(KEY!.fingerprint, 0);
    await gate.giveBack(grant, {});
    expect((await gate.keyStates())[0]?.remaining).toBe(0);
  });
});
