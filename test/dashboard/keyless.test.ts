/**
 * A process that only looks (`harvest status`, the dashboard) needs no API key: given none, it
 * shows every key a worker has synced, by fingerprint, with the limiter's state of it. Before,
 * the dashboard refused to start without HARVEST_API_KEYS, so the keys had to be handed to it.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { loadOverview } from '../../src/dashboard/source.ts';
import { Harvester } from '../../src/jobs/harvester.ts';
import { openServices } from '../../src/jobs/services.ts';
import { silentLogger } from '../../src/logger.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';

describe('looking without the keys', () => {
  // A key of its own: the synced quota below is this test's.
  const h = useHarness({ ownKey: true });

  it('status and the dashboard show the keys the workers synced, by fingerprint, and never the key', async () => {
    const env = { ...h.env, HARVEST_API_KEYS: '' };
    const before = await runCli(['status'], env);
    expect(before.code).toBe(0);
    expect(before.out).toContain('no API key yet');

    const key = h.config.apiKeys[0]!;
    h.sim.control.setQuota(key.key, 4321);
    // What a worker does when it starts: one usage call per key, recorded by fingerprint.
    await new Harvester(h.services, { concurrency: 1 }).syncQuota();

    // Any other process still needs a key, and says so in one line.
    await expect(openServices(loadConfig(env, { dotenv: false }), silentLogger)).rejects.toThrow(/^HARVEST_API_KEYS is not set/);
    let remaining: number | null = null;
    const keyless = await openServices(loadConfig(env, { dotenv: false }), silentLogger, { keyless: true });
    try {
      expect(keyless.config.apiKeys).toEqual([]);
      const states = await keyless.keyStates();
      expect(states).toEqual(await h.services.gate.keyStates());
      expect(states).toHaveLength(1);
      expect(states[0]!.fingerprint).toBe(key.fingerprint);
      // What the sync learned (4,321 less the usage calls themselves).
      remaining = states[0]!.remaining;
      expect(remaining).toBeGreaterThan(4300);
      const overview = await loadOverview(keyless, 1);
      expect(overview.keys.map((k) => k.fingerprint)).toEqual([key.fingerprint]);
      expect(JSON.stringify(overview)).not.toContain(key.key);
      // A key no worker has synced for a week (retired from their configuration) drops off.
      await h.services.pool.query(`INSERT INTO key_quota_levels (fingerprint, valid_until, peak_remaining, remaining, updated_at)
                                   VALUES ('k_0123456789ab', NULL, 10, 10, now() - interval '8 days')`);
      expect((await keyless.keyStates()).map((k) => k.fingerprint)).toEqual([key.fingerprint]);
      // It only looks: its limiter grants nothing.
      await expect(keyless.gate.acquire()).rejects.toThrow(/HARVEST_API_KEYS is not set/);
    } finally {
      await keyless.close();
    }

    const after = await runCli(['status'], env);
    expect(after.code).toBe(0);
    expect(after.out).toMatch(new RegExp(`${key.fingerprint}\\s+${remaining!.toLocaleString('en-US')}\\s`));
    expect(after.out).not.toContain(key.key);
  });
});
