/** Tweets by id, 100 a request (/v3/tweet-info-bulk): one slice per hundred ids. */
import { z } from 'zod';
import { quarantineOf } from '../../api-client/index.ts';
import type { JobKind, SliceHandler, SliceSpec } from '../kind.ts';
import { snowflakeId as tweetId } from './ids.ts';

export const BULK_SIZE = 100;

/** Ids one hydrate job takes (10,000 requests): a larger list goes in several jobs. */
export const MAX_HYDRATE_IDS = 1_000_000;

export const HydrateJobParams = z.object({ ids: z.array(tweetId).min(1).max(MAX_HYDRATE_IDS) }).strict();
export type HydrateJobParams = z.infer<typeof HydrateJobParams>;

const HydrateSlice = z.object({ ids: z.array(tweetId).min(1).max(BULK_SIZE) });
type HydrateSlice = z.infer<typeof HydrateSlice>;

export const hydrateJob: JobKind<HydrateJobParams> = {
  kind: 'hydrate',
  params: HydrateJobParams,
  priority: 'backfill',
  plan(params) {
    return hydrateSlices(params.ids);
  },
  // The ids are in the slices (100 each); the job row says how many there were.
  recordedParams: (params) => ({ idCount: new Set(params.ids).size }),
};

/** Pure: ids (duplicates dropped) → hydrate slices of at most 100 ids, one request each. */
export function hydrateSlices(ids: readonly string[]): SliceSpec[] {
  const unique = [...new Set(ids)];
  const slices: SliceSpec[] = [];
  for (let i = 0; i < unique.length; i += BULK_SIZE) slices.push({ kind: 'hydrate', params: { ids: unique.slice(i, i + BULK_SIZE) } });
  return slices;
}

export const hydrateSlice: SliceHandler<HydrateSlice> = {
  kind: 'hydrate',
  params: HydrateSlice,
  async fetchPage(p, _cursor, ctx) {
    const page = await ctx.client.tweetInfoBulk(p.ids, ctx.call);
    const quarantined = quarantineOf(page);
    return {
      endpoint: 'POST /v3/tweet-info-bulk',
      tweets: page.items,
      users: [],
      nextCursor: null,
      quarantined,
      itemCount: page.items.length + page.quarantined.length,
      notReturnedIds: notReturned(p.ids, page.items, quarantined),
    };
  },
  afterPage(p, page) {
    // A tweet returned but refused as invalid is quarantined, not missing: counted apart (it read
    // "not returned (deleted, protected or unknown)").
    const found = new Set(page.tweets.map((t) => t.id));
    const missing = (page.notReturnedIds ?? notReturned(p.ids, page.tweets, page.quarantined)).length;
    const invalid = p.ids.filter((id) => !found.has(id)).length - missing;
    const parts = [
      ...(missing > 0 ? [`${missing} of ${p.ids.length} ids not returned (deleted, protected or unknown)`] : []),
      ...(invalid > 0 ? [`${invalid} of ${p.ids.length} returned but invalid (quarantined)`] : []),
    ];
    return parts.length > 0 ? { note: parts.join('; ') } : {};
  },
};

/** The ids asked for that came back neither as a tweet nor as an item refused as invalid. */
function notReturned(ids: readonly string[], tweets: ReadonlyArray<{ id: string }>, quarantined: ReadonlyArray<{ payload: unknown }>): string[] {
  const found = new Set(tweets.map((t) => t.id));
  for (const q of quarantined) {
    const id = payloadId(q.payload);
    if (id !== null) found.add(id);
  }
  return ids.filter((id) => !found.has(id));
}

/** The tweet id a quarantined item carries, if any (`id`, or `id_str`). */
function payloadId(payload: unknown): string | null {
  if (payload === null || typeof payload !== 'object') return null;
  const { id, id_str: idStr } = payload as { id?: unknown; id_str?: unknown };
  const value = typeof id === 'string' ? id : typeof idStr === 'string' ? idStr : null;
  return value;
}
