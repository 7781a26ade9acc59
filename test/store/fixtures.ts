/** Hand-built canonical records, ids, slices and pages for store tests (the client's parsers are not under test here). */
import type { CanonicalTweet, CanonicalUser } from '../../src/api-client/canonical.ts';
import type { PageCommit } from '../../src/store/commit-page.ts';
import type { Pool } from '../../src/store/db.ts';
import { markSliceRunning } from '../../src/store/job-runtime.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';

export function makeUser(id: string, overrides: Partial<CanonicalUser> = {}): CanonicalUser {
  return {
    id,
    username: `user${id.slice(-6)}`,
    displayName: `User ${id.slice(-6)}`,
    description: 'a description',
    location: 'Lisbon',
    createdAt: new Date('2015-03-04T05:06:07Z'),
    protected: false,
    verified: false,
    canDm: true,
    possiblySensitive: false,
    followersCount: 100,
    followingsCount: 50,
    tweetsCount: 1000,
    favouritesCount: 10,
    mediaCount: 5,
    profileImageUrl: 'https://img.example/a.jpg',
    profileBackgroundImageUrl: null,
    bannerUrl: 'https://img.example/b.jpg',
    bioUrls: ['https://example.org'],
    pinnedTweetIds: [],
    source: 'v3',
    raw: { id_str: id, kind: 'full' },
    ...overrides,
  };
}

export function makeTweet(id: string, author: CanonicalUser | null, overrides: Partial<CanonicalTweet> = {}): CanonicalTweet {
  return {
    id,
    authorId: author?.id ?? null,
    author,
    fullText: `tweet ${id} #Bitcoin $BTC @jack https://t.example/x`,
    createdAt: new Date('2026-08-02T13:30:00Z'),
    lang: 'en',
    conversationId: id,
    isReply: false,
    inReplyToTweetId: null,
    inReplyToUsername: null,
    isQuoteStatus: false,
    isRepliesLimited: false,
    quotedTweetId: null,
    retweetedTweetId: null,
    quoted: null,
    retweeted: null,
    likeCount: 10,
    retweetCount: 2,
    replyCount: 1,
    quoteCount: 0,
    bookmarkCount: 0,
    viewCount: 500,
    hashtags: ['Bitcoin'],
    cashtags: ['BTC'],
    mentions: ['jack'],
    urls: ['https://t.example/x'],
    media: [],
    entities: [],
    source: 'v3',
    raw: { id, text: `tweet ${id}`, made_with_ai: false },
    ...overrides,
  };
}

/** Ids unique within a test file: `base` + 1000 × n (a call may name another base, e.g. for users). */
export function idSequence(defaultBase: string): (base?: string) => string {
  let seq = 0;
  return (base = defaultBase) => {
    seq += 1;
    return (BigInt(base) + BigInt(seq) * 1000n).toString();
  };
}

/** A search job with `count` slices; with `lease`, each slice is taken by a walk holding it. */
export async function newSlices(pool: Pool, count: number, options: { lease?: string } = {}): Promise<{ jobId: string; sliceIds: string[] }> {
  const jobId = await createJob(pool, { kind: 'search', params: { query: 'x' } });
  const sliceIds = await createSlices(pool, jobId, Array.from({ length: count }, (_, i) => ({ kind: 'search-window', params: { i } })));
  if (options.lease !== undefined) {
    for (const sliceId of sliceIds) {
      if (!(await markSliceRunning(pool, sliceId, jobId, options.lease))) throw new Error(`slice ${sliceId} could not be taken`);
    }
  }
  return { jobId, sliceIds };
}

/** A first page of the slice with nothing in it: tests override what they look at. */
export function pageOf(slice: { jobId: string; sliceId: string }, overrides: Partial<PageCommit> = {}): PageCommit {
  return { ...slice, expectedCursor: null, nextCursor: 'c1', sliceDone: false, tweets: [], users: [], emptyPage: false, ...overrides };
}
