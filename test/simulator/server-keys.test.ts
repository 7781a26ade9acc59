import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { message, usage } from './server-schemas.ts';
import { KEY, alignToSecond, call, get, post, startSpecFixture } from './server-helpers.ts';

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function rawGet(s: RunningSimulator, path: string, headers: Record<string, string>): Promise<number> {
  const res = await request(`${s.url}${path}`, { headers });
  await res.body.text();
  return res.statusCode;
}

describe('keys', () => {
  it('accepts only the exact ApiKey header name and the exact key', async () => {
    sim = await startSpecFixture();
    expect(await rawGet(sim, '/v3/info?username=alice', { ApiKey: KEY })).toBe(200);
    const variants: Array<Record<string, string>> = [{ apikey: KEY }, { 'Api-Key': KEY }, { APIKEY: KEY }, { Authorization: KEY }, { Authorization: `Bearer ${KEY}` }, {}];
    for (const headers of variants) {
      expect(await rawGet(sim, '/v3/info?username=alice', headers), JSON.stringify(Object.keys(headers))).toBe(401);
    }
    // HTTP parsing strips whitespace around a header value (RFC 9110 OWS), so only whitespace
    // inside the value reaches the server: that is what a pasted key with a space looks like here
    for (const key of [KEY.replace('-', ' -'), `${KEY}\t1`, 'other', '']) {
      const r = await get(sim, '/v3/info?username=alice', { key });
      expect(r.status).toBe(401);
      message.parse(r.body);
    }
    expect((await get(sim, '/v3/nope', { key: null })).status).toBe(401);
  });

  it('403 on exhausted quota and on an expired subscription; key-usage-info is truthful', async () => {
    sim = await startSpecFixture({ keys: [KEY, { key: 'small', quota: 3 }, { key: 'old', validUntil: '2020-01-01T00:00:00Z' }] });
    for (let i = 0; i < 4; i++) await get(sim, '/v3/info?username=alice');
    const u = usage.parse((await get(sim, '/v3/key-usage-info')).body);
    expect(u).toMatchObject({ key_requests: 5, remaining_requests: 100_000 - 5, total_requests: 100_000 });
    for (let i = 0; i < 3; i++) expect((await get(sim, '/v3/info?username=alice', { key: 'small' })).status).toBe(200);
    const spent = await get(sim, '/v3/info?username=alice', { key: 'small' });
    expect(spent.status).toBe(403);
    message.parse(spent.body);
    expect((await get(sim, '/v3/info?username=alice', { key: 'old' })).status).toBe(403);
    sim.control.setQuota('small', 2);
    expect((await get(sim, '/v3/key-usage-info', { key: 'small' })).body).toMatchObject({ key_requests: 4, remaining_requests: 1, total_requests: 5 });
  });

  it('failed calls (400, 404) cost one request; 401 and 403 cost nothing', async () => {
    sim = await startSpecFixture({ keys: [{ key: KEY, quota: 10 }] });
    expect((await get(sim, '/v3/info')).status).toBe(400);
    expect((await get(sim, '/v3/info?username=carol')).status).toBe(404);
    expect((await get(sim, '/v3/no-such-endpoint')).status).toBe(404);
    expect((await get(sim, '/v3/info?username=alice', { key: 'wrong' })).status).toBe(401);
    expect((await get(sim, '/v3/key-usage-info')).body).toMatchObject({ key_requests: 4, remaining_requests: 6 });
  });

  it('the 21st request in one wall-clock second answers 429, which costs no quota', async () => {
    sim = await startSpecFixture({ ratePerKey: 20 });
    await alignToSecond();
    const statuses = await Promise.all(Array.from({ length: 25 }, () => get(sim!, '/v3/info?username=alice').then((r) => r.status)));
    expect(statuses.filter((s) => s === 200).length).toBe(20);
    expect(statuses.filter((s) => s === 429).length).toBe(5);
    await alignToSecond();
    const u = await get(sim, '/v3/key-usage-info');
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ key_requests: 21 });
  });

  it('removeKey answers 401 at once; addKey accepts a new key', async () => {
    sim = await startSpecFixture();
    sim.control.addKey('fresh', 5);
    expect((await get(sim, '/v3/info?username=alice', { key: 'fresh' })).status).toBe(200);
    sim.control.removeKey('fresh');
    expect((await get(sim, '/v3/info?username=alice', { key: 'fresh' })).status).toBe(401);
  });
});

