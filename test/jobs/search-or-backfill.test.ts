/**
 * Issue #10: a top-level OR must not escape its time slices. Unbracketed, `coffee OR weather
 * since_id:… max_id:…` bounds only `weather`, so every slice walks all of `coffee`'s history:
 * tweets outside the range are stored and the requests multiply with the slices.
 */
import { describe, expect, it } from 'vitest';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('search backfill of a top-level OR query', () => {
  const h = useHarness();

  it('stores exactly what the bracketed query matches in range, at most 1.1 × the ideal requests plus one per slice', async () => {
    const expected = expectedSearchIds(h.sim.world, '(coffee OR weather) since:2026-10-01 until:2026-10-15');
    const coffeeAnyTime = expectedSearchIds(h.sim.world, 'coffee');
    // the world must make the bug visible: coffee tweets outside the range exist
    expect(coffeeAnyTime.filter((id) => !expected.includes(id)).length).toBeGreaterThan(50);
    expect(expected.length).toBeGreaterThan(60);

    const searches = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets').length;
    const before = searches();
    const jobId = await h.submit({ kind: 'search', params: { query: 'coffee OR weather', since: '2026-10-01', until: '2026-10-15' } });
    const snap = await h.runUntil(jobId, { timeoutMs: 60_000 });
    expect(snap.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);

    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1', [jobId]);
    const slices = rows[0]!.n;
    const ideal = Math.ceil(expected.length / 20);
    const spent = searches() - before;
    expect(spent).toBe(snap.requests);
    expect(spent).toBeLessThanOrEqual(1.1 * ideal + slices);
  });

  it('refuses a query with its own time operators on a bounded job before any request', async () => {
    const before = h.sim.control.requestLog().length;
    await expect(
      h.submit({ kind: 'search', params: { query: 'coffee OR (weather since:2026-10-03)', since: '2026-10-01', until: '2026-10-15' } }),
    ).rejects.toMatchObject({ code: 'INPUT_INVALID', message: expect.stringMatching(/since:.*--since\/--until/) });
    expect(h.sim.control.requestLog().length).toBe(before);
  });
});
