/**
 * Malformed answers from the service, injected by a proxy between the worker and the simulator:
 * odd items are quarantined with a reason while the rest of their page is stored; a body that is
 * not JSON at all (empty, HTML, plain text, truncated) fails the attempt clearly and the slice is
 * retried; a repeating cursor ends the walk; an oversized page is stored like any other.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidResponseError } from '../../src/api-client/errors.ts';
import { jobTweetIds, startHarness, type Harness } from '../helpers/harness.ts';
import { expectedSearchIds, visibleTweetIds } from '../jobs/ground-truth.ts';
import { corruptingProxy, type CorruptContext, type CorruptingProxy } from './support.ts';

const SEARCH = '/v3/search-tweets';

type Tweets = { tweets: Array<Record<string, unknown>>; next_cursor?: unknown };

function searchJob(h: Harness, since: string, until: string): Promise<string> {
  return h.submit({ kind: 'search', params: { query: 'lang:en', since, until } });
}

describe('malformed responses', () => {
  let h: Harness;
  let proxy: CorruptingProxy;
  beforeAll(async () => {
    proxy = await corruptingProxy();
    h = await startHarness({ env: { HARVEST_BASE_URL: proxy.url } });
    proxy.target = h.sim.url;
  });
  afterEach(() => {
    proxy.corrupt = () => undefined;
    h.sim.control.setFaults({ repeatCursorAfterPages: null });
  });
  afterAll(async () => {
    await h?.close();
    await proxy?.close();
  });

  it('missing ids and wrong types: those items are quarantined with a reason, the rest of the page is stored', async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-10-01 until:2026-10-08');
    const spoiled: string[] = [];
    let done = false;
    proxy.corrupt = (ctx: CorruptContext) => {
      if (done || ctx.path !== SEARCH || ctx.n < 3) return undefined;
      const body = JSON.parse(ctx.body) as Tweets;
      if (body.tweets.length < 6) return undefined;
      done = true;
      const [a, b, c, d] = body.tweets as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
      spoiled.push(String(a.id), String(b.id), String(c.id), String(d.id));
      delete a.id;
      b.id = Number(b.id); // a JSON number: the id may already have lost precision
      c.created_at = 1_790_000_000;
      d.likes_count = { many: true };
      return { body: JSON.stringify(body) };
    };
    const jobId = await searchJob(h, '2026-10-01', '2026-10-08');
    const snap = await h.runUntil(jobId, { timeoutMs: 25_000 });
    expect(snap.status).toBe('completed');
    expect(done).toBe(true);
    const stored = await jobTweetIds(h, jobId);
    expect(stored).toEqual(expected.filter((id) => !spoiled.includes(id)));
    const { rows } = await h.services.pool.query<{ reason: string; payload: Record<string, unknown> }>(
      'SELECT reason, payload FROM quarantine WHERE job_id = $1::bigint ORDER BY id',
      [jobId],
    );
    expect(rows).toHaveLength(4);
    const reasons = rows.map((r) => r.reason).join('\n');
    expect(reasons).toMatch(/^id: /m);
    expect(reasons).toMatch(/created_at/);
    expect(reasons).toMatch(/likes_count/);
    // The payload is the item as it came, for a person to look at.
    expect(rows.some((r) => r.payload.likes_count !== undefined && typeof r.payload.likes_count === 'object')).toBe(true);
  });

  it('a non-JSON, an empty, an HTML and a truncated body, once each: retried, and the exact set arrives', { timeout: 40_000 }, async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-20 until:2026-09-27');
    const bad = new Map<number, (body: string) => { body: string; contentType?: string }>([
      [2, () => ({ body: 'Service temporarily unavailable', contentType: 'text/plain' })],
      [4, () => ({ body: '' })],
      [6, () => ({ body: '<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>', contentType: 'text/html' })],
      [8, (body) => ({ body: body.slice(0, Math.floor(body.length / 2)) })],
    ]);
    const start = proxy.counts.get(SEARCH) ?? 0;
    proxy.corrupt = (ctx) => (ctx.path === SEARCH ? bad.get(ctx.n - start)?.(ctx.body) : undefined);
    const jobId = await searchJob(h, '2026-09-20', '2026-09-27');
    const snap = await h.runUntil(jobId, { timeoutMs: 35_000 });
    expect((proxy.counts.get(SEARCH) ?? 0) - start).toBeGreaterThan(8);
    expect(snap.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    // The failed attempts are on record as requests spent (200 with a body that was no use).
    const { rows } = await h.services.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM api_requests WHERE job_id = $1::bigint`,
      [jobId],
    );
    expect(rows[0]!.n).toBeGreaterThanOrEqual(snap.pages + 4);
  });

  it('a body that stays broken is a clear failure naming what is wrong, never a crash', async () => {
    const cases: Array<[{ body: string; contentType?: string }, RegExp]> = [
      [{ body: '' }, /empty body/],
      [{ body: '<html><body>Error 503</body></html>', contentType: 'text/html' }, /HTML page instead of JSON/],
      [{ body: '{"tweets": [{"id": "1"' }, /truncated or malformed JSON/],
      [{ body: 'upstream connect error' }, /body is not JSON/],
      [{ body: '{"next_cursor": null}' }, /tweets/],
    ];
    for (const [body, reason] of cases) {
      proxy.corrupt = (ctx) => (ctx.path === SEARCH ? body : undefined);
      const error = await h.services.client.searchTweets({ query: 'lang:en' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect((error as InvalidResponseError).code).toBe('API_INVALID_RESPONSE');
      expect((error as Error).message).toMatch(reason);
      expect((error as Error).message).toContain('POST /v3/search-tweets');
    }
  });

  it('hydrate counts a tweet returned but invalid as quarantined, not as missing', async () => {
    const ids = visibleTweetIds(h.sim.world, 3, 11);
    let spoiled = '';
    proxy.corrupt = (ctx) => {
      if (ctx.path !== '/v3/tweet-info-bulk') return undefined;
      const body = JSON.parse(ctx.body) as Tweets;
      const first = body.tweets[0]!;
      spoiled = String(first.id);
      first.created_at = 1_790_000_000;
      return { body: JSON.stringify(body) };
    };
    const jobId = await h.submit({ kind: 'hydrate', params: { ids: [...ids, '1999999999999999999'] } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    expect(ids).toContain(spoiled);
    expect(snap.note).toMatch(/^slice \d+: 1 of 4 ids not returned \(deleted, protected or unknown\); 1 of 4 returned but invalid \(quarantined\)$/);
  });

  it('a walk of a watch job that fails says so in the job note: the watch goes on, audit --repair walks it again', async () => {
    const c = [...h.sim.world.communities].sort((a, b) => b.members.length - a.members.length)[0]!;
    // The members walk's second page answers without its users, every time: a permanent failure.
    let first = 0;
    proxy.corrupt = (ctx) => (ctx.path === '/v3/community-members' && ++first > 1 ? { body: '{"next_cursor": null}' } : undefined);
    const jobId = await h.submit({ kind: 'community', params: { communityId: c.id, everySeconds: 3600 } });
    const snap = await h.runUntil(jobId, { until: ['scheduled', 'failed', 'completed'] });
    expect(snap.status).toBe('scheduled');
    expect(snap.slices.failed).toBe(1);
    // It read "scheduled" and nothing else: no error, no note, no event, and no pass reads members.
    expect(snap.note).toMatch(new RegExp(`a walk failed \\(.*users.*\\); the watch goes on without it: \`harvest audit ${jobId} --repair\` walks it again`));
  });

  it('a repeating cursor ends the walk with a note; what came before it is stored', async () => {
    h.sim.control.setFaults({ repeatCursorAfterPages: 2 });
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' }, maxRequests: 50 });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    expect(snap.note).toMatch(/cursor repeated/);
    expect(snap.requests).toBeLessThan(6);
    expect((await jobTweetIds(h, jobId)).length).toBeGreaterThanOrEqual(40);
  });

  it('an oversized page (1,000 items of 4 KB each, duplicates included) is stored without a crash, exact set', async () => {
    const expected = expectedSearchIds(h.sim.world, 'lang:en since:2026-09-01 until:2026-09-06');
    let bytes = 0;
    proxy.corrupt = (ctx) => {
      if (ctx.path !== SEARCH || bytes > 0) return undefined;
      const body = JSON.parse(ctx.body) as Tweets;
      if (body.tweets.length < 10) return undefined;
      const padded = body.tweets.map((t) => ({ ...t, made_with_ai: false, padding: 'x'.repeat(4096) }));
      body.tweets = Array.from({ length: 1000 }, (_, i) => padded[i % padded.length]!);
      const text = JSON.stringify(body);
      bytes = Buffer.byteLength(text);
      return { body: text };
    };
    const jobId = await searchJob(h, '2026-09-01', '2026-09-06');
    const snap = await h.runUntil(jobId, { timeoutMs: 25_000 });
    expect(bytes).toBeGreaterThan(4_000_000);
    expect(snap.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });
});
