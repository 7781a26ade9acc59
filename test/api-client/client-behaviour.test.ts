/** Gate hand-off, cancellation and per-attempt logging, against a raw server on port 0. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { UnsendableRequestError } from '../../src/api-client/errors.ts';
import { createStaticGate } from '../../src/api-client/static-gate.ts';
import { AbortedError, ConfigError } from '../../src/errors.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { createLogger } from '../../src/logger.ts';
import { recordingGate, startRawServer, type RawServer } from './helpers.ts';

const KEY = 'sk_behaviour_SECRET_55aa';
let server: RawServer;
let delayMs = 0;
let failWith = 0;

beforeAll(async () => {
  server = await startRawServer((_req, res) => {
    const answer = (): void => {
      if (failWith) {
        res.writeHead(failWith, { 'content-type': 'application/json' });
        res.end('{"message":"down"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key_requests: 1, remaining_requests: 9, total_requests: 10, valid_until: '2026-12-01T00:00:00Z' }));
    };
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
});

afterAll(async () => {
  await server.close();
});

describe('gate hand-off', () => {
  it('passes priority, jobId and signal to gate.acquire and reports the status', async () => {
    const gate = recordingGate(KEY);
    const client = new ApiClient({ baseUrl: server.url, gate });
    const controller = new AbortController();
    try {
      const usage = await client.keyUsageInfo({ priority: 'watch', jobId: 'job-42', signal: controller.signal });
      expect(usage.remainingRequests).toBe(9);
      expect(usage.validUntil?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
      expect(gate.acquired).toEqual([{ priority: 'watch', jobId: 'job-42', signal: controller.signal }]);
      expect(gate.reported).toEqual([{ fingerprint: keyFingerprint(KEY), status: 200 }]);
    } finally {
      await client.close();
    }
  });

  it('the static gate takes keys in turn and refuses an empty key list', async () => {
    const keys = ['a1', 'b2', 'c3'].map((key) => ({ key, fingerprint: keyFingerprint(key) }));
    const gate = createStaticGate(keys);
    const grants = [await gate.acquire(), await gate.acquire(), await gate.acquire(), await gate.acquire()];
    expect(grants.map((g) => g.key)).toEqual(['a1', 'b2', 'c3', 'a1']);
    expect(() => createStaticGate([])).toThrow(ConfigError);
  });
});

describe('cancellation', () => {
  it('sees a granted request through to its answer even when aborted meanwhile', async () => {
    // A request that holds a grant has spent its quota unit; the jobs layer wants its page.
    const gate = recordingGate(KEY);
    const client = new ApiClient({ baseUrl: server.url, gate, timeoutMs: 10_000 });
    const controller = new AbortController();
    delayMs = 200;
    try {
      setTimeout(() => controller.abort(), 50);
      const usage = await client.keyUsageInfo({ signal: controller.signal });
      expect(usage.remainingRequests).toBe(9);
      expect(gate.reported).toEqual([{ fingerprint: keyFingerprint(KEY), status: 200 }]);
    } finally {
      delayMs = 0;
      await client.close();
    }
  });

  it('cuts the wait before a retry short on abort, without another request', async () => {
    const gate = recordingGate(KEY);
    const client = new ApiClient({ baseUrl: server.url, gate, retry: { transientDelayMinMs: 5000, transientDelayMaxMs: 5000 } });
    const controller = new AbortController();
    failWith = 503;
    const before = server.requests.length;
    try {
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      await expect(client.keyUsageInfo({ signal: controller.signal })).rejects.toBeInstanceOf(AbortedError);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(server.requests.length - before).toBe(1);
      expect(gate.reported).toEqual([{ fingerprint: keyFingerprint(KEY), status: 503 }]);
    } finally {
      failWith = 0;
      await client.close();
    }
  });

  it('a request whose parameters cannot be encoded is not sent and not counted: its grant goes back, the error names the endpoint', async () => {
    const gives: string[] = [];
    const attempts: unknown[] = [];
    const gate = { ...recordingGate(KEY), giveBack: (g: { fingerprint: string }) => (gives.push(g.fingerprint), Promise.resolve()) };
    const client = new ApiClient({ baseUrl: server.url, gate, onAttempt: (a) => attempts.push(a) });
    const before = server.requests.length;
    try {
      // A cursor holding a lone UTF-16 surrogate: encodeURIComponent refuses it (URIError).
      const error = await client.listTweets({ listId: '1234567890123456789', cursor: 'abc\ud800' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsendableRequestError);
      expect((error as Error).message).toMatch(/^GET \/v3\/list-tweets: a request parameter cannot be encoded .*nothing was sent$/);
      expect(server.requests.length - before).toBe(0);
      expect(attempts).toEqual([]);
      expect(gives).toEqual([keyFingerprint(KEY)]);
    } finally {
      await client.close();
    }
  });

  it('refuses calls after close()', async () => {
    const client = new ApiClient({ baseUrl: server.url, gate: recordingGate(KEY) });
    await client.close();
    await expect(client.keyUsageInfo()).rejects.toBeInstanceOf(AbortedError);
  });
});

describe('logging', () => {
  it('writes one debug line per attempt with endpoint, status, ms and fingerprint, never the key', async () => {
    const lines: string[] = [];
    // No `secrets` given to the logger: the client itself must not hand it the key.
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
    const client = new ApiClient({ baseUrl: server.url, gate: recordingGate(KEY), logger });
    try {
      await client.keyUsageInfo();
      await client.keyUsageInfo();
    } finally {
      await client.close();
    }
    const attempts = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'api attempt');
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({
      level: 20,
      endpoint: 'GET /v3/key-usage-info',
      status: 200,
      keyFingerprint: keyFingerprint(KEY),
      attempt: 1,
      component: 'api-client',
    });
    expect(typeof attempts[0]?.ms).toBe('number');
    expect(lines.join('\n')).not.toContain(KEY);
  });
});
