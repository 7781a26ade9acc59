/**
 * Every CanonicalUser the client makes, and every record a page's merge makes, has ONE hidden
 * class (and every CanonicalTweet one): the upserts' column pickers are optimized for it, and a
 * record of another class threw them away (~25 functions compiled again at a time, several times
 * a run). A spread (`{ ...user, source }`) makes another class; these tests fail on one.
 */
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { normalizeBasicAccount, normalizeNewFollower, normalizeReducedUser, normalizeTweetV3 } from '../../src/api-client/normalize.ts';
import { normalizeFollowerV3, normalizeTopFollower, normalizeUserV2Embedded, normalizeUserV3 } from '../../src/api-client/normalize-user.ts';
import { tweetV3Schema } from '../../src/api-client/schemas/tweet-v3.ts';
import { basicAccountSchema, newFollowerSchema, userV2EmbeddedSchema } from '../../src/api-client/schemas/user-v2.ts';
import { followerV3Schema, reducedUserSchema, topFollowerSchema, userV3Schema } from '../../src/api-client/schemas/user-v3.ts';
import { collectPage, mergeBatch, mergeTweet, mergeUser } from '../../src/store/page-rows.ts';
import { tweetV3, userV2Embedded, userV3 } from '../api-client/fixtures.ts';

// V8's %HaveSameMap, reachable from functions compiled after the flag is set.
setFlagsFromString('--allow-natives-syntax');
const sameClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;

const tweet = (overrides: Record<string, unknown> = {}) => {
  const raw = tweetV3(overrides);
  return normalizeTweetV3(tweetV3Schema.parse(raw), raw);
};

describe('record classes', () => {
  it('every user normaliser and the user merge make users of one class', () => {
    const v3 = normalizeUserV3(userV3Schema.parse(userV3()), {});
    const others = [
      normalizeFollowerV3(followerV3Schema.parse(userV3({ id: '2' })), {}),
      normalizeTopFollower(topFollowerSchema.parse({ id: '3', username: 't' }), {}),
      normalizeReducedUser(reducedUserSchema.parse({ id: '4', username: 'r' }), {}),
      normalizeUserV2Embedded(userV2EmbeddedSchema.parse(userV2Embedded()), {}),
      normalizeBasicAccount(basicAccountSchema.parse({ id: '6', screen_name: 'b' }), {}),
      normalizeNewFollower(newFollowerSchema.parse({ id: '7', screeName: 'n' }), {}),
      mergeUser(v3, normalizeReducedUser(reducedUserSchema.parse({ id: v3.id, username: 'r' }), {})),
    ];
    for (const user of others) expect(sameClass(user, v3)).toBe(true);
  });

  it('the tweet merge, the author id filled in and a group commit’s merge keep the normalised tweet’s class', () => {
    const a = tweet();
    const b = tweet({ likes_count: 99 });
    expect(sameClass(mergeTweet(a, b), a)).toBe(true);
    // A tweet whose author profile came without an author id takes the profile's.
    const orphan = { ...tweet({ id: '1951234567890123999' }), authorId: null };
    const page = collectPage([a, b, orphan], [], 'user');
    expect(page.tweets.find((t) => t.id === orphan.id)?.authorId).toBe(orphan.author?.id);
    const merged = mergeBatch([page, collectPage([tweet({ likes_count: 7 })], [], 'user')].map((collected) => ({ page: { jobId: '1' }, collected })));
    for (const t of merged.tweets) expect(sameClass(t, a)).toBe(true);
    for (const u of merged.users) expect(sameClass(u, a.author)).toBe(true);
  });
});
