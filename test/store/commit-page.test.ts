import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitPage } from '../../src/store/commit-page.ts';
import { StaleSliceError } from '../../src/store/errors.ts';
import { getJob } from '../../src/store/jobs.ts';
import { endJob, markSliceRunning, rollUpJob } from '../../src/store/job-runtime.ts';
import { setJobControl } from '../../src/store/job-control.ts';
import { SliceEndReason } from '../../src/store/slice-ends.ts';
import { getSlice } from '../helpers/store-rows.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { idSequence, makeTweet, makeUser, newSlices, pageOf } from './fixtures.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Ids unique to each test so tests in this file do not see each other's rows. */
const id = idSequence('1800000000000000000');

async function newSlice(): Promise<{ jobId: string; sliceId: string }> {
  const { jobId, sliceIds } = await newSlices(db.pool, 1);
  return { jobId, sliceId: sliceIds[0]! };
}

const page = pageOf;

const request = () => ({ endpoint: 'GET /v3/search-tweets', keyFingerprint: 'k_test', status: 200, durationMs: 5, at: new Date() });

async function one<T>(sql: string, params: unknown[] = []): Promise<T> {
  const { rows } = await db.pool.query(sql, params);
  return rows[0] as T;
}

describe('commitPage', () => {
  it('stores tweets with their authors, embedded quoted tweets and their authors, provenance and the slice advance', async () => {
    const slice = await newSlice();
    const a = makeUser(id('100'));
    const b = makeUser(id('100'));
    const quoted = makeTweet(id(), b);
    const tweet = makeTweet(id(), a, { quoted, quotedTweetId: quoted.id, isQuoteStatus: true });
    const result = await commitPage(
      db.pool,
      page(slice, {
        tweets: [tweet],
        requests: [{ endpoint: '/v3/search-tweets', keyFingerprint: 'fp1', status: 200, durationMs: 120, at: new Date() }],
        recentCursorHash: 'h1',
      }),
    );
    expect(result).toEqual({ newTweets: 1, newUsers: 1, stalePages: 0, tweetsStored: 2, usersStored: 2 });
    const stored = await one<{ n: number }>(`SELECT count(*)::int AS n FROM tweets WHERE id = ANY($1::bigint[])`, [[tweet.id, quoted.id]]);
    expect(stored.n).toBe(2);
    const q = await one<{ quoted: string; author: string }>(`SELECT quoted_tweet_id::text AS quoted, author_id::text AS author FROM tweets WHERE id = $1::bigint`, [tweet.id]);
    expect(q).toEqual({ quoted: quoted.id, author: a.id });
    const s = await getSlice(db.pool, slice.sliceId);
    expect(s).toMatchObject({ cursor: 'c1', status: 'running', pages: 1, items: 1, newItems: 2, requests: 1, recentCursors: ['h1'], newestTweetId: tweet.id, oldestTweetId: tweet.id });
    const job = await getJob(db.pool, slice.jobId);
    expect(job).toMatchObject({ pages: 1, tweets: 1, users: 1, requestsSpent: 1 });
    const prov = await db.pool.query(`SELECT tweet_id::text FROM job_tweets WHERE job_id = $1::bigint`, [slice.jobId]);
    expect(prov.rows).toEqual([{ tweet_id: tweet.id }]);
  });

  it('gives every row its own raw document and media, users included, whatever their order on the page', async () => {
    const slice = await newSlice();
    // Ids given out of order: the rows are sorted by id before they are sent, and the documents
    // ride beside them as arrays picked by position.
    const ids = [id(), id(), id(), id()].reverse();
    const authors = ids.map(() => makeUser(id('100')));
    const tweets = ids.map((tid, i) =>
      makeTweet(tid, authors[i]!, { media: Array.from({ length: i }, (_, k) => ({ type: 'photo', link: `https://m.example/${tid}/${k}`, preview: null })) }),
    );
    await commitPage(db.pool, page(slice, { tweets }));
    const { rows } = await db.pool.query<{ id: string; raw_id: string; media: Array<{ link: string }> }>(
      `SELECT id::text, raw->>'id' AS raw_id, media FROM tweets WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    expect(rows).toHaveLength(ids.length);
    for (const row of rows) {
      const i = ids.indexOf(row.id);
      expect(row.raw_id).toBe(row.id);
      expect(row.media.map((m) => m.link)).toEqual(Array.from({ length: i }, (_, k) => `https://m.example/${row.id}/${k}`));
    }
    const users = await db.pool.query<{ id: string; raw_id: string }>(`SELECT id::text, raw->>'id_str' AS raw_id FROM users WHERE id = ANY($1::bigint[])`, [
      authors.map((a) => a.id),
    ]);
    expect(users.rows).toHaveLength(authors.length);
    for (const row of users.rows) expect(row.raw_id).toBe(row.id);
  });

  it('replaying the same page changes nothing but last_seen_at', async () => {
    const slice = await newSlice();
    const author = makeUser(id('200'));
    const member = makeUser(id('200'), { source: 'v3-reduced' });
    const listId = id('300');
    const tweets = [makeTweet(id(), author), makeTweet(id(), author, { likeCount: 99 })];
    const at = new Date('2026-09-01T00:00:00Z');
    const base = page(slice, {
      tweets,
      users: [member],
      userRole: 'member',
      edges: [{ kind: 'list_member', ownerId: listId, userIds: [member.id] }],
      quarantined: [{ endpoint: '/v3/list-members', reason: 'id missing', payload: { name: 'broken' } }],
      requests: [{ endpoint: '/v3/list-members', keyFingerprint: 'fp1', status: 200, durationMs: 80, at }],
      observedAt: at,
    });
    const snapshot = async (): Promise<unknown> => {
      const t = await db.pool.query(`SELECT * FROM tweets WHERE author_id = $1::bigint ORDER BY id`, [author.id]);
      const u = await db.pool.query(`SELECT * FROM users WHERE id = ANY($1::bigint[]) ORDER BY id`, [[author.id, member.id]]);
      const rest = await db.pool.query(
        `SELECT (SELECT json_agg(m ORDER BY m.tweet_id, m.observed_at) FROM tweet_metrics m JOIN tweets t ON t.id = m.tweet_id WHERE t.author_id = $1::bigint) AS tm,
                (SELECT json_agg(m ORDER BY m.user_id, m.observed_at) FROM user_metrics m WHERE m.user_id = ANY($2::bigint[])) AS um,
                (SELECT json_agg(x ORDER BY x.tweet_id) FROM job_tweets x WHERE x.job_id = $3::bigint) AS jt,
                (SELECT json_agg(x ORDER BY x.user_id, x.role) FROM job_users x WHERE x.job_id = $3::bigint) AS ju,
                (SELECT json_agg(json_build_object('l', x.list_id, 'u', x.user_id, 'f', x.first_seen_at)) FROM list_members x WHERE x.list_id = $4::bigint) AS lm,
                (SELECT json_agg(x) FROM quarantine x WHERE x.job_id = $3::bigint) AS q,
                (SELECT json_agg(x) FROM api_requests x WHERE x.job_id = $3::bigint) AS r,
                (SELECT json_build_object('t', tweets, 'u', users, 'r', requests_spent) FROM jobs WHERE id = $3::bigint) AS j`,
        [author.id, [author.id, member.id], slice.jobId, listId],
      );
      const strip = (rows: Array<Record<string, unknown>>): unknown => rows.map(({ last_seen_at: _l, ...keep }) => keep);
      return { t: strip(t.rows), u: strip(u.rows), rest: rest.rows[0], lastSeen: t.rows.map((r) => r.last_seen_at) };
    };

    const first = await commitPage(db.pool, base);
    expect(first).toMatchObject({ newTweets: 2, newUsers: 2 });
    const before = (await snapshot()) as { lastSeen: Date[] };
    await db.pool.query(`UPDATE job_slices SET cursor = NULL WHERE id = $1::bigint`, [slice.sliceId]);
    const replay = await commitPage(db.pool, { ...base, observedAt: new Date('2026-09-02T00:00:00Z') });
    expect(replay).toMatchObject({ newTweets: 0, newUsers: 0 });
    const after = (await snapshot()) as { lastSeen: Date[] };
    const { lastSeen: seenBefore, ...restBefore } = before;
    const { lastSeen: seenAfter, ...restAfter } = after;
    expect(restAfter).toEqual(restBefore);
    expect(seenAfter.map((d) => d.toISOString())).toEqual(seenAfter.map(() => '2026-09-02T00:00:00.000Z'));
    expect(seenBefore.map((d) => d.toISOString())).toEqual(seenBefore.map(() => '2026-09-01T00:00:00.000Z'));
    const edge = await one<{ last: Date }>(`SELECT last_seen_at AS last FROM list_members WHERE list_id = $1::bigint`, [listId]);
    expect(edge.last.toISOString()).toBe('2026-09-02T00:00:00.000Z');
  });

  it('a failure mid-commit leaves nothing behind, cursor and counters included', async () => {
    const slice = await newSlice();
    const tweet = makeTweet(id(), makeUser(id('400')));
    const failing = commitPage(db.pool, page(slice, { tweets: [tweet] }), {
      // A bad row after the tweets are written: a provenance row without a job (not-null violation).
      afterTweets: async (client) => {
        const written = await client.query(`SELECT 1 FROM tweets WHERE id = $1::bigint`, [tweet.id]);
        expect(written.rowCount).toBe(1);
        await client.query(`INSERT INTO job_tweets (job_id, tweet_id) VALUES (NULL, 1)`);
      },
    });
    await expect(failing).rejects.toMatchObject({ code: '23502' });
    const left = await one<{ t: number; u: number; p: number }>(
      `SELECT (SELECT count(*) FROM tweets WHERE id = $1::bigint)::int AS t, (SELECT count(*) FROM users WHERE id = $2::bigint)::int AS u,
              (SELECT count(*) FROM job_tweets WHERE job_id = $3::bigint)::int AS p`,
      [tweet.id, tweet.authorId, slice.jobId],
    );
    expect(left).toEqual({ t: 0, u: 0, p: 0 });
    expect(await getSlice(db.pool, slice.sliceId)).toMatchObject({ cursor: null, pages: 0, status: 'pending' });
    expect(await getJob(db.pool, slice.jobId)).toMatchObject({ pages: 0, tweets: 0 });
  });

  it('refuses a page fetched with a cursor the slice no longer has, or for a finished slice', async () => {
    const slice = await newSlice();
    await commitPage(db.pool, page(slice, { tweets: [makeTweet(id(), makeUser(id('500')))] }));
    const late = makeTweet(id(), makeUser(id('500')));
    await expect(commitPage(db.pool, page(slice, { expectedCursor: null, tweets: [late] }))).rejects.toBeInstanceOf(StaleSliceError);
    expect((await one<{ n: number }>(`SELECT count(*)::int AS n FROM tweets WHERE id = $1::bigint`, [late.id])).n).toBe(0);

    await commitPage(db.pool, page(slice, { expectedCursor: 'c1', nextCursor: null, sliceDone: true }));
    const done = await getSlice(db.pool, slice.sliceId);
    expect(done).toMatchObject({ status: 'done', cursor: null });
    expect(done?.finishedAt).toBeInstanceOf(Date);
    await expect(commitPage(db.pool, page(slice, { expectedCursor: null }))).rejects.toMatchObject({ code: 'STALE_SLICE' });
  });

  it.each([SliceEndReason.BUDGET, SliceEndReason.MAX_TWEETS])(
    'stores a page in flight when its job ended (%s) meanwhile: paid for, under the same guard; the slice stays done',
    async (reason) => {
      const { jobId, sliceIds } = await newSlices(db.pool, 2);
      const [walking, other] = sliceIds as [string, string];
      expect(await markSliceRunning(db.pool, walking, jobId, 'walk-1')).toBe(true);
      await commitPage(db.pool, page({ jobId, sliceId: walking }, { lease: 'walk-1', requests: [request()] }));
      await endJob(db.pool, jobId, 'stopped', reason);
      const inFlight = makeTweet(id(), makeUser(id('550')));
      await commitPage(db.pool, page({ jobId, sliceId: walking }, { lease: 'walk-1', expectedCursor: 'c1', nextCursor: 'c2', tweets: [inFlight], requests: [request()] }));
      expect((await one<{ n: number }>(`SELECT count(*)::int AS n FROM tweets WHERE id = $1::bigint`, [inFlight.id])).n).toBe(1);
      expect(await getSlice(db.pool, walking)).toMatchObject({ status: 'done', cursor: 'c2', pages: 2 });
      expect(await getJob(db.pool, jobId)).toMatchObject({ status: 'completed', pages: 2, tweets: 1, requestsSpent: 2 });
      // The guard still holds: another cursor, another lease, a slice never walked.
      await expect(commitPage(db.pool, page({ jobId, sliceId: walking }, { lease: 'walk-1', expectedCursor: 'c1' }))).rejects.toBeInstanceOf(StaleSliceError);
      await expect(commitPage(db.pool, page({ jobId, sliceId: walking }, { lease: 'walk-2', expectedCursor: 'c2' }))).rejects.toBeInstanceOf(StaleSliceError);
      await expect(commitPage(db.pool, page({ jobId, sliceId: other }, { lease: 'walk-1' }))).rejects.toBeInstanceOf(StaleSliceError);
      expect(await getSlice(db.pool, other)).toMatchObject({ status: 'done', pages: 0 });
    },
  );

  it('a page that lands on a slice ended for budget while its job was paused and resumed leaves it done', async () => {
    const { jobId, sliceIds } = await newSlices(db.pool, 1, { lease: 'walk-1' });
    const walking = sliceIds[0]!;
    await commitPage(db.pool, page({ jobId, sliceId: walking }, { lease: 'walk-1' }));
    await setJobControl(db.pool, jobId, 'pause');
    await endJob(db.pool, jobId, 'stopped', SliceEndReason.BUDGET);
    await setJobControl(db.pool, jobId, 'resume');
    await commitPage(db.pool, page({ jobId, sliceId: walking }, { lease: 'walk-1', expectedCursor: 'c1', nextCursor: 'c2', tweets: [makeTweet(id(), makeUser(id('560')))] }));
    expect(await getSlice(db.pool, walking)).toMatchObject({ status: 'done', cursor: 'c2', pages: 2 });
    expect(await rollUpJob(db.pool, jobId)).toBe('completed');
  });

  it('refuses a page for a slice its job cancelled', async () => {
    const { jobId, sliceIds } = await newSlices(db.pool, 1, { lease: 'walk-1' });
    await db.pool.query(`UPDATE job_slices SET status = 'cancelled' WHERE id = $1::bigint`, [sliceIds[0]]);
    await expect(commitPage(db.pool, page({ jobId, sliceId: sliceIds[0]! }, { lease: 'walk-1' }))).rejects.toBeInstanceOf(StaleSliceError);
  });

  it('lets exactly one of two concurrent commits of the same cursor win', async () => {
    const slice = await newSlice();
    const attempts = await Promise.allSettled([
      commitPage(db.pool, page(slice, { nextCursor: 'a', tweets: [makeTweet(id(), makeUser(id('600')))] })),
      commitPage(db.pool, page(slice, { nextCursor: 'b', tweets: [makeTweet(id(), makeUser(id('600')))] })),
    ]);
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    const rejected = attempts.find((a) => a.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(StaleSliceError);
    expect(await getSlice(db.pool, slice.sliceId)).toMatchObject({ pages: 1 });
  });

  it('keeps ids above 2^53 exact', async () => {
    const slice = await newSlice();
    const author = makeUser('9007199254740993');
    const quoted = makeTweet('9223372036854775807', author);
    const tweet = makeTweet('1999999999999999999', author, { quoted, quotedTweetId: quoted.id, conversationId: '1999999999999999997' });
    await commitPage(db.pool, page(slice, { tweets: [tweet] }));
    const row = await one<Record<string, string>>(
      `SELECT id::text, author_id::text AS a, quoted_tweet_id::text AS q, conversation_id::text AS c FROM tweets WHERE id = 1999999999999999999`,
    );
    expect(row).toEqual({ id: '1999999999999999999', a: '9007199254740993', q: '9223372036854775807', c: '1999999999999999997' });
    expect(await getSlice(db.pool, slice.sliceId)).toMatchObject({ newestTweetId: '1999999999999999999', oldestTweetId: '1999999999999999999' });
  });

  it('stores the ISO and the legacy timestamp forms as the same timestamptz', async () => {
    const slice = await newSlice();
    const author = makeUser(id('700'), { createdAt: new Date('Sun Aug 02 13:30:00 +0000 2026') });
    const iso = makeTweet(id(), author, { createdAt: new Date('2026-08-02T13:30:00.000Z') });
    const legacy = makeTweet(id(), author, { createdAt: new Date('Sun Aug 02 13:30:00 +0000 2026') });
    await commitPage(db.pool, page(slice, { tweets: [iso, legacy] }));
    const { rows } = await db.pool.query(
      `SELECT created_at = '2026-08-02 13:30:00+00'::timestamptz AS exact FROM tweets WHERE id = ANY($1::bigint[])
       UNION ALL SELECT created_at = '2026-08-02 13:30:00+00'::timestamptz FROM users WHERE id = $2::bigint`,
      [[iso.id, legacy.id], author.id],
    );
    expect(rows).toEqual([{ exact: true }, { exact: true }, { exact: true }]);
  });

  it('does not let a reduced user record erase richer columns', async () => {
    const slice = await newSlice();
    const full = makeUser(id('800'), { description: 'rich bio', location: 'Porto', followersCount: 100, raw: { full: true } });
    await commitPage(db.pool, page(slice, { users: [full], userRole: 'profile' }));
    const reduced = makeUser(full.id, {
      source: 'v3-reduced', description: null, location: null, createdAt: null, verified: null, bannerUrl: null,
      bioUrls: [], followersCount: 120, raw: { reduced: true },
    });
    const communityId = id('900');
    await commitPage(db.pool, page(slice, {
      expectedCursor: 'c1', nextCursor: 'c2', users: [reduced], userRole: 'member',
      edges: [{ kind: 'community_member', ownerId: communityId, userIds: [full.id] }],
    }));
    const row = await one<Record<string, unknown>>(
      `SELECT description, location, banner_url, bio_urls, followers_count::int AS followers, source, raw, created_at IS NOT NULL AS has_created
       FROM users WHERE id = $1::bigint`, [full.id],
    );
    expect(row).toEqual({
      description: 'rich bio', location: 'Porto', banner_url: full.bannerUrl, bio_urls: full.bioUrls, followers: 120,
      source: 'v3', raw: { full: true }, has_created: true,
    });
    const member = await one<{ n: number }>(`SELECT count(*)::int AS n FROM community_members WHERE community_id = $1::bigint AND user_id = $2::bigint`, [communityId, full.id]);
    expect(member.n).toBe(1);
  });

  it('ranks a v3 follower record above the reduced shapes: a later reduced record keeps its raw', async () => {
    const slice = await newSlice();
    const follower = makeUser(id('850'), { source: 'v3-follower', bioUrls: ['https://b.example'], raw: { follower: true } });
    await commitPage(db.pool, page(slice, { users: [follower], userRole: 'follower' }));
    for (const [n, source] of [[2, 'v3-reduced'], [3, 'v3-top-follower'], [4, 'v2-basic']] as const) {
      const poorer = makeUser(follower.id, { source, bioUrls: [], raw: { poorer: source } });
      await commitPage(db.pool, page(slice, { expectedCursor: `c${n - 1}`, nextCursor: `c${n}`, users: [poorer], userRole: 'member' }));
    }
    const row = await one<Record<string, unknown>>(`SELECT source, raw, bio_urls FROM users WHERE id = $1::bigint`, [follower.id]);
    expect(row).toEqual({ source: 'v3-follower', raw: { follower: true }, bio_urls: ['https://b.example'] });
  });

  it('records engagement observations only when counts change', async () => {
    const slice = await newSlice();
    const author = makeUser(id('1000'));
    const tweet = makeTweet(id(), author, { likeCount: 10 });
    let cursor: string | null = null;
    const commit = async (t: typeof tweet, minute: number): Promise<void> => {
      const next = `c${minute}`;
      await commitPage(db.pool, page(slice, { expectedCursor: cursor, nextCursor: next, tweets: [t], observedAt: new Date(Date.UTC(2026, 8, 1, 0, minute)) }));
      cursor = next;
    };
    const counts = async (): Promise<{ t: number; u: number }> =>
      one(`SELECT (SELECT count(*) FROM tweet_metrics WHERE tweet_id = $1::bigint)::int AS t, (SELECT count(*) FROM user_metrics WHERE user_id = $2::bigint)::int AS u`, [tweet.id, author.id]);
    await commit(tweet, 1);
    expect(await counts()).toEqual({ t: 1, u: 1 });
    await commit(tweet, 2);
    expect(await counts()).toEqual({ t: 1, u: 1 });
    await commit({ ...tweet, likeCount: 11, author: { ...author, followersCount: 101 } }, 3);
    expect(await counts()).toEqual({ t: 2, u: 2 });
    // An embedded copy without counts neither adds an observation nor erases the counts.
    const bare = { ...tweet, source: 'v2-embedded' as const, likeCount: null, retweetCount: null, replyCount: null, quoteCount: null, bookmarkCount: null, viewCount: null };
    await commit(makeTweet(id(), author, { quoted: bare, quotedTweetId: bare.id }), 4);
    expect((await counts()).t).toBe(2);
    const latest = await one<{ like_count: string; source: string }>(`SELECT like_count, source FROM tweets WHERE id = $1::bigint`, [tweet.id]);
    expect(latest).toEqual({ like_count: '11', source: 'v3' });
  });

  it('keeps the last 50 cursor hashes and counts runs of empty pages', async () => {
    const slice = await newSlice();
    const old = Array.from({ length: 50 }, (_, i) => `h${i}`);
    await db.pool.query(`UPDATE job_slices SET recent_cursors = $2, cursor = 'x0' WHERE id = $1::bigint`, [slice.sliceId, old]);
    await commitPage(db.pool, page(slice, { expectedCursor: 'x0', nextCursor: 'x1', recentCursorHash: 'new', emptyPage: true }));
    await commitPage(db.pool, page(slice, { expectedCursor: 'x1', nextCursor: 'x2', emptyPage: true }));
    let s = await getSlice(db.pool, slice.sliceId);
    expect(s?.recentCursors).toEqual([...old.slice(1), 'new']);
    expect(s?.emptyPages).toBe(2);
    await commitPage(db.pool, page(slice, { expectedCursor: 'x2', nextCursor: 'x3', tweets: [makeTweet(id(), makeUser(id('1100')))] }));
    s = await getSlice(db.pool, slice.sliceId);
    expect(s?.emptyPages).toBe(0);
  });

  it('strips NUL characters Postgres cannot store instead of failing the page', async () => {
    const slice = await newSlice();
    const tweet = makeTweet(id(), makeUser(id('1200'), { description: 'bio\u0000x' }), {
      fullText: 'a\u0000b', hashtags: ['t\u0000ag'], raw: { text: 'a\u0000b', nested: ['\u0000'] },
    });
    await commitPage(db.pool, page(slice, { tweets: [tweet] }));
    const row = await one<Record<string, unknown>>(`SELECT full_text, hashtags, raw FROM tweets WHERE id = $1::bigint`, [tweet.id]);
    expect(row).toEqual({ full_text: 'ab', hashtags: ['tag'], raw: { text: 'ab', nested: [''] } });
  });

  it('stores half an emoji (a lone surrogate) as U+FFFD instead of failing the page', async () => {
    const slice = await newSlice();
    // Text cut mid-emoji: JSON.stringify writes the lone half as \ud83d, which jsonb refuses.
    const cut = 'cut \ud83d';
    const tweet = makeTweet(id(), makeUser(id('1200'), { raw: { description: cut } }), { fullText: cut, raw: { text: cut, pair: '\ud83d\ude00', low: '\ude00x' } });
    await commitPage(db.pool, page(slice, { tweets: [tweet] }));
    const row = await one<Record<string, unknown>>(`SELECT full_text, raw FROM tweets WHERE id = $1::bigint`, [tweet.id]);
    expect(row).toEqual({ full_text: 'cut \ufffd', raw: { text: 'cut \ufffd', pair: '\u{1f600}', low: '\ufffdx' } });
    const author = await one<{ raw: unknown }>(`SELECT raw FROM users WHERE id = $1::bigint`, [tweet.author!.id]);
    expect(author.raw).toEqual({ description: 'cut \ufffd' });
  });
});
