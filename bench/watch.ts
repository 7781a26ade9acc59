/**
 * Watch latency under load: while a search backfill saturates the one key (an in-process
 * Harvester, 300–800 ms simulator latency), a mentions watch falls due (runWatchTick, as the
 * scheduler's tick runs it) and we time from that moment to the simulator's log entry of the
 * pass's first /v3/mentions request. The watch's creation (its first pass is queued by submit) is
 * one more sample. The figure is the MAX over all samples; the median is reported beside it.
 */
import { Harvester } from '../src/jobs/harvester.ts';
import { runWatchTick } from '../src/jobs/watch.ts';
import { BACKFILL_QUERY, benchWorld, pickRanges } from './backfill.ts';
import { RATE_PER_KEY, round, sleep, startBenchEnv, type BenchEnv } from './env.ts';

const TICKS = Number(process.env.BENCH_WATCH_TICKS ?? 6);
const WAIT_MS = 20_000;

async function firstMentionsAt(env: BenchEnv, fromMs: number): Promise<number> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const hit = env.sim.control.requestLog().find((r) => r.path === '/v3/mentions' && r.at >= fromMs);
    if (hit) return hit.at;
    if (Date.now() > deadline) throw new Error(`no /v3/mentions request within ${WAIT_MS} ms of the watch falling due`);
    await sleep(5);
  }
}

async function passActive(env: BenchEnv, jobId: string): Promise<boolean> {
  const { rows } = await env.services.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM job_slices WHERE job_id = $1::bigint AND status IN ('pending', 'running')`,
    [jobId],
  );
  return (rows[0]?.n ?? 0) > 0;
}

/**
 * Backfill requests per second over `ms` ending a second ago (is the key saturated?). The log
 * gets an entry when the answer is sent, so the last (latency) of arrivals is not in it yet.
 */
function recentRate(env: BenchEnv, ms: number): number {
  const until = Date.now() - 1000;
  const since = until - ms;
  return env.sim.control.requestLog().filter((r) => r.path === '/v3/search-tweets' && r.at >= since && r.at < until).length / (ms / 1000);
}

async function waitForSaturation(env: BenchEnv): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (recentRate(env, 2000) < RATE_PER_KEY * 0.75 && Date.now() < deadline) await sleep(200);
}

export async function runWatchBench(): Promise<Record<string, number>> {
  const world = benchWorld();
  // The third range: the backfill bench uses the first two; this one only needs to outlast the ticks.
  const range = pickRanges(world, 3, 20_000)[2]!;
  const env = await startBenchEnv({ world, latencyMs: [300, 800] });
  const harvester = new Harvester(env.services, { concurrency: 16, quotaSyncMs: 3_600_000 });
  const samples: number[] = [];
  const rates: number[] = [];
  try {
    await harvester.start();
    await env.submit({ kind: 'search', params: { query: BACKFILL_QUERY, since: range.since, until: range.until } });
    await waitForSaturation(env);
    let t0 = Date.now();
    rates.push(recentRate(env, 2000));
    const jobId = await env.submit({ kind: 'mentions', params: { handle: 'newsdesk', everySeconds: 3600 } });
    samples.push((await firstMentionsAt(env, t0)) - t0);
    for (let i = 0; i < TICKS; i++) {
      while (await passActive(env, jobId)) await sleep(20);
      await sleep(500 + Math.random() * 1000);
      rates.push(recentRate(env, 2000));
      t0 = Date.now();
      const sliceId = await runWatchTick(jobId, { pool: env.services.pool, queues: env.services.queues });
      if (sliceId === null) throw new Error('the watch tick started no pass');
      samples.push((await firstMentionsAt(env, t0)) - t0);
    }
  } finally {
    await harvester.stop();
    await env.close();
  }
  const sorted = [...samples].sort((a, b) => a - b);
  process.stderr.write(`  watch: samples ms ${samples.join(', ')}; backfill req/s at each tick ${rates.map((r) => r.toFixed(1)).join(', ')}\n`);
  return {
    watch_first_request_ms: Math.max(...samples),
    watch_first_request_ms_median: sorted[Math.floor(sorted.length / 2)] ?? 0,
    watch_backfill_rate_during: round(Math.min(...rates) / RATE_PER_KEY, 2),
  };
}
