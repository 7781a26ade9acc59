/**
 * `harvest community`: members and the whole feed, a search inside the community, a feed watch.
 * The truth each stored set is held to is a separate walk of the simulator over HTTP (its own
 * requests, not the harvester's client), so a bug in the client's parsing cannot hide itself.
 */
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { jobTweetIds, useHarness, type Harness } from '../helpers/harness.ts';
import { runCli } from '../helpers/cli.ts';

interface Item {
  id: string;
  [field: string]: unknown;
}

/** A key the harvester does not know: the truth's walks spend none of its rate or quota. */
const TRUTH_KEY = 'truth-walk-key';

/** Walks one endpoint of the simulator to its end over HTTP (at most 18 pages a second): every item's id, in order. */
async function walkIds(h: Harness, path: string, body: Record<string, unknown>, field: 'tweets' | 'users'): Promise<string[]> {
  return (await walkItems(h, path, body, field)).map((item) => item.id);
}

async function walkItems(h: Harness, path: string, body: Record<string, unknown>, field: 'tweets' | 'users'): Promise<Item[]> {
  const ids: Item[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 500; page++) {
    const res = await request(`${h.sim.url}${path}`, {
      method: 'POST',
      headers: { ApiKey: TRUTH_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...body, ...(cursor === null ? {} : { next_cursor: cursor }) }),
    });
    const json = (await res.body.json()) as Record<string, unknown>;
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(json)}`);
    for (const item of json[field] as Item[]) {
      // Ids must stay exact: a numeric id here would already have lost digits.
      expect(typeof item.id).toBe('string');
      ids.push(item);
    }
    await new Promise((r) => setTimeout(r, 55));
    const next = json.next_cursor;
    if (next === null || next === undefined || next === '') return ids;
    cursor = String(next);
  }
  throw new Error(`${path}: the walk did not end`);
}

const sorted = (ids: readonly string[]): string[] => [...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));

/** The word (5+ letters) that the most of `tweets` carry among those carried by between `min` and `max` of them. */
function feedWord(tweets: readonly Item[], min: number, max: number): string {
  const counts = new Map<string, number>();
  for (const t of tweets) {
    for (const w of new Set(String(t.full_text).toLowerCase().match(/\b[a-z]{5,}\b/g) ?? [])) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  const best = [...counts].filter(([, n]) => n >= min && n <= max).sort((a, b) => b[1] - a[1])[0];
  if (!best) throw new Error(`no word in ${min}..${max} of the feed's tweets`);
  return best[0];
}

async function ids(h: Harness, sql: string, params: unknown[]): Promise<string[]> {
  const { rows } = await h.services.pool.query<{ id: string }>(sql, params);
  return sorted(rows.map((r) => r.id));
}

