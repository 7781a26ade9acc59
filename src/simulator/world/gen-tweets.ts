import { TweetFlag, type SimMedia } from '../model.ts';
import { generateArticles, generateMedia } from './gen-media.ts';
import type { UserTraits } from './gen-users.ts';
import { tableSampler, type Rng } from './random.ts';
import type { SimWorld } from './sim-world.ts';
import type { TweetRow } from './tweet-table.ts';
import { CASHTAGS, CELEBRITIES, HASHTAGS, LANG_WORDS, SEARCH_TERMS, SOURCES, USER_LANGS } from './vocabulary.ts';

const ORIGINAL = 0;
const REPLY = 1;
const QUOTE = 2;
const RETWEET = 3;
const NO_STRINGS: readonly string[] = [];
const NO_MEDIA: readonly SimMedia[] = [];

/** Zipf-weighted word picker over interned tokens. */
function zipf(world: SimWorld, words: readonly string[]): (rng: Rng) => number {
  const ids = Uint32Array.from(words, (w) => world.lexicon.token(w));
  const sample = tableSampler(Float64Array.from(words, (_, r) => 1 / (r + 1)));
  return (rng) => ids[sample(rng)] ?? 0;
}

/**
 * Appends `count` tweets in time order: originals, replies (a few "hot" conversations gather
 * hundreds), quotes and native retweets, with entities, links, media, languages and a
 * heavy-tailed engagement distribution. One reusable row and token buffer keep it allocation-light.
 */
