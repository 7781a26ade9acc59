/**
 * One paging routine for every listing, so faults and quirks (empty pages, repeating cursors,
 * short pages) behave the same on every endpoint.
 */
import type { SimContext } from './context.ts';
import { decodeCursor, encodeCursor, type CursorKind, type CursorPosition } from './cursors.ts';
import { JsonInteger } from './http-utils.ts';

export interface PageResult<T> {
  items: T[];
  next: string | null;
}

export interface Fetched<T> {
  items: T[];
  /** Where the next page starts, or null at the end. */
  next: CursorPosition | null;
}

export interface PageOptions {
  scope: string;
  kind: CursorKind;
  cursor: string | null;
  /** Nominal page size (20, or 200 for followers/follows). */
  size: number;
}

const SHORT_SIZES = [5, 12, 18] as const;

export function paginate<T>(
  ctx: SimContext,
  options: PageOptions,
  fetch: (position: CursorPosition | null, size: number) => Fetched<T>,
): PageResult<T> {
  const state = decodeCursor(options.kind, options.scope, options.cursor);
  const served = state?.p ?? 0;
  const position: CursorPosition | null = state ? { ...state } : null;
  if (position) delete (position as { p?: number }).p;
  if (ctx.faults.emptyEnd()) return { items: [], next: null };
  if (ctx.faults.emptyPage()) {
    return { items: [], next: encodeCursor(options.kind, options.scope, { ...(position ?? {}), p: served + 1 }) };
  }
  const size = ctx.quirks.shortPages && options.size <= 20 ? SHORT_SIZES[served % 3]! : options.size;
  const got = fetch(position, size);
  let next = got.next ? encodeCursor(options.kind, options.scope, { ...got.next, p: served + 1 }) : null;
  if (next !== null && options.cursor && ctx.faults.repeatCursor(served)) next = options.cursor;
  return { items: got.items, next };
}

/** Offset paging over a static array, skipping items `visible` rejects. */
export function offsetPage<T>(source: readonly T[], position: CursorPosition | null, size: number, visible?: (item: T) => boolean): Fetched<T> {
  const items: T[] = [];
  let i = position?.o ?? 0;
  while (i < source.length && items.length < size) {
    const item = source[i]!;
    i += 1;
    if (!visible || visible(item)) items.push(item);
  }
  return { items, next: i < source.length ? { o: i } : null };
}

/** First position in an ascending array whose value is >= target. */
function lowerBound(asc: readonly number[], target: number): number {
  let lo = 0;
  let hi = asc.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (asc[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Newest-first paging over ascending tweet indices, keyed by the last index served: tweets
 * appended during a walk (test control) land above the bound and never shift a page.
 */
export function keysetPageDesc(asc: readonly number[], position: CursorPosition | null, size: number, visible?: (index: number) => boolean): Fetched<number> {
  const items: number[] = [];
  let pos = position?.k === undefined ? asc.length : lowerBound(asc, position.k);
  while (pos > 0 && items.length < size) {
    pos -= 1;
    const index = asc[pos]!;
    if (!visible || visible(index)) items.push(index);
  }
  const last = pos > 0 ? asc[pos] : undefined;
  return { items, next: last !== undefined ? { k: last } : null };
}

/**
 * `{[field]: items, next_cursor}`; at the end next_cursor is null, or absent without explicitNulls.
 * `integer`: a numeric cursor goes out as a JSON number under the integerCursors quirk, and the
 * last page's is "0" under zeroEndCursors.
 */
export function pageBody(ctx: SimContext, field: string, items: unknown[], next: string | null, integer = false): Record<string, unknown> {
  const body: Record<string, unknown> = { [field]: items };
  if (next === null && integer && ctx.quirks.zeroEndCursors) next = '0';
  if (next !== null) body.next_cursor = integer && ctx.quirks.integerCursors && /^\d+$/.test(next) ? new JsonInteger(next) : next;
  else if (ctx.quirks.explicitNulls) body.next_cursor = null;
  return body;
}
