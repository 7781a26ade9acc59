import { describe, expect, it } from 'vitest';
import { normalizeTweetV3 } from '../../src/api-client/normalize.ts';
import { cursorSchema, countSchema, idSchema } from '../../src/api-client/schemas/common.ts';
import { tweetV3Schema } from '../../src/api-client/schemas/tweet-v3.ts';
import { tweetV2Schema } from '../../src/api-client/schemas/tweet-v2.ts';
import { userV3Schema } from '../../src/api-client/schemas/user-v3.ts';
import { basicAccountSchema, newFollowerSchema } from '../../src/api-client/schemas/user-v2.ts';
import { usageSchema } from '../../src/api-client/schemas/usage.ts';
import { checkQuotedSchema } from '../../src/api-client/schemas/check.ts';
import { spaceSchema } from '../../src/api-client/schemas/space.ts';
import { readOne, readPage } from '../../src/api-client/page.ts';
import { tweetV3Reader, userV3Reader } from '../../src/api-client/readers.ts';
import { BIG_TWEET_ID, tweetV2, tweetV3, userV3 } from './fixtures.ts';

describe('ids', () => {
  it('keeps 19-digit ids exactly, as strings', () => {
    const parsed = tweetV3Schema.parse(JSON.parse(JSON.stringify(tweetV3())));
    expect(parsed.id).toBe(BIG_TWEET_ID);
    expect(BigInt(parsed.id)).toBe(1951234567890123457n);
  });

  it('rejects a number id, an empty id and a non-decimal id', () => {
    expect(idSchema.safeParse(Number(BIG_TWEET_ID)).success).toBe(false);
    expect(idSchema.safeParse(12).success).toBe(false);
    expect(idSchema.safeParse('').success).toBe(false);
    expect(idSchema.safeParse('12a').success).toBe(false);
    expect(tweetV3Schema.safeParse(tweetV3({ id: Number(BIG_TWEET_ID) })).success).toBe(false);
    expect(userV3Schema.safeParse(userV3({ id: 42 })).success).toBe(false);
    // In a list of ids a number (digits already lost above 2^53) is left out, not the user.
    expect(readOne(userV3({ pinned_tweet_ids: [Number(BIG_TWEET_ID)] }), userV3Reader).pinnedTweetIds).toEqual([]);
  });
});

describe('cursors', () => {
  it('keeps strings verbatim and treats null, absent and empty as the end', () => {
    const long = 'DAABCgABGR' + 'x'.repeat(500) + '==';
    expect(cursorSchema.parse(long)).toBe(long);
    expect(cursorSchema.parse(null)).toBeNull();
    expect(cursorSchema.parse(undefined)).toBeNull();
    expect(cursorSchema.parse('')).toBeNull();
  });

  it('converts a safe-integer numeric cursor to its string and rejects an unsafe one', () => {
    expect(cursorSchema.parse(1700000000123)).toBe('1700000000123');
    expect(cursorSchema.safeParse(2 ** 53 + 2).success).toBe(false);
    expect(cursorSchema.safeParse(1.5).success).toBe(false);
    expect(cursorSchema.safeParse({}).success).toBe(false);
  });
});

