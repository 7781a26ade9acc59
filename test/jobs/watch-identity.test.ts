/**
 * Watch identity: every pass of one (kind, target, filters), scheduled or one-shot, continues from
 * the identity's watermark; other filters are another identity; --full re-reads on purpose.
 */
import { describe, expect, it } from 'vitest';
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
});
