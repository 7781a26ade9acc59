/**
 * Gap-proof watermarks: a pass cut short by an outage (empty pages with cursors after its first
 * page) keeps the watermark and records the unread range; the next healthy pass reads the new
 * items and the gap, and every mention ends up stored.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';
import { failSlice } from '../../src/jobs/slice-runner.ts';
import { getWatchRow } from '../../src/store/watches.ts';
import { finishSlice } from '../../src/store/job-runtime.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('gap-proof watermarks', () => {
  // 2 requests a second: an outage switched on after the first page lands before the second.
  const h = useHarness({ rate: 2 });
  const mentionRequests = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/mentions').length;

  /** The `rank`-th least mentioned visible account with at least 3 mentions: its passes are a page or two. */
  function quietHandle(rank: number) {
    const w = h.sim.world;
    return [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted && w.mentionsOf(u.index).length >= 3)
      .sort((a, b) => w.mentionsOf(a.index).length - w.mentionsOf(b.index).length)[rank]!;
  }

  /**
   * A one-shot mentions pass whose first page is served healthy, then `fault` switched on until
   * the pass ends: its job, snapshot and the mention requests it made.
   */
  async function passCutBy(params: Record<string, unknown>, fault: 'emptyPageRate' | 'emptyEndRate') {
    const before = mentionRequests();
    const jobId = await h.submit({ kind: 'mentions', params });
    const running = h.runUntil(jobId, { timeoutMs: 60_000 });
    while (mentionRequests() === before) await new Promise((r) => setTimeout(r, 2));
    h.sim.control.setFaults({ [fault]: 1 });
    const snap = await running.finally(() => h.sim.control.setFaults({ [fault]: 0 }));
    return { jobId, snap, requests: mentionRequests() - before };
  }

  async function storedMentions(handle: string): Promise<string[]> {
    const { rows } = await h.services.pool.query<{ id: string }>(
      `SELECT DISTINCT jt.tweet_id::text AS id FROM job_tweets jt JOIN jobs j ON j.id = jt.job_id
        WHERE j.kind = 'mentions' AND lower(j.params->>'handle') = lower($1)`,
      [handle],
    );
    return rows.map((r) => r.id);
  }

  it('an outage in the middle of a pass, then a healthy pass: every mention stored, the gap closed', async () => {
    const w = h.sim.world;
    // A quiet handle: its first pass is one or two pages.
    const target = quietHandle(0);
    const since = '2026-09-01';
    const first = await h.submit({ kind: 'mentions', params: { handle: target.username, since } });
    expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
    const watermark = (await getWatchRow(h.services.pool, first))!.highWatermarkId;

    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    const added = h.sim.control.addTweets(
      Array.from({ length: 60 }, (_, i) => ({ authorHandle: author.username, text: `outage @${target.username} ${i}` })),
    );

    // The outage starts once the pass's first page is served.
    const { jobId: cut, snap: cutSnap, requests } = await passCutBy({ handle: target.username }, 'emptyPageRate');
    expect(cutSnap.status).toBe('completed');
    expect(requests).toBe(4); // one page, then three empty pages end the walk
    const afterCut = (await getWatchRow(h.services.pool, cut))!;
    expect(afterCut.highWatermarkId).toBe(watermark); // kept: the pass did not reach it
    expect(afterCut.gaps).toHaveLength(1);
    expect(afterCut.gaps[0]).toMatchObject({ afterId: watermark, reason: 'empty-pages' });
    expect(cutSnap.watch?.gaps).toEqual([expect.objectContaining({ afterId: watermark, reason: 'empty-pages' })]); // harvest status
    const stored = new Set(await storedMentions(target.username));
    expect(added.filter((id) => !stored.has(id)).length).toBe(40); // the 40 older new ones were missed

    const healthy = await h.submit({ kind: 'mentions', params: { handle: target.username } });
    expect((await h.runUntil(healthy, { timeoutMs: 60_000 })).status).toBe('completed');
    const final = (await getWatchRow(h.services.pool, healthy))!;
    expect(final.gaps).toEqual([]);
    expect(final.highWatermarkId).toBe(added.at(-1));
    const all = await storedMentions(target.username);
    const expected = expectedSearchIds(w, `@${target.username} since:${since}`);
    expect(expected.filter((id) => !all.includes(id))).toEqual([]);
    for (const id of added) expect(all).toContain(id);
  });

  it('a pass that failed keeps the watermark, is counted, and leaves its unread range as a gap', async () => {
    const target = quietHandle(0);
    // (--min-replies 0: an identity of its own, apart from the first test's)
    const first = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01', minReplies: 0 } });
    expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
    const watermark = (await getWatchRow(h.services.pool, first))!.highWatermarkId!;
    const next = await h.submit({ kind: 'mentions', params: { handle: target.username, minReplies: 0 } });
    const { rows } = await h.services.pool.query<{ id: string }>("SELECT id::text FROM job_slices WHERE job_id = $1 AND params ? 'pass'", [next]);
    const sliceId = rows[0]!.id;
    // one page of new mentions committed (newest and oldest recorded), then the pass gave up
    const newer = (BigInt(watermark) + 10_000_000n).toString();
    await h.services.pool.query(
      "UPDATE job_slices SET status = 'running', newest_tweet_id = $2::bigint, oldest_tweet_id = $3::bigint WHERE id = $1",
      [sliceId, (BigInt(newer) + 5n).toString(), newer],
    );
    await failSlice(h.services.pool, sliceId, new Error('gave up after the queue\'s attempts'));
    const after = (await getWatchRow(h.services.pool, next))!;
    expect(after.highWatermarkId).toBe(watermark);
    expect(after.passes).toBe(1);
    expect(after.gaps).toEqual([expect.objectContaining({ afterId: watermark, beforeId: newer, reason: 'failed' })]);
  });

  it('an outage that answers empty pages without a cursor cuts a mentions pass short instead of ending it', async () => {
    const w = h.sim.world;
    const target = quietHandle(0);
    // (--min-likes 0: an identity of its own)
    const params = { handle: target.username, minLikes: 0 };
    const first = await h.submit({ kind: 'mentions', params: { ...params, since: '2026-09-01' } });
    expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
    const watermark = (await getWatchRow(h.services.pool, first))!.highWatermarkId;
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    const added = h.sim.control.addTweets(
      Array.from({ length: 60 }, (_, i) => ({ authorHandle: author.username, text: `empty end @${target.username} ${i}` })),
    );

    const { jobId: cut, snap: cutSnap, requests } = await passCutBy(params, 'emptyEndRate');
    expect(cutSnap.status).toBe('completed');
    expect(requests).toBe(2); // one page, then the empty end
    const afterCut = (await getWatchRow(h.services.pool, cut))!;
    expect(afterCut.highWatermarkId).toBe(watermark); // kept: the listing cannot end above it
    expect(afterCut.gaps).toEqual([expect.objectContaining({ afterId: watermark, reason: 'empty-end' })]);

    const healthy = await h.submit({ kind: 'mentions', params });
    expect((await h.runUntil(healthy, { timeoutMs: 60_000 })).status).toBe('completed');
    const final = (await getWatchRow(h.services.pool, healthy))!;
    expect(final.gaps).toEqual([]);
    expect(final.highWatermarkId).toBe(added.at(-1));
    const all = await storedMentions(target.username);
    for (const id of added) expect(all).toContain(id);
  });

  it('the same empty end twice from one watermark is where the listing ends: the second pass completes', async () => {
    const w = h.sim.world;
    const target = quietHandle(1);
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    h.sim.control.addTweets([{ authorHandle: author.username, text: `seen @${target.username}` }]);
    const first = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01' } });
    expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
    const watermark = (await getWatchRow(h.services.pool, first))!.highWatermarkId;
    expect(watermark).not.toBeNull();
    const added = h.sim.control.addTweets(
      Array.from({ length: 60 }, (_, i) => ({ authorHandle: author.username, text: `depth @${target.username} ${i}` })),
    );
    // Twice: a page, then the service ends the listing with an empty page.
    const cutPass = async (): Promise<string> => {
      const { jobId, snap } = await passCutBy({ handle: target.username }, 'emptyEndRate');
      expect(snap.status).toBe('completed');
      return jobId;
    };
    const onceJob = await cutPass();
    const once = (await getWatchRow(h.services.pool, onceJob))!;
    expect(once.highWatermarkId).toBe(watermark);
    expect((await runCli(['status', onceJob], h.env)).out).toMatch(/^gap +ids after \d+ up to \d+ unread \(empty-end\); the next pass reads them$/m);
    const twiceJob = await cutPass();
    const twice = (await getWatchRow(h.services.pool, twiceJob))!;
    // Reading it again at every pass would buy the same pages forever: the watermark moves on,
    // and the unread range stays on record, and `status` says no pass reads it (it promised one).
    expect(twice.highWatermarkId).toBe(added.at(-1));
    expect(twice.gaps).toEqual([expect.objectContaining({ afterId: watermark, reason: 'empty-end' })]);
    expect((await runCli(['status', twiceJob], h.env)).out).toMatch(/^gap +ids after \d+ up to \d+ unread \(empty-end\); the listing ended there twice, so no pass reads it$/m);
  });

  it("a keyword watch's first pass cut short records its unread range down to the floor", async () => {
    const w = h.sim.world;
    const word = 'gapfloor';
    h.sim.control.addTweets(Array.from({ length: 30 }, (_, i) => ({ authorHandle: w.users.find((u) => !u.protected && !u.suspended && !u.deleted)!.username, text: `${word} ${i}` })));
    const jobId = await h.submit({ kind: 'search', params: { query: word, everySeconds: 600 } });
    const searches = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets').length;
    const before = searches();
    const running = h.runUntil(jobId, { until: ['scheduled', 'failed'], timeoutMs: 60_000 });
    while (searches() === before) await new Promise((r) => setTimeout(r, 2));
    h.sim.control.setFaults({ emptyPageRate: 1 });
    await running;
    h.sim.control.setFaults({ emptyPageRate: 0 });
    const watch = (await getWatchRow(h.services.pool, jobId))!;
    expect(watch.highWatermarkId).toBeNull();
    // The floor is 7 days back: the gap starts just below its first id.
    expect(watch.gaps).toEqual([expect.objectContaining({ reason: 'empty-pages' })]);
    expect(BigInt(watch.gaps[0]!.afterId)).toBe(((BigInt(watch.floorMs!) - 1288834974657n) << 22n) - 1n);
  });

  it("a failed pass is counted in its slice's own end: no crash can leave it uncounted", async () => {
    const w = h.sim.world;
    const target = quietHandle(0);
    // (--min-retweets 0: an identity of its own)
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    h.sim.control.addTweets([{ authorHandle: author.username, text: `seen @${target.username}` }]);
    const first = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01', minRetweets: 0 } });
    expect((await h.runUntil(first, { timeoutMs: 60_000 })).status).toBe('completed');
    const watermark = (await getWatchRow(h.services.pool, first))!.highWatermarkId!;
    const next = await h.submit({ kind: 'mentions', params: { handle: target.username, minRetweets: 0 } });
    const { rows } = await h.services.pool.query<{ id: string }>("SELECT id::text FROM job_slices WHERE job_id = $1 AND params ? 'pass'", [next]);
    await h.services.pool.query("UPDATE job_slices SET status = 'running' WHERE id = $1", [rows[0]!.id]);
    // The slice's end alone (a worker killed right after it): the pass is already recorded.
    await finishSlice(h.services.pool, { sliceId: rows[0]!.id, jobId: next, status: 'failed', errorCode: 'X', errorMessage: 'gave up' });
    const after = (await getWatchRow(h.services.pool, next))!;
    expect(after.passes).toBe(1);
    expect(after.highWatermarkId).toBe(watermark);
    expect(after.gaps).toEqual([expect.objectContaining({ afterId: watermark, reason: 'failed' })]);
  });
});
