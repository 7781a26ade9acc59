/** Result types of the non-paged endpoints. */
import type { CanonicalTweet, CanonicalUser } from './canonical.ts';
import { readOne, EnvelopeError } from './page.ts';
import { checkCommentSchema, checkQuotedSchema } from './schemas/check.ts';
import { spaceSchema, type SpaceWire } from './schemas/space.ts';
import { usageSchema } from './schemas/usage.ts';
import { normalizeUserV3 } from './normalize.ts';
import type { ItemReader } from './page.ts';
import type { z } from 'zod';

/** A follower record of new-followers-7d / new-following-7d. */
export interface DatedUser {
  user: CanonicalUser;
  /** When the follow started (`followerDate`). */
  followedAt: Date | null;
}

/** A record of top-followers / top-following. */
export interface ScoredUser {
  user: CanonicalUser;
  score: number | null;
}

export interface CommentCheck {
  commented: boolean;
  /** The comment itself when `commented` is true and the service sent it. */
  tweet: CanonicalTweet | null;
  raw: unknown;
}

export interface QuoteCheck {
  /** When the user quoted/retweeted (check-quoted's `YYYY-MM-DD HH:MM:SS`, UTC). */
  date: Date | null;
  /** v3 documents `quoted`, `retweet` and `not_found`; others pass through as sent. */
  status: string | null;
  text: string | null;
  userProtected: boolean | null;
  raw: unknown;
}

export interface KeyUsage {
  /** Production: this period's allotment (the spec: requests used); null when the answer has none. */
  keyRequests: number | null;
  remainingRequests: number;
  /** Production: requests used over all periods (the spec: the plan's quota); null when absent. */
  totalRequests: number | null;
  validUntil: Date | null;
  raw: unknown;
}

export interface Space extends Omit<SpaceWire, 'creator'> {
  creator: CanonicalUser | null;
  raw: unknown;
}

export function readCommentCheck<S extends z.ZodType>(json: unknown, tweetReader: ItemReader<S, CanonicalTweet>): CommentCheck {
  const parsed = checkCommentSchema.safeParse(json);
  if (!parsed.success) throw new EnvelopeError(parsed.error.issues[0]?.message ?? 'not a check-comment answer');
  const tweetJson = parsed.data.tweet;
  const tweet = tweetJson === undefined || tweetJson === null ? null : readOne(tweetJson, tweetReader);
  return { commented: parsed.data.commented, tweet, raw: json };
}

export function readQuoteCheck(json: unknown): QuoteCheck {
  return readOne(json, {
    schema: checkQuotedSchema,
    normalize: (q, raw) => ({ date: q.date, status: q.status, text: q.text, userProtected: q.user_protected, raw }),
  });
}

export function readUsage(json: unknown): KeyUsage {
  return readOne(json, {
    schema: usageSchema,
    normalize: (u, raw) => ({
      keyRequests: u.key_requests,
      remainingRequests: u.remaining_requests,
      totalRequests: u.total_requests,
      validUntil: u.valid_until,
      raw,
    }),
  });
}

export function readSpace(json: unknown): Space {
  return readOne(json, {
    schema: spaceSchema,
    normalize: (s, raw) => {
      const rawCreator = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).creator : undefined;
      return { ...s, creator: s.creator ? normalizeUserV3(s.creator, rawCreator) : null, raw };
    },
  });
}
