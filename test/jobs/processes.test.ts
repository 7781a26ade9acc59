/**
 * Real worker processes (`harvest worker`) against one simulator key: three of them together
 * never exceed the key's rate, and a worker killed with SIGKILL mid-backfill loses nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { busyWorldOptions, jobTweetIds, useHarness, type Harness } from '../helpers/harness.ts';
import { expectedSearchIds } from './ground-truth.ts';

const BIN = fileURLToPath(new URL('../../bin/harvest.js', import.meta.url));

function startWorker(h: Harness, concurrency: number): ChildProcess {
  return spawn(process.execPath, [BIN, 'worker', '--concurrency', String(concurrency)], {
    env: { ...process.env, ...h.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

function exited(p: ChildProcess): Promise<number | null> {
  return p.exitCode !== null || p.signalCode !== null ? Promise.resolve(p.exitCode) : new Promise((r) => p.once('exit', (code) => r(code)));
}

async function waitFor(h: Harness, jobId: string, ok: (s: NonNullable<Awaited<ReturnType<typeof jobSnapshot>>>) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await jobSnapshot(h.services.pool, jobId);
    if (s && ok(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out; job is ${JSON.stringify(s && { status: s.status, pages: s.pages })}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The most requests the key saw in any one wall-clock second (the service's fixed window). */
function busiestSecond(h: Harness): number {
  const perSecond = new Map<number, number>();
  for (const r of h.sim.control.requestLog()) {
    if (!r.path.startsWith('/v3/')) continue;
    const s = Math.floor(r.at / 1000);
    perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  }
  return Math.max(0, ...perSecond.values());
}

describe('worker processes', () => {
  const h = useHarness(busyWorldOptions);
  const workers: ChildProcess[] = [];
  // Registered after the harness's own afterAll, so it runs first: workers die before the database goes.
  afterAll(() => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  });

  it('three processes sharing one key never exceed its rate (no 429)', async () => {
    const query = 'lang:en since:2026-10-01 until:2026-10-08';
    const expected = expectedSearchIds(h.sim.world, query);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-08' } });
    for (let i = 0; i < 3; i++) workers.push(startWorker(h, 6));
    const snap = await waitFor(h, jobId, (s) => s.status === 'completed' || s.status === 'failed', 90_000);
    expect(snap.status).toBe('completed');
    for (const w of workers.splice(0)) {
      w.kill('SIGTERM');
      expect(await exited(w)).toBe(0);
    }
    expect(h.sim.control.stats().byStatus['429'] ?? 0).toBe(0);
    expect(busiestSecond(h)).toBeLessThanOrEqual(20);
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
  });

  it('kill -9 of a worker mid-backfill: a new worker resumes from the committed cursors, exact set', async () => {
    const query = 'lang:en since:2026-09-10 until:2026-09-16';
    const expected = expectedSearchIds(h.sim.world, query);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-10', until: '2026-09-16' } });
    const first = startWorker(h, 8);
    workers.push(first);
    await waitFor(h, jobId, (s) => s.pages >= 15, 60_000);
    first.kill('SIGKILL');
    await exited(first);
    const partial = (await jobSnapshot(h.services.pool, jobId))!;
    expect(partial.status).not.toBe('completed');
    const second = startWorker(h, 8);
    workers.push(second);
    const snap = await waitFor(h, jobId, (s) => s.status === 'completed' || s.status === 'failed', 90_000);
    expect(snap.status).toBe('completed');
    expect(await jobTweetIds(h, jobId)).toEqual(expected);
    second.kill('SIGTERM');
    expect(await exited(second)).toBe(0);
  });
});
