/**
 * A key that runs out between two usage syncs (30% left at one, spent before the next) is never
 * seen below 20% or 10%: its requests and the usage call itself are answered 403. The sync that
 * meets that 403 announces the key as spent (`quota.low` at level 0), once per running out
 * whatever the number of workers and 403s, and a top-up re-arms it.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.ts';
import { Harvester } from '../../src/jobs/harvester.ts';
import { recordKeyQuota } from '../../src/store/outbox.ts';
import { recordKeyRefusedForQuota } from '../../src/store/quota-events.ts';
import { useHarness } from '../helpers/harness.ts';

describe('a key spent between two quota syncs', () => {
  const h = useHarness({ ownKey: true, env: { HARVEST_WATCH_RESERVE: '0' } });
  const quotaEvents = async () =>
    (
      await h.services.pool.query<{ payload: { text: string; data: { key: string; level: number; remaining: number } } }>(
        `SELECT payload FROM outbox WHERE type = 'quota.low' ORDER BY id`,
      )
    ).rows.map((r) => r.payload);

  it('is announced once as spent when the usage call itself is refused; a top-up re-arms it', { timeout: 60_000 }, async () => {
    const { key, fingerprint } = h.config.apiKeys[0]!;
    // Two workers, each with its own periodic sync.
    const workers = [new Harvester(h.services, { concurrency: 4 }), new Harvester(h.services, { concurrency: 4 })];
    h.sim.control.setQuota(key, 100);
    expect((await workers[0]!.syncQuota())[0]).toMatchObject({ error: null });
    // Used elsewhere: 30% left at this sync, nothing announced.
    h.sim.control.setQuota(key, 32);
    expect((await workers[0]!.syncQuota())[0]).toMatchObject({ error: null, remaining: 30 });
    expect(await quotaEvents()).toEqual([]);

    // Spent before the next sync: harvest believes 30 are left, the service has 8. The backfill's
    // requests meet the 403, the key is parked and the job waits for quota.
    h.sim.control.setQuota(key, 8);
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-10-20' } });
    expect((await h.runUntil(jobId, { until: ['paused_quota', 'failed', 'completed'] })).status).toBe('paused_quota');
    expect(h.sim.control.requestLog().some((r) => r.status === 403 && r.path !== '/v3/key-usage-info')).toBe(true);

    // Each worker's periodic sync asks about the spent key (always due) and hears 403 again.
    for (let pass = 0; pass < 2; pass++) {
      for (const w of workers) {
        const [r] = await w.syncQuota({ ifDue: true });
        expect((r?.error as { code?: string } | undefined)?.code).toBe(ErrorCode.API_QUOTA_EXHAUSTED);
      }
    }
    const spent = await quotaEvents();
    expect(spent).toHaveLength(1);
    expect(spent[0]!.data).toMatchObject({ key: fingerprint, level: 0, remaining: 0 });
    expect(spent[0]!.text).toContain('run out');
    expect(JSON.stringify(spent)).not.toContain(key);

    // Topped up: the next sync re-arms the level, and running out again is news again.
    h.sim.control.setQuota(key, 50);
    expect((await workers[1]!.syncQuota({ ifDue: true }))[0]).toMatchObject({ error: null });
    expect(await quotaEvents()).toHaveLength(1);
    // Spent again before the next periodic sync; `harvest quota` asks whatever is due, twice here.
    h.sim.control.setQuota(key, 0);
    for (const w of workers) await w.syncQuota();
    const again = await quotaEvents();
    expect(again.map((e) => e.data.level)).toEqual([0, 0]);
  });

  it('workers meeting the 403 at once announce it once; a sync that finds nothing left is the same level 0', async () => {
    const pool = h.services.pool;
    const levelsOf = async (fingerprint: string) =>
      (await quotaEvents()).filter((e) => e.data.key === fingerprint).map((e) => e.data.level);
    // A key never synced, refused to four workers at the same moment.
    const never = 'k_aaaaaaaaaaaa';
    const results = await Promise.all([1, 2, 3, 4].map(() => recordKeyRefusedForQuota(pool, { fingerprint: never, status: 403 })));
    expect(results.filter((r) => r.notified)).toHaveLength(1);
    // Its first answered sync starts a period (re-armed): running out in it is news.
    const period = new Date('2026-12-01T00:00:00Z');
    expect((await recordKeyQuota(pool, { fingerprint: never, remaining: 500, validUntil: period })).notified).toBe(false);
    expect((await recordKeyRefusedForQuota(pool, { fingerprint: never, status: 402 })).notified).toBe(true);
    expect(await levelsOf(never)).toEqual([0, 0]);

    // A sync that answers with nothing left (what harvest has sent since the call began subtracted)
    // is spent too: announced as such, not as "below 10%", and not a refill that re-arms it.
    const synced = 'k_bbbbbbbbbbbb';
    for (const remaining of [1000, 300]) expect((await recordKeyQuota(pool, { fingerprint: synced, remaining, validUntil: period })).notified).toBe(false);
    expect(await recordKeyQuota(pool, { fingerprint: synced, remaining: 0, validUntil: period })).toEqual({ level: 0, notified: true });
    expect((await recordKeyRefusedForQuota(pool, { fingerprint: synced, status: 403 })).notified).toBe(false);
    expect((await recordKeyQuota(pool, { fingerprint: synced, remaining: 0, validUntil: period })).notified).toBe(false);
    expect((await recordKeyRefusedForQuota(pool, { fingerprint: synced, status: 403 })).notified).toBe(false);
    expect(await levelsOf(synced)).toEqual([0]);
    expect((await quotaEvents()).find((e) => e.data.key === synced)?.text).toMatch(/has run out of quota \(0 of 1000 requests left/);
  });
});
