/**
 * The dashboard in a real browser (system chromium), against a real worker, Postgres, Redis and
 * the simulator: a backfill's progress moves in the page, a key the service refuses for quota
 * shows as parked, a watch shows its next pass, a job's page draws its slices and charts, every
 * browser is fed by one query loop, and nothing writes or shows a key.
 */
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createDashboardHandler, startDashboardServer, type DashboardHandler, type DashboardServer } from '../../src/dashboard/server.ts';
import { Harvester } from '../../src/jobs/harvester.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';
import { useHarness } from '../helpers/harness.ts';
import { launchBrowser, type Browser } from './browser.ts';

const KEYS = ['dash-key-live', 'dash-key-spent'];

async function progressOf(page: Page, jobId: string): Promise<number> {
  const v = await page.locator(`#jobs-table tr[data-job="${jobId}"] [role=progressbar]`).getAttribute('aria-valuenow', { timeout: 10_000 });
  return Number(v);
}

describe('dashboard in a browser', () => {
  // 4 req/s per key and 40-120 ms answers: the week's backfill takes long enough to watch it move.
  const h = useHarness({ keys: KEYS, rate: 4, simulator: { latencyMs: [40, 120] } });
  let browser: Browser;
  let handler: DashboardHandler;
  let server: DashboardServer;
  let harvester: Harvester;
  let backfillId: string;
  let watchId: string;

  beforeAll(async () => {
    // The second key is refused for quota (403) on its first request: the limiter parks it.
    h.sim.control.setQuota(KEYS[1]!, 0);
    handler = createDashboardHandler(h.services, { intervalMs: 300 });
    server = await startDashboardServer(handler, 0, '127.0.0.1');
    browser = await launchBrowser();
    const w = h.sim.world;
    const target = [...w.users].filter((u) => !u.protected && !u.suspended && !u.deleted).sort((a, b) => w.mentionsOf(b.index).length - w.mentionsOf(a.index).length)[0]!;
    watchId = await h.submit({ kind: 'mentions', params: { handle: target.username, everySeconds: 3600, since: '2026-10-20' } });
    backfillId = await h.submit({ kind: 'search', params: { query: 'lang:en', since: '2026-10-01', until: '2026-10-15' } });
    harvester = new Harvester(h.services, { concurrency: 4, quotaSyncMs: 3_600_000 });
    await harvester.start();
  });

  afterAll(async () => {
    await harvester?.stop();
    await browser?.close();
    await server?.close();
  });

  it('shows the backfill moving, the refused key parked and the watch with its next pass', async () => {
    const page = await browser.context.newPage();
    await page.goto(server.url);
    await page.locator(`#jobs-table tr[data-job="${backfillId}"]`).waitFor({ timeout: 10_000 });

    // Progress moves in the page (the stream redraws it; nobody reloads).
    const first = await progressOf(page, backfillId);
    await expect.poll(() => progressOf(page, backfillId), { timeout: 25_000, interval: 300 }).toBeGreaterThan(first);
    const tweetsShown = async () => Number((await page.locator(`#jobs-table tr[data-job="${backfillId}"] [data-role=tweets]`).textContent())?.replace(/,/g, ''));
    await expect.poll(tweetsShown, { timeout: 10_000 }).toBeGreaterThan(0);

    // The key refused for quota is parked, the other is active; keys appear by fingerprint only.
    const spent = keyFingerprint(KEYS[1]!);
    const live = keyFingerprint(KEYS[0]!);
    await expect.poll(() => page.locator(`.key[data-key="${spent}"] [data-role=key-state]`).textContent(), { timeout: 20_000 }).toMatch(/^parked/);
    expect(await page.locator(`.key[data-key="${live}"] [data-role=key-state]`).textContent()).toBe('active');
    expect(await page.content()).not.toContain(KEYS[0]);
    expect(await page.content()).not.toContain(KEYS[1]);

    // The watch's first pass ends and the page shows when the next one is due.
    await expect.poll(() => page.locator(`#watches-table tr[data-watch="${watchId}"] [data-role=next-pass]`).textContent(), { timeout: 25_000 }).toMatch(/^in (59 m|1 h 0 m)/);
    await expect.poll(() => page.locator(`#jobs-table tr[data-job="${watchId}"] [data-role=state]`).textContent(), { timeout: 25_000 }).toMatch(/^scheduled \(next pass in/);

    // A chart in the picture, then the screenshot (test-artifacts/, gitignored).
    await page.locator('.key canvas').first().waitFor();
    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/dashboard.png', fullPage: true });
    await page.close();
  }, 90_000);

  it("draws a job's page: tweets per day, slices over the range, requests by status, example SQL", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${server.url}jobs/${backfillId}`);
    await page.locator('#per-day canvas').waitFor({ timeout: 10_000 });
    await expect.poll(() => page.locator('[data-role=timeline] i').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const snap = await jobSnapshot(h.services.pool, backfillId);
    expect(await page.locator('#slices tr[data-slice]').count()).toBeGreaterThanOrEqual(Math.min(200, snap!.slices.done + snap!.slices.running + snap!.slices.pending));
    expect(await page.locator('#requests').textContent()).toContain('200');
    expect(await page.locator('#sql pre').first().textContent()).toContain(`WHERE job_id = ${backfillId}`);
    await page.screenshot({ path: 'test-artifacts/dashboard-job.png', fullPage: true });
    // The page is redrawn every second: an opened params box stays open, a scrolled slice table
    // stays where the reader left it.
    // (a few slices only: a low box makes the table scroll). Each step in one task of the page:
    // a redraw between finding an element and using it would hand over a detached one.
    await page.addStyleTag({ content: '#slices .scroll { max-height: 12px !important; overflow: auto !important; }' });
    // (evaluated as page scripts: the tests compile without the DOM's types)
    const scrolled = Number(
      await page.evaluate(`(() => {
        const params = [...document.querySelectorAll('details')].find((d) => d.querySelector('summary')?.textContent === 'params');
        params?.setAttribute('open', '');
        const box = document.querySelector('#slices .scroll');
        box.scrollTop = Math.min(10, box.scrollHeight - box.clientHeight);
        return box.scrollTop;
      })()`),
    );
    expect(scrolled).toBeGreaterThan(0);
    const ticks = async () => Number(await page.locator('body').getAttribute('data-ticks'));
    const seen = await ticks();
    await expect.poll(ticks, { timeout: 10_000 }).toBeGreaterThanOrEqual(seen + 2);
    const after = await page.evaluate(`({
      open: [...document.querySelectorAll('details')].find((d) => d.querySelector('summary')?.textContent === 'params')?.hasAttribute('open'),
      scrollTop: document.querySelector('#slices .scroll').scrollTop,
    })`);
    expect(after).toEqual({ open: true, scrollTop: scrolled });
    await page.close();
  }, 30_000);

  it('feeds every browser from one query loop: three tabs on a page cost one load per tick', async () => {
    // Every page of the tests before is closed: their streams end and leave the loop.
    await expect.poll(() => handler.hub.stats().subscribers, { timeout: 5_000 }).toBe(0);
    const base = 0;
    const pages = await Promise.all([0, 1, 2].map(() => browser.context.newPage()));
    await Promise.all(pages.map((p) => p.goto(server.url)));
    await Promise.all(pages.map((p) => p.locator('#jobs-table').waitFor()));
    await expect.poll(() => handler.hub.stats().subscribers, { timeout: 5_000 }).toBe(base + 3);
    const before = handler.hub.stats();
    await new Promise((r) => setTimeout(r, 2_000));
    const after = handler.hub.stats();
    const ticks = after.ticks - before.ticks;
    expect(ticks).toBeGreaterThanOrEqual(3);
    // One topic (overview page 1): one load per tick, not one per tab.
    expect(after.loads - before.loads).toBeLessThanOrEqual(ticks + 1);
    // Every tab did get the ticks.
    for (const p of pages) expect(Number(await p.locator('body').getAttribute('data-ticks'))).toBeGreaterThanOrEqual(3);
    await Promise.all(pages.map((p) => p.close()));
    await expect.poll(() => handler.hub.stats().subscribers, { timeout: 5_000 }).toBe(base);
  }, 30_000);

  it('is read-only and never shows a key', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await fetch(server.url, { method });
      expect(res.status).toBe(405);
    }
    const overview = await (await fetch(`${server.url}api/overview`)).text();
    const job = await (await fetch(`${server.url}api/jobs/${backfillId}`)).text();
    for (const body of [overview, job]) for (const key of KEYS) expect(body).not.toContain(key);
    expect((await fetch(`${server.url}api/jobs/99999999`)).status).toBe(404);
    expect((await fetch(`${server.url}jobs/abc`)).status).toBe(404);
    expect((await fetch(`${server.url}events?page=zero`)).status).toBe(400);
    const html = await fetch(server.url);
    expect(html.headers.get('content-security-policy')).toContain("default-src 'self'");
  });
});
