import { setMaxListeners } from 'node:events';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRedisGate } from '../../src/jobs/limiter/redis-gate.ts';
import { apiKeys, maxInSpan, paceOf, REDIS_URL, useLimiterRedis } from './fixtures/limiter-redis.ts';

const WORKER = fileURLToPath(new URL('./fixtures/limiter-worker.ts', import.meta.url));

const limiter = useLimiterRedis();

function lines(child: ChildProcess): AsyncIterator<string> {
  let buffer = '';
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let at: number;
    while ((at = buffer.indexOf('\n')) >= 0) {
      queue.push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
    wake?.();
  });
  return {
    async next() {
      while (queue.length === 0) {
        if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
      return { value: queue.shift() as string, done: false };
    },
  };
}

/** Runs `loops` concurrent acquire loops for `ms` and returns every grant's slot time per key. */
async function saturate(acquire: (signal: AbortSignal) => Promise<{ fingerprint: string; slotAt: number }>, loops: number, ms: number) {
  const controller = new AbortController();
  // Every loop's waiting acquire listens on it, as on the Harvester's signal (which lifts the limit too).
  setMaxListeners(0, controller.signal);
  const timer = setTimeout(() => controller.abort(), ms);
  const slots = new Map<string, number[]>();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (!controller.signal.aborted) {
        try {
          const grant = await acquire(controller.signal);
          slots.set(grant.fingerprint, [...(slots.get(grant.fingerprint) ?? []), grant.slotAt]);
        } catch (error) {
          if (!controller.signal.aborted) throw error;
        }
      }
    }),
  );
  clearTimeout(timer);
  return slots;
}

describe('RedisGate rate', () => {
  it('holds one key to its rate across three processes and stays close to it', async () => {
    const rate = 20;
    const durationMs = 3000;
    const children = Array.from({ length: 3 }, () =>
      spawn(process.execPath, ['--import', 'tsx', WORKER, REDIS_URL, limiter.prefix, 'shared-key', String(rate), String(durationMs), '3'], {
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    try {
      const readers = children.map(lines);
      for (const reader of readers) expect((await reader.next()).value).toBe('ready');
      for (const child of children) child.stdin?.write('go\n');
      const results = await Promise.all(readers.map(async (r) => JSON.parse((await r.next()).value) as { slots: number[] }));
      const slots = results.flatMap((r) => r.slots);
      for (const r of results) expect(r.slots.length).toBeGreaterThan(0);
      expect(maxInSpan(slots, 1000)).toBeLessThanOrEqual(rate);
      expect(maxInSpan(slots, 1025)).toBeLessThanOrEqual(rate);
      // Close to the rate: few slots missed between the first grant and the last (a busy machine
      // may start the three processes late, which is not the gate's doing), and not far short overall.
      expect(paceOf(slots, 1025 / rate)).toBeGreaterThanOrEqual(0.9);
      expect(slots.length).toBeGreaterThanOrEqual(0.8 * rate * (durationMs / 1000));
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill();
    }
  }, 20_000);

  it('pools several keys to the sum of their rates', async () => {
    const keys = apiKeys('pool-a', 'pool-b');
    const gate = createRedisGate({ redis: limiter.redis, prefix: limiter.prefix, keyNamespace: limiter.prefix, keys, ratePerKey: 20, watchReserve: 0 });
    const slots = await saturate((signal) => gate.acquire({ signal }), 6, 1500);
    const all = [...slots.values()].flat();
    for (const key of keys) {
      const own = slots.get(key.fingerprint) ?? [];
      expect(paceOf(own, 1025 / 20)).toBeGreaterThanOrEqual(0.9);
      expect(own.length).toBeGreaterThanOrEqual(0.8 * 20 * 1.5);
      expect(maxInSpan(own, 1025)).toBeLessThanOrEqual(20);
    }
    expect(maxInSpan(all, 1000)).toBeLessThanOrEqual(40);
    expect(all.length).toBeGreaterThanOrEqual(0.8 * 2 * 20 * 1.5);
  });

  it('spaces one key\'s grants at least (1000 + headroom) / rate apart, for a rate that does not divide evenly', async () => {
    const gate = createRedisGate({ redis: limiter.redis, prefix: limiter.prefix, keyNamespace: limiter.prefix, keys: apiKeys('odd-rate'), ratePerKey: 13, watchReserve: 0, headroomMs: 25 });
    const slots = [...(await saturate((signal) => gate.acquire({ signal }), 4, 1200)).values()].flat().sort((a, b) => a - b);
    const gaps = slots.slice(1).map((t, i) => t - (slots[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1025 / 13);
    expect(maxInSpan(slots, 1025)).toBeLessThanOrEqual(13);
    expect(paceOf(slots, 1025 / 13)).toBeGreaterThanOrEqual(0.9);
    expect(slots.length).toBeGreaterThanOrEqual(12);
  });

  it('lets a watch through within about one token interval while backfills saturate the key', async () => {
    const gate = createRedisGate({ redis: limiter.redis, prefix: limiter.prefix, keyNamespace: limiter.prefix, keys: apiKeys('busy'), ratePerKey: 20, watchReserve: 0 });
    const controller = new AbortController();
    let backfills = 0;
    const loops = Array.from({ length: 4 }, async () => {
      while (!controller.signal.aborted) {
        await gate.acquire({ priority: 'backfill', signal: controller.signal }).then(
          () => backfills++,
          (error: unknown) => {
            if (!controller.signal.aborted) throw error;
          },
        );
      }
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const waits: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        await gate.acquire({ priority: 'watch' });
        waits.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      expect(Math.max(...waits)).toBeLessThan(150);
      expect(backfills).toBeGreaterThan(10);
    } finally {
      controller.abort();
      await Promise.all(loops);
    }
  });
});
