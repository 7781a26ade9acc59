/**
 * v3 and v2 tweets (with v2's embedded quoted/retweeted objects) → CanonicalTweet. `raw` is the
 * item exactly as it came off the wire, unknown fields included; the parsed value is only used to
 * read fields.
 */
import type { CanonicalTweet, CanonicalUser, EngagementCounts, TweetEntity } from './canonical.ts';
import { normalizeUserV2Embedded, normalizeUserV3 } from './normalize-user.ts';
import type { TweetV3 } from './schemas/tweet-v3.ts';
import { countOf, idOrNull, idSchema, orNull, validElements, type sharedTweetCounts } from './schemas/common.ts';
import { describeIssues, type Quarantined } from './page.ts';
import { tweetV3Schema } from './schemas/tweet-v3.ts';
import { userV3Schema } from './schemas/user-v3.ts';
import type { TweetV2, TweetV2Embedded } from './schemas/tweet-v2.ts';
import { collectUrls, extractCashtags, extractHashtags, extractMentions, isMediaEntity } from './text-entities.ts';

export {
  normalizeBasicAccount,
  normalizeFollowerV3,
  normalizeTopFollower,
  normalizeNewFollower,
  normalizeReducedUser,
  normalizeUserV2Embedded,
  normalizeUserV3,
} from './normalize-user.ts';

type WireEntity = { link?: string | null | undefined; preview?: string | null | undefined; type?: string | null | undefined };

const isTextOrNone = (value: unknown): boolean => value === null || value === undefined || typeof value === 'string';

/**
 * An element of `entities` that can be read: an object whose link, preview and type are each a
 * string, null or absent (unknown fields allowed). Any other element is left out of the tweet's
 * entities, media and urls; the tweet's raw keeps it.
 */
function isWireEntity(value: unknown): value is WireEntity {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return isTextOrNone(e.link) && isTextOrNone(e.preview) && isTextOrNone(e.type);
}

// Module scope, not a closure per call: see plainColumns in src/store/db.ts.
const toEntity = (e: WireEntity): TweetEntity => ({ type: e.type ?? null, link: e.link ?? null, preview: e.preview ?? null });

function entitiesOf(entities: readonly unknown[] | null | undefined): TweetEntity[] {
  return entities ? validElements(entities, isWireEntity).map(toEntity) : [];
}

function field(raw: unknown, name: string): unknown {
  return raw && typeof raw === 'object' ? (raw as Record<string, unknown>)[name] : undefined;
}

/** The text-derived parts every source shares. */
function textParts(fullText: string, entities: TweetEntity[]) {
  return {
    hashtags: extractHashtags(fullText),
    cashtags: extractCashtags(fullText),
    mentions: extractMentions(fullText),
    urls: collectUrls(fullText, entities),
    media: entities.filter(isMediaEntity),
    entities,
  };
}

/**
 * How many embedded levels (a quote of a quote of…) are normalised into tweets; below that only
 * the id is kept. Production embeds one level; the cap keeps a hostile chain from costing a
 * recursion per level and a row per level in the page transaction.
 */
export const MAX_EMBEDDED_DEPTH = 3;

const NO_EMBEDDED: { id: string | null; tweet: CanonicalTweet | null } = Object.freeze({ id: null, tweet: null });

/**
 * An embedded quoted/retweeted tweet: when the object parses as a full v3 tweet (and the chain is
 * not too deep) it is normalised, otherwise only its id is kept.
 */
function embeddedV3(raw: unknown, depth: number, parts: Quarantined[] | undefined): { id: string | null; tweet: CanonicalTweet | null } {
  if (raw === null || raw === undefined) return NO_EMBEDDED;
  if (depth <= MAX_EMBEDDED_DEPTH) {
    const full = tweetV3Schema.safeParse(raw);
    if (full.success) return { id: full.data.id, tweet: normalizeTweetV3(full.data, raw, parts, depth) };
  }
  const id = idSchema.safeParse(field(raw, 'id'));
  return { id: id.success ? id.data : null, tweet: null };
}

/**
 * The embedded author of a v3 tweet, validated on its own: when it does not parse as a v3 User the
 * tweet loses the profile, not itself. The profile goes to `parts` (the page's quarantine) with
 * the reason; the tweet's raw keeps it as it came.
 */
function authorV3(raw: unknown, tweetId: string, parts: Quarantined[] | undefined): CanonicalUser | null {
  if (raw === null || raw === undefined) return null;
  const parsed = userV3Schema.safeParse(raw);
  if (parsed.success) return normalizeUserV3(parsed.data, raw);
  parts?.push({ reason: `author of tweet ${tweetId}: ${describeIssues(parsed.error)}`, payload: raw });
  return null;
}

/** The id of an author whose profile was refused, when that id itself is valid. */
function refusedAuthorId(raw: unknown): string | null {
  if (raw === null || raw === undefined) return null;
  const id = idSchema.safeParse(field(raw, 'id'));
  return id.success ? id.data : null;
}

type SharedCounts = { [K in keyof typeof sharedTweetCounts]: number | null };

/** The counts v2 and v3 tweets name alike (`sharedTweetCounts`), in canonical names. */
function sharedCounts(tweet: SharedCounts): Omit<EngagementCounts, 'likeCount'> {
  return {
    retweetCount: tweet.retweet_count,
    replyCount: tweet.reply_count,
    quoteCount: tweet.quote_count,
    bookmarkCount: tweet.bookmark_count,
    viewCount: tweet.view_count,
  };
}

