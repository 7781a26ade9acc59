/**
 * The demo's watch pass when Redis stops answering (the connection open, nothing coming back):
 * the pass ends with one line saying so and exit 1, where the stop waited on BullMQ and the
 * progress display on an unbounded quota read, and the demo hung.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { submit, workWatchPass } from '../../src/cli/demo/steps.ts';
import { REDIS_URL, startHarness, type Harness } from '../helpers/harness.ts';
import { SilentRedisProxy } from '../helpers/silent-redis-proxy.ts';
import { sleep } from '../reliability/support.ts';
import { capture } from '../helpers/cli.ts';

class ExitCalled extends Error {
  constructor(readonly exitCode: number | string | null | undefined) {
    super(`process.exit(${String(exitCode)})`);
  }
}

describe('a demo watch pass with Redis silent', () => {
  let h: Harness;
  let proxy: SilentRedisProxy;
  beforeAll(async () => {
    proxy = new SilentRedisProxy(new URL(REDIS_URL));
    await proxy.listen();
    h = await startHarness({ ownKey: true, simulator: { latencyMs: [150, 300] }, env: { REDIS_URL: proxy.url } });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    proxy.restore();
  });
  afterAll(async () => {
    proxy?.restore();
    await h?.close();
    await proxy?.close();
  });

  it('ends with one line saying Redis is unreachable and exit 1, within the stop grace', { timeout: 45_000 }, async () => {
    const w = h.sim.world;
    const target = [...w.users]
      .filter((u) => !u.protected && !u.suspended && !u.deleted)
      .sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[0]!;
    const { jobId } = await submit(h.services, 'mentions', { handle: target.username, everySeconds: 3600, since: '2026-09-01' });
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new ExitCalled(code);
    });
    const out = capture();
    const from = h.sim.control.requestLog().length;
    const pass = workWatchPass(h.services, jobId, out.stream, 2_000).then(
      () => 'returned' as const,
      (error: unknown) => error,
    );
    // Redis goes silent once the pass is under way (its first mentions request is out).
    for (let i = 0; i < 200 && !h.sim.control.requestLog().slice(from).some((r) => r.path === '/v3/mentions'); i++) await sleep(25);
    proxy.silence();
    const silentAt = Date.now();
    const ended = await Promise.race([pass, sleep(35_000).then(() => 'still running' as const)]);
    expect(ended).toBeInstanceOf(ExitCalled);
    expect((ended as ExitCalled).exitCode).toBe(1);
    // The pass's 2 s, the stop's 10 s grace for Redis, the last progress line's 3 s quota read.
    expect(Date.now() - silentAt).toBeLessThan(20_000);
    const lines = out.text().split('\n').filter((l) => l.includes('Redis is unreachable'));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^harvest demo: Redis is unreachable, stopped without it \\(watch ${jobId} is \\w+`))]);
  });
});
