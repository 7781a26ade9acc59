/**
 * Page parsing with quarantine. The envelope is validated strictly (a page without its items array
 * or with an unusable cursor is an invalid response); each item is validated on its own, and one
 * that fails goes into `quarantined` with the reason, so one odd record never costs a page.
 */
import type { z } from 'zod';
import { arrayEnvelopeSchema, pageEnvelopeSchema } from './schemas/misc.ts';

export interface Quarantined {
  reason: string;
  payload: unknown;
}

export interface Page<T> {
  items: T[];
  /** null on the last page (null, absent or empty next_cursor). */
  nextCursor: string | null;
  /** Items refused whole. */
  quarantined: Quarantined[];
  /**
   * Parts of items that were kept without them (a tweet's author whose profile the user schema
   * refused): quarantined too, but not items of the page.
   */
  refusedParts?: Quarantined[];
}

/**
 * How one item becomes a T: a schema for the wire shape and a normaliser fed the original item.
 * A normaliser that drops a part it cannot read (and keeps the item) reports it in `parts`.
 */
export interface ItemReader<S extends z.ZodType, T> {
  schema: S;
  normalize: (parsed: z.output<S>, raw: unknown, parts: Quarantined[]) => T;
}

export class EnvelopeError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'EnvelopeError';
  }
}

const MAX_REASON = 400;

export function describeIssues(error: z.ZodError): string {
  const text = error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/**
 * Nesting allowed in one item. A v3 tweet is 3 deep (tweet → user → bio_urls), each embedded
 * quoted/retweeted level adds one, so 16 leaves room for a dozen embeddings and unknown fields.
 * Deeper records are refused: they cost stack in every recursive consumer (JSON.stringify, the
 * normaliser, Postgres's jsonb parser inside the page transaction) and carry nothing we store.
 */
export const MAX_ITEM_DEPTH = 16;

/**
 * Whether `value` nests objects/arrays deeper than `max`. Recursive but bounded: it never descends
 * past `max` levels, so a hostile depth costs at most `max` frames. It runs on every item (20 a
 * page, ~60 objects each): without the work list of `{value, depth}` records it takes ~0.005 ms a
 * page instead of ~0.02.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max <= 0) return true;
  const children: readonly unknown[] = Array.isArray(value) ? value : Object.values(value);
  for (let i = 0; i < children.length; i++) {
    const child = children[i];
    if (child !== null && typeof child === 'object' && nestsDeeperThan(child, max - 1)) return true;
  }
  return false;
}

/**
 * What the quarantine keeps of a refused item: the item itself, or for one nested too deeply
 * (which would break the same consumers), its top-level scalar fields only.
 */
function quarantinePayload(item: unknown, tooDeep: boolean): unknown {
  if (!tooDeep || item === null || typeof item !== 'object' || Array.isArray(item)) return tooDeep ? null : item;
  const scalars = Object.entries(item).filter(([, v]) => v === null || typeof v !== 'object');
  return { ...Object.fromEntries(scalars), harvest_truncated: `nesting deeper than ${MAX_ITEM_DEPTH}` };
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/** Validates and normalises one item; any failure is a reason, never a throw. */
function readItem<S extends z.ZodType, T>(item: unknown, reader: ItemReader<S, T>, parts: Quarantined[]): { value: T } | Quarantined {
  if (nestsDeeperThan(item, MAX_ITEM_DEPTH)) {
    return { reason: `nesting deeper than ${MAX_ITEM_DEPTH} levels`, payload: quarantinePayload(item, true) };
  }
  const parsed = reader.schema.safeParse(item);
  if (!parsed.success) return { reason: describeIssues(parsed.error), payload: item };
  const partsBefore = parts.length;
  try {
    return { value: reader.normalize(parsed.data, item, parts) };
  } catch (error) {
    // A normaliser bug or a value the schema let through must cost this item, not its page. The
    // item is quarantined whole, so the parts it refused before failing are not kept twice.
    parts.length = partsBefore;
    return { reason: `could not normalise: ${errorText(error)}`, payload: item };
  }
}

/**
 * Validates one whole object (non-paged answers); throws EnvelopeError when it does not fit. A part
 * the normaliser refuses (a tweet's author) is left out of the value, as on a page, and not kept.
 */
export function readOne<S extends z.ZodType, T>(json: unknown, reader: ItemReader<S, T>): T {
  const read = readItem(json, reader, []);
  if ('value' in read) return read.value;
  throw new EnvelopeError(read.reason);
}

export function readItems<S extends z.ZodType, T>(items: readonly unknown[], reader: ItemReader<S, T>): Omit<Page<T>, 'nextCursor'> {
  const out: T[] = [];
  const quarantined: Quarantined[] = [];
  const refusedParts: Quarantined[] = [];
  for (const item of items) {
    const read = readItem(item, reader, refusedParts);
    if ('value' in read) out.push(read.value);
    else quarantined.push(read);
  }
  return { items: out, quarantined, refusedParts };
}

/** What a page puts in quarantine: the items refused whole, then the parts of kept items. */
export function quarantineOf(page: Pick<Page<unknown>, 'quarantined' | 'refusedParts'>): Quarantined[] {
  return page.refusedParts && page.refusedParts.length > 0 ? [...page.quarantined, ...page.refusedParts] : page.quarantined;
}

/** `{<itemsKey>: [...], next_cursor}`; `itemsKeys` lists accepted names, the first present wins. */
export function readPage<S extends z.ZodType, T>(json: unknown, itemsKeys: readonly string[], reader: ItemReader<S, T>): Page<T> {
  const key = itemsKeys.find((k) => json !== null && typeof json === 'object' && k in json) ?? itemsKeys[0] ?? 'items';
  const envelope = pageEnvelopeSchema(key).safeParse(json);
  if (!envelope.success) throw new EnvelopeError(describeIssues(envelope.error));
  const { [key]: items, next_cursor: nextCursor } = envelope.data as Record<string, unknown>;
  return { ...readItems((items ?? []) as unknown[], reader), nextCursor: nextCursor as string | null };
}

/** A bare JSON array of items (v2 tweet-info-bulk, follows, new-following-7d): one page, no cursor. */
export function readArray<S extends z.ZodType, T>(json: unknown, reader: ItemReader<S, T>): Page<T> {
  const envelope = arrayEnvelopeSchema.safeParse(json);
  if (!envelope.success) throw new EnvelopeError(describeIssues(envelope.error));
  return { ...readItems(envelope.data, reader), nextCursor: null };
}