describe('community jobs', () => {
  const h = useHarness();
  beforeAll(() => {
    h.sim.control.addKey(TRUTH_KEY);
  });

  /** Requests the harvester (not the truth's walks) sent to `path`. */
  const requestsTo = (path: string): number => h.sim.control.requestLog().filter((r) => r.path === path && r.keyFingerprint !== keyFingerprint(TRUTH_KEY)).length;

  /** The community with the largest feed: several pages of tweets and of members. */
  const busiest = () => [...h.sim.world.communities].sort((a, b) => b.tweets.length - a.tweets.length)[0]!;

  it('`community <url> --wait` stores exactly the members and the feed the service holds, with provenance and authors', async () => {
    const c = busiest();
    const truthPages = (path: string) => h.sim.control.requestLog().filter((r) => r.path === path && r.keyFingerprint === keyFingerprint(TRUTH_KEY)).length;
    const pagesBefore = { feed: truthPages('/v3/community-tweets'), members: truthPages('/v3/community-members') };
    const feed = await walkIds(h, '/v3/community-tweets', { community_id: c.id, order: 'latest' }, 'tweets');
    const members = await walkIds(h, '/v3/community-members', { community_link: c.id }, 'users');
    expect(feed.length).toBeGreaterThan(40); // more than two pages
    expect(members.length).toBeGreaterThan(20);
    const before = { feed: requestsTo('/v3/community-tweets'), members: requestsTo('/v3/community-members') };
    const pages = { feed: truthPages('/v3/community-tweets') - pagesBefore.feed, members: truthPages('/v3/community-members') - pagesBefore.members };

    const run = await runCli(['community', `https://x.com/i/communities/${c.id}`, '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    const jobId = run.out.split('\n')[0]!;
    expect(jobId).toMatch(/^\d+$/);

    expect(await jobTweetIds(h, jobId)).toEqual(sorted(feed));
    expect(await ids(h, 'SELECT user_id::text AS id FROM community_members WHERE community_id = $1::bigint', [c.id])).toEqual(sorted(members));
    expect(
      await ids(h, "SELECT user_id::text AS id FROM job_users WHERE job_id = $1::bigint AND role = 'community_member'", [jobId]),
    ).toEqual(sorted(members));
    // Every stored tweet's author is stored too.
    const orphans = await h.services.pool.query(
      `SELECT t.id FROM job_tweets jt JOIN tweets t ON t.id = jt.tweet_id
        WHERE jt.job_id = $1::bigint AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = t.author_id)`,
      [jobId],
    );
    expect(orphans.rowCount).toBe(0);
    // One walk each: the feed's pages and the members' pages, nothing read twice.
    expect(requestsTo('/v3/community-tweets') - before.feed).toBe(pages.feed);
    expect(requestsTo('/v3/community-members') - before.members).toBe(pages.members);
  });

  it('`--query` searches inside the community: exactly what the service matches there, members not walked', async () => {
    const c = busiest();
    const feed = await walkItems(h, '/v3/community-tweets', { community_id: c.id, order: 'latest' }, 'tweets');
    // A word some of the feed's tweets carry, but not all of them.
    const word = feedWord(feed, 2, feed.length / 2);
    const query = `${word} -filter:retweets`;
    const truth = await walkIds(h, '/v3/community-search-tweets', { community_link: c.id, query, order: 'latest' }, 'tweets');
    expect(truth.length).toBeGreaterThan(1);
    expect(truth.length).toBeLessThan(feed.length);
    const membersBefore = requestsTo('/v3/community-members');

    const run = await runCli(['community', c.id, '--query', query, '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    const jobId = run.out.split('\n')[0]!;
    expect(await jobTweetIds(h, jobId)).toEqual(sorted(truth));
    expect(requestsTo('/v3/community-members')).toBe(membersBefore);
    expect(await ids(h, 'SELECT user_id::text AS id FROM job_users WHERE job_id = $1::bigint AND role = $2', [jobId, 'community_member'])).toEqual([]);
  });

  it('a --query the service would refuse is refused with one line before anything is queued', async () => {
    const jobsBefore = (await h.services.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n as number;
    const requestsBefore = h.sim.control.requestLog().length;
    const tooMany = Array.from({ length: 24 }, (_, i) => `w${i}`).join(' ');
    for (const query of ['(unbalanced', 'say "never closed', tooMany, '   ']) {
      const run = await runCli(['community', busiest().id, '--query', query], h.env);
      expect(run.code, query).not.toBe(0);
      expect(run.err.split('\n')).toHaveLength(1);
      expect(run.out).toBe('');
    }
    expect((await h.services.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(jobsBefore);
    expect(h.sim.control.requestLog().length).toBe(requestsBefore);
  });

  it('--every watches the feed: the first pass reads all of it, an idle pass costs one request, a later pass stores exactly the new tweets', async () => {
    const w = h.sim.world;
    const c = busiest();
    const feed = await walkIds(h, '/v3/community-tweets', { community_id: c.id, order: 'latest' }, 'tweets');
    const jobId = await h.submit({ kind: 'community', params: { communityId: c.id, everySeconds: 3600 } });
    const first = await h.runUntil(jobId, { until: ['scheduled', 'failed', 'completed'] });
    expect(first.status).toBe('scheduled');
    expect(await jobTweetIds(h, jobId)).toEqual(sorted(feed));
    const row = await h.services.pool.query('SELECT kind, every_seconds, high_watermark_id::text AS mark FROM watches WHERE job_id = $1::bigint', [jobId]);
    expect(row.rows[0]).toEqual({ kind: 'community', every_seconds: 3600, mark: sorted(feed).at(-1) });

    // Nothing new: one request, nothing stored, members not walked again.
    const members = requestsTo('/v3/community-members');
    let calls = requestsTo('/v3/community-tweets');
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    const idle = await h.runUntil(jobId, { until: ['scheduled', 'failed', 'completed'] });
    expect(idle.status).toBe('scheduled');
    expect(requestsTo('/v3/community-tweets') - calls).toBe(1);
    expect(await jobTweetIds(h, jobId)).toEqual(sorted(feed));

    // 25 new posts in the community (and one elsewhere): the next pass stores exactly the 25.
    const poster = c.members.map((i) => w.users[i]!).find((u) => !u.protected && !u.suspended && !u.deleted)!;
    const added = h.sim.control.addTweets(
      Array.from({ length: 25 }, (_, i) => ({ authorHandle: poster.username, text: `community post ${i}`, communityId: c.id })),
    );
    h.sim.control.addTweets([{ authorHandle: poster.username, text: 'not in the community' }]);
    calls = requestsTo('/v3/community-tweets');
    await runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    const next = await h.runUntil(jobId, { until: ['scheduled', 'failed', 'completed'] });
    expect(next.status).toBe('scheduled');
    expect(await jobTweetIds(h, jobId)).toEqual(sorted([...feed, ...added]));
    expect(requestsTo('/v3/community-tweets') - calls).toBe(2); // 25 new: two pages of 20
    expect(requestsTo('/v3/community-members')).toBe(members);
    expect(next.watch?.passes).toBe(3);
  });

  it('--estimate probes one page of each walk, says what it cannot know, and queues nothing', async () => {
    const c = busiest();
    const jobsBefore = (await h.services.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n as number;
    const before = { feed: requestsTo('/v3/community-tweets'), members: requestsTo('/v3/community-members'), search: requestsTo('/v3/community-search-tweets') };
    const run = await runCli(['community', c.id, '--estimate', '--every', '1h'], h.env);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^tweets +more than 20 /m);
    expect(run.out).toMatch(/^members +more than \d+ /m);
    expect(run.out).toMatch(/^recent +~[\d,]+ tweets\/day/m);
    expect(run.out).toMatch(/^watch +~[\d,]+ requests\/day/m);
    expect(run.out).toMatch(/^probe +cost 2 requests; nothing was queued$/m);
    expect(requestsTo('/v3/community-tweets') - before.feed).toBe(1);
    expect(requestsTo('/v3/community-members') - before.members).toBe(1);

    // A search that fits on one page is counted exactly, and members are not probed.
    const feed = await walkItems(h, '/v3/community-tweets', { community_id: c.id, order: 'latest' }, 'tweets');
    const word = feedWord(feed, 2, 10);
    const truth = await walkIds(h, '/v3/community-search-tweets', { community_link: c.id, query: word, order: 'latest' }, 'tweets');
    expect(truth.length).toBeGreaterThan(0);
    expect(truth.length).toBeLessThan(20);
    const small = await runCli(['community', c.id, '--query', word, '--estimate'], h.env);
    expect(small.code, small.err).toBe(0);
    expect(small.out).toMatch(new RegExp(`^tweets +${truth.length}$`, 'm'));
    expect(small.out).toMatch(/^members +not walked/m);
    expect(small.out).toMatch(/^requests +1$/m);
    expect(small.out).toMatch(/^probe +cost 1 request; nothing was queued$/m);
    expect(requestsTo('/v3/community-search-tweets') - before.search).toBe(1);
    expect(requestsTo('/v3/community-members') - before.members).toBe(1);
    expect((await h.services.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(jobsBefore);
  });
});
