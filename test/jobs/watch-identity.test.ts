/**
 * Watch identity: every pass of one (kind, target, filters), scheduled or one-shot, continues from
 * the identity's watermark; other filters are another identity; --full re-reads on purpose.
 */
import { describe, expect, it } from 'vitest';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';
import { runCli } from '../helpers/cli.ts';
import { getWatch } from '../helpers/store-rows.ts';
import { expectedSearchIds } from './ground-truth.ts';

describe('watch identity', () => {
  const h = useHarness();
  const mentionCalls = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/mentions').length;

  function busyTarget() {
    const w = h.sim.world;
    return [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[0]!;
  }

  it('a second one-shot pass of the same handle and filters with nothing new costs one request; a third stores only what is new', async () => {
    const target = busyTarget();
    const first = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01' } });
    expect((await h.runUntil(first)).status).toBe('completed');
    const firstCalls = mentionCalls();
    expect(firstCalls).toBeGreaterThan(1);
    const watermark = (await getWatch(h.services.pool, first))!.highWatermarkId;
    expect(watermark).not.toBeNull();

    // Same identity (the handle in another case), one-shot, no --since: one request.
    const second = await h.submit({ kind: 'mentions', params: { handle: target.username.toUpperCase() } });
    expect((await h.runUntil(second)).status).toBe('completed');
    expect(mentionCalls() - firstCalls).toBe(1);
    expect((await getWatch(h.services.pool, second))!.highWatermarkId).toBe(watermark);

    const author = h.sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    const added = h.sim.control.addTweets(
      Array.from({ length: 3 }, (_, i) => ({ authorHandle: author.username, text: `ping @${target.username} ${i}` })),
    );
    const before = mentionCalls();
    const third = await h.submit({ kind: 'mentions', params: { handle: target.username } });
    expect((await h.runUntil(third)).status).toBe('completed');
    expect(mentionCalls() - before).toBe(1);
    const stored = await jobTweetIds(h, third);
    for (const id of added) expect(stored).toContain(id);
    // Every mention the service has since --since is stored, once.
    const expected = expectedSearchIds(h.sim.world, `@${target.username} since:2026-09-01`);
    const { rows } = await h.services.pool.query<{ id: string }>(
      'SELECT DISTINCT tweet_id::text AS id FROM job_tweets WHERE job_id = ANY($1::bigint[]) ORDER BY 1',
      [[first, second, third]],
    );
    expect(rows.map((r) => r.id).sort()).toEqual([...expected].sort());
    expect((await getWatch(h.services.pool, third))!.highWatermarkId).toBe(added.at(-1));
  });

  it('other filters are another identity, and --full re-reads to --since on purpose', async () => {
    const target = busyTarget();
    // The first test's identity: this one-shot pass is idle (one request).
    let calls = mentionCalls();
    const base = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01' } });
    await h.runUntil(base);
    expect(mentionCalls() - calls).toBe(1);
    calls = mentionCalls();
    const filtered = await h.submit({ kind: 'mentions', params: { handle: target.username, minLikes: 0, since: '2026-09-01' } });
    expect((await h.runUntil(filtered)).status).toBe('completed');
    expect(mentionCalls() - calls).toBeGreaterThan(1);

    calls = mentionCalls();
    const full = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-09-01', full: true } });
    expect((await h.runUntil(full)).status).toBe('completed');
    const fullCalls = mentionCalls() - calls;
    expect(fullCalls).toBeGreaterThan(1);
    const stored = new Set(await jobTweetIds(h, full));
    const expected = expectedSearchIds(h.sim.world, `@${target.username} since:2026-09-01`);
    expect(expected.filter((id) => !stored.has(id))).toEqual([]);
  });

  it('--full with a --since newer than the watermark reads down to the watermark: nothing between them is passed over', async () => {
    const w = h.sim.world;
    const visible = w.users.filter((u) => !u.protected && !u.suspended && !u.deleted);
    const [target, author] = [visible[3]!, visible[4]!];
    const first = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-10-25' } });
    expect((await h.runUntil(first)).status).toBe('completed');
    const watermark = (await getWatch(h.services.pool, first))!.highWatermarkId;
    expect(watermark).not.toBeNull();
    // One mention between the watermark and the --full pass's --since, then 22 above it.
    const [between] = h.sim.control.addTweets([{ authorHandle: author.username, text: `between @${target.username}`, createdAtMs: Date.parse('2026-11-10T12:00:00Z') }]);
    const above = h.sim.control.addTweets(
      Array.from({ length: 22 }, (_, i) => ({ authorHandle: author.username, text: `above ${i} @${target.username}`, createdAtMs: Date.parse('2026-11-20T12:00:00Z') + i * 60_000 })),
    );
    expect(BigInt(between!)).toBeGreaterThan(BigInt(watermark!));
    const full = await h.submit({ kind: 'mentions', params: { handle: target.username, since: '2026-11-18', full: true } });
    expect((await h.runUntil(full)).status).toBe('completed');
    const stored = await jobTweetIds(h, full);
    // The watermark moved to the newest; what lay between the old one and --since was read first.
    expect(stored).toContain(between);
    for (const id of above) expect(stored).toContain(id);
    expect((await getWatch(h.services.pool, full))!.highWatermarkId).toBe(above.at(-1));
  });

  it('a second schedule of one identity is refused in one line, until the first is cancelled', async () => {
    const run = (argv: string[]) => runCli(argv, h.env);
    const first = await run(['mentions', '@scheduledtwice', '--every', '5m', '--yes']);
    expect(first.code).toBe(0);
    const jobId = first.out.split('\n')[0]!;
    const second = await run(['mentions', '@ScheduledTwice', '--every', '1h', '--yes']);
    expect(second.code).not.toBe(0);
    expect(second.err.trim().split('\n')).toHaveLength(1);
    expect(second.err).toMatch(new RegExp(`job ${jobId} already watches this target`));
    // Other filters are another identity; a one-shot pass is not a schedule.
    expect((await run(['mentions', '@scheduledtwice', '--min-likes', '3', '--every', '5m', '--yes'])).code).toBe(0);
    expect((await run(['mentions', '@scheduledtwice'])).code).toBe(0);
    expect((await run(['cancel', jobId])).code).toBe(0);
    expect((await run(['mentions', '@scheduledtwice', '--every', '1h', '--yes'])).code).toBe(0);
  });

  it('a one-shot pass between two scheduled ones leaves no hole in the schedule\'s job: its tweets are linked there', async () => {
    const w = h.sim.world;
    const target = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted && w.mentionsOf(u.index).length >= 3)
      .sort((a, b) => w.mentionsOf(a.index).length - w.mentionsOf(b.index).length)[1]!;
    const author = w.users.find((u) => !u.protected && !u.suspended && !u.deleted && u.index !== target.index)!;
    const mention = (n: number, tag: string) =>
      h.sim.control.addTweets(Array.from({ length: n }, (_, i) => ({ authorHandle: author.username, text: `${tag} @${target.username} ${i}` })));
    // (--min-retweets 0: an identity of its own)
    const params = { handle: target.username, minRetweets: 0 };
    const scheduled = await h.submit({ kind: 'mentions', params: { ...params, since: '2026-09-01', everySeconds: 600 } });
    expect((await h.runUntil(scheduled, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    const history = await jobTweetIds(h, scheduled);

    // More than a page: the schedule's next pass meets the watermark on its first page, above most of them.
    const byOneShot = mention(30, 'between');
    const oneShot = await h.submit({ kind: 'mentions', params });
    expect((await h.runUntil(oneShot)).status).toBe('completed');
    // Its pages hold the 30 and, below the watermark, mentions the schedule already had.
    const readByOneShot = await jobTweetIds(h, oneShot);
    expect(readByOneShot).toEqual(expect.arrayContaining(byOneShot));

    const later = mention(3, 'later');
    await runWatchTick(scheduled, { pool: h.services.pool, queues: h.services.queues });
    expect((await h.runUntil(scheduled, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');
    // The schedule's pass read one page (the 3, and 17 of the 30 down to the watermark), and holds all.
    const held = await jobTweetIds(h, scheduled);
    expect(held).toEqual([...history, ...byOneShot, ...later].sort());
    const { rows } = await h.services.pool.query<{ tweets: string }>('SELECT tweets::text FROM jobs WHERE id = $1', [scheduled]);
    expect(Number(rows[0]!.tweets)).toBe(held.length);
    // The one-shot job keeps what it read, nothing more.
    expect(await jobTweetIds(h, oneShot)).toEqual(readByOneShot);

    // A schedule started afterwards holds what it reads from its start, not the identity's history:
    // it is linked from the watermark it takes over.
    expect((await runCli(['cancel', scheduled], h.env)).code).toBe(0);
    const next = await h.submit({ kind: 'mentions', params: { ...params, everySeconds: 600 } });
    const { rows: watch } = await h.services.pool.query<{ linked: string; watermark: string }>(
      'SELECT linked_to_id::text AS linked, high_watermark_id::text AS watermark FROM watches WHERE job_id = $1',
      [next],
    );
    expect(watch[0]!.linked).toBe(later.at(-1));
    expect(watch[0]!.watermark).toBe(later.at(-1));
  });
});
