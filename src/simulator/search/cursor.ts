/**
 * The continuation state of a walk. It is keyset-based (the last tweet returned, never an
 * offset), so appending tweets between pages can neither repeat nor skip a match. It also
 * freezes the walk's "now" (within_time:, card_name:) and, for popular walks, the table size at
 * the first page, so every page of one walk sees the same set of matches.
 */
import { z } from 'zod';
import { SearchQueryError } from './errors.ts';

const decimal = z.string().regex(/^[0-9]{1,20}$/u);

const stateSchema = z.discriminatedUnion('o', [
  z.object({ v: z.literal(1), o: z.literal('latest'), q: z.string(), now: z.number().int(), last: decimal }),
  z.object({
    v: z.literal(1),
    o: z.literal('popular'),
    q: z.string(),
    now: z.number().int(),
    /** Table size when the walk started: later tweets are not part of it. */
    size: z.number().int().nonnegative(),
    /** Score and id of the last tweet returned. */
    score: z.number().int().nonnegative(),
    last: decimal,
  }),
]);

export type WalkState = z.infer<typeof stateSchema>;

/** FNV-1a of the query and order, so a state cannot continue a different search. */
export function queryFingerprint(query: string, order: string): string {
  let h = 0x811c9dc5;
  const s = `${order}\u0000${query}`;
  for (let i = 0; i < s.length; i += 1) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

export function encodeState(state: WalkState): string {
  return Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');
}

export function decodeState(raw: string, fingerprint: string): WalkState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw new SearchQueryError('the cursor is malformed');
  }
  const result = stateSchema.safeParse(parsed);
  if (!result.success) throw new SearchQueryError('the cursor is malformed');
  if (result.data.q !== fingerprint) throw new SearchQueryError('the cursor belongs to a different query or order');
  return result.data;
}
