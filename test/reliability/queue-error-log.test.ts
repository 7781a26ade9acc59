/**
 * A Redis that goes away: BullMQ reports every reconnect attempt of every queue, and each report
 * was a log line (167 lines of JSON in 14 s under a `--wait`). One line a queue per 30 s now.
 */
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis, HarvestQueues } from '../../src/jobs/queue.ts';
import { createLogger } from '../../src/logger.ts';
import { ownRedis, sleep, type OwnRedis } from './support.ts';

describe('queue errors while Redis is away', () => {
  let redis: OwnRedis | null = null;
  afterAll(async () => {
    await redis?.kill();
  });

  it('are logged once a queue, not once a reconnect attempt', { timeout: 30_000 }, async () => {
    redis = await ownRedis();
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString().split('\n').filter((l) => l.length > 0));
        cb();
      },
    });
    const connection = createRedis(redis.url);
    connection.on('error', () => undefined);
    const queues = new HarvestQueues(connection, 'hq', createLogger({ level: 'warn', destination, pretty: false }));
    await queues.counts();
    await redis.kill();
    await sleep(4000);
    const errors = lines.filter((l) => l.includes('queue connection error'));
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors.length).toBeLessThanOrEqual(2);
    connection.disconnect();
  });
});