describe('lenient fields', () => {
  it('accepts explicit nulls for the documented optional fields; the reader makes them canonical', () => {
    const wire = tweetV3({ in_reply_to_tweet_id: null, quoted_status: null, retweeted_status: null, entities: null });
    expect(tweetV3Schema.safeParse(wire).success).toBe(true);
    const tweet = readOne(wire, tweetV3Reader);
    expect(tweet.inReplyToTweetId).toBeNull();
    expect(tweet.entities).toEqual([]);
    expect(tweet.media).toEqual([]);
    const userWire = userV3({ bio_urls: null, pinned_tweet_ids: null });
    expect(userV3Schema.safeParse(userWire).success).toBe(true);
    const user = readOne(userWire, userV3Reader);
    expect(user.bioUrls).toEqual([]);
    expect(user.pinnedTweetIds).toEqual([]);
  });

  it('accepts absent optional fields the same as null', () => {
    const t = tweetV3();
    delete t.quoted_status;
    delete t.in_reply_to_username;
    delete t.lang;
    delete t.likes_count;
    const tweet = readOne(t, tweetV3Reader);
    expect(tweet.quoted).toBeNull();
    expect(tweet.quotedTweetId).toBeNull();
    expect(tweet.inReplyToUsername).toBeNull();
    expect(tweet.lang).toBeNull();
    expect(tweet.likeCount).toBeNull();
    const u = userV3();
    delete u.location;
    delete u.created_at;
    delete u.followers_count;
    const user = readOne(u, userV3Reader);
    expect(user.location).toBeNull();
    expect(user.createdAt).toBeNull();
    expect(user.followersCount).toBeNull();
  });

  it('reads counts from numbers and numeric strings, null stays null', () => {
    expect(countSchema.parse(5)).toBe(5);
    expect(countSchema.parse('1200')).toBe(1200);
    expect(countSchema.parse(null)).toBeNull();
    expect(countSchema.safeParse('12k').success).toBe(false);
    expect(readOne(userV3(), userV3Reader).followersCount).toBe(1200);
    expect(readOne(userV3({ followers_count: 7, tweets_count: null }), userV3Reader)).toMatchObject({ followersCount: 7, tweetsCount: null });
    expect(readOne(tweetV3({ likes_count: '42', view_count: null }), tweetV3Reader)).toMatchObject({ likeCount: 42, viewCount: null });
  });

  it("the v3 tweet and user refuse the counts countSchema refuses, and read '' as no id or time", () => {
    for (const bad of [-1, 1.5, 2 ** 53, 1e300, '-1', '1.5', '12a', '', '99999999999999999', Number.NaN, true]) {
      expect({ bad, ok: tweetV3Schema.safeParse(tweetV3({ likes_count: bad })).success }).toEqual({ bad, ok: false });
      expect({ bad, ok: userV3Schema.safeParse(userV3({ followers_count: bad })).success }).toEqual({ bad, ok: false });
    }
    expect(tweetV3Schema.safeParse(tweetV3({ in_reply_to_tweet_id: '012' })).success).toBe(false);
    expect(tweetV3Schema.safeParse(tweetV3({ conversation_id_str: 12 })).success).toBe(false);
    expect(userV3Schema.safeParse(userV3({ created_at: 'soon' })).success).toBe(false);
    const tweet = readOne(tweetV3({ in_reply_to_tweet_id: '', conversation_id_str: '', is_reply: null }), tweetV3Reader);
    expect(tweet).toMatchObject({ inReplyToTweetId: null, conversationId: null, isReply: false });
    expect(readOne(userV3({ created_at: '' }), userV3Reader).createdAt).toBeNull();
  });

  it('an embedded placeholder without an id drops the embedded part, not the tweet', () => {
    const wire = tweetV3({ quoted_status: { placeholder: true }, retweeted_status: 'unresolved' });
    const tweet = normalizeTweetV3(tweetV3Schema.parse(wire), wire);
    expect(tweet.quoted).toBeNull();
    expect(tweet.quotedTweetId).toBeNull();
    expect(tweet.retweetedTweetId).toBeNull();
    const withId = tweetV3({ quoted_status: { id: '1900000000000000001' } });
    expect(normalizeTweetV3(tweetV3Schema.parse(withId), withId).quotedTweetId).toBe('1900000000000000001');
  });

  it('an author the user schema refuses costs the profile, not the tweet; a valid author id is kept', () => {
    const badCount = tweetV3({ user: userV3({ followers_count: -1 }) });
    const page = readPage({ tweets: [badCount], next_cursor: null }, ['tweets'], tweetV3Reader);
    expect(page.quarantined).toEqual([]);
    expect(page.items[0]).toMatchObject({ id: badCount.id, author: null, authorId: userV3().id });
    expect(page.items[0]!.raw).toBe(badCount);
    // No usable id either: the tweet still stands, without an author.
    const noId = tweetV3({ user: { id: 42, username: 'x' } });
    expect(readOne(noId, tweetV3Reader)).toMatchObject({ author: null, authorId: null });
    expect(readOne(tweetV3({ user: 'unresolved' }), tweetV3Reader)).toMatchObject({ author: null, authorId: null });
    // A valid author is read in full, as before.
    expect(readOne(tweetV3(), tweetV3Reader).author).toMatchObject({ id: userV3().id, source: 'v3' });
  });

  it('keeps unknown fields in raw (the parsed object drops them: it is read, raw is stored)', () => {
    const wire = tweetV3();
    const tweet = normalizeTweetV3(tweetV3Schema.parse(wire), wire);
    expect((tweet.raw as Record<string, unknown>).made_with_ai).toBe(false);
    expect((tweet.raw as Record<string, unknown>).paid_partnership).toBe(false);
    expect(tweet.raw).toBe(wire);
  });

  it('parses created_at in both forms and rejects a garbage one', () => {
    expect(tweetV3Schema.parse(tweetV3()).created_at.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(tweetV2Schema.parse(tweetV2()).created_at.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(tweetV3Schema.safeParse(tweetV3({ created_at: 'soon' })).success).toBe(false);
  });
});

describe('other resources', () => {
  it('reads the v2 basic account and new-follower (screeName) records', () => {
    const basic = basicAccountSchema.parse({ id: '7', screen_name: 'a', register_date: '2020-01-01T00:00:00Z', followers_count: 1 });
    expect(basic.register_date?.toISOString()).toBe('2020-01-01T00:00:00.000Z');
    const nf = newFollowerSchema.parse({ id: '8', screeName: 'b', canDM: true, score: 0.5, followerDate: 'Sun Aug 02 13:30:00 +0000 2026' });
    expect(nf.screeName).toBe('b');
    expect(nf.score).toBe(0.5);
    expect(nf.followerDate?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
  });

  it('reads usage, check-quoted and space records', () => {
    const usage = usageSchema.parse({ key_requests: 10, remaining_requests: 90, total_requests: 100, valid_until: '2026-12-01T00:00:00Z' });
    expect(usage.remaining_requests).toBe(90);
    expect(usageSchema.safeParse({ key_requests: 10 }).success).toBe(false);
    const q = checkQuotedSchema.parse({ date: '2026-08-02 13:30:00', status: 'quoted', text: 'hi', user_protected: false });
    expect(q.date?.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    const space = spaceSchema.parse({ id: '1YqKDqWqdPOKV', title: 't', creator: userV3(), participants: { admins: [], total: 3 } });
    expect(space.participants?.listeners).toEqual([]);
  });
});
