/**
 * Relationship edges seen on a page (list members/followers, community members, follows). Each
 * edge keeps when it was first and last seen, so a later crawl shows who left.
 */
import type { Queryable } from './db.ts';
import { compareIds } from './page-rows.ts';
import type { EdgeKind } from './states.ts';

export interface EdgeBatch {
  /** Who the owner is for each kind: see EdgeKind in states.ts. */
  kind: EdgeKind;
  ownerId: string;
  userIds: string[];
}

// Fixed identifiers only: nothing from the caller is interpolated into SQL.
const TARGET: Record<EdgeKind, { table: string; owner: string; user: string }> = {
  list_member: { table: 'list_members', owner: 'list_id', user: 'user_id' },
  list_follower: { table: 'list_followers', owner: 'list_id', user: 'user_id' },
  community_member: { table: 'community_members', owner: 'community_id', user: 'user_id' },
  follows: { table: 'follows', owner: 'follower_id', user: 'followed_id' },
  followers: { table: 'follows', owner: 'followed_id', user: 'follower_id' },
};

function edgeSql(kind: EdgeKind): string {
  const { table, owner, user } = TARGET[kind];
  return `INSERT INTO ${table} AS e (${owner}, ${user}, first_seen_at, last_seen_at)
    SELECT $1::bigint, u, $3, $3 FROM unnest($2::bigint[]) AS u ORDER BY u
    ON CONFLICT (${kind === 'followers' || kind === 'follows' ? 'follower_id, followed_id' : `${owner}, ${user}`}) DO UPDATE SET
      first_seen_at = least(e.first_seen_at, excluded.first_seen_at),
      last_seen_at = greatest(e.last_seen_at, excluded.last_seen_at)`;
}

/**
 * Queues one statement per batch, all at once: on a pipelined transaction (commit-page.ts) they
 * ride in the batch's one write, and a statement queued after an await would land behind COMMIT.
 */
export async function upsertEdges(db: Queryable, batches: readonly EdgeBatch[], observedAt: Date): Promise<void> {
  const sent: Array<Promise<unknown>> = [];
  for (const batch of batches) {
    const ids = [...new Set(batch.userIds)].sort(compareIds);
    if (ids.length === 0) continue;
    sent.push(db.query(edgeSql(batch.kind), [batch.ownerId, ids, observedAt.toISOString()]));
  }
  await Promise.all(sent);
}
