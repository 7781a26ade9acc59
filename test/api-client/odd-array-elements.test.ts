/**
 * One odd element in a secondary array (a `null` among a user's bio_urls, an empty pinned id, a
 * `null` or a numeric link among a tweet's entities) costs that element, never its item: the real
 * client against a raw server on port 0 answering bodies built from the captured production page
 * (fixtures/search-tweets.v3.real.json), so neither the simulator nor the client's own schemas set
 * what the wire looks like. The stored `raw` keeps every element as it came.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api-client/client.ts';
import { readOne, readPage } from '../../src/api-client/page.ts';
import { tweetV2Reader, tweetV3Reader, userV3Reader } from '../../src/api-client/readers.ts';
import { tweetV2, tweetV3, userV3 } from './fixtures.ts';
import { recordingGate, startRawServer, type RawServer } from './helpers.ts';

type Wire = Record<string, unknown>;
interface RealPage {
  tweets: Array<Wire & { id: string; user: Wire & { id: string; pinned_tweet_ids: string[] | null } }>;
}
const real = JSON.parse(readFileSync(new URL('../fixtures/search-tweets.v3.real.json', import.meta.url), 'utf8')) as RealPage;
const NATGEO = real.tweets[0]!.user;
const ESA = real.tweets[1]!.user;
const PINNED = NATGEO.pinned_tweet_ids![0]!; // 19 digits, above 2^53
const ODD_USER: Wire = { ...NATGEO, pinned_tweet_ids: [PINNED, ''], bio_urls: ['https://a.example', null] };
const { location: _location, ...oddWithoutLocation } = ODD_USER;
const ODD_FOLLOWER: Wire = { ...oddWithoutLocation, followerDate: '2026-08-01T10:00:00Z' };

const PHOTO_TWEET = real.tweets[2]!; // NatGeo's photo tweet: one photo entity, its address in full_text
const PHOTO = (PHOTO_TWEET.entities as Wire[])[0]!;
const VIDEO_TWEET = real.tweets[1]!; // ESA's video tweet
const VIDEO = (VIDEO_TWEET.entities as Wire[])[0]!;

const KEY = 'sk_prod_SECRET_odd_elements';
let server: RawServer;
let client: ApiClient;
let answer: unknown = {};

beforeAll(async () => {
  server = await startRawServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  });
  client = new ApiClient({ baseUrl: server.url, gate: recordingGate(KEY), timeoutMs: 5000, retry: { maxAttemptsTransient: 1, maxAttemptsRateLimited: 1 } });
});

afterAll(async () => {
  await client.close();
  await server.close();
});

describe('a user with one odd element in bio_urls and pinned_tweet_ids', () => {
  it('is an item of a list-members page with its valid pinned id and url, nothing of it quarantined', async () => {
    answer = { users: [ESA, ODD_USER], next_cursor: 'NEXT' };
    const page = await client.listMembers({ listId: '1600000000000000000' });
    expect(page.quarantined).toEqual([]);
    expect(page.refusedParts ?? []).toEqual([]);
    expect(page.items.map((u) => u.id)).toEqual([ESA.id, NATGEO.id]);
    expect(page.items[1]).toMatchObject({
      id: NATGEO.id,
      username: 'NatGeo',
      followersCount: NATGEO.followers_count,
      pinnedTweetIds: [PINNED],
      bioUrls: ['https://a.example'],
      source: 'v3',
    });
    // What is stored as raw keeps the odd elements as they came.
    expect(page.items[1]!.raw).toEqual(ODD_USER);
  });

  it('is an item of a new-followers-7d page (the Follower shape) the same way', async () => {
    answer = { users: [ODD_FOLLOWER] };
    const page = await client.newFollowers7d({ username: 'NatGeo' });
    expect(page.quarantined).toEqual([]);
    expect(page.items[0]?.user).toMatchObject({ id: NATGEO.id, pinnedTweetIds: [PINNED], bioUrls: ['https://a.example'], source: 'v3-follower' });
    expect(page.items[0]?.followedAt?.toISOString()).toBe('2026-08-01T10:00:00.000Z');
  });

  it('is the profile GET /v3/info answers, instead of an invalid response', async () => {
    answer = ODD_USER;
    const user = await client.info({ username: 'NatGeo' });
    expect(user).toMatchObject({ id: NATGEO.id, username: 'NatGeo', pinnedTweetIds: [PINNED], bioUrls: ['https://a.example'] });
    expect(user.raw).toEqual(ODD_USER);
  });

  it("is a tweet's full author, not a refused part", () => {
    const wire = tweetV3({ user: userV3({ pinned_tweet_ids: ['', PINNED, 7], bio_urls: [null, 'https://b.example', { url: 'x' }] }) });
    const page = readPage({ tweets: [wire], next_cursor: null }, ['tweets'], tweetV3Reader);
    expect(page.refusedParts).toEqual([]);
    expect(page.items[0]?.author).toMatchObject({ pinnedTweetIds: [PINNED], bioUrls: ['https://b.example'] });
  });
});

describe("a tweet with one odd element in its entities", () => {
  it('is kept on a v3 search page with its valid entity, the odd one left out of entities, media and urls', async () => {
    const nullEntity = { ...PHOTO_TWEET, entities: [null, PHOTO] };
    const numericLink = { ...VIDEO_TWEET, entities: [{ type: 'url', link: 42, preview: null }, VIDEO] };
    answer = { tweets: [nullEntity, numericLink], next_cursor: 'NEXT' };
    const page = await client.searchTweets({ query: 'from:NatGeo OR from:esa', order: 'latest' });
    expect(page.quarantined).toEqual([]);
    expect(page.refusedParts).toEqual([]);
    expect(page.items.map((t) => t.id)).toEqual([PHOTO_TWEET.id, VIDEO_TWEET.id]);
    const [photo, video] = page.items;
    expect(photo).toMatchObject({ entities: [PHOTO], media: [PHOTO], urls: [], author: { id: NATGEO.id }, likeCount: PHOTO_TWEET.likes_count });
    expect(video).toMatchObject({ entities: [VIDEO], media: [VIDEO], author: { id: ESA.id } });
    expect(photo!.raw).toEqual(nullEntity);
    expect((video!.raw as Wire).entities).toEqual(numericLink.entities);
  });

  it('is kept from a v2 answer the same way', () => {
    const link = { type: 'url', link: 'https://shared.example/a', preview: null };
    const wire = tweetV2({ entities: [null, link, { type: 'photo', link: 5 }, 'https://x.example'] });
    const page = readPage({ tweets: [wire] }, ['tweets'], tweetV2Reader);
    expect(page.quarantined).toEqual([]);
    expect(page.items[0]).toMatchObject({ entities: [link], media: [], urls: ['https://shared.example/a'] });
    expect(readOne(tweetV2({ entities: null }), tweetV2Reader).entities).toEqual([]);
  });
});

describe('the arrays themselves', () => {
  it('are still refused when they are not arrays', () => {
    const users = readPage({ users: [userV3({ bio_urls: 'https://a.example' }), userV3({ pinned_tweet_ids: { 0: '1' } })] }, ['users'], userV3Reader);
    expect(users.items).toEqual([]);
    expect(users.quarantined.map((q) => q.reason)).toEqual(['bio_urls: expected an array', 'pinned_tweet_ids: expected an array']);
    const tweets = readPage({ tweets: [tweetV3({ entities: PHOTO })] }, ['tweets'], tweetV3Reader);
    expect(tweets.quarantined.map((q) => q.reason)).toEqual(['entities: expected an array']);
    expect(readPage({ tweets: [tweetV2({ entities: 'none' })] }, ['tweets'], tweetV2Reader).quarantined).toHaveLength(1);
  });

  it('are read as they came, without a copy, when every element is valid', () => {
    const wire = userV3({ bio_urls: ['https://a.example'], pinned_tweet_ids: [PINNED] });
    const user = readOne(wire, userV3Reader);
    expect(user.bioUrls).toBe(wire.bio_urls);
    expect(user.pinnedTweetIds).toBe(wire.pinned_tweet_ids);
    // Dropping an element copies: the wire's array, stored as raw, is never changed.
    const mixed = userV3({ bio_urls: ['https://a.example', null] });
    expect(readOne(mixed, userV3Reader).bioUrls).toEqual(['https://a.example']);
    expect(mixed.bio_urls).toEqual(['https://a.example', null]);
  });
});
