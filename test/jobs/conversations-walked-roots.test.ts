/**
 * `harvest conversations` of a job that already walked its roots' replies to the end (a finished
 * `replies` job): those walks are not bought again, and the command says how many roots it skipped.
 */
import { describe, expect, it } from 'vitest';
import { estimateConversations, submitConversations } from '../../src/jobs/kinds/conversations.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness, type Harness } from '../helpers/harness.ts';

const publicUsers = (h: Harness) => h.sim.world.users.filter((u) => !u.protected && !u.suspended && !u.deleted);
const replyWalks = (h: Harness) => h.sim.control.requestLog().filter((r) => r.path === '/v3/comments' || r.path === '/v3/search-tweets').length;

/** A root with `n` replies, posted an hour ago. */
function addRoot(h: Harness, n: number, label: string): string {
  const [a, ...others] = publicUsers(h);
  const now = Date.now();
  const [root] = h.sim.control.addTweets([{ authorHandle: a!.username, text: `root ${label}`, createdAtMs: now - 3_600_000 }]);
  h.sim.control.addTweets(Array.from({ length: n }, (_, i) => ({ authorHandle: others[i % 10]!.username, text: `reply ${label} ${i}`, inReplyToId: root!, createdAtMs: now - 3_000_000 + i * 1000 })));
  return root!;
}

describe('conversations of a job that walked its roots to the end', () => {
  const h = useHarness();
  const deps = () => ({ pool: h.services.pool, queues: h.services.queues, budgets: h.services.gate });

  it('skips the roots whose listing and search the source job walked to the end: no reply walk is bought again', { timeout: 60_000 }, async () => {
    const root = addRoot(h, 60, 'done');
    const replies = await h.submit({ kind: 'replies', params: { tweetId: root } });
    expect((await h.runUntil(replies)).status).toBe('completed');

    const e = await estimateConversations(h.services.pool, { sourceJobId: replies });
    expect(e).toMatchObject({ roots: 0, skippedRoots: 1, rootReplies: 0 });
    const estimate = await runCli(['conversations', replies, '--estimate'], h.env);
    expect(estimate.out).toMatch(/0 roots with 0 replies .*; 1 root skipped \(job \d+ walked its replies to the end\)/);

    const before = replyWalks(h);
    const run = await runCli(['conversations', replies, '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toMatch(/0 roots in 1 slices queued; 1 root skipped \(job \d+ walked its replies to the end\)/);
    expect(replyWalks(h) - before).toBe(0);
  });

  it('walks a root again when the source job stopped its walks early (a budget), and a conversations job of a conversations job skips what that one finished', { timeout: 60_000 }, async () => {
    const root = addRoot(h, 60, 'stopped');
    const stopped = await h.submit({ kind: 'replies', params: { tweetId: root }, maxRequests: 1 });
    expect((await h.runUntil(stopped)).status).toBe('completed');
    const first = await submitConversations(deps(), { params: { sourceJobId: stopped } });
    expect(first).toMatchObject({ roots: 1, skippedRoots: 0 });
    expect((await h.runUntil(first.jobId)).status).toBe('completed');

    // That job walked the root to the end: one of its own tweets' threads needs no walk again.
    const again = await submitConversations(deps(), { params: { sourceJobId: first.jobId } });
    expect(again).toMatchObject({ roots: 0, skippedRoots: 1 });
    expect((await h.runUntil(again.jobId)).status).toBe('completed');
  });
});
