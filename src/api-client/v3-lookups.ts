/** v3 single-object lookups: article, trends, place (a Space), key usage, identifier conversions. */
import { z } from 'zod';
import type { CanonicalUser, EngagementCounts } from './canonical.ts';
import type { CallOptions, Execute } from './executor.ts';
import { handleInput, idOrLinkInput, linkInput, userIdInput, validateInput } from './input.ts';
import { normalizeUserV3 } from './normalize.ts';
import { readOne, readPage, type Page } from './page.ts';
import { readSpace, readUsage, type KeyUsage, type Space } from './results.ts';
import { articleSchema } from './schemas/article.ts';
import { handleAnswerSchema, idAnswerSchema } from './schemas/misc.ts';
import { spaceIdSchema } from './schemas/space.ts';
import { trendSchema } from './schemas/trend.ts';

/** `viewCount` comes from `views_count` (plural on articles). */
export interface Article extends EngagementCounts {
  fullText: string | null;
  previewText: string | null;
  coverImageUrl: string | null;
  publishedAt: Date | null;
  author: CanonicalUser | null;
  raw: unknown;
}

/** An article by its article/tweet URL or the tweet id. */
export async function article(execute: Execute, tweetLink: string, options?: CallOptions): Promise<Article> {
  const link = validateInput(idOrLinkInput, tweetLink, 'POST /v3/article');
  return execute(
    {
      method: 'POST',
      route: '/v3/article',
      body: { tweet_link: link },
      read: (json) =>
        readOne(json, {
          schema: articleSchema,
          normalize: (a, raw): Article => ({
            fullText: a.full_text,
            previewText: a.preview_text,
            coverImageUrl: a.cover_image_url,
            publishedAt: a.published_at,
            likeCount: a.likes_count,
            retweetCount: a.retweet_count,
            replyCount: a.reply_count,
            quoteCount: a.quote_count,
            bookmarkCount: a.bookmark_count,
            viewCount: a.views_count,
            author: a.author ? normalizeUserV3(a.author, (raw as { author?: unknown }).author) : null,
            raw,
          }),
        }),
    },
    options,
  );
}

export interface Trend {
  name: string;
  query: string | null;
  url: string | null;
}

const trendsInput = z.object({ woeid: z.number().int().positive() }).strict();
export type TrendsParams = z.input<typeof trendsInput>;

/** Trends of a place named by its WOEID (an integer; 1 is worldwide). One page, no cursor. */
export async function trends(execute: Execute, params: TrendsParams, options?: CallOptions): Promise<Page<Trend>> {
  const p = validateInput(trendsInput, params, 'GET /v3/trends');
  return execute(
    {
      method: 'GET',
      route: '/v3/trends',
      query: { woeid: p.woeid },
      read: (json) => readPage(json, ['trends'], { schema: trendSchema, normalize: (t): Trend => ({ name: t.name, query: t.query, url: t.url }) }),
    },
    options,
  );
}

const placeInput = z.union([z.object({ id: spaceIdSchema }).strict(), z.object({ link: linkInput }).strict()]);
export type PlaceParams = z.input<typeof placeInput>;

/** An audio Space by id or link. */
export async function place(execute: Execute, params: PlaceParams, options?: CallOptions): Promise<Space> {
  const p = validateInput(placeInput, params, 'GET /v3/place');
  const query = 'id' in p ? { id: p.id } : { link: p.link };
  return execute({ method: 'GET', route: '/v3/place', query, read: readSpace }, options);
}

export async function keyUsageInfo(execute: Execute, options?: CallOptions): Promise<KeyUsage> {
  return execute({ method: 'GET', route: '/v3/key-usage-info', read: readUsage }, options);
}

export async function usernameToId(execute: Execute, handle: string, options?: CallOptions): Promise<string> {
  const h = validateInput(handleInput, handle, 'GET /v3/username-to-id/{user_handle}');
  return execute(
    {
      method: 'GET',
      route: '/v3/username-to-id/{user_handle}',
      path: `/v3/username-to-id/${encodeURIComponent(h)}`,
      read: (json) => readOne(json, { schema: idAnswerSchema, normalize: (a) => a.id }),
    },
    options,
  );
}

export async function idToUsername(execute: Execute, userId: string, options?: CallOptions): Promise<string> {
  const id = validateInput(userIdInput, userId, 'GET /v3/id-to-username/{user_id}');
  return execute(
    {
      method: 'GET',
      route: '/v3/id-to-username/{user_id}',
      path: `/v3/id-to-username/${id}`,
      read: (json) => readOne(json, { schema: handleAnswerSchema, normalize: (handle) => handle }),
    },
    options,
  );
}

export async function linkToId(execute: Execute, link: string, options?: CallOptions): Promise<string> {
  const l = validateInput(linkInput, link, 'GET /v3/link-to-id');
  return execute(
    {
      method: 'GET',
      route: '/v3/link-to-id',
      query: { link: l },
      read: (json) => readOne(json, { schema: idAnswerSchema, normalize: (a) => a.id }),
    },
    options,
  );
}
