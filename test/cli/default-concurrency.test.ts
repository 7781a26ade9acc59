/**
 * Slices one process walks at once when the operator does not say: enough for every configured
 * key. A fixed 16 (`harvest worker`) held three keys at 600 ms to ~26 of their 60 requests a
 * second, and the `--wait` default's cap of 64 ten keys to about half of their 200.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultConcurrency } from '../../src/jobs/harvester.ts';
import { useHarness } from '../helpers/harness.ts';

const BIN = fileURLToPath(new URL('../../bin/harvest.js', import.meta.url));

/** Starts `harvest worker` with no --concurrency; answers the concurrency its start logged. */
function loggedConcurrency(env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'worker'], { env: { ...process.env, ...env, HARVEST_LOG_LEVEL: 'info' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const line = err.split('\n').find((l) => l.includes('"worker started"'));
      if (line) child.kill('SIGTERM');
    });
    child.on('exit', () => {
      clearTimeout(timer);
      const line = err.split('\n').find((l) => l.includes('"worker started"'));
      if (line) resolve((JSON.parse(line) as { concurrency: number }).concurrency);
      else reject(new Error(`no start logged:\n${err}`));
    });
  });
}

describe('default concurrency', () => {
  const three = useHarness({ keys: ['dc-key-1', 'dc-key-2', 'dc-key-3'] });
  const ten = useHarness({ keys: Array.from({ length: 10 }, (_, i) => `dc-key-${i + 1}`) });

  it('scales with the keys: 46 slices for three keys at 600 ms, 151 for ten (not capped at 64)', async () => {
    // Fresh databases: no latency measured yet, so the default 600 ms.
    expect(await defaultConcurrency(three.services)).toBe(46);
    expect(await defaultConcurrency(ten.services)).toBe(151);
  });

  it('harvest worker without --concurrency walks as many slices as its keys need', async () => {
    expect(await loggedConcurrency(three.env)).toBe(46);
  });
});
