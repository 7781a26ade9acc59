import { describe, expect, it } from 'vitest';
import { normalizeTweetV2, normalizeTweetV3, normalizeReducedUser, normalizeBasicAccount, normalizeNewFollower } from '../../src/api-client/normalize.ts';
import { tweetV3Schema } from '../../src/api-client/schemas/tweet-v3.ts';
import { tweetV2Schema } from '../../src/api-client/schemas/tweet-v2.ts';
import { reducedUserSchema, topFollowerSchema, userV3Schema } from '../../src/api-client/schemas/user-v3.ts';
import { normalizeTopFollower, normalizeUserV3 } from '../../src/api-client/normalize-user.ts';
import { basicAccountSchema, newFollowerSchema } from '../../src/api-client/schemas/user-v2.ts';
import { BIG_TWEET_ID, BIG_USER_ID, tweetV2, tweetV3 } from './fixtures.ts';

function v3(raw: Record<string, unknown>) {
  return normalizeTweetV3(tweetV3Schema.parse(raw), raw);
}

describe('v3 tweet → canonical', () => {
  it('maps fields, extracts text entities and splits media from links', () => {
    const raw = tweetV3();
    const t = v3(raw);
    expect(t.id).toBe(BIG_TWEET_ID);
    expect(t.authorId).toBe(BIG_USER_ID);
    expect(t.author?.username).toBe('alice_w');
    expect(t.author?.createdAt?.toISOString()).toBe('2020-08-02T13:30:00.000Z');
    expect(t.author?.followersCount).toBe(1200);
    expect(t.createdAt.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(t.likeCount).toBe(5);
    expect(t.viewCount).toBe(100);
    expect(t.hashtags).toEqual(['rust']);
    expect(t.cashtags).toEqual(['TSLA']);
    expect(t.mentions).toEqual(['bob_x', 'carol']);
    expect(t.urls).toEqual(['https://example.com/a?b=1', 'https://other.example/x']);
    expect(t.media).toEqual([{ type: 'photo', link: 'https://pbs.example/1.jpg', preview: 'https://pbs.example/1s.jpg' }]);
    expect(t.entities).toHaveLength(2);
    expect(t.isReply).toBe(false);
    expect(t.quotedTweetId).toBeNull();
    expect(t.source).toBe('v3');
  });

  it("keeps the tweet's own media addresses, which production appends to full_text, out of urls", () => {
    const photo = 'https://pbs.twimg.com/media/HOlhBC3XEAAX5eh.jpg';
    const video = 'https://video.twimg.com/amplify_video/2/vid/avc1/480x270/IDf.mp4?tag=14';
    const t = v3(
      tweetV3({
        full_text: `Read https://go.nasa.gov/4fznPfi ${photo} ${video}`,
        entities: [
          { type: 'photo', link: photo, preview: '' },
          { type: 'video', link: video, preview: 'https://pbs.twimg.com/media/HOlauDTWsAAYldS.jpg' },
        ],
      }),
    );
    expect(t.urls).toEqual(['https://go.nasa.gov/4fznPfi']);
    expect(t.media.map((m) => m.link)).toEqual([photo, video]);
    // Another tweet's media address shared as a link stays a link.
    const shared = v3(tweetV3({ full_text: `look ${photo}`, entities: [] }));
    expect(shared.urls).toEqual([photo]);
  });

  it('keeps the wire object, unknown fields included, as raw', () => {
    const raw = tweetV3();
    const t = v3(raw);
    expect(t.raw).toBe(raw);
    expect((t.raw as Record<string, unknown>).made_with_ai).toBe(false);
    expect((t.author?.raw as Record<string, unknown>).is_blue_verified).toBe(true);
  });

  it('reads reply fields and embedded quoted / retweeted tweets', () => {
    const quoted = tweetV3({ id: '1951234567890120001', full_text: 'quoted one', user: null });
    const t = v3(
      tweetV3({
        is_reply: true,
        in_reply_to_tweet_id: '1951234567890120000',
        in_reply_to_username: 'dan',
        is_quote_status: true,
        quoted_status: quoted,
        retweeted_status: { id: '1951234567890120002' },
      }),
    );
    expect(t.isReply).toBe(true);
    expect(t.inReplyToTweetId).toBe('1951234567890120000');
    expect(t.inReplyToUsername).toBe('dan');
    expect(t.quotedTweetId).toBe('1951234567890120001');
    expect(t.quoted?.fullText).toBe('quoted one');
    // A placeholder with only an id still yields the id, but no invented tweet.
    expect(t.retweetedTweetId).toBe('1951234567890120002');
    expect(t.retweeted).toBeNull();
  });
});

describe('v2 tweet → canonical', () => {
  it('maps v2 names (id_str, favorite_count, screen_name) and the embedded quoted tweet', () => {
    const raw = tweetV2();
    const t = normalizeTweetV2(tweetV2Schema.parse(raw), raw);
    expect(t.id).toBe(BIG_TWEET_ID);
    expect(t.likeCount).toBe(7);
    expect(t.isReply).toBe(true);
    expect(t.inReplyToTweetId).toBe('1951234567890123400');
    expect(t.author?.username).toBe('alice_w');
    expect(t.author?.followingsCount).toBe(34);
    expect(t.author?.tweetsCount).toBe(56);
    expect(t.author?.source).toBe('v2-embedded');
    expect(t.createdAt.toISOString()).toBe('2026-08-02T13:30:00.000Z');
    expect(t.quotedTweetId).toBe('1951234567890123999');
    expect(t.quoted?.source).toBe('v2-embedded');
    expect(t.quoted?.hashtags).toEqual(['orig']);
    expect(t.quoted?.author?.username).toBe('orig');
    expect(t.quoted?.likeCount).toBe(9);
    expect(t.retweetedTweetId).toBeNull();
    expect(t.cashtags).toEqual(['BTC']);
    expect(t.hashtags).toEqual(['news']);
    expect(t.raw).toBe(raw);
  });
});

describe('users → canonical', () => {
  it('maps reduced, basic and new-follower records', () => {
    const r = normalizeReducedUser(reducedUserSchema.parse({ id: '5', username: 'x', display_name: 'X', verified: true }), {});
    expect(r).toMatchObject({ id: '5', username: 'x', displayName: 'X', verified: true, source: 'v3-reduced', followersCount: null });
    const b = normalizeBasicAccount(basicAccountSchema.parse({ id: '6', screen_name: 'y', banner: 'https://b', friends_count: 3 }), {});
    expect(b).toMatchObject({ id: '6', username: 'y', bannerUrl: 'https://b', followingsCount: 3, source: 'v2-basic' });
    const n = normalizeNewFollower(newFollowerSchema.parse({ id: '7', screeName: 'z', canDM: true, friendsCount: 2 }), {});
    expect(n).toMatchObject({ id: '7', username: 'z', canDm: true, followingsCount: 2, source: 'v2-new-follower' });
  });

  it("takes a v3 banner address from profile_background_image_url into bannerUrl, and nothing else", () => {
    const banner = 'https://pbs.twimg.com/profile_banners/17471979/1777628727';
    const full = normalizeUserV3(userV3Schema.parse({ id: '8', profile_background_image_url: banner }), {});
    expect(full).toMatchObject({ profileBackgroundImageUrl: banner, bannerUrl: banner });
    const top = normalizeTopFollower(topFollowerSchema.parse({ id: '9', profile_background_image_url: banner }), {});
    expect(top).toMatchObject({ profileBackgroundImageUrl: banner, bannerUrl: banner });
    for (const other of ['', 'https://abs.twimg.com/images/themes/theme1/bg.png', null]) {
      const u = normalizeUserV3(userV3Schema.parse({ id: '10', profile_background_image_url: other }), {});
      expect(u.bannerUrl).toBeNull();
    }
  });
});
