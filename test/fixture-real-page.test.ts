/**
 * The one real production answer (test/fixtures/search-tweets.v3.real.json, a copy of
 * shared/fixtures/) served verbatim by a node:http server on port 0, searched with the client and
 * committed through the store: every tweet and author must land with exact ids, text, legacy
 * timestamps, counts, reply/quote fields, media and links. Expected values are read from the
 * fixture itself with independent code (V8's Date.parse, plain regexes), not from the client.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/api-client/client.ts';
import type { Page } from '../src/api-client/page.ts';
import type { CanonicalTweet } from '../src/api-client/canonical.ts';
import { createStaticGate } from '../src/api-client/static-gate.ts';
import { keyFingerprint } from '../src/key-fingerprint.ts';
import { commitPage } from '../src/store/commit-page.ts';
import { createJob, createSlices } from '../src/store/jobs.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';

interface WireUser {
  id: string;
  username: string;
  display_name: string;
  description: string;
  location: string;
  created_at: string;
  followers_count: number;
  followings_count: number;
  tweets_count: number;
  favourites_count: number;
  media_count: number;
  verified: boolean;
  protected: boolean;
  can_dm: boolean;
  possibly_sensitive: boolean;
  profile_image_url: string;
  profile_background_image_url: string;
  bio_urls: string[] | null;
  pinned_tweet_ids: string[] | null;
}

interface WireTweet {
  id: string;
  full_text: string;
  created_at: string;
  lang: string;
  conversation_id_str: string;
  is_reply: boolean;
  in_reply_to_tweet_id: string | null;
  in_reply_to_username: string | null;
  is_quote_status: boolean;
  is_replies_limited: boolean;
  quoted_status: unknown;
  retweeted_status: unknown;
  likes_count: number;
  retweet_count: number;
  reply_count: number;
  quote_count: number;
  bookmark_count: number;
  view_count: number;
  entities: Array<{ type: string; link: string; preview: string }>;
  user: WireUser;
}

const FIXTURE_TEXT = readFileSync(new URL('./fixtures/search-tweets.v3.real.json', import.meta.url), 'utf8');
const FIXTURE = JSON.parse(FIXTURE_TEXT) as { tweets: WireTweet[]; next_cursor: string };
const KEY = 'sk_fixture_SECRET_5151';
const QUERY = 'from:NatGeo OR from:esa OR from:NASA OR from:NASAWebb OR from:NOAA';

let db: TestDatabase;
let server: http.Server;
let client: ApiClient;
const received: Array<{ method: string; url: string; body: string }> = [];
let page: Page<CanonicalTweet>;

beforeAll(async () => {
  db = await createTestDatabase();
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      if (req.method === 'POST' && req.url === '/v3/search-tweets') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(FIXTURE_TEXT);
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"message":"not found"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, gate: createStaticGate([{ key: KEY, fingerprint: keyFingerprint(KEY) }]) });

  page = await client.searchTweets({ query: QUERY, order: 'latest' });
  const jobId = await createJob(db.pool, { kind: 'search', params: { query: QUERY } });
  const [sliceId] = await createSlices(db.pool, jobId, [{ kind: 'search-window', params: {} }]);
  await commitPage(db.pool, {
    jobId,
    sliceId: sliceId!,
    expectedCursor: null,
    nextCursor: page.nextCursor,
    sliceDone: false,
    tweets: page.items,
    users: [],
    quarantined: page.quarantined.map((q) => ({ endpoint: 'POST /v3/search-tweets', reason: q.reason, payload: q.payload })),
    emptyPage: page.items.length === 0,
  });
});

afterAll(async () => {
  await client?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await db?.drop();
});

/** V8's own legacy-date parser, independent of the client's. */
function legacyMs(text: string): number {
  const ms = Date.parse(text);
  expect(Number.isNaN(ms)).toBe(false);
  return ms;
}

const MEDIA_TYPES = new Set(['photo', 'video', 'animated_gif']);

/** A tweet's real links: the URLs in its text that are not one of its own media addresses. */
function expectedLinks(t: WireTweet): string[] {
  const media = new Set(t.entities.filter((e) => MEDIA_TYPES.has(e.type)).flatMap((e) => [e.link, e.preview]));
  return [...new Set(t.full_text.match(/https?:\/\/\S+/g) ?? [])].filter((u) => !media.has(u));
}

