/**
 * Runs a search page by page. `latest` walks the index range downwards from the last tweet
 * returned; `popular` sorts the matches once per walk (cached) and pages through them by
 * (score, id) keyset.
 */
import type { TweetTable, World } from '../model.ts';
import { decodeState, encodeState, queryFingerprint, type WalkState } from './cursor.ts';
import { SearchQueryError } from './errors.ts';
import { Lru } from './lru.ts';
import { parseQuery } from './parser.ts';
import { bindPlan, planQuery, type BoundQuery, type QueryPlan } from './plan.ts';

export type SearchOrder = 'latest' | 'popular';

export interface SearchRequest {
  query: string;
  order: SearchOrder;
  /** Continuation from the previous page's `nextState`. */
  state?: string;
  /** Page size, 1..1000; default 20. */
  limit?: number;
  /** "Now" for within_time: and card_name:; default Date.now(). A walk keeps its first page's. */
  nowMs?: number;
}

export interface SearchPage {
  /** Tweet indices, in the requested order. */
  indices: number[];
  /** null at the end of the walk. */
  nextState: string | null;
}

export const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 1000;
/** A popular walk ranks at most this many of the most recent matches. */
export const POPULAR_CAP = 10_000;

const plans = new Lru<string, QueryPlan>(256);
const popularLists = new WeakMap<World, Lru<string, RankedList>>();

interface RankedList {
  /** Sorted by score descending, then index (= id) descending. */
  readonly indices: Int32Array;
  readonly scores: Float64Array;
}

/** Parses and plans a query once; plans do not depend on the world, so they are shared. */
export function compileQuery(query: string): QueryPlan {
  let plan = plans.get(query);
  if (plan === undefined) {
    plan = planQuery(query, parseQuery(query));
    plans.set(query, plan);
  }
  return plan;
}

/** The popular order's score: likes + 2 × retweets + replies. */
export function engagementScore(tweets: TweetTable, i: number): number {
  return tweets.likes(i) + 2 * tweets.retweets(i) + tweets.replies(i);
}

export function searchTweets(world: World, request: SearchRequest): SearchPage {
  const { query, order } = request;
  if (order !== 'latest' && order !== 'popular') throw new SearchQueryError(`order must be latest or popular, got '${String(order)}'`);
  const limit = request.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new SearchQueryError(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  }
  const plan = compileQuery(query);
  const fingerprint = queryFingerprint(query, order);
  const state = request.state === undefined || request.state === '' ? null : decodeState(request.state, fingerprint);
  const nowMs = state?.now ?? Math.floor(request.nowMs ?? Date.now());
  const bound = bindPlan(plan, world, nowMs);
  const page: PageRequest = { world, plan, bound, state, limit, walk: { q: fingerprint, now: nowMs } };
  return order === 'latest' ? latestPage(page) : popularPage(page);
}

/** First position in an ascending list whose value is >= x. */
function lowerBound(list: readonly number[], x: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Up to `want` matches below `end`, newest first. */
function collectDescending(bound: BoundQuery, end: number, want: number): number[] {
  const out: number[] = [];
  const { predicate, lo, candidates } = bound;
  const top = Math.min(end, bound.hi);
  if (candidates === null) {
    for (let i = top - 1; i >= lo && out.length < want; i -= 1) if (predicate(i)) out.push(i);
    return out;
  }
  for (let k = lowerBound(candidates, top) - 1; k >= 0 && out.length < want; k -= 1) {
    const i = candidates[k] as number;
    if (i < lo) break;
    if (predicate(i)) out.push(i);
  }
  return out;
}

/** One page request of a walk, as both orders take it. */
interface PageRequest {
  world: World;
  plan: QueryPlan;
  bound: BoundQuery;
  state: WalkState | null;
  limit: number;
  walk: { q: string; now: number };
}

function latestPage({ world, bound, state, limit, walk }: PageRequest): SearchPage {
  const t = world.tweets;
  if (state !== null && state.o !== 'latest') throw new SearchQueryError('the cursor belongs to a different order');
  const end = state === null ? t.count : t.lowerBoundId(BigInt(state.last));
  // One match beyond the page tells whether another page exists, so the last page says so.
  const found = collectDescending(bound, end, limit + 1);
  if (found.length <= limit) return { indices: found, nextState: null };
  const indices = found.slice(0, limit);
  const last = indices[limit - 1] as number;
  return { indices, nextState: encodeState({ v: 1, o: 'latest', ...walk, last: t.idString(last) }) };
}

function rank(world: World, plan: QueryPlan, bound: BoundQuery, size: number, nowMs: number): RankedList {
  let cache = popularLists.get(world);
  if (cache === undefined) {
    cache = new Lru(32);
    popularLists.set(world, cache);
  }
  const key = `${size}|${plan.usesNow ? nowMs : ''}|${plan.query}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const t = world.tweets;
  const matches = collectDescending(bound, size, POPULAR_CAP);
  const scored = matches.map((i) => ({ i, s: engagementScore(t, i) }));
  scored.sort((a, b) => b.s - a.s || b.i - a.i);
  const list: RankedList = {
    indices: Int32Array.from(scored, (x) => x.i),
    scores: Float64Array.from(scored, (x) => x.s),
  };
  cache.set(key, list);
  return list;
}

/** First position ranked after (score, index). */
function positionAfter(list: RankedList, score: number, index: number): number {
  let lo = 0;
  let hi = list.indices.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const s = list.scores[mid] as number;
    const after = s < score || (s === score && (list.indices[mid] as number) < index);
    if (after) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function popularPage({ world, plan, bound, state, limit, walk }: PageRequest): SearchPage {
  const t = world.tweets;
  if (state !== null && state.o !== 'popular') throw new SearchQueryError('the cursor belongs to a different order');
  // Freezing the table size keeps tweets appended mid-walk out of this walk's ranking.
  const size = Math.min(state?.size ?? t.count, t.count);
  const list = rank(world, plan, bound, size, walk.now);
  let start = 0;
  if (state !== null) {
    const lastIndex = t.lowerBoundId(BigInt(state.last));
    start = positionAfter(list, state.score, lastIndex);
  }
  const stop = Math.min(start + limit, list.indices.length);
  const indices = Array.from(list.indices.subarray(start, stop));
  if (stop >= list.indices.length) return { indices, nextState: null };
  const last = indices[indices.length - 1] as number;
  const score = list.scores[stop - 1] as number;
  return { indices, nextState: encodeState({ v: 1, o: 'popular', ...walk, size, score, last: t.idString(last) }) };
}
