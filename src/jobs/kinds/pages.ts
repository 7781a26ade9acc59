/** Turns the client's pages into the runner's FetchedPage. */
import type { CanonicalTweet, CanonicalUser } from '../../api-client/canonical.ts';
import { quarantineOf, type Page } from '../../api-client/index.ts';
import type { FetchedPage, PageEdges, PageVerdict } from '../kind.ts';
import { msOfId } from '../time-slices.ts';

export function tweetPage(endpoint: string, page: Page<CanonicalTweet>): FetchedPage {
  return {
    endpoint,
    tweets: page.items,
    users: [],
    nextCursor: page.nextCursor,
    quarantined: quarantineOf(page),
    itemCount: page.items.length + page.quarantined.length,
  };
}

export function userPage(
  endpoint: string,
  page: Page<CanonicalUser>,
  edge: Omit<PageEdges, 'userIds'> | null,
  role: string,
): FetchedPage {
  return {
    endpoint,
    tweets: [],
    users: page.items,
    userRole: role,
    ...(edge ? { edges: [{ ...edge, userIds: page.items.map((u) => u.id) }] } : {}),
    nextCursor: page.nextCursor,
    quarantined: quarantineOf(page),
    itemCount: page.items.length + page.quarantined.length,
  };
}

/**
 * The oldest creation time on a page of tweets, or null for an empty page. Taken from the ids,
 * which encode it to the millisecond; `created_at` may come in a whole-second form, and slice
 * boundaries are cut at milliseconds.
 */
export function oldestMs(tweets: readonly CanonicalTweet[]): number | null {
  let oldest: number | null = null;
  for (const t of tweets) {
    const ms = msOfId(t.id);
    if (oldest === null || ms < oldest) oldest = ms;
  }
  return oldest;
}

/** The newest creation time on a page, from the ids (see oldestMs). */
export function newestMs(tweets: readonly CanonicalTweet[]): number | null {
  let newest: number | null = null;
  for (const t of tweets) {
    const ms = msOfId(t.id);
    if (newest === null || ms > newest) newest = ms;
  }
  return newest;
}

/**
 * A watch pass that resumes one cut short (cutPassResume) walks two segments in one slice: what is
 * newer than the cut pass's newest, then what lies below its oldest. The second segment's cursors
 * carry this prefix, and the first segment ends on the prefix alone, so the next request still
 * depends only on the params and the cursor (fetchAhead holds) and a walk taken over or resumed
 * after a crash goes on in the segment it was in.
 */
const BELOW_PREFIX = 'harvest-below:';

/** Which segment a cursor walks, and the service's own cursor in it (null: the segment's first page). */
export function resumeSegment(cursor: string | null): { below: boolean; cursor: string | null } {
  if (cursor === null || !cursor.startsWith(BELOW_PREFIX)) return { below: false, cursor };
  const own = cursor.slice(BELOW_PREFIX.length);
  return { below: true, cursor: own === '' ? null : own };
}

/**
 * The next cursor of a resuming pass's page. In the first segment, `reachedRead` (the page reached
 * what the cut pass read) leads into the second; otherwise the service's cursor goes on, and its
 * end ends the walk, as any walk's end (the pass's end rules judge it: passEnd).
 */
function resumeNextCursor(below: boolean, serviceNext: string | null, reachedRead: boolean): string | null {
  if (below) return serviceNext === null ? null : `${BELOW_PREFIX}${serviceNext}`;
  return reachedRead ? BELOW_PREFIX : serviceNext;
}

/** A resuming pass's page with its next cursor (resumeNextCursor), marked when that cursor opens the second segment. */
export function resumedPage(page: FetchedPage, below: boolean, reachedRead: boolean): FetchedPage {
  const nextCursor = resumeNextCursor(below, page.nextCursor, reachedRead);
  return !below && reachedRead ? { ...page, nextCursor, opensSegment: true } : { ...page, nextCursor };
}

/**
 * An afterPage for a listing walk (a list's tweets, members or followers, a community's members):
 * an empty first page reaches the job's note, as the community feed's does. Without it a list the
 * service answered empty (an outage answers every endpoint empty) completed "0 tweets, 0 users"
 * and audited complete, with nothing said.
 */
export function noteEmptyFirstPage(what: string): (params: unknown, page: FetchedPage, info: { firstPage: boolean }) => PageVerdict {
  return (_params, page, info) =>
    info.firstPage && page.itemCount === 0 ? { note: `${what}: the first page was empty (none, or the service answering empty: outage?)` } : {};
}
