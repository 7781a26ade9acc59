/**
 * One retry layer (issue #11, item 3): a page that keeps failing costs a bounded number of
 * requests (HARVEST_MAX_ATTEMPTS_PER_PAGE, default 6), all of them in the client, and then its
 * slice fails naming the reason; the queue never runs the page again on top. A permanent error (a
 * body of the wrong shape) costs one request and no re-run. Against the simulator over HTTP, with
 * a proxy in front that rewrites chosen answers. The waits between tries are shortened (the
 * client's 1–2 s after a 5xx, the runner's 2 s before a page is fetched again); the bounds are not.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Harvester } from '../../src/jobs/harvester.ts';
import { openServices, type Services } from '../../src/jobs/services.ts';
import { silentLogger } from '../../src/logger.ts';
import { jobSnapshot, type JobSnapshot } from '../../src/store/job-status.ts';
import { startRawServer, type RawServer } from '../api-client/helpers.ts';
import { startHarness, type Harness } from '../helpers/harness.ts';
import { corruptingProxy, freePort, sleep, waitForJob, type CorruptingProxy } from './support.ts';

const SEARCH = '/v3/search-tweets';

/** The client's wait after a 5xx or a connection refused, instead of 1–2 s; the bounds stay HARVEST_MAX_ATTEMPTS_PER_PAGE. */
const FAST_RETRY = { transientDelayMinMs: 10, transientDelayMaxMs: 30 };
/** The runner's wait before a page is fetched again (a broken body), instead of TRANSIENT_RETRY_MS (2 s). */
const FAST_REFETCH_MS = 50;

/** Services on the harness's database, prefix and service whose client waits FAST_RETRY between tries. */
function fastServices(h: Harness): Promise<Services> {
  return openServices(h.config, silentLogger, { retry: FAST_RETRY });
}

/** A Harvester on `services` that waits FAST_REFETCH_MS before fetching a page again. */
function fastHarvester(services: Services, concurrency: number): Harvester {
  return new Harvester(services, { concurrency, quotaSyncMs: 3_600_000, transientRetryMs: FAST_REFETCH_MS });
}

/**
 * The backfill queue once no slice is active in it: a run of the queue's own (BullMQ's attempts,
 * 2 s backoff, or a slice handed back for later) would be waiting, delayed or prioritized there.
 */
async function settledQueue(h: Harness): Promise<Record<string, number>> {
  for (let i = 0; ; i++) {
    const counts = (await h.services.queues.counts()).backfill;
    if (counts.active === 0 || i >= 100) return counts;
    await sleep(50);
  }
}

