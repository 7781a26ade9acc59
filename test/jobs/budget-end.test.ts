/**
 * A job its budget stops completes once its last walk has stopped, not at the first walk's stop:
 * the others' pages, paid for and in flight, land first. It completed at once before, so
 * `--wait`, `harvest wait` and the job.completed event gave counts that grew for seconds after.
 */
import { describe, expect, it } from 'vitest';
import { busyWorldOptions, useHarness } from '../helpers/harness.ts';

describe('a job its budget stops', () => {
  const h = useHarness(busyWorldOptions());

  it('completes with every paid page stored, its event carrying the final counts and its note once', { timeout: 60_000 }, async () => {
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-09-01', until: '2026-09-15' }, maxRequests: 40 });
    const done = await h.runUntil(jobId, { timeoutMs: 45_000, harvester: { concurrency: 16 } });
    expect(done.status).toBe('completed');
    // Nothing lands after the job says it is done.
    await new Promise((r) => setTimeout(r, 1500));
    const { rows } = await h.services.pool.query<{ tweets: string; requests: string; note: string; stored: string; active: number }>(
      `SELECT j.tweets::text, j.requests_spent::text AS requests, j.note,
              (SELECT count(*) FROM job_tweets WHERE job_id = j.id)::text AS stored,
              (SELECT count(*)::int FROM job_slices WHERE job_id = j.id AND status IN ('pending', 'running')) AS active
         FROM jobs j WHERE j.id = $1::bigint`,
      [jobId],
    );
    const after = rows[0]!;
    expect(after.active).toBe(0);
    expect(Number(after.requests)).toBe(40);
    expect([done.tweets, done.requests]).toEqual([Number(after.stored), 40]);
    const event = await h.services.pool.query<{ data: { tweets: string; requests: string } }>(
      `SELECT payload->'data' AS data FROM outbox WHERE job_id = $1::bigint AND type = 'job.completed'`,
      [jobId],
    );
    expect(event.rows.map((r) => [r.data.tweets, r.data.requests])).toEqual([[after.stored, '40']]);
    // Every walk that met the spent budget came to endJob: the note says it once.
    const budgetNote = /budget/g;
    expect(after.note.match(budgetNote)?.length).toBe(1);
  });
});
