/**
 * Turns a page of canonical records into deduplicated, id-sorted column arrays for `unnest`.
 * Pure: no SQL here. Sorting by id gives every transaction the same lock order, which keeps
 * concurrent commits of overlapping pages from deadlocking on each other's rows.
 */
import type { CanonicalTweet, CanonicalUser, TweetSource, UserSource } from '../api-client/canonical.ts';
import { plainArray, quotedElement } from './db.ts';

// A full v3 profile outranks one without `location` (new-followers-7d) and the reduced forms.
const USER_RANK: Record<UserSource, number> = {
  v3: 3,
  'v3-follower': 2,
  'v2-embedded': 2,
  'v2-new-follower': 2,
  'v2-basic': 1,
  'v3-reduced': 1,
  'v3-top-follower': 1,
};
const TWEET_RANK: Record<TweetSource, number> = { v3: 3, v2: 2, 'v2-embedded': 1 };

const isBlank = (value: unknown): boolean => value === null || value === undefined || (Array.isArray(value) && value.length === 0);

/**
 * One field of two records of one id in a page (or a group commit): a record of an equal or richer
 * wire shape (`nextRicher`) wins every field it has (the later one on a tie); a poorer one only
 * fills what is blank. A v2 embedded copy of a tweet the page also carries in full says
 * `isReply: false` and `fullText: ''` for want of those fields, and must not overwrite what the
 * full record said. Raw and source follow the richer record.
 */
function pick<T>(prev: T, next: T, nextRicher: boolean): T {
  return !isBlank(next) && (nextRicher || isBlank(prev)) ? next : prev;
}

// Every function the page path calls per record lives at module scope (see plainColumns in db.ts).
const userRank = (u: CanonicalUser): number => USER_RANK[u.source] ?? 0;
const tweetRank = (t: CanonicalTweet): number => TWEET_RANK[t.source] ?? 0;

/**
 * The merged records are object literals in the normalisers' key order (normalize.ts,
 * normalize-user.ts), so they share one hidden class with the records they merge: a copy made by
 * spreading had a class of its own, and the upserts' column pickers, optimized for the normalised
 * records, were thrown away and compiled again whenever a page first brought them a merged one
 * (~25 functions at a time; docs/architecture.md, "Worker CPU").
 */
export function mergeUser(prev: CanonicalUser, next: CanonicalUser): CanonicalUser {
  const r = userRank(next) >= userRank(prev);
  const richer = r ? next : prev;
  return {
    id: pick(prev.id, next.id, r),
    username: pick(prev.username, next.username, r),
    displayName: pick(prev.displayName, next.displayName, r),
    description: pick(prev.description, next.description, r),
    location: pick(prev.location, next.location, r),
    createdAt: pick(prev.createdAt, next.createdAt, r),
    protected: pick(prev.protected, next.protected, r),
    verified: pick(prev.verified, next.verified, r),
    canDm: pick(prev.canDm, next.canDm, r),
    possiblySensitive: pick(prev.possiblySensitive, next.possiblySensitive, r),
    followersCount: pick(prev.followersCount, next.followersCount, r),
    followingsCount: pick(prev.followingsCount, next.followingsCount, r),
    tweetsCount: pick(prev.tweetsCount, next.tweetsCount, r),
    favouritesCount: pick(prev.favouritesCount, next.favouritesCount, r),
    mediaCount: pick(prev.mediaCount, next.mediaCount, r),
    profileImageUrl: pick(prev.profileImageUrl, next.profileImageUrl, r),
    profileBackgroundImageUrl: pick(prev.profileBackgroundImageUrl, next.profileBackgroundImageUrl, r),
    bannerUrl: pick(prev.bannerUrl, next.bannerUrl, r),
    bioUrls: pick(prev.bioUrls, next.bioUrls, r),
    pinnedTweetIds: pick(prev.pinnedTweetIds, next.pinnedTweetIds, r),
    source: richer.source,
    raw: richer.raw,
  };
}