describe('request log, stats and admin routes', () => {
  it('logs method, path without query, fingerprint (never the key), status and time', async () => {
    sim = await startSpecFixture();
    await get(sim, '/v3/info?username=alice');
    await get(sim, '/v3/info?username=alice', { key: null });
    const log = sim.control.requestLog();
    expect(log).toEqual([
      { method: 'GET', path: '/v3/info', keyFingerprint: keyFingerprint(KEY), status: 200, at: expect.any(Number), durationMs: expect.any(Number) },
      { method: 'GET', path: '/v3/info', keyFingerprint: null, status: 401, at: expect.any(Number), durationMs: expect.any(Number) },
    ]);
    expect(JSON.stringify(log)).not.toContain(KEY);
    const stats = await get(sim, '/_sim/stats', { key: null });
    expect(stats.body).toEqual({ requests: 2, byStatus: { '200': 1, '401': 1 }, byKey: { [keyFingerprint(KEY)]: 1, none: 1 } });
    const listed = await get(sim, '/_sim/requests', { key: null });
    expect((listed.body as { requests: unknown[] }).requests.length).toBe(2);
    expect((await call(sim, 'DELETE', '/_sim/requests', { key: null })).body).toEqual({ cleared: 2 });
    expect(sim.control.requestLog()).toEqual([]);
  });

  it('adds tweets that search then finds, sets quota, faults and quirks, refuses bad input', async () => {
    sim = await startSpecFixture();
    const added = await post(sim, '/_sim/tweets', { tweets: [{ authorHandle: 'bob', text: 'zebracorn sighting' }] }, { key: null });
    expect(added.status).toBe(200);
    const ids = (added.body as { ids: string[] }).ids;
    expect(ids).toHaveLength(1);
    const found = await post(sim, '/v3/search-tweets', { query: 'zebracorn' });
    expect((found.body as { tweets: Array<{ id: string }> }).tweets.map((t) => t.id)).toEqual(ids);
    expect(sim.control.addTweets([{ authorHandle: 'alice', text: 'zebracorn again' }])).toHaveLength(1);
    expect((await post(sim, '/_sim/tweets', [{ authorHandle: 'nobody_x', text: 'x' }], { key: null })).status).toBe(400);
    expect((await post(sim, '/_sim/quota', { key: KEY, remaining: 0 }, { key: null })).status).toBe(200);
    expect((await get(sim, '/v3/info?username=alice')).status).toBe(403);
    expect((await post(sim, '/_sim/quota', { key: KEY, remaining: -1 }, { key: null })).status).toBe(400);
    expect((await post(sim, '/_sim/faults', { errorRate500: 2 }, { key: null })).status).toBe(400);
    expect((await post(sim, '/_sim/quirks', { v2Gone: true }, { key: null })).body).toMatchObject({ quirks: { v2Gone: true } });
    expect((await get(sim, '/_sim/nothing', { key: null })).status).toBe(404);
  });

  it('serves the catalog with at least three samples of each kind', async () => {
    const { startSimulator } = await import('../../src/simulator/index.ts');
    sim = await startSimulator({ seed: 3, scale: 'small' });
    const r = await get(sim, '/_sim/catalog', { key: null });
    expect(r.status).toBe(200);
    const c = r.body as Record<string, unknown> & { users: Record<string, string[]> };
    for (const kind of ['public', 'protected', 'suspended']) expect(c.users[kind]!.length, kind).toBeGreaterThanOrEqual(3);
    for (const kind of ['tweets', 'lists', 'communities', 'spaces']) expect((c[kind] as string[]).length, kind).toBeGreaterThanOrEqual(3);
    const handle = c.users.public![0]!;
    expect((await get(sim, `/v3/info?username=${handle}`, { key: 'sim-key' })).status).toBe(200);
    expect((await get(sim, `/v3/info?username=${c.users.protected![0]!}`, { key: 'sim-key' })).status).toBe(404);
  });
});
