/**
 * Compiles the AST into a predicate over tweet indices, bound to one world and one "now".
 * Handles and ids are resolved once here, not per tweet; an unknown handle, list or tweet id
 * compiles to a predicate that matches nothing.
 */
import { TweetFlag, type World } from '../model.ts';
import type { FilterName, QueryNode } from './ast.ts';
import { stem, type TweetTextMemo } from './text.ts';

export type Predicate = (i: number) => boolean;

/** card_name: matches only recent tweets (the spec: "roughly the last 7 to 8 days"). */
export const CARD_WINDOW_MS = 8 * 86_400_000;

const POLL_CARDS = new Set(['poll2choice_text_only', 'poll3choice_text_only', 'poll4choice_text_only', 'poll2choice_image']);

export interface CompileContext {
  readonly world: World;
  readonly nowMs: number;
  readonly memo: TweetTextMemo;
}

const NEVER: Predicate = () => false;

export function compileNode(node: QueryNode, ctx: CompileContext): Predicate {
  const { world, memo } = ctx;
  const t = world.tweets;
  switch (node.kind) {
    case 'and': {
      const parts = node.children.map((child) => compileNode(child, ctx));
      return (i) => parts.every((p) => p(i));
    }
    case 'or': {
      const parts = node.children.map((child) => compileNode(child, ctx));
      return (i) => parts.some((p) => p(i));
    }
    case 'not': {
      const inner = compileNode(node.child, ctx);
      return (i) => !inner(i);
    }
    case 'word': {
      if (node.exact) {
        const word = node.word;
        return (i) => memo.lower(i).includes(word) && memo.words(i).includes(word);
      }
      const root = stem(node.word);
      return (i) => memo.lower(i).includes(root) && memo.stems(i).has(root);
    }
    case 'phrase':
      return phrasePredicate(node.words, memo);
    case 'hashtag': {
      const tag = node.tag;
      return (i) => t.hashtags(i).includes(tag);
    }
    case 'cashtag': {
      const tag = node.tag;
      return (i) => t.cashtags(i).includes(tag);
    }
    case 'mention': {
      const user = world.userByHandle(node.handle);
      if (user === undefined) return NEVER;
      return (i) => t.mentions(i).includes(user.index);
    }
    case 'from': {
      const user = world.userByHandle(node.handle);
      if (user === undefined) return NEVER;
      return (i) => t.author(i) === user.index;
    }
    case 'to': {
      const user = world.userByHandle(node.handle);
      if (user === undefined) return NEVER;
      return (i) => {
        const parent = t.inReplyTo(i);
        return parent >= 0 && t.author(parent) === user.index;
      };
    }
    case 'list': {
      const list = world.listById(node.listId);
      if (list === undefined) return NEVER;
      const members = new Set(list.members);
      return (i) => members.has(t.author(i));
    }
    case 'filter':
      return filterPredicate(node.filter, world);
    case 'includeNativeRetweets':
      // Not a condition on the tweet: plan.ts removes it and lifts the default exclusion.
      return () => true;
    case 'minCount': {
      const min = node.min;
      if (node.metric === 'faves') return (i) => t.likes(i) >= min;
      if (node.metric === 'retweets') return (i) => t.retweets(i) >= min;
      return (i) => t.replies(i) >= min;
    }
    case 'card':
      return cardPredicate(node.name, ctx);
    case 'quotedTweetId': {
      const target = t.indexOfId(BigInt(node.id));
      if (target < 0) return NEVER;
      return (i) => t.quoted(i) === target;
    }
    case 'quotedUserId': {
      const user = world.userById(node.id);
      if (user === undefined) return NEVER;
      return (i) => {
        const q = t.quoted(i);
        return q >= 0 && t.author(q) === user.index;
      };
    }
    case 'conversationId': {
      const root = t.indexOfId(BigInt(node.id));
      if (root < 0) return NEVER;
      return (i) => t.conversation(i) === root;
    }
    case 'lang': {
      const code = node.code;
      return (i) => t.lang(i).toLowerCase() === code;
    }
    case 'source': {
      const client = node.client;
      return (i) => t.source(i).toLowerCase() === client;
    }
    case 'url':
    case 'cardLink':
      return urlPredicate(node.domain, world);
    case 'timeBound': {
      const ms = node.ms;
      return node.side === 'since' ? (i) => t.createdAtMs(i) >= ms : (i) => t.createdAtMs(i) < ms;
    }
    case 'withinTime': {
      const from = ctx.nowMs - node.seconds * 1000;
      return (i) => t.createdAtMs(i) >= from;
    }
    case 'idBound': {
      const id = BigInt(node.id);
      return node.side === 'since' ? (i) => t.id(i) > id : (i) => t.id(i) <= id;
    }
    case 'geo':
      return geoPredicate(node.operator, node.value, world);
  }
}

