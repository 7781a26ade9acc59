/**
 * The canonical Tweet and User: one shape for what v2 and v3 answer in several. The client
 * normalises every response into these; the store writes them; nothing else looks at wire shapes.
 *
 * Ids are decimal strings (19-digit ids exceed 2^53). Timestamps are Dates in UTC, parsed once
 * from either the ISO 8601 or the legacy `Sun Aug 02 13:30:00 +0000 2026` form. A field the
 * source did not carry is null, never a guess; `raw` is the item exactly as it came, unknown
 * fields included.
 */

/** Which wire shape a record was normalised from. */
export type UserSource = 'v3' | 'v3-reduced' | 'v3-follower' | 'v3-top-follower' | 'v2-embedded' | 'v2-basic' | 'v2-new-follower';
export type TweetSource = 'v3' | 'v2' | 'v2-embedded';

export interface CanonicalUser {
  id: string;
  username: string | null;
  displayName: string | null;
  description: string | null;
  location: string | null;
  createdAt: Date | null;
  protected: boolean | null;
  verified: boolean | null;
  canDm: boolean | null;
  possiblySensitive: boolean | null;
  followersCount: number | null;
  followingsCount: number | null;
  tweetsCount: number | null;
  favouritesCount: number | null;
  mediaCount: number | null;
  profileImageUrl: string | null;
  profileBackgroundImageUrl: string | null;
  bannerUrl: string | null;
  bioUrls: string[];
  pinnedTweetIds: string[];
  source: UserSource;
  raw: unknown;
}

/** One entity of a tweet as the service lists it: `{link, preview, type}`. */
export interface TweetEntity {
  type: string | null;
  link: string | null;
  preview: string | null;
}

/** Engagement counts as a tweet or an article carries them; null where the answer has none. */
export interface EngagementCounts {
  likeCount: number | null;
  retweetCount: number | null;
  replyCount: number | null;
  quoteCount: number | null;
  bookmarkCount: number | null;
  viewCount: number | null;
}

export interface CanonicalTweet extends EngagementCounts {
  id: string;
  authorId: string | null;
  /** The embedded author profile (always present in v3 and v2 full tweets). */
  author: CanonicalUser | null;
  fullText: string;
  createdAt: Date;
  lang: string | null;
  conversationId: string | null;
  isReply: boolean;
  inReplyToTweetId: string | null;
  inReplyToUsername: string | null;
  isQuoteStatus: boolean;
  isRepliesLimited: boolean | null;
  quotedTweetId: string | null;
  retweetedTweetId: string | null;
  /** The embedded quoted / retweeted tweet when the response carried one with an id. */
  quoted: CanonicalTweet | null;
  retweeted: CanonicalTweet | null;
  /** Extracted from the text (the service's entities carry only media and links). */
  hashtags: string[];
  cashtags: string[];
  /** Handles mentioned in the text, lower-cased, without @. */
  mentions: string[];
  /** Links of entities whose type is not a media kind, plus URLs in the text. */
  urls: string[];
  media: TweetEntity[];
  entities: TweetEntity[];
  source: TweetSource;
  raw: unknown;
}
