/**
 * Shapes the simulator cannot produce (HTML error page, truncated JSON, empty 200, 402, a key echoed
 * in an error message), request encoding, and pre-send validation, against a raw server on port 0.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import {
  ApiError,
  AuthError,
  BadRequestError,
  InvalidResponseError,
  QuotaError,
  TransientError,
  UnexpectedStatusError,
} from '../../src/api-client/errors.ts';
import type { AttemptRecord } from '../../src/api-client/executor.ts';
import { ConfigError, InputError } from '../../src/errors.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { allStrings, recordingGate, startRawServer, type RawServer } from './helpers.ts';
import { tweetV3 } from './fixtures.ts';

const KEY = 'sk_live_SECRET_7f3a9c1e';
let reply: { status: number; body: string; contentType?: string } = { status: 200, body: '{}' };
let server: RawServer;
let client: ApiClient;
let attempts: AttemptRecord[];
const gate = recordingGate(KEY);

beforeAll(async () => {
  server = await startRawServer((_req, res) => {
    res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json' });
    res.end(reply.body);
  });
  client = new ApiClient({
    baseUrl: server.url,
    gate,
    timeoutMs: 2000,
    retry: { transientDelayMinMs: 1, transientDelayMaxMs: 2, maxAttemptsTransient: 2, maxAttemptsRateLimited: 1 },
    onAttempt: (a) => attempts.push(a),
  });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

beforeEach(() => {
  server.requests.length = 0;
  attempts = [];
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
}

describe('invalid 200 bodies', () => {
  it.each([
    ['an HTML error page', '<html><body>502 Bad Gateway</body></html>', /HTML/],
    ['truncated JSON', '{"tweets": [{"id": "1"', /truncated/],
    ['an empty body', '', /empty body/],
    ['an envelope of the wrong shape', '{"data": []}', /tweets/],
  ])('reports %s as InvalidResponseError, without retrying', async (_name, body, reason) => {
    reply = { status: 200, body };
    const error = await failure(client.searchTweets({ query: 'x' }));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).reason).toMatch(reason);
    expect((error as InvalidResponseError).endpoint).toBe('POST /v3/search-tweets');
    expect(server.requests).toHaveLength(1);
  });
});

describe('statuses', () => {
  it('treats 402 as a quota error, like 403', async () => {
    reply = { status: 402, body: '{"message":"payment required"}' };
    const error = await failure(client.keyUsageInfo());
    expect(error).toBeInstanceOf(QuotaError);
    expect((error as QuotaError).status).toBe(402);
    expect((error as QuotaError).serviceMessage).toBe('payment required');
    expect(server.requests).toHaveLength(1);
  });

  it("keeps the service's message on one line, without the control characters a terminal would obey", async () => {
    reply = { status: 400, body: JSON.stringify({ message: 'bad \u001b]52;c;aGk=\u0007query\r\n\u001b[2Jnow\u009b31m' }) };
    const error = await failure(client.info({ username: 'alice' }));
    expect((error as BadRequestError).serviceMessage).toBe('bad ]52;c;aGk= query [2Jnow 31m');
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect((error as BadRequestError).message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('maps an unlisted status to UnexpectedStatusError and a 503 HTML page to TransientError', async () => {
    reply = { status: 418, body: 'teapot', contentType: 'text/plain' };
    expect(await failure(client.keyUsageInfo())).toBeInstanceOf(UnexpectedStatusError);
    reply = { status: 503, body: '<html>down</html>', contentType: 'text/html' };
    const error = await failure(client.keyUsageInfo());
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).serviceMessage).toBeNull();
    expect(server.requests).toHaveLength(3);
    expect(attempts.map((a) => a.status)).toEqual([418, 503, 503]);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 1, 2]);
  });
});

describe('the key never leaks into an error', () => {
  it('scrubs a key the service echoes and keeps it out of every error field', async () => {
    const errors: unknown[] = [];
    for (const status of [400, 401, 403, 404, 410, 429, 500, 418]) {
      reply = { status, body: JSON.stringify({ message: `key ${KEY} refused` }) };
      errors.push(await failure(client.info({ username: 'alice' }, {})));
    }
    reply = { status: 200, body: '<html>' };
    errors.push(await failure(client.info({ username: 'alice' })));
    const dead = new ApiClient({ baseUrl: 'http://127.0.0.1:1', gate, retry: { maxAttemptsTransient: 1 } });
    errors.push(await failure(dead.info({ username: 'alice' })));
    await dead.close();

    expect(errors[0]).toBeInstanceOf(BadRequestError);
    expect(errors[1]).toBeInstanceOf(AuthError);
    expect((errors[1] as AuthError).keyFingerprint).toBe(gate.reported[0]?.fingerprint);
    expect((errors[0] as BadRequestError).serviceMessage).toContain((errors[0] as ApiError).keyFingerprint);
    expect(errors.at(-1)).toBeInstanceOf(TransientError);
    expect((errors.at(-1) as TransientError).status).toBe(0);
    for (const error of errors) {
      expect(error).toBeInstanceOf(ApiError);
      for (const text of allStrings(error)) expect(text).not.toContain(KEY);
    }
  });

  it('scrubs a key the service echoes truncated, by its end or masked, leaving the rest of its message', async () => {
    const echoes = [
      [`invalid key ${KEY.slice(0, 12)}...`, 'invalid key FP...'],
      [`key ending in ...${KEY.slice(-8)} refused`, 'key ending in ...FP refused'],
      [`key ${KEY.slice(0, 10)}****${KEY.slice(14)} unknown`, 'key FP****FP unknown'],
    ] as const;
    for (const [said, kept] of echoes) {
      reply = { status: 401, body: JSON.stringify({ message: said }) };
      const error = await failure(client.info({ username: 'alice' }));
      expect(error).toBeInstanceOf(AuthError);
      const auth = error as AuthError;
      expect(auth.serviceMessage).toBe(kept.replaceAll('FP', keyFingerprint(KEY)));
      expect(auth.message).toContain(auth.serviceMessage);
      // No 8 characters of the key in a row, in any field of the error.
      for (const text of allStrings(error)) {
        for (let at = 0; at + 8 <= KEY.length; at++) expect(text).not.toContain(KEY.slice(at, at + 8));
      }
    }
  });
});

describe('requests on the wire', () => {
  it('sends the ApiKey header, JSON with its content type, and URL-encoded query values', async () => {
    reply = { status: 200, body: JSON.stringify({ tweets: [tweetV3()], next_cursor: '' }) };
    const page = await client.searchTweets({ query: 'from:alice "a b"', order: 'latest', cursor: 'c1' });
    expect(page.items).toHaveLength(1);
    expect(page.nextCursor).toBeNull();
    const post = server.requests[0]!;
    expect(post.method).toBe('POST');
    // The header name is case-sensitive at the service: exactly `ApiKey`.
    expect(post.rawHeaders[post.rawHeaders.indexOf('ApiKey') + 1]).toBe(KEY);
    expect(post.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post.body)).toEqual({ query: 'from:alice "a b"', order: 'latest', next_cursor: 'c1' });

    const cursor = 'DAAB+/=&?x' + 'A'.repeat(600);
    reply = { status: 200, body: JSON.stringify({ users: [], next_cursor: null }) };
    await client.followers({ username: 'alice', cursor });
    const get = server.requests[1]!;
    const url = new URL(get.url, server.url);
    expect(url.pathname).toBe('/v3/followers');
    expect(url.searchParams.get('next_cursor')).toBe(cursor);
    expect(get.url).not.toContain('+/=&?x');
  });

  it('rejects bad parameters before sending anything', async () => {
    const bad: Array<() => Promise<unknown>> = [
      () => client.userTweets({ userId: '12ab' }),
      () => client.userTweets({}),
      () => client.userTweets({ userId: '1', username: 'a' }),
      () => client.searchTweets({ query: '   ' }),
      () => client.tweetInfoBulk(Array.from({ length: 101 }, (_, i) => String(i + 1))),
      () => client.tweetInfoBulk([]),
      () => client.mentions({ query: 'alice', sinceDate: '2026-02-30' }),
      () => client.mentions({ query: 'alice', minLikes: -1 }),
      () => client.v2.info('not a handle!'),
      () => client.info({ userLink: 'ftp://x' }),
    ];
    for (const call of bad) {
      // Called directly: a bad parameter must reject the promise, not throw synchronously.
      const error = await failure(call());
      expect(error).toBeInstanceOf(InputError);
    }
    expect(server.requests).toHaveLength(0);
    expect(attempts).toHaveLength(0);
  });

  it('requires https except on loopback', () => {
    expect(() => new ApiClient({ baseUrl: 'http://api.example.com', gate })).toThrow(ConfigError);
  });

  it('turns a header time-out into a TransientError with the transport code', async () => {
    const slow = await startRawServer(() => {
      /* never answers */
    });
    const c = new ApiClient({ baseUrl: slow.url, gate, timeoutMs: 100, retry: { maxAttemptsTransient: 1 } });
    try {
      const error = await failure(c.keyUsageInfo());
      expect(error).toBeInstanceOf(TransientError);
      expect((error as TransientError).transportCode).toBe('UND_ERR_HEADERS_TIMEOUT');
    } finally {
      await c.close();
      await slow.close();
    }
  });
});
