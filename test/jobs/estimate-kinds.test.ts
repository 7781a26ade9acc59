import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { passesPerMonth, watchCost } from '../../src/jobs/estimate.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness, type Harness } from '../helpers/harness.ts';

const jobCount = async (h: Harness) => (await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
const requestsLine = (out: string) => /^requests +(~|at least )?([\d,]+)/m.exec(out);
const figure = (out: string) => Number(requestsLine(out)![2]!.replace(/,/g, ''));

describe('--estimate on every job kind', () => {
  const h = useHarness();
  /** Requests the harvester sent (not the limiter's quota checks). */
  const sent = (path?: string) => h.sim.control.requestLog().filter((r) => r.path !== '/v3/key-usage-info' && (path === undefined || r.path === path)).length;

  async function estimate(argv: string[]) {
    const jobs = await jobCount(h);
    const before = sent();
    const run = await runCli([...argv, '--estimate'], h.env);
    expect(run.code, run.err).toBe(0);
    expect(await jobCount(h)).toBe(jobs); // nothing queued
    expect(run.out).toMatch(/^basis +\S/m);
    return { out: run.out, requests: sent() - before };
  }

  it('list: one first page of each walk (3 requests); the figure is what the job then spends, or a floor of it', async () => {
    const list = h.sim.world.lists[0]!;
    const e = await estimate(['list', list.id]);
    expect(e.requests).toBe(3);
    expect(e.out).toMatch(/^probe +cost 3 requests; nothing was queued$/m);
    const run = await runCli(['list', list.id, '--wait'], h.env);
    expect(run.code, run.err).toBe(0);
    const spent = (await h.services.pool.query<{ n: number }>('SELECT requests_spent::int AS n FROM jobs WHERE id = $1::bigint', [run.out.split('\n')[0]])).rows[0]!.n;
    if (/^requests +at least/m.test(e.out)) expect(spent).toBeGreaterThanOrEqual(figure(e.out));
    else expect(spent).toBe(figure(e.out));
  });

  it("replies: the tweet's reply count (1 request), two walks of 20 a page", async () => {
    const t = h.sim.world.tweets;
    let best = 0;
    for (let i = 0; i < t.count; i++) if (t.replies(i) > t.replies(best)) best = i;
    const e = await estimate(['replies', t.idString(best)]);
    expect(e.requests).toBe(1);
    expect(figure(e.out)).toBe(2 * Math.max(1, Math.ceil(t.replies(best) / 20)));
    // The search reads the whole thread, which the tweet's count leaves out: a floor, said so.
    expect(requestsLine(e.out)![0]).toMatch(/at least/);
    expect(e.out).toMatch(/\d+ replies \(the tweet's count\)/);
  });

  it("replies of a reply: the listing's pages and the one search page that finds nothing", async () => {
    const t = h.sim.world.tweets;
    let reply = -1;
    for (let i = 0; i < t.count; i++) if (t.inReplyTo(i) !== -1 && t.replies(i) > 0 && (reply === -1 || t.replies(i) > t.replies(reply))) reply = i;
    const e = await estimate(['replies', t.idString(reply)]);
    expect(e.requests).toBe(1);
    expect(figure(e.out)).toBe(Math.max(1, Math.ceil(t.replies(reply) / 20)) + 1);
    expect(e.out).toMatch(/itself a reply/);
  });

  it("user: the profile's tweet count (1 request); with --every also a pass's and a month's cost", async () => {
    const user = [...h.sim.world.users].filter((u) => !u.protected && !u.suspended && !u.deleted).sort((a, b) => b.tweetsCount - a.tweetsCount)[0]!;
    const once = await estimate(['user', user.username]);
    expect(once.requests).toBe(1);
    expect(figure(once.out)).toBe(1 + Math.max(1, Math.ceil(user.tweetsCount / 20)));
    const watch = await estimate(['user', user.username, '--every', '1h']);
    expect(watch.requests).toBe(2);
    expect(watch.out).toMatch(/^watch +~[\d,]+ a pass, ~[\d,]+ a month \(30 days\) at a pass every 1h$/m);
  });

  it('hydrate: one request per 100 distinct ids, counted without a request', async () => {
    const file = join(tmpdir(), `estimate-${process.pid}.txt`);
    const ids = Array.from({ length: 250 }, (_, i) => String(1_800_000_000_000_000_000n + BigInt(i)));
    await writeFile(file, [...ids, ids[0]].join('\n'));
    const e = await estimate(['hydrate', file]);
    expect(e.requests).toBe(0);
    expect(figure(e.out)).toBe(3);
    expect(e.out).toMatch(/^basis +250 distinct ids, 100 a request$/m);
    expect(e.out).toMatch(/^probe +none; nothing was queued$/m);
  });

  it('mentions --every: the first page (1 request) gives a pass\'s and a month\'s requests at the interval', async () => {
    const handle = h.sim.world.users.find((u) => h.sim.world.mentionsOf(u.index).length > 40)!.username;
    const e = await estimate(['mentions', handle, '--every', '5m']);
    expect(e.requests).toBe(1);
    expect(sent('/v3/mentions')).toBeGreaterThan(0);
    const m = /^watch +~([\d,]+) a pass, ~([\d,]+) a month \(30 days\) at a pass every 5m$/m.exec(e.out);
    expect(m, e.out).not.toBeNull();
    // Each pass costs a request at least: 8,640 passes in 30 days.
    expect(Number(m![2]!.replace(/,/g, ''))).toBeGreaterThanOrEqual(passesPerMonth(300));
  });

  it('search --every: the backfill probe and the keyword watch\'s monthly cost', async () => {
    const e = await estimate(['search', 'lang:en', '--since', '2026-10-01', '--every', '10m']);
    expect(e.requests).toBe(4);
    expect(e.out).toMatch(/^watch +~[\d,]+ a pass, ~[\d,]+ a month \(30 days\) at a pass every 10m$/m);
  });

  it('a watch costs one page a pass plus one per 20 new tweets', () => {
    expect(watchCost(0, 300)).toEqual({ everySeconds: 300, perPass: 1, perMonth: 8640 });
    // A tweet a day: 1.0002 requests a pass on average, ~1 (not ~2).
    expect(watchCost(1, 300)).toMatchObject({ perPass: 1, perMonth: 8642 });
    // 2,880 tweets a day, a pass an hour: 120 new a pass, 7 pages each.
    expect(watchCost(2880, 3600)).toEqual({ everySeconds: 3600, perPass: 7, perMonth: 720 * 7 });
  });
});
