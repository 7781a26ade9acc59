/**
 * What a long-running watch piles up: every pass is a new slice, and neither slices nor the
 * quarantine are pruned. A bad item on the first page is quarantined once per job, not once per
 * pass; and the queries each tick, pass end and reconcile run find their one pass by index among
 * a year of passes (105,000 at 5 minutes) instead of reading them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/store/db.ts';
import { unrolledEnds } from '../../src/store/job-control.ts';
import { createJob, createSlices } from '../../src/store/jobs.ts';
import { insertQuarantine } from '../../src/store/requests.ts';
import { createWatch, finishWatchPass, startWatchPassIn } from '../../src/store/watches.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const bad = { endpoint: '/v3/user-mentions', reason: 'likes_count: expected number', payload: { id_str: '1900000000000000001', likes_count: 'many' } };

async function quarantineRows(jobId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM quarantine WHERE job_id = $1::bigint', [jobId]);
  return rows[0]!.n;
}

describe('the quarantine of a watch', () => {
  it('keeps one row for a bad item every pass re-reads, and a row for each other item, endpoint or job', async () => {
    const jobId = await createJob(db.pool, { kind: 'mentions', params: { handle: 'jack' }, priority: 'watch', status: 'running' });
    const passes = await createSlices(
      db.pool,
      jobId,
      Array.from({ length: 20 }, (_, i) => ({ kind: 'mentions', params: { handle: 'jack', pass: i + 1 } })),
    );
    for (const sliceId of passes) await insertQuarantine(db.pool, jobId, sliceId, [bad], new Date());
    expect(await quarantineRows(jobId)).toBe(1);

    // Another item, or the same one from another endpoint, is news; so is the item in another job.
    const other = { ...bad, payload: { ...bad.payload, id_str: '1900000000000000002' } };
    await insertQuarantine(db.pool, jobId, passes[0]!, [other, { ...bad, endpoint: '/v3/search-tweets' }], new Date());
    expect(await quarantineRows(jobId)).toBe(3);
    const job2 = await createJob(db.pool, { kind: 'mentions', params: { handle: 'jack' }, priority: 'watch', status: 'running' });
    const [slice2] = await createSlices(db.pool, job2, [{ kind: 'mentions', params: { handle: 'jack', pass: 1 } }]);
    await insertQuarantine(db.pool, job2, slice2!, [bad], new Date());
    expect(await quarantineRows(job2)).toBe(1);
  });
});

/** A pool that keeps the text and parameters of every query it runs, to EXPLAIN them afterwards. */
function recording(): { db: Queryable; queries: Array<{ text: string; params: unknown[] }> } {
  const queries: Array<{ text: string; params: unknown[] }> = [];
  return {
    queries,
    db: {
      query: (text: string, params: unknown[] = []) => {
        queries.push({ text, params });
        return db.pool.query(text, params);
      },
    } as Queryable,
  };
}

interface PlanNode {
  'Index Name'?: string;
  'Plan Rows': number;
  Plans?: PlanNode[];
}

/** How many rows the plan expects from each scan of job_slices_pass_idx (none: the plan does not use it). */
async function passIndexEstimates(query: { text: string; params: unknown[] }): Promise<number[]> {
  const { rows } = await db.pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${query.text}`, query.params);
  const found: number[] = [];
  const walk = (node: PlanNode): void => {
    if (node['Index Name'] === 'job_slices_pass_idx') found.push(node['Plan Rows']);
    node.Plans?.forEach(walk);
  };
  walk(rows[0]!['QUERY PLAN'][0]!.Plan);
  return found;
}

describe('a watch with a year of passes', () => {
  it('the tick, the end of a pass and reconcile find their pass by job_slices_pass_idx', { timeout: 60_000 }, async () => {
    const PASSES = 10_000;
    // Four watches with many passes each (a year at 5 minutes is 105,120): reconcile reads them all at once.
    const jobIds: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await createJob(db.pool, { kind: 'mentions', params: { handle: `h${i}` }, priority: 'watch', status: 'running' });
      await createWatch(db.pool, { jobId: id, handle: `h${i}`, params: {}, everySeconds: 300, identity: `mentions:year${i}` });
      await db.pool.query(
        `INSERT INTO job_slices (job_id, kind, params, status, priority)
         SELECT $1::bigint, 'mentions', jsonb_build_object('handle', 'h', 'pass', g), 'done', 'watch' FROM generate_series(1, $2::int) g`,
        [id, PASSES],
      );
      await db.pool.query('UPDATE watches SET passes = $2 WHERE job_id = $1::bigint', [id, PASSES - 1]);
      jobIds.push(id);
    }
    const jobId = jobIds[0]!;
    await db.pool.query('ANALYZE job_slices');
    await db.pool.query('ANALYZE watches');

    const r = recording();
    // The last pass ended (done) but is not recorded yet: the tick sees it as active, reconcile as unrolled.
    const started = await startWatchPassIn(r.db, jobId, () => ({ kind: 'mentions', params: {} }), { markRunning: false });
    expect(started?.started).toBe(false);
    expect((await unrolledEnds(r.db, jobId)).filter((e) => e.sliceId !== null)).toHaveLength(1);
    // Reconcile's own call, every watch at once: each one's unrecorded last pass.
    expect((await unrolledEnds(r.db)).filter((e) => e.sliceId !== null)).toHaveLength(4);
    await finishWatchPass(r.db, jobId, { pass: PASSES, highWatermarkId: null, newCount: 0 });

    const passQueries = r.queries.filter((q) => q.text.includes("params->>'pass'"));
    expect(passQueries).toHaveLength(4);
    // Each finds its pass by the index, and the planner knows it is one slice (an equality on
    // passes + 1). With '> passes' it expected a fifth of the job's slices (2,222 of 10,000 here),
    // and with a year of passes on 10 watches reconcile's query still took 24 ms with the index.
    for (const q of passQueries) {
      const estimates = await passIndexEstimates(q);
      expect(estimates.length, q.text).toBeGreaterThan(0);
      for (const rows of estimates) expect(rows, q.text).toBeLessThanOrEqual(5);
    }
  });
});
