/**
 * Three workers starting at once on ten keys (200 requests a second between them) on a two-core
 * machine: while they compile, connect and plan, their event loops stall, and a request granted
 * before a stall but sent after it reaches the service late. Sent anyway, it could share a
 * one-second window with 20 more of its key (the many-keys bench saw 3-6 429s a run this way).
 * Such a grant is given back instead (src/jobs/limiter, "late grants"): no 429, no second over the
 * rate on any key, and the exact set. This is the end-to-end property; with the check taken out it
 * failed 1 run of 4 here (4 429s), so the mechanism itself is tested deterministically in
 * test/jobs/late-grant.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createWorld } from '../../src/simulator/world/index.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { isEnd, startWorker, stopWorker, waitForJob, type WorkerProcess } from './support.ts';

const KEYS = Array.from({ length: 10 }, (_, i) => `crowded-key-${i + 1}`);

describe('three workers starting at once on ten keys', () => {
  const h = useHarness(() => ({
    keys: KEYS,
    simulator: { world: createWorld({ seed: 11, scale: { users: 1500, tweets: 40_000 } }), latencyMs: [300, 800] },
  }));
  const workers: WorkerProcess[] = [];
  // Registered after the harness's own afterAll, so it runs first: workers die before the database goes.
  afterAll(() => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
  });

  it('no request goes out late: no 429, no key over its rate in any second, the exact set', { timeout: 90_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-20 until:2026-10-08');
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-20', until: '2026-10-08' } });
    for (let i = 0; i < 3; i++) workers.push(startWorker(h.env, 67));
    const done = await waitForJob(h.services.pool, jobId, isEnd, 80_000);
    for (const w of workers.splice(0)) expect(await stopWorker(w)).toBe(0);
    expect(done.status).toBe('completed');
    const log = h.sim.control.requestLog().filter((r) => r.path.startsWith('/v3/'));
    expect(log.filter((r) => r.status === 429)).toHaveLength(0);
    const perKeySecond = new Map<string, number>();
    for (const r of log) {
      const slot = `${r.keyFingerprint} ${Math.floor(r.at / 1000)}`;
      perKeySecond.set(slot, (perKeySecond.get(slot) ?? 0) + 1);
    }
    expect(Math.max(...perKeySecond.values())).toBeLessThanOrEqual(20);
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });
});
