/**
 * The simulated platform, as the simulator's HTTP layer and search engine see it. The simulator
 * shares no code with the client: these are the platform's own facts, from which the server
 * renders the spec's v2 and v3 shapes.
 *
 * Tweets are dense indices 0..count-1 in ascending id order, and ids encode time by the spec's
 * rule (ms = (id >> 22) + 1288834974657), so index order is time order and a time range is a
 * binary search. The table is columnar behind accessors so a million tweets fit in a few
 * hundred MB and scan quickly; appended tweets (test control) keep the order because they are
 * newer than every existing one.
 */

export const TWITTER_EPOCH_MS = 1288834974657n;

/** Tweet id for a creation time and a sequence number (0..4194303) within that millisecond. */
export function tweetIdAt(ms: number, sequence = 0): bigint {
  return ((BigInt(ms) - TWITTER_EPOCH_MS) << 22n) | BigInt(sequence & 0x3fffff);
}

/** Creation time (ms since epoch) encoded in a tweet id. */
export function msOfTweetId(id: bigint): number {
  return Number((id >> 22n) + TWITTER_EPOCH_MS);
}

export interface SimUser {
  readonly index: number;
  /** Decimal string; user ids also exceed 2^53 for part of the population. */
  readonly id: string;
  readonly username: string;
  readonly displayName: string;
  readonly description: string;
  readonly location: string;
  readonly createdAtMs: number;
  readonly protected: boolean;
  readonly suspended: boolean;
  readonly deleted: boolean;
  /** Legacy verified (filter:verified). */
  readonly verified: boolean;
  /** Paid subscriber (filter:blue_verified). */
  readonly blueVerified: boolean;
  readonly canDm: boolean;
  readonly possiblySensitive: boolean;
  readonly followersCount: number;
  readonly followingsCount: number;
  readonly favouritesCount: number;
  readonly mediaCount: number;
  readonly tweetsCount: number;
  readonly bioUrls: readonly string[];
  readonly pinnedTweetIds: readonly string[];
  readonly profileImageUrl: string;
  readonly profileBackgroundImageUrl: string;
}

export type SimMediaType = 'photo' | 'video' | 'animated_gif';

export interface SimMedia {
  readonly type: SimMediaType;
  /** Natively hosted (pbs/video host) vs. embedded from elsewhere. */
  readonly native: boolean;
  readonly url: string;
  readonly preview: string;
}

/** Bit flags of a tweet, for the filter: family. */
export const TweetFlag = {
  NEWS: 1 << 0,
  /** Not marked sensitive (filter:safe). */
  SAFE: 1 << 1,
  SPACES: 1 << 2,
  REPLIES_LIMITED: 1 << 3,
  POLL: 1 << 4,
  PRO_VIDEO: 1 << 5,
  HAS_GEO: 1 << 6,
} as const;

/** Read access to the tweet table. Every accessor is O(1) unless stated. */
export interface TweetTable {
  readonly count: number;
  id(i: number): bigint;
  idString(i: number): string;
  createdAtMs(i: number): number;
  /** Author user index. */
  author(i: number): number;
  text(i: number): string;
  /** Two-letter code or one of und, qme, zxx… */
  lang(i: number): string;
  /** Tweet index replied to, or -1. */
  inReplyTo(i: number): number;
  /** Index of the conversation's root tweet (itself for a root). */
  conversation(i: number): number;
  /** Quoted tweet index, or -1. */
  quoted(i: number): number;
  /** Retweeted tweet index, or -1 (a native retweet has the original's text prefixed "RT @h: "). */
  retweeted(i: number): number;
  likes(i: number): number;
  retweets(i: number): number;
  replies(i: number): number;
  quotes(i: number): number;
  bookmarks(i: number): number;
  views(i: number): number;
  /** Lower-cased, without #. */
  hashtags(i: number): readonly string[];
  /** Upper-cased, without $. */
  cashtags(i: number): readonly string[];
  /** User indices mentioned with @ in the text. */
  mentions(i: number): readonly number[];
  /** Expanded link URLs (not media). */
  urls(i: number): readonly string[];
  media(i: number): readonly SimMedia[];
  /** Client name, e.g. "Twitter Web App". */
  source(i: number): string;
  flags(i: number): number;
  /** Index of a tweet id, or -1. O(log n). */
  indexOfId(id: bigint): number;
  /** First index whose createdAtMs >= ms (count when none). O(log n). */
  lowerBoundMs(ms: number): number;
  /** First index whose id >= id (count when none). O(log n). */
  lowerBoundId(id: bigint): number;
}

export interface SimList {
  readonly id: string;
  readonly name: string;
  readonly ownerIndex: number;
  /** User indices. */
  readonly members: readonly number[];
  readonly followers: readonly number[];
}

export interface SimCommunity {
  readonly id: string;
  readonly name: string;
  readonly members: readonly number[];
  /** Tweet indices posted in the community (its feed), ascending; every author is a member. */
  readonly tweets: readonly number[];
}

export interface SimSpace {
  readonly id: string;
  readonly title: string;
  /** 'Running' | 'Ended' | 'NotStarted' */
  readonly state: string;
  readonly mediaKey: string;
  readonly creatorIndex: number;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  readonly scheduledStartMs: number;
  readonly adminIndices: readonly number[];
  readonly speakerIndices: readonly number[];
  readonly listenerIndices: readonly number[];
  readonly totalLiveListeners: number;
  readonly totalReplayWatched: number;
}

/** A tweet added through test control (the admin routes or the in-process API). */
export interface NewTweetSpec {
  authorHandle: string;
  text: string;
  /** Defaults to now (wall clock), never earlier than the newest tweet. */
  createdAtMs?: number;
  lang?: string;
  inReplyToId?: string;
  quotedId?: string;
  likes?: number;
  retweets?: number;
  replies?: number;
  /** Posts the tweet in this community too (the author must be a member). */
  communityId?: string;
}

export interface World {
  readonly seed: number;
  readonly users: readonly SimUser[];
  readonly tweets: TweetTable;
  readonly lists: readonly SimList[];
  readonly communities: readonly SimCommunity[];
  readonly spaces: readonly SimSpace[];
  /** Case-insensitive handle lookup. */
  /** The account takes a new handle; the old one is free until another account takes it. */
  renameUser(handle: string, newHandle: string): void;
  userByHandle(handle: string): SimUser | undefined;
  userById(id: string): SimUser | undefined;
  listById(id: string): SimList | undefined;
  communityById(id: string): SimCommunity | undefined;
  spaceById(id: string): SimSpace | undefined;
  /** Tweet indices by author, ascending. */
  tweetsByAuthor(userIndex: number): readonly number[];
  /** Tweet indices of a conversation (root excluded), ascending. */
  conversationReplies(rootIndex: number): readonly number[];
  /** Tweet indices quoting / retweeting a tweet, ascending. */
  quotesOf(tweetIndex: number): readonly number[];
  retweetsOf(tweetIndex: number): readonly number[];
  /** Tweet indices whose text @-mentions the user, ascending. */
  mentionsOf(userIndex: number): readonly number[];
  /** User indices. */
  followersOf(userIndex: number): readonly number[];
  followsOf(userIndex: number): readonly number[];
  /** Appends tweets (test control); returns their indices. Keeps every index above consistent. */
  addTweets(specs: readonly NewTweetSpec[]): number[];
}
