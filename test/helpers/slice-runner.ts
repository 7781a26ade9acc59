/**
 * What tests that drive the slice runner directly share: its dependencies over a harness's
 * services, and a client whose search a test wraps (to fail a page, or act between fetches).
 */
import type { ApiClient } from '../../src/api-client/index.ts';
import { reconcile } from '../../src/jobs/reconcile.ts';
import type { SliceRunnerDeps } from '../../src/jobs/slice-runner.ts';
import { silentLogger } from '../../src/logger.ts';
import type { Pool } from '../../src/store/db.ts';
import type { Harness } from './harness.ts';

/** One walk at a time at a target of one slice; tests override what they look at. */
export function runnerDeps(services: { pool: Pool; client: ApiClient }, overrides: Partial<SliceRunnerDeps> = {}): SliceRunnerDeps {
  return {
    pool: services.pool,
    client: services.client,
    logger: silentLogger,
    signal: new AbortController().signal,
    quotaRecheckMs: 600_000,
    targetParallelism: () => 1,
    onSplit: async () => undefined,
    ...overrides,
  };
}

/** `client` with `searchTweets` replaced by `wrap(real)`; every other member is the client's own. */
export function withSearch(client: ApiClient, wrap: (real: ApiClient['searchTweets']) => ApiClient['searchTweets']): ApiClient {
  return withCall(client, 'searchTweets', wrap);
}

/** `client` with its method `name` replaced by `wrap(real)`; every other member is the client's own. */
export function withCall<K extends keyof ApiClient>(client: ApiClient, name: K, wrap: (real: ApiClient[K]) => ApiClient[K]): ApiClient {
  const method: unknown = client[name];
  const replaced = wrap((typeof method === 'function' ? method.bind(client) : method) as ApiClient[K]);
  return new Proxy(client, {
    get(target, property) {
      if (property === name) return replaced;
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Requests a job recorded (api_requests rows) and counted as spent (jobs.requests_spent). */
export async function requestsRecorded(pool: Pool, jobId: string): Promise<{ logged: number; spent: number }> {
  const { rows } = await pool.query<{ logged: number; spent: number }>(
    `SELECT (SELECT count(*)::int FROM api_requests WHERE job_id = $1::bigint) AS logged,
            (SELECT requests_spent::int FROM jobs WHERE id = $1::bigint) AS spent`,
    [jobId],
  );
  return rows[0]!;
}

/**
 * A search job reduced to one walking slice over a dense range (every page proposes a split): its
 * planned slices but the newest are done, and that one walks the job's whole range.
 */
export async function oneSliceJob(h: Harness): Promise<{ jobId: string; sliceId: string }> {
  const pool = h.services.pool;
  const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-15' } });
  await reconcile({ pool, queues: h.services.queues, budgets: h.services.gate });
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id::text FROM job_slices WHERE job_id = $1::bigint ORDER BY (params->>'sinceMs')::bigint DESC`,
    [jobId],
  );
  const sliceId = rows[0]!.id;
  await pool.query(`UPDATE job_slices SET status = 'done' WHERE job_id = $1::bigint AND id <> $2::bigint`, [jobId, sliceId]);
  await pool.query(
    `UPDATE job_slices SET params = params || jsonb_build_object('sinceMs', (SELECT min((params->>'sinceMs')::bigint) FROM job_slices WHERE job_id = $1::bigint))
      WHERE id = $2::bigint`,
    [jobId, sliceId],
  );
  return { jobId, sliceId };
}
