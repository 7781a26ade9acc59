/**
 * The check endpoints as production's reference names them: all POST with JSON bodies
 * (check-comment, a GET, lives with the v3 routes). The spec lists these paths without
 * parameters, so both profiles serve production's fields.
 */
import type { RouteDef, SimContext } from './context.ts';
import { decodeCursor, encodeCursor } from './cursors.ts';
import { badRequest, isNumericId, notFound } from './http-utils.ts';
import { keysetPageDesc } from './paging.ts';
import { cursorParam, reqParam, tweetFromParam, userFromParams } from './params.ts';
import { plainTime } from './time-format.ts';

const SIDE_1 = { username: 'username_1', id: 'user_id_1', link: 'user_link_1' } as const;
const SIDE_2 = { username: 'username_2', id: 'user_id_2', link: 'user_link_2' } as const;
/** check-retweet scans this many of the tweet's retweets per call. */
export const RETWEET_SCAN = 100;

/** Sets key to value; a null is written only under explicitNulls. */
function withNull(ctx: SimContext, out: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== null || ctx.quirks.explicitNulls) out[key] = value;
}

/** Does side 2 follow side 1? A private side 2 hides its follows. */
function checkFollow(ctx: SimContext): unknown {
  const followed = userFromParams(ctx, SIDE_1, { allowProtected: true });
  const checked = userFromParams(ctx, SIDE_2, { allowProtected: true });
  const follow = !checked.protected && ctx.world.followsOf(checked.index).includes(followed.index);
  return { follow, user_protected: checked.protected };
}

/** Scans up to 100 of the tweet's retweets, newest first, for one by the user; the cursor continues. */
function checkRetweet(ctx: SimContext): unknown {
  const index = tweetFromParam(ctx);
  const user = userFromParams(ctx, undefined, { allowProtected: true });
  const out: Record<string, unknown> = { retweet: false, user_protected: user.protected };
  if (user.protected) {
    withNull(ctx, out, 'next_cursor', null);
    return out;
  }
  const scope = `v3/check-retweet:${ctx.world.tweets.idString(index)}:${user.id}`;
  const state = decodeCursor('opaque', scope, cursorParam(ctx));
  const page = keysetPageDesc(ctx.world.retweetsOf(index), state, RETWEET_SCAN);
  out.retweet = page.items.some((j) => ctx.world.tweets.author(j) === user.index);
  const next = !out.retweet && page.next ? encodeCursor('opaque', scope, { ...page.next, p: (state?.p ?? 0) + 1 }) : null;
  withNull(ctx, out, 'next_cursor', next);
  return out;
}

/** The user's newest quote or retweet of the tweet: status quoted | retweet | not_found. */
function checkQuoted(ctx: SimContext): unknown {
  const index = tweetFromParam(ctx);
  const user = userFromParams(ctx, undefined, { allowProtected: true });
  const t = ctx.world.tweets;
  let status = 'not_found';
  let date: string | null = null;
  let text: string | null = null;
  const own = user.protected ? [] : ctx.world.tweetsByAuthor(user.index);
  for (let k = own.length - 1; k >= 0; k--) {
    const j = own[k]!;
    if (t.quoted(j) === index || t.retweeted(j) === index) {
      status = t.quoted(j) === index ? 'quoted' : 'retweet';
      date = plainTime(t.createdAtMs(j));
      text = status === 'quoted' ? t.text(j) : null;
      break;
    }
  }
  const out: Record<string, unknown> = { status };
  withNull(ctx, out, 'date', date);
  withNull(ctx, out, 'text', text);
  out.user_protected = user.protected;
  return out;
}

function checkCommunityMember(ctx: SimContext): unknown {
  const id = reqParam(ctx, 'community_id').trim();
  if (!isNumericId(id)) throw badRequest('community_id must be a numeric community id');
  const community = ctx.world.communityById(id);
  if (!community) throw notFound(`community not found: ${id}`);
  const user = userFromParams(ctx, undefined, { allowProtected: true });
  return { is_member: community.members.includes(user.index) };
}

export const checkRoutes: RouteDef[] = [
  { method: 'POST', path: '/v3/check-follow', empty: () => ({ follow: false, user_protected: false }), handler: checkFollow },
  {
    method: 'POST',
    path: '/v3/check-retweet',
    empty: () => ({ retweet: false, user_protected: false, next_cursor: null }),
    handler: checkRetweet,
  },
  {
    method: 'POST',
    path: '/v3/check-quoted',
    empty: () => ({ status: 'not_found', date: null, text: null, user_protected: false }),
    handler: checkQuoted,
  },
  { method: 'POST', path: '/v3/check-community-member', empty: () => ({ is_member: false }), handler: checkCommunityMember },
];
