/**
 * What tells the two profiles apart, behaviour by behaviour: production as
 * service-production.md and the captured real answer show it, spec as service-spec.md reads.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.ts';
import { FX, KEY, get, post, startFixture } from './server-helpers.ts';
import { ISO_RE, LEGACY_RE } from './reference-schemas.ts';

const LIST = '1700000000000000001';

let prod: RunningSimulator;
let spec: RunningSimulator;
const tid = (fixture: number): string => prod.world.tweets.idString(fixture);

beforeAll(async () => {
  prod = await startFixture({ profile: 'production' });
  spec = await startFixture({ profile: 'spec' });
});
afterAll(async () => {
  await prod.close();
  await spec.close();
});

describe('the default', () => {
  it('is the production profile', async () => {
    const sim = await startFixture();
    try {
      expect(sim.profile).toBe('production');
      expect(((await post(sim, '/v3/tweet-info', { tweet_link: tid(4) })).body as { created_at: string }).created_at).toMatch(LEGACY_RE);
      expect((await post(sim, '/v2/tweet-info', { tweet_link: tid(4) })).status).toBe(410);
    } finally {
      await sim.close();
    }
  });
});

describe('tweet text, links and media', () => {
  it('production: full_text has the expanded link and the media address appended, entities only media, photo preview ""', async () => {
    const t = (await post(prod, '/v3/tweet-info', { tweet_link: tid(FX.mediaTweet) })).body as Record<string, unknown>;
    expect(t.full_text).toBe('media tweet https://example.com/article https://pbs.twimg.com/media/a.jpg');
    expect(t.entities).toEqual([{ type: 'photo', link: 'https://pbs.twimg.com/media/a.jpg', preview: '' }]);
  });

  it('spec: full_text as posted, media entities keep their preview, url entities hold the real link', async () => {
    const t = (await post(spec, '/v3/tweet-info', { tweet_link: tid(FX.mediaTweet) })).body as Record<string, unknown>;
    expect(t.full_text).toBe('media tweet https://t.co/x');
    expect(t.entities).toEqual([
      { type: 'photo', link: 'https://pbs.twimg.com/media/a.jpg', preview: 'https://pbs.twimg.com/media/a_small.jpg' },
      { type: 'url', link: 'https://example.com/article', preview: 'https://example.com/article' },
    ]);
  });

  it('in neither profile does a link entity name one of the tweet\'s own media addresses', async () => {
    for (const sim of [prod, spec]) {
      let cursor: string | null = null;
      do {
        const res = await post(sim, '/v3/user-tweets', { username: 'alice', ...(cursor ? { next_cursor: cursor } : {}) });
        const body = res.body as { tweets: Array<{ entities: Array<{ type: string; link: string }> }>; next_cursor?: string | null };
        for (const t of body.tweets) {
          const media = new Set(t.entities.filter((e) => e.type !== 'url').map((e) => e.link));
          for (const e of t.entities) if (e.type === 'url') expect(media.has(e.link)).toBe(false);
        }
        cursor = body.next_cursor ?? null;
      } while (cursor !== null);
    }
  });
});

describe('the captured real answer', () => {
  // test/fixtures holds a copy of ../shared/fixtures/search-tweets.v3.real.json
  const real = JSON.parse(readFileSync(new URL('../fixtures/search-tweets.v3.real.json', import.meta.url), 'utf8')) as {
    tweets: Array<Record<string, unknown> & { user: Record<string, unknown> }>;
  };

  it('production tweets and users carry exactly the fields of the real page, with the same kinds of values', async () => {
    const page = (await post(prod, '/v3/search-tweets', { query: 'alice post', order: 'latest' })).body as typeof real;
    const keys = (o: Record<string, unknown>): string[] => Object.keys(o).sort();
    const kinds = (o: Record<string, unknown>): Record<string, string> =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v]));
    const ours = page.tweets[0]!;
    const theirs = real.tweets.find((t) => t.in_reply_to_tweet_id === null && t.user.bio_urls === null && Array.isArray(t.user.pinned_tweet_ids))!;
    expect(keys(ours)).toEqual(keys(theirs));
    expect(keys(ours.user)).toEqual(keys(theirs.user));
    const { user: _u, entities: _e, ...ourScalars } = ours;
    const { user: _ru, entities: _re, ...realScalars } = theirs;
    expect(kinds(ourScalars)).toEqual(kinds(realScalars));
    expect(String(ours.created_at)).toMatch(LEGACY_RE);
    expect(String(theirs.created_at)).toMatch(LEGACY_RE);
  });
});

describe('timestamps and empty values', () => {
  it('production: legacy created_at and explicit nulls; spec: ISO 8601 and absent fields', async () => {
    const p = (await post(prod, '/v3/tweet-info', { tweet_link: tid(4) })).body as Record<string, unknown>;
    expect(p.created_at).toMatch(LEGACY_RE);
    expect(p).toMatchObject({ in_reply_to_tweet_id: null, in_reply_to_username: null, quoted_status: null, retweeted_status: null, made_with_ai: false, paid_partnership: false });
    const s = (await post(spec, '/v3/tweet-info', { tweet_link: tid(4) })).body as Record<string, unknown>;
    expect(s.created_at).toMatch(ISO_RE);
    for (const k of ['in_reply_to_tweet_id', 'in_reply_to_username', 'quoted_status', 'retweeted_status', 'made_with_ai']) expect(s).not.toHaveProperty(k);
  });

  it('an explicit quirk overrides its profile', async () => {
    const sim = await startFixture({ profile: 'production', quirks: { legacyTimestamps: false, v2Gone: false } });
    try {
      expect(((await post(sim, '/v3/tweet-info', { tweet_link: tid(4) })).body as { created_at: string }).created_at).toMatch(ISO_RE);
      expect((await post(sim, '/v2/tweet-info', { tweet_link: tid(4) })).status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});

describe('v2', () => {
  const V2: Array<[string, string, string, unknown?]> = [
    ['POST', '/v2/comments', 'POST /v3/comments', {}],
    ['GET', '/v2/list-tweets', 'GET /v3/list-tweets'],
    ['POST', '/v2/user-tweets', 'POST /v3/user-tweets', {}],
    ['GET', '/v2/check-comment', 'GET /v3/check-comment'],
    ['POST', '/v2/tweet-info', 'POST /v3/tweet-info', {}],
    ['POST', '/v2/tweet-info-bulk', 'POST /v3/tweet-info-bulk', {}],
    ['GET', '/v2/info/alice', 'GET /v3/info'],
    ['GET', '/v2/follows', 'GET /v3/follows'],
    ['GET', '/v2/new-following-7d', 'GET /v3/new-following-7d'],
    ['POST', '/v2/check-quoted', 'POST /v3/check-quoted', {}],
  ];

  it('production: every /v2 path answers 410 naming its real v3 counterpart, at no quota cost', async () => {
    const before = ((await get(prod, '/v3/key-usage-info')).body as { remaining_requests: number }).remaining_requests;
    for (const [method, path, counterpart, body] of V2) {
      const r = method === 'GET' ? await get(prod, path) : await post(prod, path, body);
      expect(r.status, path).toBe(410);
      expect((r.body as { message: string }).message, path).toContain(`use ${counterpart}`);
    }
    const after = ((await get(prod, '/v3/key-usage-info')).body as { remaining_requests: number }).remaining_requests;
    expect(after).toBe(before - 1);
  });

  it('spec: /v2 is live', async () => {
    expect((await post(spec, '/v2/tweet-info', { tweet_link: tid(4) })).status).toBe(200);
    expect((await get(spec, '/v2/info/alice')).status).toBe(200);
  });
});

describe('endpoint differences', () => {
  it('search-tweets without order: production ranks popular first, spec newest first', async () => {
    const ids = async (sim: RunningSimulator, order?: string): Promise<string[]> =>
      ((await post(sim, '/v3/search-tweets', { query: 'reply', ...(order ? { order } : {}) })).body as { tweets: Array<{ id: string }> }).tweets.map((t) => t.id);
    expect(await ids(prod)).toEqual(await ids(prod, 'popular'));
    expect(await ids(spec)).toEqual(await ids(spec, 'latest'));
    expect(await ids(prod)).not.toEqual(await ids(prod, 'latest'));
  });

  it('the spec\'s /v3/retweets is served only by the spec profile; /v3/retweeters by both', async () => {
    expect((await post(prod, '/v3/retweets', { tweet_link: tid(2) })).status).toBe(404);
    expect((await post(spec, '/v3/retweets', { tweet_link: tid(2) })).status).toBe(200);
    expect((await post(prod, '/v3/retweeters', { tweet_link: tid(2) })).status).toBe(200);
  });

  it('key-usage-info: production reads key_requests as the allotment and total_requests as used; the spec the other way round', async () => {
    for (const [sim, allotment, used] of [[prod, 'key_requests', 'total_requests'], [spec, 'total_requests', 'key_requests']] as const) {
      const u = (await get(sim, '/v3/key-usage-info')).body as Record<string, number>;
      expect(u[allotment]).toBe(u[used]! + u.remaining_requests!);
      expect(u[used]).toBeGreaterThan(0);
      expect(u[used]).toBeLessThan(u[allotment]!);
    }
  });

  it('followers, follows and list-members cursors: exact JSON numbers in production, digit strings in spec', async () => {
    for (const path of ['/v3/followers?username=alice', `/v3/list-members?list_id=${LIST}`]) {
      const p = await get(prod, path);
      const digits = /"next_cursor":(\d{19,})[,}]/.exec(p.text)?.[1];
      expect(digits, p.text.slice(-80)).toBeDefined();
      // sent back digit for digit, the cursor continues the walk (a rounded one would be refused)
      expect((await get(prod, `${path}&next_cursor=${digits}`)).status).toBe(200);
      expect((await get(prod, `${path}&next_cursor=${String(Number(digits))}`)).status).toBe(400);
      expect((await get(spec, path)).text).toMatch(/"next_cursor":"\d{19,}"/);
    }
    // verified-followers takes a string cursor in the reference
    const v = await get(prod, `/v3/verified-followers?username=alice`);
    expect(v.text).not.toMatch(/"next_cursor":\d/);
  });

  it('the API key never appears in an answer', async () => {
    for (const sim of [prod, spec]) expect((await get(sim, '/v3/key-usage-info')).text).not.toContain(KEY);
  });
});
