/**
 * The overview stays responsive with 1,000 jobs: the page holds one page of 50 rows (not a
 * thousand), one load of the overview reads Postgres in well under a second, and paging to the
 * oldest jobs redraws at once. Also: the command's bad input is one line and a non-zero exit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardHandler, startDashboardServer, type DashboardServer } from '../../src/dashboard/server.ts';
import { loadOverview } from '../../src/dashboard/source.ts';
import { HarvestMetrics, startMetricsServer } from '../../src/jobs/metrics.ts';
import { jobDetailExtras } from '../../src/store/dashboard.ts';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';
import { launchBrowser, type Browser } from './browser.ts';

const STATUSES = ['running', 'completed', 'failed', 'queued', 'paused_quota', 'scheduled', 'paused', 'cancelled'];

describe('dashboard with 1,000 jobs', () => {
  const h = useHarness();
  let browser: Browser;
  let server: DashboardServer;
  let stalledId: string;

  beforeAll(async () => {
    const pool = h.services.pool;
    await pool.query(
      `INSERT INTO jobs (kind, status, params, tweets, pages, requests_spent, error_message, started_at)
       SELECT 'search', ($1::text[])[1 + g % 8], jsonb_build_object('query', 'topic ' || g, 'order', 'latest'), g * 17, g, g * 2,
              CASE WHEN g % 8 = 2 THEN 'the service answered 400: bad query ' || g END, now() - interval '10 minutes'
         FROM generate_series(1, 1000) g`,
      [STATUSES],
    );
    // Every job gets a few slices (3,000 rows), so the per-job roll-ups have work to do.
    await pool.query(
      `INSERT INTO job_slices (job_id, kind, status, params)
       SELECT j.id, 'search', (ARRAY['done', 'running', 'pending'])[1 + s], jsonb_build_object('sinceMs', 1790000000000 + s * 3600000, 'untilMs', 1790000000000 + (s + 1) * 3600000)
         FROM jobs j, generate_series(0, 2) s`,
    );
    // The newest running job has not moved for an hour: no worker took its slices.
    const { rows } = await pool.query<{ id: string }>(`SELECT max(id)::text AS id FROM jobs WHERE status = 'running'`);
    stalledId = rows[0]!.id;
    await pool.query(`UPDATE jobs SET updated_at = now() - interval '1 hour' WHERE id = $1::bigint`, [stalledId]);
    await pool.query(`UPDATE job_slices SET updated_at = now() - interval '1 hour' WHERE job_id = $1::bigint`, [stalledId]);
    server = await startDashboardServer(createDashboardHandler(h.services, { intervalMs: 500 }), 0, '127.0.0.1');
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('loads a page of the overview from Postgres in well under a second', async () => {
    await loadOverview(h.services, 1); // warm the pool
    const started = performance.now();
    const o = await loadOverview(h.services, 20);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(o.total).toBe(1000);
    expect(o.pages).toBe(20);
    expect(o.jobs).toHaveLength(50);
    expect(o.jobs.at(-1)?.label).toBe('topic 1');
    expect(o.failures.length).toBeGreaterThan(0);
  });

  it('shows 50 rows at a time and pages through all 1,000 without stalling the page', async () => {
    const page = await browser.context.newPage();
    const started = Date.now();
    await page.goto(server.url);
    await page.locator('#jobs-table tbody tr').first().waitFor({ timeout: 10_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await page.locator('[data-role=page]').textContent()).toBe('page 1 of 20 · 1,000 jobs');
    expect(await page.locator('#jobs-table tbody tr').count()).toBe(50);
    expect(await page.locator('#jobs-table .st-failed').first().textContent()).toMatch(/^failed: the service answered 400/);
    // Stalled (the store's jobHealth: runnable slices, no progress for HARVEST_STALLED_AFTER_MS).
    expect(await page.locator(`#jobs-table tr[data-job="${stalledId}"] [data-role=state]`).textContent()).toMatch(/^stalled: /);
    expect(await page.locator('#jobs-table .st-stalled').count()).toBe(1);

    // Paging: the last page holds the oldest jobs; each click redraws within a couple of ticks.
    for (let i = 0; i < 19; i++) {
      const before = await page.locator('[data-role=page]').textContent();
      await page.locator('[data-role=next]').click();
      await expect.poll(() => page.locator('[data-role=page]').textContent(), { timeout: 3_000, interval: 50 }).not.toBe(before);
    }
    expect(await page.locator('[data-role=page]').textContent()).toBe('page 20 of 20 · 1,000 jobs');
    expect(await page.locator('#jobs-table tbody tr').last().getAttribute('data-job')).toMatch(/^\d+$/);
    expect(await page.locator('#jobs-table tbody tr').count()).toBe(50);
    expect(page.url()).toMatch(/\?page=20$/);

    // The main thread stays free: a trivial script answers quickly while the stream redraws.
    const t = Date.now();
    await page.locator('body').getAttribute('data-page');
    expect(Date.now() - t).toBeLessThan(500);
    await page.close();
  }, 60_000);
  it("a job of 2,100 slices lists its running, pending and failed ones first (oldest first, its page showed none of them)", async () => {
    const pool = h.services.pool;
    const { rows } = await pool.query<{ id: string }>(`INSERT INTO jobs (kind, status, params) VALUES ('search', 'running', '{}') RETURNING id::text`);
    const jobId = rows[0]!.id;
    await pool.query(
      `INSERT INTO job_slices (job_id, kind, status, params)
       SELECT $1::bigint, 'search', CASE WHEN g > 2095 THEN 'running' WHEN g > 2093 THEN 'failed' ELSE 'done' END,
              jsonb_build_object('sinceMs', 1790000000000 + g * 60000, 'untilMs', 1790000000000 + (g + 1) * 60000)
         FROM generate_series(1, 2100) g`,
      [jobId],
    );
    const extras = await jobDetailExtras(pool, jobId);
    expect(extras.slicesTotal).toBe(2100);
    expect(extras.slices).toHaveLength(2000);
    expect(extras.slices.slice(0, 6).map((x) => x.status).sort()).toEqual(['failed', 'failed', 'running', 'running', 'running', 'running']);
    await pool.query('DELETE FROM job_slices WHERE job_id = $1::bigint', [jobId]);
    await pool.query('DELETE FROM jobs WHERE id = $1::bigint', [jobId]);
  });
});

describe('the worker serves the dashboard beside /metrics', () => {
  const h = useHarness();

  it('answers / and /events with the dashboard, /metrics with Prometheus text, anything else 404', async () => {
    const handler = createDashboardHandler(h.services);
    const metrics = new HarvestMetrics({ defaultMetrics: false });
    const server = await startMetricsServer(0, metrics, '127.0.0.1', (req, res) => handler.handle(req, res));
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const page = await fetch(`${base}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/assets/dashboard.js');
      const overview = (await (await fetch(`${base}/api/overview`)).json()) as { total: number; keys: Array<{ fingerprint: string }> };
      expect(overview.total).toBe(0);
      expect(overview.keys.map((k) => k.fingerprint)).toEqual(h.config.apiKeys.map((k) => k.fingerprint));
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain('harvest_requests_total');
      expect((await fetch(`${base}/nope`)).status).toBe(404);
    } finally {
      await handler.close();
      await server.close();
    }
  });
});

describe('harvest dashboard: bad input', () => {
  it('refuses a non-loopback host without --allow-remote, in one line, before opening anything', async () => {
    // No database or Redis in this environment: the refusal must come first.
    const r = await runCli(['dashboard', '--host', '0.0.0.0'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' });
    expect(r.code).not.toBe(0);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/not a loopback address.*--allow-remote/);
  });

  it('refuses a malformed port or host in one line', async () => {
    for (const argv of [['dashboard', '--port', 'eighty'], ['dashboard', '--port', '70000'], ['dashboard', '--host', 'a b'], ['dashboard', '--bogus']]) {
      const r = await runCli(argv, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' });
      expect(r.code, argv.join(' ')).not.toBe(0);
      expect(r.err.split('\n'), argv.join(' ')).toHaveLength(1);
    }
  });
});
