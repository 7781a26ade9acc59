import { describe, expect, it } from 'vitest';
import { AuthError, NotFoundError, QuotaError, RateLimitedError, TransientError } from '../../src/api-client/errors.ts';
import { DEFAULT_RETRY_POLICY, delayAfterRateLimit, retryPolicyOf, withRetry } from '../../src/api-client/retry.ts';
import { AbortedError } from '../../src/errors.ts';
import { recordingGate } from './helpers.ts';

const ctx = { endpoint: 'GET /v3/info', keyFingerprint: 'k_x' };
const fast = { transientDelayMinMs: 1, transientDelayMaxMs: 2, rateLimitJitterMs: 0 };

describe('withRetry', () => {
  it('acquires a grant before every attempt and reports each outcome', async () => {
    const gate = recordingGate('key-a');
    let n = 0;
    const value = await withRetry({ gate, policy: fast, acquire: { priority: 'watch', jobId: 'j1' } }, () => {
      n++;
      if (n < 3) throw new TransientError({ ...ctx, status: 503 });
      return Promise.resolve({ value: 'ok', status: 200 });
    });
    expect(value).toBe('ok');
    expect(gate.acquired).toHaveLength(3);
    expect(gate.acquired[0]).toMatchObject({ priority: 'watch', jobId: 'j1' });
    expect(gate.reported.map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it('hands a page the service answered back without waiting for its report (a Redis that is down would hold it), and a failed report does not fail it', async () => {
    for (const report of [() => new Promise<void>(() => undefined), () => Promise.reject(new Error('Redis is down'))]) {
      const gate = { ...recordingGate('key-a'), report };
      await expect(withRetry({ gate, policy: fast }, () => Promise.resolve({ value: 'page', status: 200 }))).resolves.toBe('page');
    }
  });

  it('never retries a 404 (or any non-retryable error)', async () => {
    const gate = recordingGate('key-a');
    await expect(
      withRetry({ gate, policy: fast }, () => Promise.reject(new NotFoundError({ ...ctx, status: 404 }))),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(gate.acquired).toHaveLength(1);
    expect(gate.reported).toEqual([{ fingerprint: expect.any(String), status: 404 }]);
  });

  it('after a refused (401) or spent (403) key goes on with another grant, at most otherKeyOnRefusal times', async () => {
    for (const [Refusal, status] of [[AuthError, 401], [QuotaError, 403]] as const) {
      const gate = recordingGate('key-a');
      let n = 0;
      const value = await withRetry({ gate, policy: { ...fast, otherKeyOnRefusal: 1 } }, () => {
        n++;
        if (n === 1) throw new Refusal({ ...ctx, status });
        return Promise.resolve({ value: 'ok', status: 200 });
      });
      expect(value).toBe('ok');
      // The refusal was reported first: the gate sets that key aside before the next grant.
      expect(gate.reported.map((r) => r.status)).toEqual([status, 200]);
      expect(gate.acquired).toHaveLength(2);
      // By default (one key, or a call on one given grant) a refusal ends the call at once.
      const once = recordingGate('key-a');
      await expect(withRetry({ gate: once, policy: fast }, () => Promise.reject(new Refusal({ ...ctx, status })))).rejects.toBeInstanceOf(Refusal);
      expect(once.acquired).toHaveLength(1);
      // Bounded: every key refused ends after otherKeyOnRefusal more grants.
      const all = recordingGate('key-a');
      await expect(withRetry({ gate: all, policy: { ...fast, otherKeyOnRefusal: 2 } }, () => Promise.reject(new Refusal({ ...ctx, status })))).rejects.toBeInstanceOf(Refusal);
      expect(all.acquired).toHaveLength(3);
    }
  });

  it('stops after the configured number of transient attempts and throws the last error', async () => {
    const gate = recordingGate('key-a');
    let n = 0;
    const error = await withRetry({ gate, policy: { ...fast, maxAttemptsTransient: 3 } }, () => {
      n++;
      return Promise.reject(new TransientError({ ...ctx, status: 500 + n }));
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).status).toBe(503);
    expect(n).toBe(3);
  });

  it('a policy field given as undefined keeps its default (4 transient attempts), never unbounded', async () => {
    const gate = recordingGate('key-a');
    let n = 0;
    const error = await withRetry({ gate, policy: { ...fast, maxAttemptsTransient: undefined } }, () => {
      n++;
      return Promise.reject(new TransientError({ ...ctx, status: 503 }));
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(n).toBe(4);
  });

  it("a call's policy goes over the client's, field by field; undefined fields override nothing", () => {
    const client = retryPolicyOf({ maxAttemptsTransient: 2, transientDelayMinMs: 5 });
    expect(retryPolicyOf(client, { maxAttemptsTransient: undefined, maxAttemptsRateLimited: 1 })).toEqual({
      ...DEFAULT_RETRY_POLICY,
      maxAttemptsTransient: 2,
      transientDelayMinMs: 5,
      maxAttemptsRateLimited: 1,
    });
  });

  it('waits for the next wall-clock second after a 429', async () => {
    expect(delayAfterRateLimit(10_250, 0, () => 0)).toBe(753);
    expect(delayAfterRateLimit(10_999, 50, () => 0.999)).toBe(1 + 3 + 50);
    const gate = recordingGate('key-a');
    const times: number[] = [];
    await withRetry({ gate, policy: { maxAttemptsRateLimited: 2, rateLimitJitterMs: 0 } }, () => {
      times.push(Date.now());
      if (times.length === 1) return Promise.reject(new RateLimitedError({ ...ctx, status: 429 }));
      return Promise.resolve({ value: 1, status: 200 });
    });
    expect(Math.floor((times[1] as number) / 1000)).toBeGreaterThan(Math.floor((times[0] as number) / 1000));
  });

  it('gives up on 429 after maxAttemptsRateLimited', async () => {
    const gate = recordingGate('key-a');
    let n = 0;
    await expect(
      withRetry({ gate, policy: { maxAttemptsRateLimited: 2, rateLimitJitterMs: 0 }, now: () => 999 }, () => {
        n++;
        return Promise.reject(new RateLimitedError({ ...ctx, status: 429 }));
      }),
    ).rejects.toBeInstanceOf(RateLimitedError);
    expect(n).toBe(2);
  });

  it('maxAttempts bounds the attempts whatever the mix of 429s and 5xx (the two bounds counted apart: 11 for a page of 6)', async () => {
    const gate = recordingGate('key-a');
    let n = 0;
    const policy = { ...fast, maxAttemptsRateLimited: 6, maxAttemptsTransient: 6, maxAttempts: 6 };
    const error = await withRetry({ gate, policy, now: () => 999 }, () => {
      n++;
      return Promise.reject(n <= 5 ? new RateLimitedError({ ...ctx, status: 429 }) : new TransientError({ ...ctx, status: 500 }));
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(n).toBe(6);
    expect(gate.acquired).toHaveLength(6);
  });

  it('honours an AbortSignal during the wait', async () => {
    const gate = recordingGate('key-a');
    const controller = new AbortController();
    const started = Date.now();
    const pending = withRetry(
      { gate, policy: { transientDelayMinMs: 5000, transientDelayMaxMs: 5000 }, acquire: { signal: controller.signal } },
      () => Promise.reject(new TransientError({ ...ctx, status: 500 })),
    );
    setTimeout(() => controller.abort(), 30);
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(gate.acquired).toHaveLength(1);
  });
});
