/** v2 shapes: older field names, timestamps always in the weekday form. */
import type { SimContext } from './context.ts';
import type { SimUser } from './model.ts';
import { isVisibleTweet, renderEntities } from './render-v3.ts';
import { legacyTime } from './time-format.ts';

type Json = Record<string, unknown>;

function put(ctx: SimContext, obj: Json, key: string, value: unknown): void {
  if (value !== null || ctx.quirks.explicitNulls) obj[key] = value;
}

export function renderUserV2(u: SimUser): Json {
  return {
    avatar: u.profileImageUrl,
    can_dm: u.canDm,
    created_at: legacyTime(u.createdAtMs),
    description: u.description,
    followers_count: u.followersCount,
    friends_count: u.followingsCount,
    id_str: u.id,
    name: u.displayName,
    screen_name: u.username,
    statuses_count: u.tweetsCount,
  };
}

export function renderBasicAccount(u: SimUser): Json {
  return {
    avatar: u.profileImageUrl,
    banner: u.profileBackgroundImageUrl,
    can_dm: u.canDm,
    description: u.description,
    followers_count: u.followersCount,
    friends_count: u.followingsCount,
    id: u.id,
    name: u.displayName,
    register_date: legacyTime(u.createdAtMs),
    screen_name: u.username,
    tweets_count: u.tweetsCount,
    verified: u.verified,
  };
}

export function renderNewFollower(u: SimUser, followedAtMs: number): Json {
  return {
    avatar: u.profileImageUrl,
    banner: u.profileBackgroundImageUrl,
    canDM: u.canDm,
    description: u.description,
    followerDate: legacyTime(followedAtMs),
    followersCount: u.followersCount,
    friendsCount: u.followingsCount,
    id: u.id,
    name: u.displayName,
    protected: u.protected,
    registerDate: legacyTime(u.createdAtMs),
    score: Math.round(Math.log10(1 + u.followersCount) * 100) / 10,
    screeName: u.username,
    statuses_count: u.tweetsCount,
    verified: u.verified,
  };
}

function renderEmbeddedStatus(ctx: SimContext, i: number): Json {
  const t = ctx.world.tweets;
  return {
    created_at: legacyTime(t.createdAtMs(i)),
    favorite_count: t.likes(i),
    full_text: t.text(i),
    id_str: t.idString(i),
    quote_count: t.quotes(i),
    retweet_count: t.retweets(i),
    user: renderUserV2(ctx.world.users[t.author(i)]!),
  };
}

export function renderTweetV2(ctx: SimContext, i: number): Json {
  const t = ctx.world.tweets;
  const parent = t.inReplyTo(i);
  const quoted = t.quoted(i);
  const retweeted = t.retweeted(i);
  const out: Json = {
    id_str: t.idString(i),
    full_text: t.text(i),
    created_at: legacyTime(t.createdAtMs(i)),
    conversation_id_str: t.idString(t.conversation(i)),
  };
  put(ctx, out, 'in_reply_to_status_id_str', parent >= 0 ? t.idString(parent) : null);
  out.is_quote_status = quoted >= 0;
  out.favorite_count = t.likes(i);
  out.retweet_count = t.retweets(i);
  out.quote_count = t.quotes(i);
  out.reply_count = t.replies(i);
  out.bookmark_count = t.bookmarks(i);
  out.view_count = t.views(i);
  out.entities = renderEntities(ctx.world, i);
  put(ctx, out, 'quoted_status', quoted >= 0 && isVisibleTweet(ctx.world, quoted) ? renderEmbeddedStatus(ctx, quoted) : null);
  put(ctx, out, 'retweeted_status', retweeted >= 0 && isVisibleTweet(ctx.world, retweeted) ? renderEmbeddedStatus(ctx, retweeted) : null);
  out.user = renderUserV2(ctx.world.users[t.author(i)]!);
  if (ctx.quirks.extraFields) {
    out.lang = t.lang(i);
    out.source = t.source(i);
  }
  return out;
}