describe('one retry layer', () => {
  let h: Harness;
  let proxy: CorruptingProxy;
  let services: Services;
  let harvester: Harvester | null = null;
  beforeAll(async () => {
    proxy = await corruptingProxy();
    h = await startHarness({ env: { HARVEST_BASE_URL: proxy.url } });
    proxy.target = h.sim.url;
    services = await fastServices(h);
  });
  afterEach(async () => {
    await harvester?.stop();
    harvester = null;
    proxy.corrupt = () => undefined;
    h.sim.control.setFaults({ errorRate500: 0 });
  });
  afterAll(async () => {
    await services?.close();
    await h?.close();
    await proxy?.close();
  });

  /** A worker whose quota sync is done before the faults begin (the sync is not the job's request). */
  async function startWorker(): Promise<void> {
    harvester = fastHarvester(services, 4);
    await harvester.start();
  }

  function searchRequestsSince(at: number): number {
    return h.sim.control.requestLog().filter((r) => r.path === SEARCH && r.at >= at).length;
  }

  async function sliceRows(jobId: string) {
    const { rows } = await h.services.pool.query<{ status: string; error_code: string | null; error_message: string | null; requests: string }>(
      'SELECT status, error_code, error_message, requests::text FROM job_slices WHERE job_id = $1::bigint',
      [jobId],
    );
    return rows;
  }

  it('a page that answers 500 every time costs exactly 6 requests, then the slice fails naming 500; no queue re-run', { timeout: 40_000 }, async () => {
    await startWorker();
    h.sim.control.setFaults({ errorRate500: 1 });
    const start = Date.now();
    // No --since: one slice walks newest-first, so every request below is that one page's.
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' } });
    const failed = await waitForJob(h.services.pool, jobId, (s) => s.status === 'failed', 30_000);
    const slices = await sliceRows(jobId);
    expect(slices).toHaveLength(1);
    expect(slices[0]!.status).toBe('failed');
    expect(slices[0]!.error_code).toBe('API_TRANSIENT');
    expect(slices[0]!.error_message).toMatch(/after 6 tries/);
    expect(slices[0]!.error_message).toMatch(/\(500\)/);
    // `status` shows the reason: the job's error is its failed slice's.
    expect(failed.errorMessage).toMatch(/\(500\)/);
    // Nothing left in the queue to run the page again (its backoff would hold it delayed 2 s).
    expect(await settledQueue(h)).toMatchObject({ active: 0, waiting: 0, delayed: 0, prioritized: 0 });
    expect(searchRequestsSince(start)).toBe(6);
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_requests WHERE job_id = $1::bigint', [jobId]);
    expect(rows[0]!.n).toBe(6);
  });

  it('JSON of the wrong shape is permanent: one request, the slice fails at once, no re-run', { timeout: 30_000 }, async () => {
    await startWorker();
    proxy.corrupt = (ctx) => (ctx.path === SEARCH ? { body: '{"tweets": "none today", "next_cursor": null}' } : undefined);
    const start = Date.now();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' } });
    const failed: JobSnapshot = await waitForJob(h.services.pool, jobId, (s) => s.status === 'failed', 20_000);
    expect(failed.errorCode).toBe('API_INVALID_RESPONSE');
    expect(failed.errorMessage).toMatch(/invalid body/);
    expect(await settledQueue(h)).toMatchObject({ active: 0, waiting: 0, delayed: 0, prioritized: 0 });
    expect(searchRequestsSince(start)).toBe(1);
    expect((await jobSnapshot(h.services.pool, jobId))?.status).toBe('failed');
  });

  it('a stored slice of a kind this version does not know fails at once (UnrecoverableError), naming it; no request, no re-run', { timeout: 30_000 }, async () => {
    const start = Date.now();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' } });
    await h.services.pool.query(`UPDATE job_slices SET kind = 'search-v0' WHERE job_id = $1::bigint`, [jobId]);
    await startWorker();
    // The queue's own backoff would keep it pending for minutes (2 s, 4 s, 8 s… over 8 attempts).
    const failed = await waitForJob(h.services.pool, jobId, (s) => s.status === 'failed', 10_000);
    expect(failed.errorCode).toBe('INPUT_INVALID');
    expect(failed.errorMessage).toMatch(/unknown slice kind "search-v0"/);
    expect((await sliceRows(jobId))[0]).toMatchObject({ status: 'failed', error_code: 'INPUT_INVALID' });
    expect(searchRequestsSince(start)).toBe(0);
    expect(await settledQueue(h)).toMatchObject({ active: 0, waiting: 0, delayed: 0, prioritized: 0 });
  });
});

/**
 * A harness whose HARVEST_BASE_URL is a port nothing listens on, and a Harvester on it (started by
 * the test). Its key is its own: a key's limiter state is shared by every deployment on the same
 * service origin and outlives the harness's prefix, and a port once used by another test's
 * simulator with the shared test key would bring that key's known quota with it.
 */
function useUnreachableService(): { h: () => Harness; startHarvester: () => Promise<void> } {
  let h: Harness;
  let services: Services;
  let harvester: Harvester | null = null;
  beforeAll(async () => {
    // Nothing listens there: every connection is refused.
    h = await startHarness({ ownKey: true, env: { HARVEST_BASE_URL: `http://127.0.0.1:${await freePort()}` } });
    services = await fastServices(h);
  });
  afterAll(async () => {
    await harvester?.stop();
    await services?.close();
    await h?.close();
  });
  return {
    h: () => h,
    startHarvester: async () => {
      harvester = fastHarvester(services, 4);
      await harvester.start();
    },
  };
}

