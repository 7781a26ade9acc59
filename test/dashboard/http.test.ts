/**
 * The dashboard's HTTP edges without Postgres: a loopback-bound dashboard answers only to a
 * loopback Host (DNS rebinding), every answer carries the security headers, HEAD /events opens no
 * stream, and a job id past int8 never reaches a query.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardHandler, startDashboardServer, type DashboardHandler, type DashboardServer } from '../../src/dashboard/server.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let queries = 0;
const deps = {
  pool: {
    query: async () => {
      queries += 1;
      throw new Error('value "9999999999999999999" is out of range for type bigint');
    },
  },
  keyStates: async () => [],
  rateWaits: { waitingJobs: async () => [] },
  config: { stalledAfterMs: 60_000 },
} as unknown as Parameters<typeof createDashboardHandler>[0];

let handler: DashboardHandler;
let server: DashboardServer;

function send(path: string, options: { method?: string; host?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, path, method: options.method ?? 'GET', headers: { host: options.host ?? `127.0.0.1:${server.port}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  handler = createDashboardHandler(deps, { intervalMs: 60_000, host: '127.0.0.1' });
  server = await startDashboardServer(handler, 0, '127.0.0.1');
});
afterAll(async () => {
  await server?.close();
});

describe('dashboard HTTP', () => {
  it('answers 421 to a Host that is not loopback or its own address, and serves loopback names with any port', async () => {
    for (const host of ['evil.example', `evil.example:${server.port}`, '10.0.0.1', 'localhost.evil.example']) {
      const res = await send('/', { host });
      expect(res.status, host).toBe(421);
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    }
    for (const host of ['localhost', `localhost:${server.port}`, '127.0.0.1', '127.1.2.3:99', '[::1]', `[::1]:${server.port}`]) {
      expect((await send('/', { host })).status, host).toBe(200);
    }
  });

  it('puts the security headers on 405 and on the standalone 404', async () => {
    const post = await send('/', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.headers['content-security-policy']).toContain("default-src 'self'");
    const missing = await send('/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.headers['x-content-type-options']).toBe('nosniff');
  });

  it('HEAD /events answers the headers and opens no stream', async () => {
    const res = await send('/events?page=1', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(handler.hub.stats().subscribers).toBe(0);
  });

  it('refuses a job id past int8 before any query', async () => {
    const before = queries;
    expect((await send('/api/jobs/9999999999999999999')).status).toBe(400);
    expect((await send('/events?job=9999999999999999999')).status).toBe(400);
    expect((await send('/jobs/9223372036854775808')).status).toBe(404);
    expect(queries).toBe(before);
    expect(handler.hub.stats().subscribers).toBe(0);
  });
});
