/**
 * A timeline watch reads by the account's id once its profile walk has resolved it. By handle, a
 * renamed account met a 404 every pass (recorded as cut, the job still "scheduled", nobody told),
 * and an account that took the freed handle had its tweets stored as the watched one's.
 */
import { describe, expect, it } from 'vitest';
import { runWatchTick } from '../../src/jobs/watch.ts';
import { getWatchRow } from '../../src/store/watches.ts';
import { jobTweetIds, useHarness } from '../helpers/harness.ts';

describe('a timeline watch and a handle that changes hands', () => {
  const h = useHarness();

  it('follows the account through a rename, and never reads the account that takes the old handle', { timeout: 60_000 }, async () => {
    const w = h.sim.world;
    const visible = w.users.filter((u) => !u.protected && !u.suspended && !u.deleted);
    const active = visible.filter((u) => w.tweetsByAuthor(u.index).length > 5);
    // Two different accounts: the watched one, and the one that takes its handle.
    const [watched, squatter] = [active[0]!, active[1]!];
    expect(squatter.index).not.toBe(watched.index);
    const oldHandle = watched.username;
    const tick = (jobId: string) => runWatchTick(jobId, { pool: h.services.pool, queues: h.services.queues });
    const jobId = await h.submit({ kind: 'user', params: { target: { username: oldHandle }, everySeconds: 3600 } });
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');

    // The account renames, posts; another account takes the freed handle and posts too.
    h.sim.control.renameUser(oldHandle, `${oldHandle.slice(0, 10)}_new`);
    const mine = h.sim.control.addTweets([{ authorHandle: `${oldHandle.slice(0, 10)}_new`, text: 'after the rename' }]);
    h.sim.control.renameUser(squatter.username, oldHandle);
    const theirs = h.sim.control.addTweets([{ authorHandle: oldHandle, text: 'the new owner of the handle' }]);
    await tick(jobId);
    expect((await h.runUntil(jobId, { until: ['scheduled', 'failed'] })).status).toBe('scheduled');

    const stored = new Set(await jobTweetIds(h, jobId));
    expect(stored.has(mine[0]!)).toBe(true);
    expect(stored.has(theirs[0]!)).toBe(false);
    const watch = (await getWatchRow(h.services.pool, jobId))!;
    expect(watch.gaps).toEqual([]);
    expect(watch.highWatermarkId).toBe(mine[0]);
  });
});
