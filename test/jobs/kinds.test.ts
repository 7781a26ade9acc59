import { describe, expect, it, vi } from 'vitest';
import type { World } from '../../src/simulator/model.ts';
import { TARGET_MISSING_MESSAGE } from '../../src/store/job-runtime.ts';
import { jobTweetIds, useHarness, type Harness } from '../helpers/harness.ts';

const visible = (w: World, i: number) => {
  const u = w.users[i]!;
  return !u.protected && !u.suspended && !u.deleted;
};

async function count(h: Harness, sql: string, params: unknown[]): Promise<number> {
  const { rows } = await h.services.pool.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}

describe('job kinds end to end', () => {
  const h = useHarness();

  it('list: tweets, members and followers (200 a page), with edges', async () => {
    const w = h.sim.world;
    const list = [...w.lists].sort((a, b) => b.followers.length - a.followers.length)[0]!;
    expect(list.followers.length).toBeGreaterThan(200);
    const jobId = await h.submit({ kind: 'list', params: { listId: list.id } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    const members = await count(h, 'SELECT count(*)::int AS n FROM list_members WHERE list_id = $1::bigint', [list.id]);
    const followers = await count(h, 'SELECT count(*)::int AS n FROM list_followers WHERE list_id = $1::bigint', [list.id]);
    // The service lists protected accounts in memberships but not suspended or deleted ones.
    const listed = (i: number) => !w.users[i]!.suspended && !w.users[i]!.deleted;
    expect(members).toBe(list.members.filter(listed).length);
    expect(followers).toBe(list.followers.filter(listed).length);
    expect((await jobTweetIds(h, jobId)).length).toBeGreaterThan(0);
  });

  it('list and community members: an empty first page is noted on the job (an outage answers every endpoint empty)', async () => {
    const w = h.sim.world;
    const list = [...w.lists].sort((a, b) => b.members.length - a.members.length)[0]!;
    const community = [...w.communities].sort((a, b) => b.members.length - a.members.length)[0]!;
    h.sim.control.setFaults({ emptyEndRate: 1 });
    try {
      const listJob = await h.runUntil(await h.submit({ kind: 'list', params: { listId: list.id } }));
      expect(listJob.status).toBe('completed');
      for (const what of ["the list's tweets", "the list's members", "the list's followers"]) {
        expect(listJob.note).toContain(`${what}: the first page was empty (none, or the service answering empty: outage?)`);
      }
      const communityJob = await h.runUntil(await h.submit({ kind: 'community', params: { communityId: community.id } }));
      expect(communityJob.note).toContain("the community's members: the first page was empty");
    } finally {
      h.sim.control.setFaults({ emptyEndRate: 0 });
    }
  });

  it('community: members', async () => {
    const w = h.sim.world;
    const community = [...w.communities].sort((a, b) => b.members.length - a.members.length)[0]!;
    const jobId = await h.submit({ kind: 'community', params: { communityId: community.id } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    const members = await count(h, 'SELECT count(*)::int AS n FROM community_members WHERE community_id = $1::bigint', [community.id]);
    expect(members).toBeGreaterThan(20);
    expect(members).toBeLessThanOrEqual(community.members.length);
  });

  it('user: profile and the whole timeline', async () => {
    const w = h.sim.world;
    const user = w.users.filter((u) => visible(w, u.index)).sort((a, b) => w.tweetsByAuthor(b.index).length - w.tweetsByAuthor(a.index).length)[0]!;
    const jobId = await h.submit({ kind: 'user', params: { target: { username: user.username } } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    const profile = await h.services.pool.query('SELECT username, followers_count FROM users WHERE id = $1::bigint', [user.id]);
    expect(profile.rows[0]).toMatchObject({ username: user.username });
    const own = await count(h, 'SELECT count(*)::int AS n FROM job_tweets jt JOIN tweets t ON t.id = jt.tweet_id WHERE jt.job_id = $1 AND t.author_id = $2::bigint', [jobId, user.id]);
    expect(own).toBe(w.tweetsByAuthor(user.index).length);
  });

  it('user: a protected account is recorded as missing and the job fails, with that note', async () => {
    const w = h.sim.world;
    const hidden = w.users.find((u) => u.protected)!;
    const jobId = await h.submit({ kind: 'user', params: { target: { username: hidden.username } } });
    const snap = await h.runUntil(jobId);
    // Its profile and timeline walks both found it missing: `--wait` exits non-zero (it completed
    // with nothing, so `harvest user <typo> --wait && harvest export` went on as if it had worked).
    expect(snap).toMatchObject({ status: 'failed', errorMessage: TARGET_MISSING_MESSAGE, tweets: 0 });
    expect(snap.note).toMatch(/404/);
  });

  it('replies of an unknown tweet: the listing\'s 404 and a search that finds nothing fail the job', async () => {
    // The conversation search answers an unknown root with an empty page, not a 404: the job read
    // nothing, so it fails as a missing target (it completed with 0 tweets).
    const jobId = await h.submit({ kind: 'replies', params: { tweetId: '1999999999999999999' } });
    const snap = await h.runUntil(jobId);
    expect(snap).toMatchObject({ status: 'failed', errorMessage: TARGET_MISSING_MESSAGE, tweets: 0 });
  });

  it('replies: the listing and the conversation search, deduplicated', async () => {
    const w = h.sim.world;
    let root = -1;
    let best = 0;
    for (let i = 0; i < w.tweets.count; i++) {
      if (w.tweets.inReplyTo(i) !== -1 || !visible(w, w.tweets.author(i))) continue;
      const n = w.conversationReplies(i).length;
      if (n > best) [root, best] = [i, n];
    }
    expect(best).toBeGreaterThan(20);
    const comments = vi.spyOn(h.services.client, 'comments');
    const jobId = await h.submit({ kind: 'replies', params: { tweetId: w.tweets.idString(root) } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    // Production documents a bare id only for tweet-info and article: the listing gets a link, and
    // asks for the chronological order rather than the ranked default.
    expect(comments.mock.calls.length).toBeGreaterThan(1);
    for (const [params] of comments.mock.calls) {
      expect(params).toMatchObject({ tweetLink: `https://x.com/i/web/status/${w.tweets.idString(root)}`, orderBy: 'Recency' });
    }
    comments.mockRestore();
    const expected = w.conversationReplies(root).filter((i) => visible(w, w.tweets.author(i))).map((i) => w.tweets.idString(i));
    const got = new Set(await jobTweetIds(h, jobId));
    for (const id of expected) expect(got.has(id)).toBe(true);
  });

  it('replies of a tweet that is itself a reply: the listing only once the store holds it (a conversation_id: search of a reply finds nothing)', async () => {
    const w = h.sim.world;
    const t = w.tweets;
    // A visible reply with the most visible direct replies of its own.
    const direct = (i: number) => {
      const out: number[] = [];
      for (let j = 0; j < t.count; j++) if (t.inReplyTo(j) === i && visible(w, t.author(j))) out.push(j);
      return out;
    };
    // Not stored by an earlier test of this file (a replies job stores a whole conversation).
    const stored = new Set((await h.services.pool.query<{ id: string }>('SELECT id::text FROM tweets')).rows.map((r) => r.id));
    let reply = -1;
    let best: number[] = [];
    for (let i = 0; i < t.count; i++) {
      if (t.inReplyTo(i) === -1 || !visible(w, t.author(i)) || t.replies(i) <= best.length || stored.has(t.idString(i))) continue;
      const d = direct(i);
      if (d.length > best.length) [reply, best] = [i, d];
    }
    expect(best.length).toBeGreaterThan(0);
    const tweetId = t.idString(reply);
    const searches = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets').length;
    // Not stored: nothing says it is a reply, so both walks run (the search's one page finds nothing).
    let before = searches();
    const first = await h.submit({ kind: 'replies', params: { tweetId } });
    expect((await h.runUntil(first)).status).toBe('completed');
    expect(searches() - before).toBe(1);
    // Stored now (hydrate), as a reply: the listing alone, no search request.
    expect((await h.runUntil(await h.submit({ kind: 'hydrate', params: { ids: [tweetId] } }))).status).toBe('completed');
    before = searches();
    const second = await h.submit({ kind: 'replies', params: { tweetId } });
    const snap = await h.runUntil(second);
    expect(snap.status).toBe('completed');
    expect(searches() - before).toBe(0);
    const slices = await h.services.pool.query<{ kind: string }>('SELECT kind FROM job_slices WHERE job_id = $1', [second]);
    expect(slices.rows.map((r) => r.kind)).toEqual(['comments']);
    const got = new Set(await jobTweetIds(h, second));
    for (const j of best) expect(got.has(t.idString(j))).toBe(true);
  });

  it('hydrate: 100 ids a request, missing ids noted', async () => {
    const w = h.sim.world;
    const ids: string[] = [];
    for (let i = 0; i < w.tweets.count && ids.length < 230; i += 7) if (visible(w, w.tweets.author(i))) ids.push(w.tweets.idString(i));
    const before = h.sim.control.requestLog().filter((r) => r.path.includes('tweet-info-bulk')).length;
    const jobId = await h.submit({ kind: 'hydrate', params: { ids: [...ids, '1999999999999999999'] } });
    const snap = await h.runUntil(jobId);
    expect(snap.status).toBe('completed');
    expect(h.sim.control.requestLog().filter((r) => r.path.includes('tweet-info-bulk')).length - before).toBe(3);
    expect(await jobTweetIds(h, jobId)).toEqual([...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));
    expect(snap.note).toMatch(/not returned/);
    // The ids are in the slices; the job row keeps their number (a million ids were 22 MB, read
    // back with every slice run and status poll).
    expect(snap.params).toEqual({ idCount: ids.length + 1 });
  });
});
