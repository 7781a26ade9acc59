/**
 * v3 shapes, rendered straight from the world's accessors (no intermediate objects), so a page of
 * 20 tweets with their authors costs well under a millisecond on the large world.
 */
import type { SimContext } from './context.ts';
import { TweetFlag, type SimSpace, type SimUser, type World } from './model.ts';
import { isoTime, legacyTime } from './time-format.ts';

type Json = Record<string, unknown>;

export function isVisibleUser(user: SimUser | undefined): user is SimUser {
  return user !== undefined && !user.protected && !user.suspended && !user.deleted;
}

/** Suspended and deleted accounts vanish from listings; protected ones still appear there. */
export function isListedUser(user: SimUser | undefined): user is SimUser {
  return user !== undefined && !user.suspended && !user.deleted;
}

export function isVisibleTweet(world: World, index: number): boolean {
  return index >= 0 && index < world.tweets.count && isVisibleUser(world.users[world.tweets.author(index)]);
}

export function v3Time(ctx: SimContext, ms: number): string {
  return ctx.quirks.legacyTimestamps ? legacyTime(ms) : isoTime(ms);
}

/** Sets `key` to value, or for null: to null under explicitNulls, else leaves it out. */
function put(ctx: SimContext, obj: Json, key: string, value: unknown): void {
  if (value !== null || ctx.quirks.explicitNulls) obj[key] = value;
}

function listOrNull(ctx: SimContext, values: readonly string[]): string[] | null {
  return values.length > 0 ? [...values] : ctx.quirks.explicitNulls ? null : [];
}

export function renderUserV3(ctx: SimContext, u: SimUser): Json {
  const out: Json = {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    description: u.description,
    location: u.location,
    created_at: v3Time(ctx, u.createdAtMs),
  };
  put(ctx, out, 'bio_urls', listOrNull(ctx, u.bioUrls));
  out.can_dm = u.canDm;
  out.possibly_sensitive = u.possiblySensitive;
  out.protected = u.protected;
  out.verified = u.verified;
  out.favourites_count = u.favouritesCount;
  out.followers_count = u.followersCount;
  out.followings_count = u.followingsCount;
  out.media_count = u.mediaCount;
  out.tweets_count = u.tweetsCount;
  put(ctx, out, 'pinned_tweet_ids', listOrNull(ctx, u.pinnedTweetIds));
  out.profile_image_url = u.profileImageUrl;
  out.profile_background_image_url = u.profileBackgroundImageUrl;
  return out;
}

export function renderReducedUser(u: SimUser): Json {
  return {
    display_name: u.displayName,
    id: u.id,
    profile_image_url: u.profileImageUrl,
    protected: u.protected,
    username: u.username,
    verified: u.verified,
  };
}

/**
 * Media as `{type, link, preview}`, then the tweet's links as `{type: 'url', link, preview}`. A
 * link entity is only ever one of the tweet's own links (`urls`), never one of its media
 * addresses. `production` (the expandedText quirk): media only, photos with `preview: ""`, as
 * the captured answer has them; the links live in full_text instead.
 */
export function renderEntities(world: World, i: number, production = false): Json[] {
  const out: Json[] = [];
  for (const m of world.tweets.media(i)) {
    out.push({ type: m.type, link: m.url, preview: production && m.type === 'photo' ? '' : m.preview });
  }
  if (!production) for (const url of world.tweets.urls(i)) out.push({ type: 'url', link: url, preview: url });
  return out;
}

const SHORT_LINK_RE = /https:\/\/t\.co\/[A-Za-z0-9]+/g;

/**
 * Production's full_text: each t.co link replaced by its expanded address (in order), then the
 * tweet's media addresses appended, space-separated, as the captured real answer shows.
 */
export function expandedText(world: World, i: number): string {
  const t = world.tweets;
  const urls = t.urls(i);
  let k = 0;
  let text = t.text(i).replace(SHORT_LINK_RE, (short) => urls[k++] ?? short);
  for (const m of t.media(i)) if (!text.includes(m.url)) text += ` ${m.url}`;
  return text;
}