describe('the real production page, end to end', () => {
  it('was asked for with production field names and read whole, cursor included', () => {
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toEqual({ query: QUERY, order: 'latest' });
    expect(page.quarantined).toEqual([]);
    expect(page.items.map((t) => t.id)).toEqual(FIXTURE.tweets.map((t) => t.id));
    expect(FIXTURE.next_cursor).toHaveLength(428);
    expect(page.nextCursor).toBe(FIXTURE.next_cursor);
  });

  it('stores every tweet with exact ids, text, times, counts, reply/quote fields, media and links', async () => {
    const { rows } = await db.pool.query<Record<string, unknown>>(
      `SELECT id::text AS id, author_id::text AS author_id, full_text, (extract(epoch FROM created_at) * 1000)::bigint::text AS created_ms,
              lang, conversation_id::text AS conversation_id, in_reply_to_tweet_id::text AS in_reply_to_tweet_id,
              in_reply_to_username, quoted_tweet_id::text AS quoted_tweet_id, retweeted_tweet_id::text AS retweeted_tweet_id,
              is_reply, is_quote_status, is_replies_limited,
              like_count::text AS like_count, retweet_count::text AS retweet_count, reply_count::text AS reply_count,
              quote_count::text AS quote_count, bookmark_count::text AS bookmark_count, view_count::text AS view_count,
              urls, media, raw, source
       FROM tweets ORDER BY id DESC`,
    );
    expect(rows.map((r) => r.id)).toEqual(FIXTURE.tweets.map((t) => t.id));
    expect(FIXTURE.tweets.filter((t) => t.is_reply)).toHaveLength(7);
    for (const [i, t] of FIXTURE.tweets.entries()) {
      expect(rows[i]).toEqual({
        id: t.id,
        author_id: t.user.id,
        full_text: t.full_text,
        created_ms: String(legacyMs(t.created_at)),
        lang: t.lang,
        conversation_id: t.conversation_id_str,
        in_reply_to_tweet_id: t.in_reply_to_tweet_id,
        in_reply_to_username: t.in_reply_to_username,
        quoted_tweet_id: null,
        retweeted_tweet_id: null,
        is_reply: t.is_reply,
        is_quote_status: t.is_quote_status,
        is_replies_limited: t.is_replies_limited,
        like_count: String(t.likes_count),
        retweet_count: String(t.retweet_count),
        reply_count: String(t.reply_count),
        quote_count: String(t.quote_count),
        bookmark_count: String(t.bookmark_count),
        view_count: String(t.view_count),
        urls: expectedLinks(t),
        media: t.entities.map((e) => ({ type: e.type, link: e.link, preview: e.preview })),
        raw: t,
        source: 'v3',
      });
    }
  });

  it('keeps media addresses out of links on the tweets that carry both', async () => {
    const urlsOf = async (id: string) =>
      (await db.pool.query<{ urls: string[] }>('SELECT urls FROM tweets WHERE id = $1::bigint', [id])).rows[0]?.urls;
    expect(await urlsOf('2083538237453164763')).toEqual([]); // photo only
    expect(await urlsOf('2083302981907140799')).toEqual(['https://go.nasa.gov/4fznPfi']); // link + photo
    expect(await urlsOf('2082933002393329840')).toEqual(['https://go.nasa.gov/4fzjJCk']); // link + video
    expect(await urlsOf('2083908173061149094')).toEqual(['https://on.natgeo.com/HTOsMT']);
    const leaked = await db.pool.query(`SELECT id FROM tweets, unnest(urls) AS u WHERE u ~ '^https://(pbs|video)\\.twimg\\.com/'`);
    expect(leaked.rows).toEqual([]);
  });

  it('stores the five authors with exact ids, profile fields, counts and legacy registration times', async () => {
    const authors = new Map(FIXTURE.tweets.map((t) => [t.user.id, t.user]));
    expect(authors.size).toBe(5);
    const { rows } = await db.pool.query<Record<string, unknown>>(
      `SELECT id::text AS id, username, display_name, description, location,
              (extract(epoch FROM created_at) * 1000)::bigint::text AS created_ms, protected, verified, can_dm, possibly_sensitive,
              followers_count::text AS followers_count, followings_count::text AS followings_count, tweets_count::text AS tweets_count,
              favourites_count::text AS favourites_count, media_count::text AS media_count,
              profile_image_url, profile_background_image_url, banner_url, bio_urls, pinned_tweet_ids::text[] AS pinned_tweet_ids, source, raw
       FROM users ORDER BY id`,
    );
    const expected = [...authors.values()].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    expect(rows.map((r) => r.id)).toEqual(expected.map((u) => u.id));
    for (const [i, u] of expected.entries()) {
      expect(rows[i]).toEqual({
        id: u.id,
        username: u.username,
        display_name: u.display_name,
        description: u.description,
        location: u.location,
        created_ms: String(legacyMs(u.created_at)),
        protected: u.protected,
        verified: u.verified,
        can_dm: u.can_dm,
        possibly_sensitive: u.possibly_sensitive,
        followers_count: String(u.followers_count),
        followings_count: String(u.followings_count),
        tweets_count: String(u.tweets_count),
        favourites_count: String(u.favourites_count),
        media_count: String(u.media_count),
        profile_image_url: u.profile_image_url,
        profile_background_image_url: u.profile_background_image_url,
        // Production's "background" is the banner (…/profile_banners/…): banner_url holds it too.
        banner_url: u.profile_background_image_url.includes('/profile_banners/') ? u.profile_background_image_url : null,
        bio_urls: u.bio_urls ?? [],
        pinned_tweet_ids: u.pinned_tweet_ids ?? [],
        source: 'v3',
        raw: u,
      });
    }
  });

  it('spot-checks values a reader would look up by hand', async () => {
    const natgeo = await db.pool.query(`SELECT created_at FROM users WHERE id = 17471979`);
    expect((natgeo.rows[0] as { created_at: Date }).created_at.toISOString()).toBe('2008-11-18T21:28:10.000Z');
    const first = await db.pool.query(`SELECT created_at, view_count::text AS v FROM tweets WHERE id = 2083908173061149094`);
    expect(first.rows[0]).toEqual({ created_at: new Date('2026-08-02T13:30:00.000Z'), v: '184706' });
    const reply = await db.pool.query(`SELECT in_reply_to_tweet_id::text AS parent, in_reply_to_username AS to FROM tweets WHERE id = 2083308407067394481`);
    expect(reply.rows[0]).toEqual({ parent: '2083304574371410248', to: 'PhyByte' });
    const quarantine = await db.pool.query('SELECT count(*)::int AS n FROM quarantine');
    expect(quarantine.rows[0]).toEqual({ n: 0 });
  });
});