function phrasePredicate(words: readonly (string | null)[], memo: TweetTextMemo): Predicate {
  const longest = words.reduce<string>((best, w) => (w !== null && w.length > best.length ? w : best), '');
  const n = words.length;
  return (i) => {
    if (!memo.lower(i).includes(longest)) return false;
    const tw = memo.words(i);
    outer: for (let start = 0; start + n <= tw.length; start += 1) {
      for (let k = 0; k < n; k += 1) {
        const w = words[k];
        if (w !== null && tw[start + k] !== w) continue outer;
      }
      return true;
    }
    return false;
  };
}

function filterPredicate(filter: FilterName, world: World): Predicate {
  const t = world.tweets;
  const users = world.users;
  const hasMedia = (i: number, test: (m: ReturnType<typeof t.media>[number]) => boolean): boolean => t.media(i).some(test);
  switch (filter) {
    case 'media':
      return (i) => t.media(i).length > 0;
    case 'images':
      return (i) => hasMedia(i, (m) => m.type === 'photo');
    case 'platformimg':
      return (i) => hasMedia(i, (m) => m.type === 'photo' && m.native);
    case 'videos':
      return (i) => hasMedia(i, (m) => m.type === 'video');
    case 'native_video':
      return (i) => hasMedia(i, (m) => m.type === 'video' && m.native);
    case 'consumer_video':
      return (i) => (t.flags(i) & TweetFlag.PRO_VIDEO) === 0 && hasMedia(i, (m) => m.type === 'video' && m.native);
    case 'pro_video':
      return (i) => (t.flags(i) & TweetFlag.PRO_VIDEO) !== 0;
    case 'spaces':
      return (i) => (t.flags(i) & TweetFlag.SPACES) !== 0;
    case 'links':
      return (i) => t.urls(i).length > 0;
    case 'replies':
      return (i) => t.inReplyTo(i) >= 0;
    case 'nativeretweets':
      return (i) => t.retweeted(i) >= 0;
    case 'retweets':
      // Native retweets plus old-style "RT @handle:" copies typed by hand.
      return (i) => t.retweeted(i) >= 0 || t.text(i).startsWith('RT @');
    case 'quote':
      return (i) => t.quoted(i) >= 0;
    case 'news':
      return (i) => (t.flags(i) & TweetFlag.NEWS) !== 0;
    case 'safe':
      return (i) => (t.flags(i) & TweetFlag.SAFE) !== 0;
    case 'hashtags':
      return (i) => t.hashtags(i).length > 0;
    case 'mentions':
      return (i) => t.mentions(i).length > 0;
    case 'verified':
      return (i) => users[t.author(i)]?.verified === true;
    case 'blue_verified':
      return (i) => users[t.author(i)]?.blueVerified === true;
    case 'has_engagement':
      return (i) => t.likes(i) + t.retweets(i) + t.replies(i) + t.quotes(i) > 0;
  }
}

function cardPredicate(name: string, ctx: CompileContext): Predicate {
  const t = ctx.world.tweets;
  const from = ctx.nowMs - CARD_WINDOW_MS;
  let card: Predicate;
  if (POLL_CARDS.has(name)) card = (i) => (t.flags(i) & TweetFlag.POLL) !== 0;
  else if (name === 'animated_gif') card = (i) => t.media(i).some((m) => m.type === 'animated_gif');
  else if (name === 'summary' || name === 'summary_large_image') card = (i) => t.urls(i).length > 0;
  else return NEVER; // audio, player, promo_*: the world has no such cards.
  return (i) => t.createdAtMs(i) >= from && card(i);
}

function urlPredicate(domain: string, world: World): Predicate {
  const t = world.tweets;
  const hyphenated = domain.replaceAll('_', '-');
  return (i) =>
    t.urls(i).some((u) => {
      const lower = u.toLowerCase();
      return lower.includes(hyphenated) || lower.includes(domain);
    });
}

function geoPredicate(operator: string, value: string, world: World): Predicate {
  const t = world.tweets;
  if (operator !== 'near') return (i) => (t.flags(i) & TweetFlag.HAS_GEO) !== 0;
  // The world has no coordinates; the platform falls back to the author's profile location.
  const place = value.replaceAll('_', ' ').toLowerCase();
  const users = world.users;
  return (i) => users[t.author(i)]?.location.toLowerCase().includes(place) ?? false;
}
