/**
 * Audio spaces (/v3/place). Space ids are alphanumeric, hence text. A later observation replaces
 * the state (spaces go live, then end) but never erases a known field with null.
 */
import type { Queryable } from './db.ts';
import { cleanText, isoOrNull, jsonText } from './page-rows.ts';

export interface SpaceRecord {
  id: string;
  title: string | null;
  state: string | null;
  creatorId: string | null;
  createdAt: Date | null;
  startedAt: Date | null;
  endedAt: Date | null;
  raw: unknown;
}

export async function upsertSpaces(db: Queryable, spaces: readonly SpaceRecord[], observedAt: Date = new Date()): Promise<void> {
  if (spaces.length === 0) return;
  const unique = [...new Map(spaces.map((s) => [s.id, s])).values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  await db.query(
    `INSERT INTO spaces AS s (id, title, state, creator_id, created_at, started_at, ended_at, raw, first_seen_at, last_seen_at)
     SELECT id, title, state, creator_id, created_at, started_at, ended_at, raw::jsonb, $9, $9
     FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[], $6::timestamptz[], $7::timestamptz[], $8::text[])
       AS i(id, title, state, creator_id, created_at, started_at, ended_at, raw)
     ON CONFLICT (id) DO UPDATE SET
       title = coalesce(excluded.title, s.title),
       state = coalesce(excluded.state, s.state),
       creator_id = coalesce(excluded.creator_id, s.creator_id),
       created_at = coalesce(excluded.created_at, s.created_at),
       started_at = coalesce(excluded.started_at, s.started_at),
       ended_at = coalesce(excluded.ended_at, s.ended_at),
       raw = excluded.raw,
       first_seen_at = least(s.first_seen_at, excluded.first_seen_at),
       last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at)`,
    [
      unique.map((s) => s.id),
      unique.map((s) => cleanText(s.title)),
      unique.map((s) => cleanText(s.state)),
      unique.map((s) => s.creatorId),
      unique.map((s) => isoOrNull(s.createdAt)),
      unique.map((s) => isoOrNull(s.startedAt)),
      unique.map((s) => isoOrNull(s.endedAt)),
      unique.map((s) => jsonText(s.raw)),
      observedAt.toISOString(),
    ],
  );
}
