/**
 * `--wait` through a Postgres that goes away for a moment: the workers of the process retry what
 * the outage broke and the wait rides it out, ending with the job's own end (it exited 1,
 * "failed", on the first snapshot that could not connect, while the job ran on).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { busyWorldOptions, jobTweetIds, useHarness } from '../helpers/harness.ts';
import { expectedSearchIds } from '../jobs/ground-truth.ts';
import { sleep } from './support.ts';

/** A loopback TCP proxy to `target` that can refuse and cut every connection for a while. */
async function tcpProxy(target: { host: string; port: number }): Promise<{ port: number; down: (ms: number) => Promise<void>; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    async down(ms) {
      refusing = true;
      for (const s of sockets) s.destroy();
      await sleep(ms);
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('--wait and a Postgres blip', () => {
  const h = useHarness(busyWorldOptions);
  let proxy: Awaited<ReturnType<typeof tcpProxy>> | null = null;
  afterEach(async () => {
    await proxy?.close();
  });

  it('rides out 1.5 s without Postgres and ends with the job: completed, exit 0, the exact set', { timeout: 60_000 }, async () => {
    const url = new URL(h.env.DATABASE_URL!);
    proxy = await tcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const query = 'lang:en since:2026-09-10 until:2026-09-13';
    const run = runCli(['search', 'lang:en', '--since', '2026-09-10', '--until', '2026-09-13', '--wait', '--yes'], { ...h.env, DATABASE_URL: url.toString() });
    // Once the job is walking, Postgres goes away for 1.5 s.
    for (let i = 0; i < 100; i++) {
      const { rows } = await h.services.pool.query<{ pages: string }>('SELECT coalesce(sum(pages), 0)::text AS pages FROM jobs');
      if (Number(rows[0]!.pages) >= 5) break;
      await sleep(100);
    }
    const { rows: live } = await h.services.pool.query<{ status: string }>('SELECT status FROM jobs');
    expect(live.map((r) => r.status), 'the job ended before the blip: the run is too short').toEqual(['running']);
    await proxy.down(1500);
    const done = await run;
    expect(done.err).not.toMatch(/ECONNREFUSED|failed/);
    expect(done.code).toBe(0);
    const jobId = done.out.trim();
    expect(await jobTweetIds(h, jobId)).toEqual(expectedSearchIds(h.sim.world, query));
    // Every request the service answered is on record, those of pages the outage broke included.
    const served = h.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets').length;
    const { rows } = await h.services.pool.query<{ logged: number; spent: number }>(
      `SELECT (SELECT count(*)::int FROM api_requests WHERE job_id = $1::bigint) AS logged,
              (SELECT requests_spent::int FROM jobs WHERE id = $1::bigint) AS spent`,
      [jobId],
    );
    expect(rows[0]).toEqual({ logged: served, spent: served });
  });
});
