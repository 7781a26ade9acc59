/**
 * Bounded responses (issue #11 item 4): a body past the size limit fails the attempt before it is
 * held in memory, and a server that trickles its headers or body cannot hold an attempt past its
 * deadline. Against a real node:http server on port 0.
 */
import type http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { InvalidResponseError, neverSent, TransientError } from '../../src/api-client/errors.ts';
import { createHttpClient, DEADLINE_TRANSPORT_CODE, DEFAULT_DEADLINE_MS, DEFAULT_MAX_RESPONSE_BYTES } from '../../src/api-client/http.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { recordingGate, startRawServer, type RawServer } from './helpers.ts';

const KEY = 'sk_bounded_SECRET_0a0a';
const LIMIT = 64 * 1024;
const USAGE = JSON.stringify({ key_requests: 1, remaining_requests: 9, total_requests: 10, valid_until: null });

type Mode = 'ok' | 'exact' | 'declared-huge' | 'endless' | 'trickle-body' | 'no-headers';
let mode: Mode = 'ok';
let bytesSent = 0;
let closedEarly = 0;
let server: RawServer;

function endless(res: http.ServerResponse): void {
  const chunk = Buffer.alloc(16 * 1024, 0x20);
  const pump = (): void => {
    while (!res.destroyed && bytesSent < 64 * 1024 * 1024) {
      bytesSent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  res.on('close', () => {
    if (!res.writableFinished) closedEarly++;
  });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"key_requests":1,"pad":"');
  pump();
}

beforeAll(async () => {
  server = await startRawServer((_req, res) => {
    if (mode === 'ok') return void res.end(USAGE);
    if (mode === 'exact') {
      const body = USAGE.replace('}', `,"pad":"${' '.repeat(LIMIT - USAGE.length - 9)}"}`);
      expect(Buffer.byteLength(body)).toBe(LIMIT);
      return void res.end(body);
    }
    if (mode === 'declared-huge') {
      res.on('close', () => {
        if (!res.writableFinished) closedEarly++;
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(40 * 1024 * 1024) });
      return void res.write('{');
    }
    if (mode === 'endless') return endless(res);
    if (mode === 'trickle-body') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(' ')), 50);
      return;
    }
    // no-headers: say nothing until the client gives up.
  });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  mode = 'ok';
  bytesSent = 0;
  closedEarly = 0;
});

function client(options: { deadlineMs?: number; maxResponseBytes?: number; timeoutMs?: number } = {}) {
  const gate = recordingGate(KEY);
  const c = new ApiClient({
    baseUrl: server.url,
    gate,
    timeoutMs: options.timeoutMs ?? 10_000,
    deadlineMs: options.deadlineMs ?? 10_000,
    maxResponseBytes: options.maxResponseBytes ?? LIMIT,
    retry: { maxAttemptsTransient: 1 },
  });
  return { c, gate };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
}

describe('maximum response size', () => {
  it('defaults to 32 MiB and a 60 s deadline', () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(32 * 1024 * 1024);
    expect(DEFAULT_DEADLINE_MS).toBe(60_000);
  });

  it('accepts a body of exactly the limit', async () => {
    const { c } = client();
    mode = 'exact';
    try {
      expect((await c.keyUsageInfo()).remainingRequests).toBe(9);
    } finally {
      await c.close();
    }
  });

  it('refuses an endless body once it passes the limit, and drops the connection', async () => {
    const { c, gate } = client();
    mode = 'endless';
    try {
      const error = await failure(c.keyUsageInfo());
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect((error as InvalidResponseError).reason).toBe(`body larger than the ${LIMIT}-byte limit`);
      expect((error as InvalidResponseError).status).toBe(200);
      // Not retried: the same request would bring the same body.
      expect(gate.reported).toEqual([{ fingerprint: keyFingerprint(KEY), status: 200 }]);
      await expect.poll(() => closedEarly).toBe(1);
      // Socket buffers allow some slack, but nowhere near the 64 MiB the server would have sent.
      expect(bytesSent).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await c.close();
    }
  });

  it('refuses a declared Content-Length above the limit without reading the body', async () => {
    const { c } = client();
    mode = 'declared-huge';
    try {
      const started = Date.now();
      const error = await failure(c.keyUsageInfo());
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(Date.now() - started).toBeLessThan(2000);
      await expect.poll(() => closedEarly).toBe(1);
    } finally {
      await c.close();
    }
  });
});

describe('deadline per attempt', () => {
  it('ends an attempt whose body trickles in past the deadline, though no idle gap is long', async () => {
    const { c, gate } = client({ deadlineMs: 400, timeoutMs: 5000 });
    mode = 'trickle-body';
    try {
      const started = Date.now();
      const error = await failure(c.keyUsageInfo());
      const took = Date.now() - started;
      expect(error).toBeInstanceOf(TransientError);
      expect((error as TransientError).transportCode).toBe(DEADLINE_TRANSPORT_CODE);
      expect((error as TransientError).message).toContain('longer than 400 ms');
      expect(took).toBeGreaterThanOrEqual(390);
      expect(took).toBeLessThan(2500);
      expect(gate.reported).toEqual([{ fingerprint: keyFingerprint(KEY), status: 0 }]);
    } finally {
      await c.close();
    }
  });

  it('ends an attempt whose headers never come', async () => {
    const { c } = client({ deadlineMs: 300, timeoutMs: 5000 });
    mode = 'no-headers';
    try {
      const started = Date.now();
      const error = await failure(c.keyUsageInfo());
      expect((error as TransientError).transportCode).toBe(DEADLINE_TRANSPORT_CODE);
      expect(Date.now() - started).toBeLessThan(2500);
    } finally {
      await c.close();
    }
  });

  it('ends a request still waiting for its connection at its deadline as never sent', async () => {
    // One connection: the second request waits behind the first, whose headers never come. Both
    // time out in the same turn; the first was written (a request), the second never left.
    mode = 'no-headers';
    const http1 = createHttpClient({ baseUrl: server.url, connections: 1, deadlineMs: 300, timeoutMs: 5000 });
    const request = { method: 'GET', path: '/v3/key-usage-info', key: KEY, keyFingerprint: keyFingerprint(KEY), endpoint: 'GET /v3/key-usage-info' } as const;
    const before = server.requests.length;
    try {
      const [first, second] = await Promise.allSettled([http1.send(request), http1.send(request)]);
      const errors = [first, second].map((r) => (r.status === 'rejected' ? (r.reason as unknown) : null));
      expect(errors[0]).toMatchObject({ transportCode: DEADLINE_TRANSPORT_CODE, sent: true });
      expect(neverSent(errors[0])).toBe(false);
      expect(errors[1]).toMatchObject({ transportCode: DEADLINE_TRANSPORT_CODE, sent: false });
      expect(neverSent(errors[1])).toBe(true);
      expect(server.requests.length - before).toBe(1);
    } finally {
      await http1.close();
    }
  });

  it('lets a prompt answer through untouched', async () => {
    const { c } = client({ deadlineMs: 300 });
    try {
      expect((await c.keyUsageInfo()).remainingRequests).toBe(9);
    } finally {
      await c.close();
    }
  });
});