describe('a service that cannot be reached', () => {
  const service = useUnreachableService();

  it('fails the slice after 6 tries, as a failing one would, with no request recorded and the budget whole', { timeout: 40_000 }, async () => {
    const h = service.h();
    // The quota as a sync would have found it (the sync cannot reach the service either, and a
    // backfill waits for a key whose quota is unknown).
    const fingerprint = h.config.apiKeys[0]!.fingerprint;
    await h.services.gate.setQuota(fingerprint, 1000);
    // A quota sync that cannot connect gives its grant back too (its one-grant gate passes it on).
    expect((await h.services.gate.syncQuota())[0]).toMatchObject({ fingerprint, remaining: null, error: expect.anything() });
    expect((await h.services.gate.keyStates())[0]?.remaining).toBe(1000);
    await service.startHarvester();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' }, maxRequests: 50 });
    // Tries that never left the process are not requests, but the page's bound counts them: the
    // slice fails instead of refetching its page for as long as the outage lasts.
    const failed = await waitForJob(h.services.pool, jobId, (s) => s.status === 'failed', 30_000);
    expect(failed.errorCode).toBe('API_TRANSIENT');
    expect(failed.errorMessage).toMatch(/gave up on a page after \d+ tries/);
    expect(failed.errorMessage).toMatch(/ECONNREFUSED/);
    const { rows } = await h.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_requests WHERE job_id = $1::bigint', [jobId]);
    expect(rows[0]!.n).toBe(0);
    // Every grant went back: the job's budget is as submitted.
    expect(await h.services.gate.budgetRemaining(jobId)).toBe(50);
  });
});

describe('a service that cannot be reached while the quota is unknown', () => {
  const service = useUnreachableService();

  it('parks the backfill as paused_quota, saying the quota is unknown and why asking for it failed', { timeout: 30_000 }, async () => {
    const h = service.h();
    await service.startHarvester();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' }, maxRequests: 50 });
    const parked = await waitForJob(h.services.pool, jobId, (s) => s.status === 'paused_quota', 20_000);
    // Not "no key can grant": no key is spent, the backfill keeps the watch reserve and could not
    // learn how much quota there is.
    expect(parked.note).toMatch(/^paused: quota unknown \(asking the service for it failed: .*ECONNREFUSED.*; asking again at /);
    const { rows } = await h.services.pool.query<{ text: string }>(
      `SELECT payload->>'text' AS text FROM outbox WHERE type = 'job.paused_quota' AND job_id = $1::bigint`,
      [jobId],
    );
    expect(rows.map((r) => r.text)).toEqual([`harvest: job ${jobId} (search) ${parked.note}`]);
    expect(parked.note).not.toContain(h.config.apiKeys[0]!.key);
  });
});

describe("a page's tries, across its fetches", () => {
  let h: Harness;
  let services: Services;
  let harvester: Harvester | null = null;
  let server: RawServer;
  let searches = 0;
  beforeAll(async () => {
    // Two broken bodies (each fetches the page again), then 500s for good.
    server = await startRawServer((req, res) => {
      if (!req.url?.includes('search-tweets')) {
        res.writeHead(404).end();
        return;
      }
      searches++;
      if (searches <= 2) res.writeHead(200, { 'content-type': 'application/json' }).end('{"tweets": [');
      else res.writeHead(500, { 'content-type': 'application/json' }).end('{"message": "internal error"}');
    });
    h = await startHarness({ ownKey: true, env: { HARVEST_BASE_URL: server.url } });
    services = await fastServices(h);
  });
  afterAll(async () => {
    await harvester?.stop();
    await services?.close();
    await h?.close();
    await server?.close();
  });

  it('HARVEST_MAX_ATTEMPTS_PER_PAGE bounds the page, not each fetch of it: 6 requests, not 2 + 6', { timeout: 40_000 }, async () => {
    await h.services.gate.setQuota(h.config.apiKeys[0]!.fingerprint, 1000);
    harvester = fastHarvester(services, 1);
    await harvester.start();
    const jobId = await h.submit({ kind: 'search', params: { query: 'lang:en' }, maxRequests: 50 });
    const failed = await waitForJob(h.services.pool, jobId, (s) => s.status === 'failed', 35_000);
    expect(failed.errorMessage).toMatch(/gave up on a page after 6 tries/);
    expect(searches).toBe(6);
  });
});
