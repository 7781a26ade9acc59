/**
 * The listings behind both API versions: which items, in which order, paged how. Routes only pick
 * parameters and render.
 */
import type { SimContext } from './context.ts';
import { badRequest } from './http-utils.ts';
import type { SimUser } from './model.ts';
import { keysetPageDesc, offsetPage, paginate, type PageResult } from './paging.ts';
import { isListedUser, isVisibleTweet } from './render-v3.ts';
import { searchTweets } from './search/index.ts';
import { SearchQueryError } from './search/errors.ts';

export const PAGE_SIZE = 20;
export const GRAPH_PAGE_SIZE = 200;

export function searchPage(ctx: SimContext, query: string, order: 'latest' | 'popular', cursor: string | null, scope: string): PageResult<number> {
  return paginate(ctx, { scope, kind: 'opaque', cursor, size: PAGE_SIZE }, (position, size) => {
    try {
      const r = searchTweets(ctx.world, { query, order, state: position?.s, limit: size, nowMs: ctx.nowMs });
      return { items: r.indices, next: r.nextState === null ? null : { s: r.nextState } };
    } catch (error) {
      if (error instanceof SearchQueryError) throw badRequest(error.message);
      throw error;
    }
  });
}

export function userTweetsPage(ctx: SimContext, user: SimUser, cursor: string | null, version: string): PageResult<number> {
  const scope = `${version}/user-tweets:${user.id}`;
  const page = paginate(ctx, { scope, kind: 'opaque', cursor, size: PAGE_SIZE }, (position, size) =>
    keysetPageDesc(ctx.world.tweetsByAuthor(user.index), position, size),
  );
  // The pinnedHead quirk: the pinned tweet before the first page's newest-first tweets.
  const pinnedId = ctx.quirks.pinnedHead && cursor === null ? user.pinnedTweetIds[0] : undefined;
  if (pinnedId === undefined) return page;
  const pinned = ctx.world.tweets.indexOfId(BigInt(pinnedId));
  if (pinned < 0 || !isVisibleTweet(ctx.world, pinned) || page.items[0] === pinned) return page;
  return { ...page, items: [pinned, ...page.items] };
}

/** Tweets by the list's members, newest first: exactly what `list:ID` finds in search. */
export function listTweetsPage(ctx: SimContext, listId: string, cursor: string | null, version: string): PageResult<number> {
  return searchPage(ctx, `list:${listId}`, 'latest', cursor, `${version}/list-tweets:${listId}`);
}

export type CommentOrder = 'Relevance' | 'Recency' | 'Likes';

/** Replies under a tweet: the whole conversation for a root, direct replies for any other tweet. */
function repliesOf(ctx: SimContext, index: number): readonly number[] {
  const t = ctx.world.tweets;
  const root = t.conversation(index);
  const all = ctx.world.conversationReplies(root);
  return root === index ? all : all.filter((j) => t.inReplyTo(j) === index);
}

// Sorted reply arrays, rebuilt when tweets are appended (the count is part of the key).
const sortedCache = new Map<string, readonly number[]>();
const SORTED_CACHE_MAX = 256;

function sortedReplies(ctx: SimContext, index: number, order: CommentOrder): readonly number[] {
  const t = ctx.world.tweets;
  const cacheKey = `${ctx.world.seed}:${t.count}:${index}:${order}`;
  const hit = sortedCache.get(cacheKey);
  if (hit) return hit;
  const score = order === 'Likes' ? (j: number) => t.likes(j) : (j: number) => t.likes(j) + 2 * t.replies(j) + 3 * t.retweets(j);
  // ties broken by newest first so the order is total and pages never overlap
  const sorted = [...repliesOf(ctx, index)].sort((a, b) => score(b) - score(a) || b - a);
  if (sortedCache.size >= SORTED_CACHE_MAX) sortedCache.clear();
  sortedCache.set(cacheKey, sorted);
  return sorted;
}

export function commentsPage(ctx: SimContext, index: number, order: CommentOrder, cursor: string | null, version: string): PageResult<number> {
  const scope = `${version}/comments:${ctx.world.tweets.idString(index)}:${order}`;
  const visible = (j: number): boolean => isVisibleTweet(ctx.world, j);
  return paginate(ctx, { scope, kind: 'opaque', cursor, size: PAGE_SIZE }, (position, size) =>
    order === 'Recency'
      ? keysetPageDesc(repliesOf(ctx, index), position, size, visible)
      : offsetPage(sortedReplies(ctx, index, order), position, size, visible),
  );
}

/** Quoting or retweeting tweets of one tweet, newest first. */
export function engagementPage(ctx: SimContext, index: number, kind: 'quotes' | 'retweets', cursor: string | null): PageResult<number> {
  const source = kind === 'quotes' ? ctx.world.quotesOf(index) : ctx.world.retweetsOf(index);
  const scope = `v3/${kind}:${ctx.world.tweets.idString(index)}`;
  return paginate(ctx, { scope, kind: 'opaque', cursor, size: PAGE_SIZE }, (position, size) =>
    keysetPageDesc(source, position, size, (j) => isVisibleTweet(ctx.world, j)),
  );
}

/** A page of users from a static index array; suspended and deleted accounts are left out. */
export function usersPage(
  ctx: SimContext,
  source: readonly number[],
  options: { scope: string; cursor: string | null; numeric: boolean; size: number; filter?: (u: SimUser) => boolean },
): PageResult<SimUser> {
  const users = ctx.world.users;
  const page = paginate(ctx, { scope: options.scope, kind: options.numeric ? 'numeric' : 'opaque', cursor: options.cursor, size: options.size }, (position, size) =>
    offsetPage(source, position, size, (ix) => {
      const u = users[ix];
      return isListedUser(u) && (!options.filter || options.filter(u));
    }),
  );
  return { items: page.items.map((ix) => users[ix]!), next: page.next };
}

/** Users whose handle or display name contains the query (case-insensitive), in world order. */
export function searchUsersPage(ctx: SimContext, query: string, cursor: string | null): PageResult<SimUser> {
  const needle = query.trim().replace(/^@/, '').toLowerCase();
  if (needle === '') throw badRequest('query must not be blank');
  const users = ctx.world.users;
  return paginate(ctx, { scope: `v3/search-users:${needle}`, kind: 'opaque', cursor, size: PAGE_SIZE }, (position, size) => {
    const items: SimUser[] = [];
    let i = position?.o ?? 0;
    // scan until one match beyond the page, so the last page ends with a null cursor
    let lookahead = false;
    while (i < users.length) {
      const u = users[i]!;
      const hit = isListedUser(u) && (u.username.toLowerCase().includes(needle) || u.displayName.toLowerCase().includes(needle));
      if (hit && items.length === size) {
        lookahead = true;
        break;
      }
      i += 1;
      if (hit) items.push(u);
    }
    return { items, next: lookahead ? { o: i } : null };
  });
}
