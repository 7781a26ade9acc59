import { afterEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { ISO_RE, LEGACY_RE, message } from './server-schemas.ts';
import { FX, get, post, startSpecFixture, walk } from './server-helpers.ts';

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});
const tid = (fixture: number): string => sim!.world.tweets.idString(fixture);
const userTweets = (s: RunningSimulator, c: string | null) => post(s, '/v3/user-tweets', { username: 'alice', ...(c ? { next_cursor: c } : {}) });

describe('faults', () => {
  it('errorRate500 answers 500 {message} and still costs a request', async () => {
    sim = await startSpecFixture({ faults: { errorRate500: 1 } });
    const r = await get(sim, '/v3/info?username=alice');
    expect(r.status).toBe(500);
    message.parse(r.body);
    sim.control.setFaults({ errorRate500: 0 });
    expect((await get(sim, '/v3/key-usage-info')).body).toMatchObject({ key_requests: 2 });
  });

  it('burst429 answers 429 inside the burst window without costing quota', async () => {
    sim = await startSpecFixture({ faults: { burst429: { everyMs: 1000, durationMs: 1000 } } });
    expect((await get(sim, '/v3/info?username=alice')).status).toBe(429);
    sim.control.setFaults({ burst429: null });
    expect((await get(sim, '/v3/key-usage-info')).body).toMatchObject({ key_requests: 1 });
  });

  it('empty pages come as 200 with no items and a cursor that continues the walk', async () => {
    sim = await startSpecFixture({ faults: { emptyPageRate: 1 } });
    const first = await userTweets(sim, null);
    expect(first.status).toBe(200);
    const body = first.body as { tweets: unknown[]; next_cursor: string };
    expect(body.tweets).toEqual([]);
    sim.control.setFaults({ emptyPageRate: 0 });
    const rest = await walk((c) => userTweets(sim!, c ?? body.next_cursor), 'tweets');
    expect(rest.items.length).toBe(46);
  });

  it('repeatCursorAfterPages hands back the received cursor after N pages', async () => {
    sim = await startSpecFixture({ faults: { repeatCursorAfterPages: 1 } });
    const p1 = (await userTweets(sim, null)).body as { next_cursor: string };
    const p2 = (await userTweets(sim, p1.next_cursor)).body as { next_cursor: string; tweets: unknown[] };
    expect(p2.tweets.length).toBe(20);
    expect(p2.next_cursor).toBe(p1.next_cursor);
  });

  it('latency and slow responses delay the answer', async () => {
    sim = await startSpecFixture({ latencyMs: [60, 80] });
    let t = performance.now();
    await get(sim, '/v3/info?username=alice');
    expect(performance.now() - t).toBeGreaterThanOrEqual(55);
    await sim.close();
    sim = await startSpecFixture({ faults: { slowRate: 1, slowMs: 150 } });
    t = performance.now();
    await get(sim, '/v3/info?username=alice');
    expect(performance.now() - t).toBeGreaterThanOrEqual(145);
  });
});

describe('quirks', () => {
  it('legacyTimestamps switches v3 created_at to the weekday form; v2 always uses it', async () => {
    sim = await startSpecFixture();
    const iso = (await get(sim, '/v3/info?username=alice')).body as { created_at: string };
    expect(iso.created_at).toMatch(ISO_RE);
    sim.control.setQuirks({ legacyTimestamps: true });
    const t = (await post(sim, '/v3/tweet-info', { tweet_link: tid(0) })).body as { created_at: string; user: { created_at: string } };
    expect(t.created_at).toMatch(LEGACY_RE);
    expect(t.user.created_at).toMatch(LEGACY_RE);
    expect(Date.parse(t.created_at)).toBe(sim.world.tweets.createdAtMs(0) - (sim.world.tweets.createdAtMs(0) % 1000));
  });

  it('explicitNulls off leaves empty fields out and next_cursor absent at the end', async () => {
    sim = await startSpecFixture({ quirks: { explicitNulls: false } });
    const t = (await post(sim, '/v3/tweet-info', { tweet_link: tid(5) })).body as Record<string, unknown>;
    for (const f of ['quoted_status', 'retweeted_status', 'in_reply_to_tweet_id', 'in_reply_to_username']) expect(t, f).not.toHaveProperty(f);
    expect((t.user as Record<string, unknown>).pinned_tweet_ids).toEqual([]);
    const last = (await get(sim, '/v3/follows?username=alice')).body as Record<string, unknown>;
    expect(last).not.toHaveProperty('next_cursor');
  });

  it('extraFields adds made_with_ai and paid_partnership', async () => {
    sim = await startSpecFixture({ quirks: { extraFields: true } });
    expect((await post(sim, '/v3/tweet-info', { tweet_link: tid(5) })).body).toMatchObject({ made_with_ai: false, paid_partnership: false });
  });

  it('shortPages serves 5, 12, 18 while more exist and still walks every item once', async () => {
    sim = await startSpecFixture({ quirks: { shortPages: true } });
    const sizes: number[] = [];
    const r = await walk(async (c) => {
      const res = await userTweets(sim!, c);
      sizes.push((res.body as { tweets: unknown[] }).tweets.length);
      return res;
    }, 'tweets');
    expect(sizes.slice(0, 4)).toEqual([5, 12, 18, 5]);
    expect(new Set(r.items.map((t) => t.id)).size).toBe(46);
  });

  it('v2Gone answers 410 naming the v3 counterpart', async () => {
    sim = await startSpecFixture({ quirks: { v2Gone: true } });
    const r = await post(sim, '/v2/tweet-info', { tweet_link: tid(0) });
    expect(r.status).toBe(410);
    expect((r.body as { message: string }).message).toContain('/v3/tweet-info');
    expect((await get(sim, '/v2/info/alice')).status).toBe(410);
    expect((await get(sim, '/v3/info?username=alice')).status).toBe(200);
  });

  it('a malformed POST body answers 400, or an empty result under malformedBodyEmpty', async () => {
    sim = await startSpecFixture();
    for (const raw of ['{"query": ', '', '[1,2]', '"text"']) {
      const r = await post(sim, '/v3/search-tweets', undefined, { raw });
      expect(r.status, raw).toBe(400);
      message.parse(r.body);
    }
    expect((await post(sim, '/v3/search-tweets', { query: 'x' }, { headers: { 'Content-Type': 'text/plain' } })).status).toBe(400);
    sim.control.setQuirks({ malformedBodyEmpty: true });
    const r = await post(sim, '/v3/search-tweets', undefined, { raw: '{"query": ' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ tweets: [], next_cursor: null });
  });

  it('unknown paths and wrong methods answer 404', async () => {
    sim = await startSpecFixture();
    expect((await get(sim, '/v3/search-tweets')).status).toBe(404);
    expect((await get(sim, '/v4/info')).status).toBe(404);
    expect((await get(sim, `/v3/tweet-info?tweet_link=${tid(FX.aliceRoot)}`)).status).toBe(404);
  });
});
