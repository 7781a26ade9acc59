/** Turns the client's pages into the runner's FetchedPage. */
import type { CanonicalTweet, CanonicalUser } from '../../api-client/canonical.ts';
import { quarantineOf, type Page } from '../../api-client/index.ts';
import type { FetchedPage, PageEdges } from '../kind.ts';
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