export function generateTweets(world: SimWorld, rng: Rng, traits: UserTraits, count: number, startMs: number, endMs: number): void {
  const users = world.users;
  const table = world.tweets;
  const lex = world.lexicon;
  const pickAuthor = tableSampler(traits.activity, Math.max(1 << 16, users.length * 8));
  const langNames = USER_LANGS.map(([l]) => l);
  const wordOf = langNames.map((l) => zipf(world, LANG_WORDS[l] ?? []));
  const undWord = zipf(world, LANG_WORDS.und ?? []);
  const hashtag = zipf(world, HASHTAGS.map((h) => `#${h}`));
  const cashtag = zipf(world, CASHTAGS.map((c) => `$${c}`));
  const terms = SEARCH_TERMS.map((t) => lex.token(t));
  const rtToken = lex.token('RT');
  const mentionTok = new Int32Array(users.length).fill(-1);
  const rtMentionTok = new Int32Array(users.length).fill(-1);
  const mention = (u: number): number => {
    let t = mentionTok[u] ?? -1;
    if (t < 0) mentionTok[u] = t = lex.token(`@${users[u]?.username ?? ''}`);
    return t;
  };
  const rtMention = (u: number): number => {
    let t = rtMentionTok[u] ?? -1;
    if (t < 0) rtMentionTok[u] = t = lex.token(`@${users[u]?.username ?? ''}:`);
    return t;
  };
  const articles = generateArticles(rng, Math.min(25_000, Math.max(50, Math.floor(count / 40))));
  const articleTok = Uint32Array.from(articles, (a) => lex.token(a.short));
  const visible = Uint8Array.from(users, (u) => (u.protected || u.suspended || u.deleted ? 0 : 1));
  const hotCount = Math.min(50, Math.max(3, Math.round(count / 20_000)));
  const hotRoots: number[] = [];
  // A fixed buffer, not an array reset with length = 0 (which drops its backing store).
  const tokens = new Uint32Array(1024);
  let n = 0;
  const push = (tok: number): void => {
    if (n < tokens.length) tokens[n++] = tok;
  };
  const row: TweetRow = {
    ms: 0, author: 0, tokens, tokenCount: 0, lang: 'en', inReplyTo: -1, quoted: -1, retweeted: -1,
    likes: 0, retweets: 0, replies: 0, quotes: 0, bookmarks: 0, views: 0,
    urls: NO_STRINGS, media: NO_MEDIA, source: '', flags: 0,
  };

  const recentTarget = (i: number, author: number, kind: number): number => {
    for (let attempt = 0; attempt < 4; attempt++) {
      let j = i - 1 - Math.floor(rng.next() * Math.min(i, 5000));
      const original = table.retweeted(j);
      if (original >= 0) j = original;
      if (kind === RETWEET) {
        // Retweets favour popular tweets: the better of two candidates.
        const k = i - 1 - Math.floor(rng.next() * Math.min(i, 5000));
        if (table.retweeted(k) < 0 && table.likes(k) > table.likes(j)) j = k;
      }
      const a = table.author(j);
      if (visible[a] === 1 && (kind !== RETWEET || a !== author)) return j;
    }
    return -1;
  };
  const hotTarget = (): number => {
    const root = hotRoots[Math.floor(rng.next() * hotRoots.length)] ?? -1;
    const replies = world.conversationReplies(root);
    if (replies.length === 0 || rng.chance(0.35)) return root;
    const j = replies[Math.floor(rng.next() * replies.length)] ?? root;
    return visible[table.author(j)] === 1 ? j : root;
  };

  const body = (author: number): void => {
    const lang = traits.lang[author] ?? 0;
    if (rng.chance(0.1)) push(mention(Math.min(CELEBRITIES.length - 1, Math.floor(rng.heavy(0, 5, 1.5)))));
    const first = n;
    if (rng.chance(0.04)) {
      row.lang = 'und';
      for (let k = rng.int(1, 4); k > 0; k--) push(undWord(rng));
    } else {
      row.lang = langNames[lang] ?? 'en';
      const word = wordOf[lang] ?? undWord;
      for (let k = rng.int(4, 16); k > 0; k--) push(word(rng));
    }
    for (const term of terms) {
      if (!rng.chance(0.072)) continue;
      const at = rng.int(first, n);
      push(tokens[at] ?? term);
      tokens[at] = term;
    }
    if (rng.chance(0.25)) for (let k = rng.int(1, 2); k > 0; k--) push(hashtag(rng));
    if (rng.chance(0.04)) push(cashtag(rng));
    if (rng.chance(0.06)) push(mention(pickAuthor(rng)));
    if (rng.chance(0.14)) {
      const a = Math.floor(Math.pow(rng.next(), 2) * articles.length);
      push(articleTok[a] ?? 0);
      row.urls = articles[a]?.expanded ?? NO_STRINGS;
    }
  };

  const engagement = (author: number): void => {
    const likes = Math.min(100_000, rng.heavy(0, 100_000, author < CELEBRITIES.length ? 0.45 : 0.95));
    row.likes = likes;
    row.retweets = Math.floor(likes * rng.next() * 0.3);
    row.replies = Math.floor(likes * rng.next() * 0.05);
    row.quotes = Math.floor(likes * rng.next() * 0.02);
    row.bookmarks = Math.floor(likes * rng.next() * 0.1);
    row.views = likes * rng.int(20, 150) + rng.int(0, 400);
  };

  const flagsOf = (): number => {
    let f = rng.chance(0.93) ? TweetFlag.SAFE : 0;
    if (rng.chance(0.05)) f |= TweetFlag.NEWS;
    if (rng.chance(0.02)) f |= TweetFlag.POLL;
    if (rng.chance(0.01)) f |= TweetFlag.SPACES;
    if (rng.chance(0.01)) f |= TweetFlag.REPLIES_LIMITED;
    if (rng.chance(0.03)) f |= TweetFlag.HAS_GEO;
    if (row.media.some((m) => m.type === 'video') && rng.chance(0.3)) f |= TweetFlag.PRO_VIDEO;
    return f;
  };

  const span = endMs - startMs;
  let lastMs = startMs;
  for (let i = 0; i < count; i++) {
    lastMs = Math.max(lastMs, Math.floor(startMs + (span * (i + rng.next())) / count));
    const author = pickAuthor(rng);
    const r = rng.next();
    let kind = i < 20 ? ORIGINAL : r < 0.12 ? RETWEET : r < 0.19 ? QUOTE : r < 0.41 ? REPLY : ORIGINAL;
    let target = -1;
    if (kind === REPLY && hotRoots.length > 0 && rng.chance(0.3)) target = hotTarget();
    else if (kind !== ORIGINAL) target = recentTarget(i, author, kind);
    if (target < 0) kind = ORIGINAL;

    n = 0;
    row.ms = lastMs;
    row.author = author;
    row.inReplyTo = kind === REPLY ? target : -1;
    row.quoted = kind === QUOTE ? target : -1;
    row.retweeted = kind === RETWEET ? target : -1;
    row.urls = NO_STRINGS;
    row.media = NO_MEDIA;
    row.source = SOURCES[rng.chance(0.8) ? (traits.source[author] ?? 0) : rng.int(0, SOURCES.length - 1)]?.[0] ?? '';
    if (kind === RETWEET) {
      push(rtToken);
      push(rtMention(table.author(target)));
      const original = table.tokensOf(target);
      for (let k = 0; k < original.length; k++) push(original[k] ?? 0);
      row.lang = table.lang(target);
      row.urls = table.urls(target);
      row.media = table.media(target);
      row.flags = table.flags(target);
      row.likes = row.retweets = row.replies = row.quotes = row.bookmarks = row.views = 0;
    } else {
      if (kind === REPLY) push(mention(table.author(target)));
      body(author);
      if (kind !== REPLY && rng.chance(0.12)) row.media = generateMedia(rng);
      engagement(author);
      row.flags = flagsOf();
    }
    row.tokenCount = n;
    world.appendTweet(row, true, false);
    if (kind === ORIGINAL && hotRoots.length < hotCount && i >= (hotRoots.length * count * 0.6) / hotCount && visible[author] === 1) {
      hotRoots.push(i);
    }
  }
}
