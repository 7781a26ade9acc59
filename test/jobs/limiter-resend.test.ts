/**
 * A spending limiter call that ioredis sends twice spends once (ONCE in lua.ts). When a connection
 * drops after Redis ran a call but before its answer arrived, ioredis sends the call again on
 * reconnecting (autoResendUnfulfilledCommands). A loopback proxy between the gate and Redis plays
 * that drop: it passes the call on, and when Redis answers, it cuts the connection instead of
 * delivering the answer. Without the once hash a resent grant took a second quota and budget unit,
 * and a resent give-back returned two.
 */
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ONCE_KEEP } from '../../src/jobs/limiter/lua.ts';
import { limiterLayout } from '../../src/jobs/limiter/key-layout.ts';
import { createRedisGate } from '../../src/jobs/limiter/redis-gate.ts';
import { apiKeys, connectRedis, deletePrefix, randomPrefix, REDIS_URL } from './fixtures/limiter-redis.ts';

/** Forwards to Redis; once armed, the next answer Redis sends closes the client's connection instead. */
class DroppingProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #armed = false;
  drops = 0;

  constructor(target: URL) {
    this.#server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          this.#sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => {
        if (this.#armed) {
          this.#armed = false;
          this.drops++;
          client.destroy();
          return;
        }
        client.write(chunk);
      });
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as net.AddressInfo).port;
  }

  /** The next answer from Redis (to the call about to be made) is lost with its connection. */
  arm(): void {
    this.#armed = true;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const [KEY] = apiKeys('resend-key');
const JOB = 'job-resend';

let proxy: DroppingProxy;
let viaProxy: Redis;
let direct: Redis;
let prefix: string;

beforeEach(async () => {
  proxy = new DroppingProxy(new URL(REDIS_URL));
  const port = await proxy.listen();
  // As the worker's own connection: commands wait through a reconnect and are then sent again.
  viaProxy = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });
  viaProxy.on('error', () => undefined);
  direct = connectRedis();
  prefix = randomPrefix();
});

afterEach(async () => {
  viaProxy.disconnect();
  await proxy.close();
  await deletePrefix(direct, prefix);
  await direct.quit();
});

function gate() {
  return createRedisGate({ redis: viaProxy, prefix, keyNamespace: prefix, keys: [KEY!], ratePerKey: 20, watchReserve: 0 });
}

async function spent(g: ReturnType<typeof gate>): Promise<{ remaining: number | null; granted: number; budget: number }> {
  const [state] = await g.keyStates();
  const budget = Number(await direct.get(limiterLayout(prefix, prefix).budget(JOB)));
  return { remaining: state?.remaining ?? null, granted: state?.granted ?? -1, budget };
}

describe('limiter calls ioredis sends again', () => {
  it('a grant whose answer was lost with the connection spends one quota and budget unit, not two', async () => {
    const g = gate();
    await g.setQuota(KEY!.fingerprint, 100);
    await g.setBudget(JOB, 10);
    // The first call loads the script, so the dropped one is an EVALSHA Redis runs.
    await g.acquire({ jobId: JOB });
    expect(await spent(g)).toEqual({ remaining: 99, granted: 1, budget: 9 });

    proxy.arm();
    const grant = await g.acquire({ jobId: JOB });
    expect(proxy.drops).toBe(1);
    expect(grant.key).toBe('resend-key');
    expect(await spent(g)).toEqual({ remaining: 98, granted: 2, budget: 8 });

    // The next calls are numbered on: they spend as usual.
    await g.acquire({ jobId: JOB });
    expect(await spent(g)).toEqual({ remaining: 97, granted: 3, budget: 7 });
  });

  it('a give-back whose answer was lost returns one unit, not two', async () => {
    const g = gate();
    await g.setQuota(KEY!.fingerprint, 100);
    await g.setBudget(JOB, 10);
    const grant = await g.acquire({ jobId: JOB });
    await g.acquire({ jobId: JOB });
    expect(await spent(g)).toMatchObject({ remaining: 98, budget: 8 });

    proxy.arm();
    await g.giveBack(grant, { jobId: JOB });
    expect(proxy.drops).toBe(1);
    expect(await spent(g)).toMatchObject({ remaining: 99, budget: 9 });
  });

  it('keeps what the last ONCE_KEEP calls of a process did, no more, refusals among them', async () => {
    const g = createRedisGate({ redis: direct, prefix, keyNamespace: prefix, keys: [KEY!], ratePerKey: 100_000, watchReserve: 0 });
    await g.setQuota(KEY!.fingerprint, 10_000);
    await g.setBudget('spent', 0);
    const hash = async () => (await direct.keys(`${prefix}:{${prefix}}:once:*`))[0]!;
    for (let i = 0; i < ONCE_KEEP + 40; i++) await g.acquire();
    expect(await direct.hlen(await hash())).toBe(ONCE_KEEP);
    expect(await direct.pttl(await hash())).toBeGreaterThan(23 * 3600_000);
    // Grants between refused calls (a spent budget answers 'budget' and stores nothing): each call
    // still forgets the one ONCE_KEEP before it, so no grant outlives the window.
    for (let round = 0; round < 3 * ONCE_KEEP; round++) {
      if (round % 4 === 0) await g.acquire();
      else await g.acquire({ jobId: 'spent' }).catch(() => undefined);
    }
    const seqs = (await direct.hkeys(await hash())).map(Number);
    expect(Math.max(...seqs) - Math.min(...seqs)).toBeLessThan(ONCE_KEEP);
    expect(seqs.length).toBeLessThanOrEqual(ONCE_KEEP / 4 + 1);
  });
});
