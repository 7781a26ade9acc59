/**
 * The request log (api_requests) and the quarantine. Both are idempotent: replaying a page with
 * the same request log or the same rejected items inserts nothing twice, so the counts derived
 * from them (jobs.requests_spent) stay exact.
 */
import type { Queryable } from './db.ts';
import { jsonText } from './page-rows.ts';

export interface RequestRecord {
  endpoint: string;
  keyFingerprint: string;
  /** HTTP status; 0 when no response arrived. */
  status: number;
  durationMs: number;
  at: Date;
  jobId?: string | null;
  sliceId?: string | null;
}

export interface QuarantineRecord {
  endpoint: string;
  reason: string;
  payload: unknown;
}

/** Column arrays for the unnest of api_requests. */
export function requestColumns(rows: readonly RequestRecord[]): unknown[] {
  return [
    rows.map((r) => r.at.toISOString()),
    rows.map((r) => r.endpoint),
    rows.map((r) => r.keyFingerprint),
    rows.map((r) => r.status),
    rows.map((r) => Math.max(0, Math.round(r.durationMs))),
    rows.map((r) => r.jobId ?? null),
    rows.map((r) => r.sliceId ?? null),
  ];
}

export async function insertQuarantine(
  db: Queryable,
  jobId: string | null,
  sliceId: string | null,
  items: readonly QuarantineRecord[],
  at: Date,
): Promise<void> {
  if (items.length === 0) return;
  // The unique index dedupes per slice (a replayed page); the NOT EXISTS per job: every watch pass
  // is a new slice and re-reads its first page, so a bad item there was quarantined again on each
  // pass (21 rows for one item after 20 passes, 288 a day at 5 minutes). The hash is the column's
  // own expression (migration 0002); quarantine_job_item_idx (0026) answers it.
  await db.query(
    `INSERT INTO quarantine (at, job_id, slice_id, endpoint, reason, payload)
     SELECT $1, $2::bigint, $3::bigint, e, r, p::jsonb FROM unnest($4::text[], $5::text[], $6::text[]) AS q(e, r, p)
      WHERE NOT EXISTS (SELECT 1 FROM quarantine x
                         WHERE x.job_id = $2::bigint AND x.endpoint = q.e AND x.payload_hash = md5(coalesce(q.p::jsonb::text, '')))
     ON CONFLICT DO NOTHING`,
    [at.toISOString(), jobId, sliceId, items.map((i) => i.endpoint), items.map((i) => i.reason), items.map((i) => jsonText(i.payload))],
  );
}
