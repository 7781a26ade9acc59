/**
 * A request that never left the process costs nothing: when the connection to the service cannot
 * be opened (the service is down, the port refuses), each attempt is retried as any transport
 * failure, but it is not recorded as a request and its grant goes back to the limiter, so an
 * outage eats neither the key's counted quota nor the job's budget. A request that was written and
 * then lost its connection may have reached the service: it stays an attempt. Real limiter on
 * real Redis, real sockets.
 */
import http from 'node:http';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { TransientError } from '../../src/api-client/errors.ts';
import { AbortedError } from '../../src/errors.ts';
import type { AttemptRecord } from '../../src/api-client/executor.ts';
import type { RedisGate } from '../../src/jobs/limiter/redis-gate.ts';
import { RateWaitTracker } from '../../src/jobs/rate-wait.ts';
import { closedPort } from '../helpers/net.ts';
import { apiKeys, limiterGate, useLimiterRedis } from './fixtures/limiter-redis.ts';

const limiter = useLimiterRedis();
const [KEY] = apiKeys('unsent-requests-key');
const QUOTA = 100;
const BUDGET = 10;
const ATTEMPTS = 3;

/** A loopback port nothing listens on: connections to it are refused. */

/** A server that reads each request and drops the connection without answering. */
async function droppingServer(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server = net.createServer((socket) => {
    socket.once('data', () => {
      received++;
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('requests that never left the process', () => {
  let gate: RedisGate;
  const attempts: AttemptRecord[] = [];
  const givenBack: string[] = [];

  beforeEach(async () => {
    gate = limiterGate(limiter, [KEY!], { onGiveBack: (fingerprint) => givenBack.push(fingerprint) });
    await gate.setQuota(KEY!.fingerprint, QUOTA);
    await gate.setBudget('job-1', BUDGET);
    attempts.length = 0;
    givenBack.length = 0;
  });

  let client: ApiClient | null = null;
  afterEach(async () => {
    await client?.close();
    client = null;
  });

  // The worker's wrapping of the gate (openServices), short retry delays.
  const clientAt = (baseUrl: string): ApiClient =>
    (client = new ApiClient({
      baseUrl,
      gate: new RateWaitTracker(limiter.redis, limiter.prefix).wrap(gate),
      timeoutMs: 2000,
      retry: { maxAttemptsTransient: ATTEMPTS, transientDelayMinMs: 10, transientDelayMaxMs: 20 },
      onAttempt: (a) => attempts.push(a),
    }));

  it('a refused connection is retried, recorded nowhere, and every grant goes back (quota and budget)', async () => {
    const error = await clientAt(`http://127.0.0.1:${await closedPort()}`)
      .info({ username: 'anyone' }, { jobId: 'job-1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({ sent: false, transportCode: 'ECONNREFUSED' });
    // Retried as any transport failure, each time on a fresh grant…
    expect(gate.stats()).toMatchObject({ grants: ATTEMPTS, givenBack: ATTEMPTS });
    expect(givenBack).toEqual(Array(ATTEMPTS).fill(KEY!.fingerprint));
    // …but not one request is accounted for, and nothing was spent.
    expect(attempts).toEqual([]);
    expect((await gate.keyStates())[0]?.remaining).toBe(QUOTA);
    expect(await gate.budgetRemaining('job-1')).toBe(BUDGET);
  });

  it('the attempt after a try that never connected is numbered 1: tries are not attempts', async () => {
    const port = await closedPort();
    const usage = JSON.stringify({ key_requests: 1, remaining_requests: 9, total_requests: 10, valid_until: null });
    const server = http.createServer((_req, res) => res.end(usage));
    client = new ApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      gate: new RateWaitTracker(limiter.redis, limiter.prefix).wrap(gate),
      // 1.5 s: the server below listens well before the retry, on a loaded machine too (at 400 ms a
      // CI run saw the retry refused as well).
      retry: { maxAttemptsTransient: ATTEMPTS, transientDelayMinMs: 1500, transientDelayMaxMs: 1500 },
      onAttempt: (a) => attempts.push(a),
    });
    // The first try is refused; the service is up on that port before the retry.
    const call = client.keyUsageInfo({ jobId: 'job-1' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      expect((await call).remainingRequests).toBe(9);
      expect(attempts.map((a) => [a.status, a.attempt])).toEqual([[200, 1]]);
      expect(gate.stats()).toMatchObject({ grants: 2, givenBack: 1 });
      expect(await gate.budgetRemaining('job-1')).toBe(BUDGET - 1);
    } finally {
      await client.close();
      client = null;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a call on a closed client (shutdown) is not an attempt: its grant goes back', async () => {
    const server = http.createServer((_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const closed = clientAt(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
      await closed.close();
      const error = await closed.info({ username: 'anyone' }, { jobId: 'job-1' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortedError);
      expect(error).toMatchObject({ sent: false });
      expect(attempts).toEqual([]);
      expect(gate.stats()).toMatchObject({ grants: 1, givenBack: 1 });
      expect((await gate.keyStates())[0]?.remaining).toBe(QUOTA);
      expect(await gate.budgetRemaining('job-1')).toBe(BUDGET);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a request written before its connection dropped is an attempt, and keeps its units', async () => {
    const server = await droppingServer();
    try {
      const error = await clientAt(server.url)
        .info({ username: 'anyone' }, { jobId: 'job-1' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientError);
      expect(error).toMatchObject({ sent: true });
      expect(server.received()).toBe(ATTEMPTS);
      expect(attempts.map((a) => [a.status, a.attempt])).toEqual([
        [0, 1],
        [0, 2],
        [0, 3],
      ]);
      // Every attempt kept its grant. (A grant that came late on a loaded machine, past its send-by,
      // is given back unsent and another taken: the full suite beside four other processes saw one.)
      const stats = gate.stats();
      expect(stats.grants - stats.givenBack).toBe(ATTEMPTS);
      expect((await gate.keyStates())[0]?.remaining).toBe(QUOTA - ATTEMPTS);
      expect(await gate.budgetRemaining('job-1')).toBe(BUDGET - ATTEMPTS);
    } finally {
      await server.close();
    }
  });
});
