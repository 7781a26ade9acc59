/**
 * The body path of src/api-client/http.ts (undici's dispatch callbacks): a chunked body that grows
 * past the size limit, the deadline passing mid-body, the server dropping the connection mid-body.
 * Against a real node:http server on port 0.
 */
import type http from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { ApiError, InvalidResponseError, TransientError } from '../../src/api-client/errors.ts';
import { createHttpClient, DEADLINE_TRANSPORT_CODE, type HttpClient, type HttpRequest } from '../../src/api-client/http.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { allStrings, recordingGate, startRawServer, type RawServer } from './helpers.ts';

const KEY = 'sk_body_SECRET_5e5e';
const LIMIT = 64 * 1024;
const USAGE = JSON.stringify({ key_requests: 1, remaining_requests: 9, total_requests: 10, valid_until: null });
const REQUEST: HttpRequest = {
  method: 'GET',
  path: '/v3/key-usage-info',
  key: KEY,
  keyFingerprint: keyFingerprint(KEY),
  endpoint: 'GET /v3/key-usage-info',
};

/** Modes for the next requests, one each, first in first served; `ok` once they run out. */
type Mode = 'ok' | 'endless-chunked' | 'stall-mid-body' | 'destroy-mid-body';
let modes: Mode[] = [];
/** Responses whose connection closed before the server finished them. */
let closedEarly = 0;
let server: RawServer;
let http1: HttpClient | null = null;

function watchClose(res: http.ServerResponse): void {
  res.on('close', () => {
    if (!res.writableFinished) closedEarly++;
  });
}

beforeAll(async () => {
  server = await startRawServer((_req, res) => {
    const mode = modes.shift() ?? 'ok';
    if (mode === 'ok') return void res.end(USAGE);
    watchClose(res);
    // No content-length: node sends these chunked, so only the running count can refuse them.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"key_requests":1,"pad":"');
    if (mode === 'endless-chunked') {
      // No cap: a client that stops reading without dropping the connection keeps it busy forever.
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const pump = (): void => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', pump);
      };
      return pump();
    }
    if (mode === 'destroy-mid-body') return void setTimeout(() => res.destroy(), 50);
    // stall-mid-body: headers and part of the body sent, then nothing until the client gives up.
  });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  modes = [];
  closedEarly = 0;
  server.requests.length = 0;
});

afterEach(async () => {
  await http1?.close();
  http1 = null;
});

/** One connection, so a second request can only go out once the first one's socket is released. */
function oneConnection(options: { deadlineMs?: number; timeoutMs?: number } = {}): HttpClient {
  http1 = createHttpClient({
    baseUrl: server.url,
    connections: 1,
    maxResponseBytes: LIMIT,
    deadlineMs: options.deadlineMs ?? 3000,
    timeoutMs: options.timeoutMs ?? 10_000,
  });
  return http1;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
}

function expectNoKey(error: unknown): void {
  expect(error).toBeInstanceOf(ApiError);
  for (const text of allStrings(error)) expect(text).not.toContain(KEY);
}

describe('a chunked body past the size limit', () => {
  it('fails with InvalidResponseError and releases the socket for the next request', async () => {
    const c = oneConnection();
    modes = ['endless-chunked'];
    const error = await failure(c.send(REQUEST));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).reason).toBe(`body larger than the ${LIMIT}-byte limit`);
    expect((error as InvalidResponseError).status).toBe(200);
    expectNoKey(error);
    await expect.poll(() => closedEarly).toBe(1);
    // The one connection is free again: the next request is answered well within its deadline.
    expect(await c.send(REQUEST)).toEqual({ status: 200, text: USAGE });
    expect(server.requests).toHaveLength(2);
  });
});

describe('the deadline passing mid-body', () => {
  it('fails with a deadline TransientError though the idle time-out is far off, and frees the socket', async () => {
    const c = oneConnection({ deadlineMs: 300, timeoutMs: 10_000 });
    modes = ['stall-mid-body'];
    const started = Date.now();
    const error = await failure(c.send(REQUEST));
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).transportCode).toBe(DEADLINE_TRANSPORT_CODE);
    expect((error as TransientError).status).toBe(0);
    expect((error as TransientError).message).toContain('longer than 300 ms');
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2500);
    expectNoKey(error);
    await expect.poll(() => closedEarly).toBe(1);
    expect(await c.send(REQUEST)).toEqual({ status: 200, text: USAGE });
  });
});

describe('the server dropping the connection mid-body', () => {
  it('fails with a TransientError carrying the socket error code', async () => {
    const c = oneConnection();
    modes = ['destroy-mid-body'];
    const error = await failure(c.send(REQUEST));
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).status).toBe(0);
    expect((error as TransientError).transportCode).toBe('UND_ERR_SOCKET');
    expect((error as TransientError).endpoint).toBe(REQUEST.endpoint);
    expect((error as TransientError).keyFingerprint).toBe(keyFingerprint(KEY));
    expectNoKey(error);
    expect(await c.send(REQUEST)).toEqual({ status: 200, text: USAGE });
  });

  it('is retried by the retry layer, which answers the second attempt', async () => {
    const gate = recordingGate(KEY);
    const c = new ApiClient({
      baseUrl: server.url,
      gate,
      connections: 1,
      maxResponseBytes: LIMIT,
      retry: { transientDelayMinMs: 1, transientDelayMaxMs: 2, maxAttemptsTransient: 2 },
    });
    modes = ['destroy-mid-body'];
    try {
      expect((await c.keyUsageInfo()).remainingRequests).toBe(9);
      expect(server.requests).toHaveLength(2);
      expect(gate.reported.map((r) => r.status)).toEqual([0, 200]);
    } finally {
      await c.close();
    }
  });
});
