/** Wire fixtures modelled on the spec's field tables and the production quirks in service-notes. */

/** Above 2^53: a JS number cannot hold it exactly. */
export const BIG_TWEET_ID = '1951234567890123457';
export const BIG_USER_ID = '1800000000000000001';

export function userV3(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: BIG_USER_ID,
    username: 'alice_w',
    display_name: 'Alice W',
    description: 'writes things',
    location: 'Lisbon',
    created_at: 'Sun Aug 02 13:30:00 +0000 2020',
    bio_urls: null,
    can_dm: true,
    possibly_sensitive: false,
    protected: false,
    verified: true,
    favourites_count: 10,
    followers_count: '1200',
    followings_count: 300,
    media_count: 4,
    tweets_count: 999,
    pinned_tweet_ids: null,
    profile_image_url: 'https://img.example/a.jpg',
    profile_background_image_url: 'https://img.example/b.jpg',
    is_blue_verified: true,
    ...overrides,
  };
}

export function tweetV3(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: BIG_TWEET_ID,
    full_text: 'Hello @Bob_X and @carol #Rust #2026 $TSLA see https://example.com/a?b=1.',
    created_at: '2026-08-02T13:30:00.000Z',
    lang: 'en',
    conversation_id_str: BIG_TWEET_ID,
    is_reply: false,
    in_reply_to_tweet_id: null,
    in_reply_to_username: null,
    is_quote_status: false,
    is_replies_limited: false,
    likes_count: 5,
    retweet_count: 1,
    quote_count: 0,
    reply_count: 2,
    bookmark_count: 0,
    view_count: 100,
    entities: [
      { type: 'photo', link: 'https://pbs.example/1.jpg', preview: 'https://pbs.example/1s.jpg' },
      { type: 'url', link: 'https://other.example/x', preview: 'https://other.example/x' },
    ],
    quoted_status: null,
    retweeted_status: null,
    user: userV3(),
    made_with_ai: false,
    paid_partnership: false,
    ...overrides,
  };
}

export function userV2Embedded(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    avatar: 'https://img.example/a.jpg',
    can_dm: false,
    created_at: 'Sun Aug 02 13:30:00 +0000 2020',
    description: 'old api',
    followers_count: 12,
    friends_count: 34,
    id_str: BIG_USER_ID,
    name: 'Alice W',
    screen_name: 'alice_w',
    statuses_count: 56,
    ...overrides,
  };
}

export function tweetV2(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id_str: BIG_TWEET_ID,
    full_text: 'RT this $btc #News',
    created_at: 'Sun Aug 02 13:30:00 +0000 2026',
    conversation_id_str: '1951234567890123400',
    in_reply_to_status_id_str: '1951234567890123400',
    is_quote_status: true,
    favorite_count: 7,
    retweet_count: 3,
    quote_count: 1,
    reply_count: 0,
    bookmark_count: 0,
    view_count: 70,
    entities: [],
    quoted_status: {
      id_str: '1951234567890123999',
      full_text: 'the original #Orig',
      created_at: 'Sat Aug 01 10:00:00 +0000 2026',
      favorite_count: 9,
      quote_count: 1,
      retweet_count: 2,
      user: userV2Embedded({ id_str: '42', screen_name: 'orig' }),
    },
    retweeted_status: null,
    user: userV2Embedded(),
    ...overrides,
  };
}
