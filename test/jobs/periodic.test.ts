/**
 * The worker's periodic tasks (reconcile, quota sync, parallelism, heartbeat) skip a tick while
 * the last one still runs: bare intervals piled up a reconcile every 30 s of a Redis outage, all
 * run at once when it came back. Stopping waits for the tick that is running.
 */
import { describe, expect, it } from 'vitest';
import { periodic } from '../../src/jobs/harvester.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('periodic tasks', () => {
  it('never run a tick beside the last one, and stop waits for the one running', async () => {
    let running = 0;
    let most = 0;
    let started = 0;
    let ended = 0;
    const task = periodic(
      10,
      async () => {
        started++;
        running++;
        most = Math.max(most, running);
        await sleep(120);
        running--;
        ended++;
      },
      () => undefined,
    );
    await sleep(300);
    await task.stop();
    // ~30 ticks came in 300 ms; each run took 120 ms, so at most three ran, one at a time.
    expect(most).toBe(1);
    expect(started).toBeGreaterThanOrEqual(1);
    expect(started).toBeLessThanOrEqual(3);
    expect(ended).toBe(started);
    await sleep(50);
    expect(started).toBe(ended);
  });

  it('a failing tick goes to onError and the next tick runs', async () => {
    const errors: unknown[] = [];
    let n = 0;
    const task = periodic(10, async () => {
      n++;
      throw new Error(`tick ${n}`);
    }, (e) => errors.push(e));
    await sleep(60);
    await task.stop();
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors.length).toBe(n);
  });
});
