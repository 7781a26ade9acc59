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
  quarantined: Quarantined[];
}

/** How one item becomes a T: a schema for the wire shape and a normaliser fed the original item. */
export interface ItemReader<S extends z.ZodType, T> {
  schema: S;
  normalize: (parsed: z.output<S>, raw: unknown) => T;
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

/** Validates one whole object (non-paged answers); throws EnvelopeError when it does not fit. */
export function readOne<S extends z.ZodType, T>(json: unknown, reader: ItemReader<S, T>): T {
  const parsed = reader.schema.safeParse(json);
  if (!parsed.success) throw new EnvelopeError(describeIssues(parsed.error));
  return reader.normalize(parsed.data, json);
}

export function readItems<S extends z.ZodType, T>(items: readonly unknown[], reader: ItemReader<S, T>): Omit<Page<T>, 'nextCursor'> {
  const out: T[] = [];
  const quarantined: Quarantined[] = [];
  for (const item of items) {
    const parsed = reader.schema.safeParse(item);
    if (parsed.success) out.push(reader.normalize(parsed.data, item));
    else quarantined.push({ reason: describeIssues(parsed.error), payload: item });
  }
  return { items: out, quarantined };
}

/** `{<itemsKey>: [...], next_cursor}`; `itemsKeys` lists accepted names, the first present wins. */
export function readPage<S extends z.ZodType, T>(json: unknown, itemsKeys: readonly string[], reader: ItemReader<S, T>): Page<T> {
  const key = itemsKeys.find((k) => json !== null && typeof json === 'object' && k in json) ?? itemsKeys[0] ?? 'items';
  const envelope = pageEnvelopeSchema(key).safeParse(json);
  if (!envelope.success) throw new EnvelopeError(describeIssues(envelope.error));
  const { [key]: items, next_cursor: nextCursor } = envelope.data as Record<string, unknown>;
  return { ...readItems(items as unknown[], reader), nextCursor: nextCursor as string | null };
}

/** A bare JSON array of items (v2 tweet-info-bulk, follows, new-following-7d): one page, no cursor. */
export function readArray<S extends z.ZodType, T>(json: unknown, reader: ItemReader<S, T>): Page<T> {
  const envelope = arrayEnvelopeSchema.safeParse(json);
  if (!envelope.success) throw new EnvelopeError(describeIssues(envelope.error));
  return { ...readItems(envelope.data, reader), nextCursor: null };
}