/** A tweet's author fields: the embedded profile and its id (null when the answer had none). */
function authored(author: CanonicalUser | null): Pick<CanonicalTweet, 'author' | 'authorId'> {
  return { authorId: author?.id ?? null, author };
}

/**
 * `parts` takes an author refused on its own (authorV3). `depth` is 0 for a page's own tweet and
 * counts embedding levels below it. One literal in the
 * canonical key order (no spread of helper objects): 20 of these a page, plus their authors.
 */
export function normalizeTweetV3(tweet: TweetV3, raw: unknown, parts?: Quarantined[], depth = 0): CanonicalTweet {
  const entities = entitiesOf(tweet.entities);
  const userRaw = field(raw, 'user');
  const author = authorV3(userRaw, tweet.id, parts);
  const quoted = embeddedV3(field(raw, 'quoted_status'), depth + 1, parts);
  const retweeted = embeddedV3(field(raw, 'retweeted_status'), depth + 1, parts);
  const fullText = tweet.full_text ?? '';
  const inReplyToTweetId = idOrNull(tweet.in_reply_to_tweet_id);
  return {
    id: tweet.id,
    authorId: author === null ? refusedAuthorId(userRaw) : author.id,
    author,
    fullText,
    createdAt: tweet.created_at,
    lang: orNull(tweet.lang),
    conversationId: idOrNull(tweet.conversation_id_str),
    isReply: tweet.is_reply ?? inReplyToTweetId !== null,
    inReplyToTweetId,
    inReplyToUsername: orNull(tweet.in_reply_to_username),
    isQuoteStatus: tweet.is_quote_status ?? quoted.id !== null,
    isRepliesLimited: orNull(tweet.is_replies_limited),
    quotedTweetId: quoted.id,
    retweetedTweetId: retweeted.id,
    quoted: quoted.tweet,
    retweeted: retweeted.tweet,
    likeCount: countOf(tweet.likes_count),
    retweetCount: countOf(tweet.retweet_count),
    replyCount: countOf(tweet.reply_count),
    quoteCount: countOf(tweet.quote_count),
    bookmarkCount: countOf(tweet.bookmark_count),
    viewCount: countOf(tweet.view_count),
    hashtags: extractHashtags(fullText),
    cashtags: extractCashtags(fullText),
    mentions: extractMentions(fullText),
    urls: collectUrls(fullText, entities),
    media: entities.length === 0 ? [] : entities.filter(isMediaEntity),
    entities,
    source: 'v3',
    raw,
  };
}

/**
 * v2's embedded quoted/retweeted object carries only created_at, counts, text and author; without
 * a creation time it cannot be a CanonicalTweet (createdAt is required), so only the id is kept.
 */
function normalizeTweetV2Embedded(tweet: TweetV2Embedded, raw: unknown): CanonicalTweet | null {
  if (tweet.created_at === null) return null;
  const fullText = tweet.full_text ?? '';
  const author = tweet.user ? normalizeUserV2Embedded(tweet.user, field(raw, 'user')) : null;
  return {
    id: tweet.id_str,
    ...authored(author),
    fullText,
    createdAt: tweet.created_at,
    lang: null,
    conversationId: null,
    isReply: false,
    inReplyToTweetId: null,
    inReplyToUsername: null,
    isQuoteStatus: false,
    isRepliesLimited: null,
    quotedTweetId: null,
    retweetedTweetId: null,
    quoted: null,
    retweeted: null,
    likeCount: tweet.favorite_count,
    retweetCount: tweet.retweet_count,
    replyCount: null,
    quoteCount: tweet.quote_count,
    bookmarkCount: null,
    viewCount: null,
    ...textParts(fullText, []),
    source: 'v2-embedded',
    raw,
  };
}

export function normalizeTweetV2(tweet: TweetV2, raw: unknown): CanonicalTweet {
  const entities = entitiesOf(tweet.entities);
  const author = tweet.user ? normalizeUserV2Embedded(tweet.user, field(raw, 'user')) : null;
  const quoted = tweet.quoted_status ? normalizeTweetV2Embedded(tweet.quoted_status, field(raw, 'quoted_status')) : null;
  const retweeted = tweet.retweeted_status
    ? normalizeTweetV2Embedded(tweet.retweeted_status, field(raw, 'retweeted_status'))
    : null;
  return {
    id: tweet.id_str,
    ...authored(author),
    fullText: tweet.full_text,
    createdAt: tweet.created_at,
    lang: null,
    conversationId: tweet.conversation_id_str,
    isReply: tweet.in_reply_to_status_id_str !== null,
    inReplyToTweetId: tweet.in_reply_to_status_id_str,
    inReplyToUsername: null,
    isQuoteStatus: tweet.is_quote_status ?? tweet.quoted_status != null,
    isRepliesLimited: null,
    quotedTweetId: tweet.quoted_status?.id_str ?? null,
    retweetedTweetId: tweet.retweeted_status?.id_str ?? null,
    quoted,
    retweeted,
    likeCount: tweet.favorite_count,
    ...sharedCounts(tweet),
    ...textParts(tweet.full_text, entities),
    source: 'v2',
    raw,
  };
}
