/**
 * Walks that cannot run forever (issue #11, item 7): besides repeated cursors and empty pages, a
 * walk ends after HARVEST_MAX_STALE_PAGES (default 10) pages in a row that bring no id new to the
 * job, with a note `status` shows. A proxy between the worker and the simulator answers every
 * search page after the first with the first page's tweets, keeping the service's fresh cursors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobTweetIds, startHarness, type Harness } from '../helpers/harness.ts';
import { corruptingProxy, type CorruptingProxy } from './support.ts';

const SEARCH = '/v3/search-tweets';

/** Every search page after the first answers the first page's tweets (with the service's fresh cursors). */
function repeatFirstPage(proxy: CorruptingProxy): void {
  let first: Array<Record<string, unknown>> | null = null;
  proxy.corrupt = (ctx) => {
    if (ctx.path !== SEARCH) return undefined;
    const body = JSON.parse(ctx.body) as { tweets: Array<Record<string, unknown>>; next_cursor?: unknown };
    if (first === null) {
      first = body.tweets;
      return undefined;
    }
    return { body: JSON.stringify({ ...body, tweets: first }) };
  };
}

describe('pages that bring nothing new', () => {
  let h: Harness;
  let proxy: CorruptingProxy;
  beforeAll(async () => {
    proxy = await corruptingProxy();
    h = await startHarness({ env: { HARVEST_BASE_URL: proxy.url } });
    proxy.target = h.sim.url;
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  it('ten pages in a row with no new id end the walk with a note; the job completes with the first page', { timeout: 30_000 }, async () => {
    repeatFirstPage(proxy);
    const start = proxy.counts.get(SEARCH) ?? 0;
    // lang:fr is 27 pages in this world: without the guard the walk would read them all.
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:fr' } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    expect(snap.note).toMatch(/10 pages in a row brought no new id; walk ended/);
    // No page fetched ahead for nothing: the eleventh is the last request.
    expect((proxy.counts.get(SEARCH) ?? 0) - start).toBe(11);
    expect(snap.pages).toBe(11);
    expect((await jobTweetIds(h, jobId)).length).toBe(20);
    // The audit tells this early stop from an end of results.
    const { rows } = await h.services.pool.query<{ end_reason: string }>('SELECT end_reason FROM job_slices WHERE job_id = $1::bigint', [jobId]);
    expect(rows.map((r) => r.end_reason)).toEqual(['stale-pages']);
  });
});

describe('a low HARVEST_MAX_STALE_PAGES', () => {
  // Before, a walk fetched its next page ahead whenever the page before had brought something new:
  // at 1, the page after the first stale one was requested and then dropped with the walk.
  it.each([
    { maxStale: 1, note: /1 page in a row brought no new id; walk ended/ },
    { maxStale: 3, note: /3 pages in a row brought no new id; walk ended/ },
  ])('at $maxStale, the walk ends after that many stale pages and requests none ahead of them', { timeout: 30_000 }, async ({ maxStale, note }) => {
    const proxy = await corruptingProxy();
    const h = await startHarness({ env: { HARVEST_BASE_URL: proxy.url, HARVEST_MAX_STALE_PAGES: String(maxStale) } });
    try {
      proxy.target = h.sim.url;
      repeatFirstPage(proxy);
      const jobId = await h.submit({ kind: 'search', params: { query: 'lang:fr' } });
      const snap = await h.runUntil(jobId);
      expect(snap.status).toBe('completed');
      expect(snap.note).toMatch(note);
      expect(proxy.counts.get(SEARCH) ?? 0).toBe(1 + maxStale);
      expect(snap.pages).toBe(1 + maxStale);
      const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_requests WHERE job_id = $1::bigint', [jobId]);
      expect(rows[0]!.n).toBe(1 + maxStale);
    } finally {
      await h.close();
      await proxy.close();
    }
  });
});
