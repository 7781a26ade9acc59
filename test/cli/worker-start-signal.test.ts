/**
 * A SIGTERM while `harvest worker` is starting (here: its start-up quota sync, one slow request)
 * stops it gracefully once the start returns, instead of Node's default action (exit 143, no
 * "stopping" line, the paid usage request never recorded).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.ts';

const BIN = fileURLToPath(new URL('../../bin/harvest.js', import.meta.url));

describe('harvest worker signalled while starting', () => {
  // Its own key: its quota is unknown, so the start syncs it, one request at 1.5–2 s.
  const h = useHarness({ ownKey: true, simulator: { latencyMs: [1500, 2000] } });

  it('stops gracefully (exit 0, "stopping") once the start returns', async () => {
    const child = spawn(process.execPath, [BIN, 'worker', '--concurrency', '2'], {
      env: { ...process.env, ...h.env, HARVEST_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    let sent = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      // Reconciled: the quota sync's request is on its way now.
      if (!sent && err.includes('reconciled the queue with Postgres')) {
        sent = true;
        setTimeout(() => child.kill('SIGTERM'), 300);
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal === null ? null : 128))));
    clearTimeout(timer);
    expect(sent, err).toBe(true);
    expect(code, err).toBe(0);
    expect(err).toContain('stopping: in-flight pages commit first');
    // The usage request the start paid for is recorded.
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_requests');
    expect(rows[0]!.n).toBe(1);
  }, 40_000);
});
