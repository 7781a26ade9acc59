/**
 * The two Postgres reads behind the worker's scrape-time gauges (src/jobs/metrics.ts). Both are
 * cheap on purpose: a scrape every 15 s must not load the database.
 */
import type { Queryable } from './db.ts';

/** Jobs per status, e.g. `{ running: 2, completed: 40 }`; statuses with no job are absent. */
export async function jobCountsByStatus(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/**
 * Seconds since the least recently updated slice that a worker should be walking (pending or
 * running, in a queued or running job) last moved; null when there is none. A slice's
 * updated_at moves with every committed page, so a growing value means work is stuck: workers
 * down, every key parked, or a slice lost from the queue. Paused and scheduled jobs are left
 * out: their slices wait on purpose.
 */
export async function oldestRunnableSliceAgeSeconds(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ age: number | null }>(
    `SELECT extract(epoch FROM now() - min(s.updated_at))::float8 AS age
     FROM job_slices s JOIN jobs j ON j.id = s.job_id
     WHERE s.status IN ('pending', 'running') AND j.status IN ('queued', 'running')`,
  );
  const age = rows[0]?.age ?? null;
  return age === null ? null : Math.max(0, age);
}
