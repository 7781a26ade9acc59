import { describe, it, expect } from 'vitest';
import { TweetFlag, type SimMedia } from '../../src/simulator/model.ts';
import { buildWorld, type TweetInput } from '../../src/simulator/world/index.ts';
import { searchTweets, SearchQueryError, type SearchRequest } from '../../src/simulator/search/index.ts';

const HOUR = 3_600_000;
const BASE = Date.UTC(2026, 0, 10);
const media = (type: SimMedia['type'], native: boolean): SimMedia => ({ type, native, url: `https://pbs.twimg.com/x.${type}`, preview: '' });

// Fixture k is created at BASE + k hours, so world index k is fixture k.
const fixtures: Array<Omit<TweetInput, 'createdAtMs'>> = [
  /* 0 */ { author: 'alice', text: 'I like cats #Cats $BTC', likes: 10, urls: ['https://www.my-site.com/page'] },
  /* 1 */ { author: 'bob', text: '@alice liking dogs', inReplyTo: 0, likes: 2, source: 'Twitter for iPhone' },
  /* 2 */ { author: 'bob', text: 'RT @alice: I like cats #Cats $BTC', retweeted: 0 },
  /* 3 */ { author: 'carol', text: 'quoting this one', quoted: 0, lang: 'fr', media: [media('photo', true)] },
  /* 4 */ { author: 'carol', text: 'my video', media: [media('video', true)], flags: TweetFlag.SAFE | TweetFlag.PRO_VIDEO },
  /* 5 */ { author: 'alice', text: 'funny gif', media: [media('animated_gif', true)] },
  /* 6 */ { author: 'alice', text: 'vote now', flags: TweetFlag.SAFE | TweetFlag.POLL },
  /* 7 */ { author: 'news_desk', text: 'Breaking news today', flags: TweetFlag.NEWS, lang: 'und' },
  /* 8 */ { author: 'dave', text: 'I like cats too' },
  /* 9 */ { author: 'erin', text: 'cats cats' },
  /* 10 */ { author: 'carol', text: 'join my space', flags: TweetFlag.SAFE | TweetFlag.SPACES | TweetFlag.HAS_GEO },
  /* 11 */ { author: 'bob', text: 'RT @carol: old style retweet' },
  /* 12 */ { author: 'carol', text: 'replying deeper', inReplyTo: 1 },
  /* 13 */ { author: 'alice', text: 'external clip', media: [media('video', false)], urls: ['https://youtube.com/watch?v=1'] },
  /* 14 */ { author: 'bob', text: 'Running fast, the runner runs' },
  /* 15 */ { author: 'alice', text: 'the quick brown fox jumps' },
  /* 16 */ { author: 'frank', text: 'cats from a deleted account' },
];

const world = buildWorld({
  users: [
    { username: 'alice', verified: true, id: '1001' },
    { username: 'bob', blueVerified: true, location: 'New York, NY' },
    { username: 'carol' },
    { username: 'dave', protected: true },
    { username: 'erin', suspended: true },
    { username: 'frank', deleted: true },
    { username: 'news_desk' },
  ],
  tweets: fixtures.map((f, k) => ({ ...f, createdAtMs: BASE + k * HOUR })),
  lists: [{ id: '555', owner: 'bob', members: ['alice', 'carol'] }],
});
const t = world.tweets;
const idOf = (k: number): string => t.idString(k);
const NOW = BASE + 16 * HOUR;
/** Every visible fixture that is not a native retweet (the default result of a pure negation). */
const VISIBLE = [0, 1, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15];
const without = (...drop: number[]): number[] => VISIBLE.filter((k) => !drop.includes(k));

function matches(query: string, nowMs = NOW): number[] {
  const request: SearchRequest = { query, order: 'latest', limit: 1000, nowMs };
  return [...searchTweets(world, request).indices].sort((a, b) => a - b);
}

