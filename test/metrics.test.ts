import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptRecord } from '../src/api-client/index.ts';
import { HarvestMetrics, startMetricsServer, type MetricSources, type MetricsServer } from '../src/jobs/metrics.ts';
import type { KeyState } from '../src/jobs/limiter/index.ts';
import { createJob, createSlices } from '../src/store/jobs.ts';
import { setJobStatus, setSliceStatus } from './helpers/store-rows.ts';
import { jobCountsByStatus, oldestRunnableSliceAgeSeconds } from '../src/store/metrics-queries.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';

const attempt = (over: Partial<AttemptRecord>): AttemptRecord => ({
  endpoint: 'POST /v3/search-tweets',
  keyFingerprint: 'k_aaaa1111',
  status: 200,
  durationMs: 300,
  at: new Date(),
  attempt: 1,
  ...over,
});

const key = (fingerprint: string, over: Partial<KeyState> = {}): KeyState => ({
  fingerprint,
  remaining: 1000,
  parkedUntil: null,
  disabled: false,
  reason: null,
  granted: 0,
  rateLimited: 0,
  ...over,
});

/** The sample lines of a metric family, as `name{labels} value`. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

let server: MetricsServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function scrape(metrics: HarvestMetrics, path = '/metrics'): Promise<{ status: number; type: string | null; text: string }> {
  server ??= await startMetricsServer(0, metrics);
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('HarvestMetrics over HTTP', () => {
  it('counts attempts by endpoint, status and key fingerprint, 429s per key, and durations per endpoint', async () => {
    const m = new HarvestMetrics({ defaultMetrics: false });
    m.observeAttempt(attempt({}));
    m.observeAttempt(attempt({ durationMs: 1500 }));
    m.observeAttempt(attempt({ status: 429, keyFingerprint: 'k_bbbb2222', durationMs: 40 }));
    m.observeAttempt(attempt({ endpoint: 'GET /v3/info', status: 0, durationMs: 30_000 }));
    const { status, type, text } = await scrape(m);
    expect(status).toBe(200);
    expect(type).toContain('text/plain');
    expect(samples(text, 'harvest_requests_total').sort()).toEqual([
      'harvest_requests_total{endpoint="GET /v3/info",status="0",key="k_aaaa1111"} 1',
      'harvest_requests_total{endpoint="POST /v3/search-tweets",status="200",key="k_aaaa1111"} 2',
      'harvest_requests_total{endpoint="POST /v3/search-tweets",status="429",key="k_bbbb2222"} 1',
    ]);
    expect(samples(text, 'harvest_rate_limited_total')).toEqual(['harvest_rate_limited_total{key="k_bbbb2222"} 1']);
    expect(text).toContain('harvest_request_duration_seconds_count{endpoint="POST /v3/search-tweets"} 3');
    expect(text).toContain('harvest_request_duration_seconds_sum{endpoint="POST /v3/search-tweets"} 1.84');
    expect(text).toContain('harvest_request_duration_seconds_bucket{le="0.5",endpoint="POST /v3/search-tweets"} 2');
    expect(text).toContain('harvest_request_duration_seconds_bucket{le="10",endpoint="GET /v3/info"} 0');
    expect(text).toContain('harvest_request_duration_seconds_bucket{le="30",endpoint="GET /v3/info"} 1');
  });

  it('counts grants given back unsent per key fingerprint', async () => {
    const m = new HarvestMetrics({ defaultMetrics: false });
    m.observeGiveBack('k_aaaa1111');
    m.observeGiveBack('k_aaaa1111');
    const { text } = await scrape(m);
    expect(samples(text, 'harvest_grants_given_back_total')).toEqual(['harvest_grants_given_back_total{key="k_aaaa1111"} 2']);
  });

  it('counts pages, tweets, new tweets and users', async () => {
    const m = new HarvestMetrics({ defaultMetrics: false });
    m.observePage({ jobId: '1', sliceId: '2', tweets: 20, users: 0, newTweets: 18 });
    m.observePage({ jobId: '1', sliceId: '3', tweets: 0, users: 50, newTweets: 0 });
    const { text } = await scrape(m);
    expect(samples(text, 'harvest_pages_total')).toEqual(['harvest_pages_total 2']);
    expect(samples(text, 'harvest_tweets_written_total')).toEqual(['harvest_tweets_written_total 20']);
    expect(samples(text, 'harvest_tweets_new_total')).toEqual(['harvest_tweets_new_total 18']);
    expect(samples(text, 'harvest_users_written_total')).toEqual(['harvest_users_written_total 50']);
    // ids never become labels
    expect(text).not.toMatch(/jobId|sliceId|job_id/);
  });

  it('reads the bound sources at every scrape: quota, parked and disabled keys, jobs by state, slice lag', async () => {
    const m = new HarvestMetrics({ defaultMetrics: false });
    let keys: KeyState[] = [
      key('k_aaaa1111', { remaining: 4321 }),
      key('k_bbbb2222', { remaining: 0, parkedUntil: new Date(Date.now() + 60_000), reason: 'quota' }),
      key('k_cccc3333', { remaining: null, disabled: true, reason: 'auth' }),
    ];
    let calls = 0;
    const sources: MetricSources = {
      keyStates: async () => {
        calls++;
        return keys;
      },
      jobCounts: async () => ({ running: 2, completed: 7 }),
      sliceLagSeconds: async () => 12.5,
    };
    m.bindCollectors(sources);
    const { text } = await scrape(m);
    expect(calls).toBe(1);
    expect(samples(text, 'harvest_quota_remaining').sort()).toEqual([
      'harvest_quota_remaining{key="k_aaaa1111"} 4321',
      'harvest_quota_remaining{key="k_bbbb2222"} 0',
    ]);
    expect(samples(text, 'harvest_key_parked').sort()).toEqual([
      'harvest_key_parked{key="k_aaaa1111"} 0',
      'harvest_key_parked{key="k_bbbb2222"} 1',
      'harvest_key_parked{key="k_cccc3333"} 0',
    ]);
    expect(samples(text, 'harvest_key_disabled')).toContain('harvest_key_disabled{key="k_cccc3333"} 1');
    expect(samples(text, 'harvest_jobs')).toContain('harvest_jobs{state="running"} 2');
    expect(samples(text, 'harvest_jobs')).toContain('harvest_jobs{state="completed"} 7');
    expect(samples(text, 'harvest_jobs')).toContain('harvest_jobs{state="paused_quota"} 0');
    expect(samples(text, 'harvest_jobs')).toHaveLength(8);
    expect(samples(text, 'harvest_slice_lag_seconds')).toEqual(['harvest_slice_lag_seconds 12.5']);

    // A key dropped from the configuration disappears at the next scrape; values are fresh.
    keys = [key('k_aaaa1111', { remaining: 4000 })];
    const second = await scrape(m);
    expect(calls).toBe(2);
    expect(samples(second.text, 'harvest_quota_remaining')).toEqual(['harvest_quota_remaining{key="k_aaaa1111"} 4000']);
    expect(second.text).not.toContain('k_bbbb2222');
  });

  it('still answers when a source fails, leaving out only its gauges and counting the failure', async () => {
    const m = new HarvestMetrics({ defaultMetrics: false });
    m.bindCollectors({
      keyStates: async () => {
        throw new Error('redis down');
      },
      jobCounts: async () => ({ queued: 1 }),
      sliceLagSeconds: async () => null,
    });
    const { status, text } = await scrape(m);
    expect(status).toBe(200);
    expect(samples(text, 'harvest_quota_remaining')).toEqual([]);
    expect(samples(text, 'harvest_jobs')).toContain('harvest_jobs{state="queued"} 1');
    expect(samples(text, 'harvest_slice_lag_seconds')).toEqual(['harvest_slice_lag_seconds 0']);
    expect(samples(text, 'harvest_metrics_source_errors_total')).toEqual(['harvest_metrics_source_errors_total{source="keys"} 1']);
  });

  it('answers 404 on other paths, 405 on other methods, and includes process metrics by default', async () => {
    const m = new HarvestMetrics();
    expect((await scrape(m, '/')).status).toBe(404);
    expect((await scrape(m, '/metrics/extra')).status).toBe(404);
    expect((await scrape(m, '/metrics?x=1')).status).toBe(200);
    const post = await fetch(`http://127.0.0.1:${server!.port}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    await post.text();
    expect((await scrape(m)).text).toContain('process_cpu_user_seconds_total');
  });

  it('on loopback answers only a loopback Host (DNS rebinding read key fingerprints and their quota)', async () => {
    const m = new HarvestMetrics({ defaultMetrics: false });
    await scrape(m);
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: server!.port, path: '/metrics', headers: { host } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    for (const host of ['evil.example', `evil.example:${server!.port}`, '10.0.0.1']) expect(await statusFor(host), host).toBe(421);
    for (const host of ['localhost', `127.0.0.1:${server!.port}`, '[::1]']) expect(await statusFor(host), host).toBe(200);
  });

  it('keeps separate registries per instance', async () => {
    const a = new HarvestMetrics({ defaultMetrics: false });
    const b = new HarvestMetrics({ defaultMetrics: false });
    a.observePage({ jobId: '1', sliceId: '1', tweets: 5, users: 0, newTweets: 5 });
    expect(samples(await b.metricsText(), 'harvest_pages_total')).toEqual(['harvest_pages_total 0']);
  });
});

describe('metrics queries', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('count jobs by status and measure the oldest runnable slice, ignoring paused jobs and finished slices', async () => {
    expect(await jobCountsByStatus(db.pool)).toEqual({});
    expect(await oldestRunnableSliceAgeSeconds(db.pool)).toBeNull();

    const running = await createJob(db.pool, { kind: 'search', params: {}, status: 'running' });
    const paused = await createJob(db.pool, { kind: 'search', params: {}, status: 'paused' });
    await createJob(db.pool, { kind: 'search', params: {}, status: 'completed' });
    const [stale, done] = await createSlices(db.pool, running, [{ kind: 'w', params: {} }, { kind: 'w', params: {} }]);
    const [pausedSlice] = await createSlices(db.pool, paused, [{ kind: 'w', params: {} }]);
    await db.pool.query(`UPDATE job_slices SET updated_at = now() - interval '300 seconds' WHERE id = $1::bigint`, [stale]);
    await db.pool.query(`UPDATE job_slices SET updated_at = now() - interval '900 seconds' WHERE id = ANY($1::bigint[])`, [[done, pausedSlice]]);
    await setSliceStatus(db.pool, done!, 'done');
    await db.pool.query(`UPDATE job_slices SET updated_at = now() - interval '900 seconds' WHERE id = $1::bigint`, [done]);

    expect(await jobCountsByStatus(db.pool)).toEqual({ running: 1, paused: 1, completed: 1 });
    const age = await oldestRunnableSliceAgeSeconds(db.pool);
    expect(age).toBeGreaterThanOrEqual(300);
    expect(age).toBeLessThan(360);

    await setJobStatus(db.pool, running, 'completed');
    expect(await oldestRunnableSliceAgeSeconds(db.pool)).toBeNull();
  });
});
