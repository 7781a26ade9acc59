/** Each error status from the simulator, and the retry layer's behaviour on 429 and 500. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { AuthError, BadRequestError, NotFoundError, QuotaError, TransientError } from '../../src/api-client/errors.ts';
import type { AttemptRecord } from '../../src/api-client/executor.ts';
import { createStaticGate } from '../../src/api-client/static-gate.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { startHarness, SIM_KEY, type SimHarness } from './sim-setup.ts';

let h: SimHarness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

function clientFor(key: string, onAttempt?: (a: AttemptRecord) => void, url = h.sim.url): ApiClient {
  return new ApiClient({
    baseUrl: url,
    gate: createStaticGate([{ key, fingerprint: keyFingerprint(key) }]),
    retry: { transientDelayMinMs: 5, transientDelayMaxMs: 10 },
    ...(onAttempt ? { onAttempt } : {}),
  });
}

describe('non-retryable statuses', () => {
  it('400 carries the service message and is sent once', async () => {
    const before = h.attempts.length;
    const error = await h.client.raw('POST', '/v3/search-tweets', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).serviceMessage).toMatch(/query/);
    expect((error as BadRequestError).endpoint).toBe('POST /v3/search-tweets');
    expect(h.attempts.length - before).toBe(1);
  });

  it('401 for an unknown key, carrying its fingerprint', async () => {
    const wrong = clientFor('not-a-valid-key');
    try {
      const error = await wrong.keyUsageInfo().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthError);
      expect((error as AuthError).keyFingerprint).toBe(keyFingerprint('not-a-valid-key'));
    } finally {
      await wrong.close();
    }
  });

  it('403 once the quota is spent', async () => {
    h.sim.control.setQuota(SIM_KEY, 0);
    try {
      const error = await h.client.info({ username: h.fx.author.username }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).status).toBe(403);
    } finally {
      h.sim.control.setQuota(SIM_KEY, 100_000);
    }
  });

  it('404 for a protected account', async () => {
    const error = await h.client.info({ userId: h.fx.protectedUser.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
  });
});

describe('retries', () => {
  it('retries a 500 and succeeds once the service recovers', async () => {
    const seen: number[] = [];
    const c = clientFor(SIM_KEY, (a) => {
      seen.push(a.status);
      if (a.status === 500) h.sim.control.setFaults({ errorRate500: 0 });
    });
    h.sim.control.setFaults({ errorRate500: 1 });
    try {
      const user = await c.info({ username: h.fx.author.username });
      expect(user.id).toBe(h.fx.author.id);
      expect(seen).toEqual([500, 200]);
    } finally {
      h.sim.control.setFaults({ errorRate500: 0 });
      await c.close();
    }
  });

  it('throws TransientError after the bounded number of 5xx attempts', async () => {
    const seen: number[] = [];
    const c = clientFor(SIM_KEY, (a) => seen.push(a.status));
    h.sim.control.setFaults({ errorRate500: 1 });
    try {
      const error = await c.keyUsageInfo().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientError);
      expect((error as TransientError).status).toBe(500);
      expect(seen).toEqual([500, 500, 500, 500]);
    } finally {
      h.sim.control.setFaults({ errorRate500: 0 });
      await c.close();
    }
  });

  it("collects a call's attempts, retries included, in the list the call passes, and says so to onAttempt", async () => {
    const told: Array<{ status: number; collected: boolean }> = [];
    const c = new ApiClient({
      baseUrl: h.sim.url,
      gate: createStaticGate([{ key: SIM_KEY, fingerprint: keyFingerprint(SIM_KEY) }]),
      retry: { transientDelayMinMs: 5, transientDelayMaxMs: 10 },
      onAttempt: (a, collected) => told.push({ status: a.status, collected }),
    });
    h.sim.control.setFaults({ errorRate500: 1 });
    try {
      const attempts: AttemptRecord[] = [];
      await expect(c.keyUsageInfo({ attempts })).rejects.toBeInstanceOf(TransientError);
      expect(attempts.map((a) => [a.status, a.attempt])).toEqual([[500, 1], [500, 2], [500, 3], [500, 4]]);
      h.sim.control.setFaults({ errorRate500: 0 });
      // Two calls at once, each with its own list: nothing crosses over.
      const one: AttemptRecord[] = [];
      const two: AttemptRecord[] = [];
      await Promise.all([c.keyUsageInfo({ attempts: one }), c.keyUsageInfo({ attempts: two })]);
      expect([one.length, two.length]).toEqual([1, 1]);
      await c.keyUsageInfo();
      expect(told.map((t) => t.collected)).toEqual([true, true, true, true, true, true, false]);
    } finally {
      h.sim.control.setFaults({ errorRate500: 0 });
      await c.close();
    }
  });

  it('retries a 429 in the next second and succeeds', async () => {
    const slow = await startHarness({ ratePerKey: 1 } as Parameters<typeof startHarness>[0]);
    try {
      const results = await Promise.all([0, 1, 2].map(() => slow.client.info({ username: slow.fx.author.username })));
      expect(results.every((u) => u.id === slow.fx.author.id)).toBe(true);
      const statuses = slow.attempts.map((a) => a.status);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
      const retried = slow.attempts.filter((a) => a.attempt > 1);
      expect(retried.length).toBeGreaterThan(0);
    } finally {
      await slow.close();
    }
  });
});