/** Nested statuses go two levels deep (a retweet of a quote shows the quoted tweet), no further. */
const MAX_DEPTH = 2;

export function renderTweetV3(ctx: SimContext, i: number, depth = 0): Json {
  const t = ctx.world.tweets;
  const author = ctx.world.users[t.author(i)]!;
  const parent = t.inReplyTo(i);
  const quoted = t.quoted(i);
  const retweeted = t.retweeted(i);
  const out: Json = {
    id: t.idString(i),
    full_text: ctx.quirks.expandedText ? expandedText(ctx.world, i) : t.text(i),
    created_at: v3Time(ctx, t.createdAtMs(i)),
    lang: t.lang(i),
    conversation_id_str: t.idString(t.conversation(i)),
    is_reply: parent >= 0,
  };
  put(ctx, out, 'in_reply_to_tweet_id', parent >= 0 ? t.idString(parent) : null);
  put(ctx, out, 'in_reply_to_username', parent >= 0 ? (ctx.world.users[t.author(parent)]?.username ?? null) : null);
  out.is_quote_status = quoted >= 0;
  out.is_replies_limited = (t.flags(i) & TweetFlag.REPLIES_LIMITED) !== 0;
  out.likes_count = t.likes(i);
  out.retweet_count = t.retweets(i);
  out.quote_count = t.quotes(i);
  out.reply_count = t.replies(i);
  out.bookmark_count = t.bookmarks(i);
  out.view_count = t.views(i);
  out.entities = renderEntities(ctx.world, i, ctx.quirks.expandedText);
  const nested = (j: number): Json | null =>
    j >= 0 && depth < MAX_DEPTH && isVisibleTweet(ctx.world, j) ? renderTweetV3(ctx, j, depth + 1) : null;
  put(ctx, out, 'quoted_status', nested(quoted));
  put(ctx, out, 'retweeted_status', nested(retweeted));
  out.user = renderUserV3(ctx, author);
  if (ctx.quirks.extraFields) {
    out.made_with_ai = false;
    out.paid_partnership = false;
  }
  return out;
}

function participant(u: SimUser, startMs: number): Json {
  return {
    avatar: u.profileImageUrl,
    id: u.id,
    name: u.displayName,
    periscope_user_id: `1${u.id.slice(-12).padStart(12, '0')}`,
    username: u.username,
    is_muted_by_admin: false,
    is_muted_by_guest: false,
    is_verified: u.verified,
    start: startMs,
  };
}

export function renderSpace(ctx: SimContext, s: SimSpace): Json {
  const users = ctx.world.users;
  const people = (indices: readonly number[]): Json[] =>
    indices.flatMap((ix) => (isListedUser(users[ix]) ? [participant(users[ix]!, s.createdAtMs)] : []));
  const admins = people(s.adminIndices);
  const speakers = people(s.speakerIndices);
  const listeners = people(s.listenerIndices);
  const creator = users[s.creatorIndex]!;
  return {
    id: s.id,
    title: s.title,
    state: s.state,
    media_key: s.mediaKey,
    is_subscribed: false,
    created_at: s.createdAtMs,
    updated_at: s.updatedAtMs,
    scheduled_start: s.scheduledStartMs,
    creator: renderUserV3(ctx, creator),
    participants: { admins, listeners, speakers, total: admins.length + speakers.length + listeners.length },
    settings: {
      conversation_controls: 0,
      disallow_join: false,
      is_employee_only: false,
      is_locked: false,
      is_muted: false,
      is_space_available_for_clipping: false,
      is_space_available_for_replay: s.state === 'Ended',
      no_incognito: false,
      max_admin_capacity: 10,
      max_guest_sessions: 10,
      narrow_cast_space_type: 0,
    },
    stats: {
      total_live_listeners: s.totalLiveListeners,
      total_participants: admins.length + speakers.length + listeners.length,
      total_replay_watched: s.totalReplayWatched,
    },
  };
}
