import { afterEach, describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('errors steer jobs', () => {
  const h = useHarness({ env: { HARVEST_QUOTA_RECHECK_MS: '1500', HARVEST_WATCH_RESERVE: '0' } });
  afterEach(async () => {
    h.sim.control.setFaults({ repeatCursorAfterPages: null, errorRate500: 0, burst429: null, emptyPageRate: 0 });
    h.sim.control.setQuota('test-key-1', 100_000);
    await h.services.gate.unparkKey(keyFingerprint('test-key-1'));
  });

  it('401 on every key fails the job at once (KEYS_REFUSED), naming the key by fingerprint only', async () => {
    h.sim.control.removeKey('test-key-1');
    try {
      const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-02' } });
      const snap = await h.runUntil(jobId);
      expect(snap.status).toBe('failed');
      expect(snap.errorCode).toBe('KEYS_REFUSED');
      expect(snap.errorMessage).toContain(keyFingerprint('test-key-1'));
      expect(snap.errorMessage).not.toContain('test-key-1');
    } finally {
      h.sim.control.addKey('test-key-1', 100_000);
    }
  });

  it('quota exhaustion parks the job as paused: quota, and it resumes by itself after a top-up with nothing lost', async () => {
    const query = 'lang:en since:2026-10-05 until:2026-10-09';
    const expected = expectedSearchIds(h.sim.world, query);
    h.sim.control.setQuota('test-key-1', 4);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-05', until: '2026-10-09' } });
    const parked = await h.runUntil(jobId, { until: ['paused_quota', 'failed', 'completed'] });
    expect(parked.status).toBe('paused_quota');
    h.sim.control.setQuota('test-key-1', 100_000);
    const done = await h.runUntil(jobId, { until: ['completed', 'failed'], timeoutMs: 45_000 });
    expect(done.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });

  it('a repeating cursor ends the walk with a note instead of spinning', async () => {
    h.sim.control.setFaults({ repeatCursorAfterPages: 2 });
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' }, maxRequests: 50 });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    expect(snap.note).toMatch(/cursor repeated/);
    expect(snap.requests).toBeLessThan(6);
  });

  it('500s and 429 bursts are retried: the exact set still arrives', async () => {
    const query = 'lang:es since:2026-09-10 until:2026-10-20';
    const expected = expectedSearchIds(h.sim.world, query);
    h.sim.control.setFaults({ errorRate500: 0.1, burst429: { everyMs: 1500, durationMs: 100 } });
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:es', since: '2026-09-10', until: '2026-10-20' } });
    const snap = await h.runUntil(jobId, { timeoutMs: 60_000 });
    expect(snap.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });
});