/** Two records of one tweet as one (see mergeUser); `authorId` falls back to the merged author's. */
export function mergeTweet(prev: CanonicalTweet, next: CanonicalTweet): CanonicalTweet {
  const r = tweetRank(next) >= tweetRank(prev);
  const richer = r ? next : prev;
  const author = pick(prev.author, next.author, r);
  return {
    id: pick(prev.id, next.id, r),
    authorId: pick(prev.authorId, next.authorId, r) ?? author?.id ?? null,
    author,
    fullText: pick(prev.fullText, next.fullText, r),
    createdAt: pick(prev.createdAt, next.createdAt, r),
    lang: pick(prev.lang, next.lang, r),
    conversationId: pick(prev.conversationId, next.conversationId, r),
    isReply: pick(prev.isReply, next.isReply, r),
    inReplyToTweetId: pick(prev.inReplyToTweetId, next.inReplyToTweetId, r),
    inReplyToUsername: pick(prev.inReplyToUsername, next.inReplyToUsername, r),
    isQuoteStatus: pick(prev.isQuoteStatus, next.isQuoteStatus, r),
    isRepliesLimited: pick(prev.isRepliesLimited, next.isRepliesLimited, r),
    quotedTweetId: pick(prev.quotedTweetId, next.quotedTweetId, r),
    retweetedTweetId: pick(prev.retweetedTweetId, next.retweetedTweetId, r),
    quoted: pick(prev.quoted, next.quoted, r),
    retweeted: pick(prev.retweeted, next.retweeted, r),
    likeCount: pick(prev.likeCount, next.likeCount, r),
    retweetCount: pick(prev.retweetCount, next.retweetCount, r),
    replyCount: pick(prev.replyCount, next.replyCount, r),
    quoteCount: pick(prev.quoteCount, next.quoteCount, r),
    bookmarkCount: pick(prev.bookmarkCount, next.bookmarkCount, r),
    viewCount: pick(prev.viewCount, next.viewCount, r),
    hashtags: pick(prev.hashtags, next.hashtags, r),
    cashtags: pick(prev.cashtags, next.cashtags, r),
    mentions: pick(prev.mentions, next.mentions, r),
    urls: pick(prev.urls, next.urls, r),
    media: pick(prev.media, next.media, r),
    entities: pick(prev.entities, next.entities, r),
    source: richer.source,
    raw: richer.raw,
  };
}

export interface CollectedPage {
  users: CanonicalUser[];
  tweets: CanonicalTweet[];
  /** Ids of the page's own tweets (not the embedded ones), sorted: job_tweets provenance. */
  pageTweetIds: string[];
  /** [userId, role] pairs, sorted: job_users provenance. */
  provenance: Array<[string, string]>;
}

const byId = (a: { id: string }, b: { id: string }): number => compareIds(a.id, b.id);
const byProvenance = (a: readonly [string, string], b: readonly [string, string]): number => compareIds(a[0], b[0]) || (a[1] < b[1] ? -1 : 1);

/** Numeric order of decimal id strings without converting them to numbers. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** The greatest of some ids, nulls aside (null when all are). */
export function greatestId(...ids: ReadonlyArray<string | null | undefined>): string | null {
  let best: string | null = null;
  for (const id of ids) if (id != null && (best === null || compareIds(id, best) > 0)) best = id;
  return best;
}

function addUser(users: Map<string, CanonicalUser>, u: CanonicalUser): void {
  const prev = users.get(u.id);
  users.set(u.id, prev ? mergeUser(prev, u) : u);
}

function addTweet(tweets: Map<string, CanonicalTweet>, users: Map<string, CanonicalUser>, t: CanonicalTweet, depth: number): void {
  // Embedded tweets go in first so the page's own (fuller) version of the same tweet wins.
  if (depth < 3) {
    if (t.quoted) addTweet(tweets, users, t.quoted, depth + 1);
    if (t.retweeted) addTweet(tweets, users, t.retweeted, depth + 1);
  }
  if (t.author) addUser(users, t.author);
  const prev = tweets.get(t.id);
  // A tweet with an author profile but no author id takes the profile's (mergeTweet, with itself).
  tweets.set(t.id, prev ? mergeTweet(prev, t) : t.authorId === null && t.author ? mergeTweet(t, t) : t);
}

export function collectPage(tweets: readonly CanonicalTweet[], users: readonly CanonicalUser[], userRole = 'user'): CollectedPage {
  const userMap = new Map<string, CanonicalUser>();
  const tweetMap = new Map<string, CanonicalTweet>();
  for (const t of tweets) addTweet(tweetMap, userMap, t, 0);
  for (const u of users) addUser(userMap, u);

  const pageTweetIds = new Set<string>();
  const provenance = new Map<string, [string, string]>();
  for (const t of tweets) {
    pageTweetIds.add(t.id);
    const authorId = t.authorId ?? t.author?.id;
    if (authorId) provenance.set(`${authorId}\u0000author`, [authorId, 'author']);
  }
  for (const u of users) provenance.set(`${u.id}\u0000${userRole}`, [u.id, userRole]);

  return {
    users: [...userMap.values()].sort(byId),
    tweets: [...tweetMap.values()].sort(byId),
    pageTweetIds: [...pageTweetIds].sort(compareIds),
    provenance: [...provenance.values()].sort(byProvenance),
  };
}

/** Postgres rejects NUL in text and jsonb; the service has been seen to send it inside text. */
export function cleanText(value: string | null): string | null {
  return value !== null && value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}

/** Half of a surrogate pair without its other half (text cut mid-emoji). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storable(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? value.replaceAll('\u0000', '').replace(LONE_SURROGATE, '\uFFFD') : value;
}

/**
 * JSON text for a jsonb parameter. JSON.stringify escapes a NUL as \u0000 and a lone surrogate as
 * \udxxx, and jsonb refuses both: the whole page failed, eight paid attempts and then its slice.
 * The replacer (NUL dropped, a lone surrogate made U+FFFD, as text columns get from pg's UTF-8
 * encoding) runs only when one of those escapes is present.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.includes('\\u0000') || text.includes('\\ud') ? JSON.stringify(value, storable) : text;
}

/** One row's array as a Postgres array literal, so jagged arrays can ride in a text[] parameter. */
export function arrayLiteral(items: readonly string[]): string {
  if (items.length === 0) return '{}';
  let out = '{';
  for (let i = 0; i < items.length; i++) {
    out += `${i > 0 ? ',' : ''}${quotedElement(cleanText(items[i]!) ?? '')}`;
  }
  return `${out}}`;
}