describe('search operators over a fixture world', () => {
  const cases: Array<[string, number[]]> = [
    ['cats', [0]],
    ['cat', [0]],
    ['CATS', [0]],
    ['+cat', []],
    ['+cats', [0]],
    ['like', [0, 1]],
    ['+liking', [1]],
    ['run', [14]],
    ['"quick * fox"', [15]],
    ['"quick fox"', []],
    ['"brown fox"', [15]],
    ['"brown * * jumps"', []],
    ['"the * brown"', [15]],
    ['cats OR dogs', [0, 1]],
    ['like -dogs', [0]],
    ['-cats', without(0)],
    ['-"brown fox"', without(15)],
    ['-(cats OR dogs)', without(0, 1)],
    ['#cats', [0]],
    ['#CATS', [0]],
    ['$btc', [0]],
    ['from:alice', [0, 5, 6, 13, 15]],
    ['from:ALICE', [0, 5, 6, 13, 15]],
    ['from:nobody', []],
    ['from:dave', []],
    ['from:erin', []],
    ['from:frank', []],
    ['to:alice', [1]],
    ['to:bob', [12]],
    ['@alice', [1]],
    ['@carol', [11]],
    ['-@alice', without(1)],
    ['list:555', [0, 3, 4, 5, 6, 10, 12, 13, 15]],
    ['list:999', []],
    ['filter:verified', [0, 5, 6, 13, 15]],
    ['filter:blue_verified', [1, 11, 14]],
    ['min_faves:5', [0]],
    ['min_faves:2', [0, 1]],
    ['-min_faves:2', without(0, 1)],
    ['min_replies:1', [0, 1]],
    ['min_retweets:1', [0]],
    ['-min_retweets:1', without(0)],
    ['filter:has_engagement', [0, 1]],
    ['-filter:has_engagement', without(0, 1)],
    ['filter:media', [3, 4, 5, 13]],
    ['filter:images', [3]],
    ['filter:platformimg', [3]],
    ['filter:videos', [4, 13]],
    ['filter:native_video', [4]],
    ['filter:consumer_video', []],
    ['filter:pro_video', [4]],
    ['-filter:media', without(3, 4, 5, 13)],
    ['filter:spaces', [10]],
    ['filter:links', [0, 13]],
    ['filter:replies', [1, 12]],
    ['-filter:replies', without(1, 12)],
    ['filter:nativeretweets', [2]],
    ['filter:retweets', [2, 11]],
    ['-filter:retweets', without(11)],
    ['include:nativeretweets cats', [0, 2]],
    ['include:nativeretweets @alice', [1, 2]],
    ['include:nativeretweets', [...VISIBLE, 2].sort((a, b) => a - b)],
    ['-include:nativeretweets cats', [0]],
    ['cats OR include:nativeretweets', [0, 2]],
    ['-filter:nativeretweets cats', [0]],
    ['filter:quote', [3]],
    ['filter:news', [7]],
    ['-filter:safe', [7]],
    ['filter:hashtags', [0]],
    ['filter:mentions', [1, 11]],
    ['card_name:poll2choice_text_only', [6]],
    ['card_name:poll4choice_text_only', [6]],
    ['card_name:animated_gif', [5]],
    ['card_name:summary', [0, 13]],
    ['card_name:audio', []],
    [`quoted_tweet_id:${idOf(0)}`, [3]],
    ['quoted_tweet_id:1', []],
    ['quoted_user_id:1001', [3]],
    [`conversation_id:${idOf(0)}`, [0, 1, 12]],
    [`conversation_id:${idOf(0)} -from:alice`, [1, 12]],
    ['lang:fr', [3]],
    ['lang:und', [7]],
    ['-lang:en', [3, 7]],
    ['source:twitter_for_iphone', [1]],
    ['source:Twitter_Web_App from:bob', [11, 14]],
    ['url:my_site.com', [0]],
    ['url:youtube.com', [13]],
    ['card_domain:youtube.com', [13]],
    ['since:2026-01-10_05:00:00_UTC until:2026-01-10_07:00:00_UTC', [5, 6]],
    ['since:2026-01-11', []],
    ['until:2026-01-10', []],
    [`since_time:${(BASE + 14 * HOUR) / 1000} until_time:${(BASE + 15 * HOUR) / 1000}`, [14]],
    ['within_time:2h', [14, 15]],
    ['within_time:1d', VISIBLE],
    [`since_id:${idOf(13)}`, [14, 15]],
    [`max_id:${idOf(1)}`, [0, 1]],
    [`since_id:${idOf(0)} max_id:${idOf(3)}`, [1, 3]],
    ['since:2026-01-10_05:00:00_UTC OR from:bob', [1, 5, 6, 7, 10, 11, 12, 13, 14, 15]],
    ['near:"New York"', [1, 11, 14]],
    ['near:new_york', [1, 11, 14]],
    ['geocode:40.7,-74.0,10km', [10]],
    ['place:5a110d312052166f', [10]],
    ['(from:alice OR from:bob) -filter:replies lang:en', [0, 5, 6, 11, 13, 14, 15]],
    ['from:carol (space OR video) -filter:pro_video', [10]],
  ];
  it.each(cases)('%s', (query, expected) => {
    expect(matches(query)).toEqual(expected);
  });

  it('card_name: matches only tweets of the last 8 days before now', () => {
    expect(matches('card_name:poll2choice_text_only', BASE + 8 * 86_400_000)).toEqual([6]);
    expect(matches('card_name:poll2choice_text_only', BASE + 9 * 86_400_000)).toEqual([]);
  });

  it('within_time: is relative to nowMs', () => {
    expect(matches('within_time:90m', BASE + 7 * HOUR)).toEqual(VISIBLE.filter((k) => k >= 6));
  });
});

describe('searchTweets ordering and errors', () => {
  it('latest is newest first', () => {
    expect(searchTweets(world, { query: 'from:alice', order: 'latest', nowMs: NOW }).indices).toEqual([15, 13, 6, 5, 0]);
  });

  it('popular orders by likes + 2*retweets + replies, ties by id descending', () => {
    // 0: 10 + 2*1 + 1 = 13; 1: 2 + 0 + 1 = 3; every other alice/bob tweet scores 0.
    const page = searchTweets(world, { query: 'from:alice OR from:bob', order: 'popular', nowMs: NOW });
    expect(page.indices).toEqual([0, 1, 15, 14, 13, 11, 6, 5]);
  });

  it('rejects a malformed state, a state of another query and a bad limit', () => {
    const first = searchTweets(world, { query: 'from:alice', order: 'latest', limit: 2, nowMs: NOW });
    expect(first.nextState).not.toBeNull();
    const next = first.nextState as string;
    expect(() => searchTweets(world, { query: 'from:alice', order: 'latest', state: 'garbage!' })).toThrow(SearchQueryError);
    expect(() => searchTweets(world, { query: 'from:bob', order: 'latest', state: next })).toThrow(/different query/);
    expect(() => searchTweets(world, { query: 'from:alice', order: 'popular', state: next })).toThrow(/different query/);
    expect(() => searchTweets(world, { query: 'from:alice', order: 'latest', limit: 0 })).toThrow(/limit/);
    expect(() => searchTweets(world, { query: 'since:2026-13-45', order: 'latest' })).toThrow(SearchQueryError);
  });
});