export function isoOrNull(date: Date | null): string | null {
  return date === null || Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Highest and lowest of decimal id strings. */
export function idRange(ids: readonly string[]): { newest: string | null; oldest: string | null } {
  let newest: string | null = null;
  let oldest: string | null = null;
  for (const id of ids) {
    if (newest === null || compareIds(id, newest) > 0) newest = id;
    if (oldest === null || compareIds(id, oldest) < 0) oldest = id;
  }
  return { newest, oldest };
}

/**
 * `plainArray` of a column made of runs of one value (a batch's job ids beside its sorted ids: one
 * run per job), each run written by one String.repeat: plainArray tests and appends every element,
 * ~17 µs for the ~290 job ids of a one-job batch of 8 pages, this ~1.5 µs.
 */
export function plainArrayOfRuns(values: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < values.length; ) {
    const value = values[i]!;
    let end = i + 1;
    while (end < values.length && values[end] === value) end++;
    const cell = plainArray([value]).slice(1, -1);
    out += `${i > 0 ? ',' : ''}${`${cell},`.repeat(end - i - 1)}${cell}`;
    i = end;
  }
  return `${out}}`;
}

/** A collected page and (on its page) the job it was fetched for. */
export interface JobPage {
  page: { readonly jobId: string };
  collected: CollectedPage;
}

/**
 * The rows of a group commit, whatever its jobs: each tweet and user once, and job provenance as
 * parallel columns (a job id beside each tweet id, and beside each [userId, role] pair).
 */
export interface BatchRows {
  users: CanonicalUser[];
  tweets: CanonicalTweet[];
  /** job_tweets rows: `tweetJobIds[i]` found `pageTweetIds[i]`; sorted by job id, then tweet id. */
  tweetJobIds: string[];
  pageTweetIds: string[];
  /** job_users rows: `userJobIds[i]` found `provenance[i]`; sorted by job id, user id, role. */
  userJobIds: string[];
  provenance: Array<[string, string]>;
}

interface JobIds {
  tweetIds: Set<string>;
  provenance: Map<string, [string, string]>;
}

/**
 * The rows of the collected pages of a group commit, of one job or several, as one set: records
 * merged as within a page (in the pages' order: later pages' non-null fields win, unless poorer),
 * ids sorted, provenance in (job id, id) order. A batch writes them in one tweets and one users
 * statement, so two batches whose jobs share rows lock them in one order (commit-page.ts).
 */
export function mergeBatch(pages: readonly JobPage[]): BatchRows {
  if (pages.length === 1) {
    const { page: { jobId }, collected } = pages[0]!;
    return {
      users: collected.users,
      tweets: collected.tweets,
      tweetJobIds: new Array<string>(collected.pageTweetIds.length).fill(jobId),
      pageTweetIds: collected.pageTweetIds,
      userJobIds: new Array<string>(collected.provenance.length).fill(jobId),
      provenance: collected.provenance,
    };
  }
  const users = new Map<string, CanonicalUser>();
  const tweets = new Map<string, CanonicalTweet>();
  const jobs = new Map<string, JobIds>();
  for (const { page: { jobId }, collected } of pages) {
    for (const u of collected.users) {
      const prev = users.get(u.id);
      users.set(u.id, prev ? mergeUser(prev, u) : u);
    }
    for (const t of collected.tweets) {
      const prev = tweets.get(t.id);
      tweets.set(t.id, prev ? mergeTweet(prev, t) : t);
    }
    let job = jobs.get(jobId);
    if (job === undefined) {
      job = { tweetIds: new Set<string>(), provenance: new Map<string, [string, string]>() };
      jobs.set(jobId, job);
    }
    for (const id of collected.pageTweetIds) job.tweetIds.add(id);
    for (const p of collected.provenance) job.provenance.set(`${p[0]}\u0000${p[1]}`, p);
  }
  const tweetJobIds: string[] = [];
  const pageTweetIds: string[] = [];
  const userJobIds: string[] = [];
  const provenance: Array<[string, string]> = [];
  for (const jobId of [...jobs.keys()].sort(compareIds)) {
    const job = jobs.get(jobId)!;
    for (const id of [...job.tweetIds].sort(compareIds)) {
      tweetJobIds.push(jobId);
      pageTweetIds.push(id);
    }
    for (const p of [...job.provenance.values()].sort(byProvenance)) {
      userJobIds.push(jobId);
      provenance.push(p);
    }
  }
  return { users: [...users.values()].sort(byId), tweets: [...tweets.values()].sort(byId), tweetJobIds, pageTweetIds, userJobIds, provenance };
}
