/**
 * Rate utilization and request efficiency of a real search backfill on ONE key: real
 * `harvest worker` processes (one, then three) against the in-process simulator with 300–800 ms
 * latency, each run a job over its own disjoint date range holding at least 40,000 matching tweets.
 *
 * Utilization is read from the simulator's own request log, over the middle 80% of the run's
 * search requests (the ramp-up and the tail, where fewer slices remain than the rate needs, are
 * left out): requests ÷ seconds between the 10th- and 90th-percentile request, ÷ the key's rate.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createWorld, DEFAULT_START_MS } from '../src/simulator/world/index.ts';
import type { World } from '../src/simulator/index.ts';
import { searchTweets } from '../src/simulator/search/index.ts';
import type { RequestLogEntry } from '../src/simulator/index.ts';
import { jobSnapshot } from '../src/store/job-status.ts';
import { cpuMsOf, RATE_PER_KEY, round, rssMb, sleep, startBenchEnv, startWorker, stopWorker, type BenchEnv } from './env.ts';

export const BACKFILL_QUERY = 'lang:en';
export const SEARCH_PAGE_SIZE = 20;
const MIN_TWEETS = Number(process.env.BENCH_BACKFILL_TWEETS ?? 40_000);
const RUN_TIMEOUT_MS = 400_000;
/** `BENCH_BACKFILL_ONE_PROCESS=1` runs only the one-process job (~2 min instead of ~4): its figures alone. */
const ONE_PROCESS_ONLY = process.env.BENCH_BACKFILL_ONE_PROCESS === '1';
const DAY_MS = 86_400_000;
const FLOOR_CLIENT = fileURLToPath(new URL('./tools/floor-client.ts', import.meta.url));
/** The floor's measured window, after a warm-up as long as the worker's first 10% of pages. */
const FLOOR_WARM_MS = 12_000;
const FLOOR_MS = 45_000;

export const benchWorld = (): World => createWorld({ seed: 3, scale: { users: 5000, tweets: 400_000 } });

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export function countMatches(world: World, query: string): number {
  let n = 0;
  let state: string | undefined;
  for (;;) {
    const page = searchTweets(world, { query, order: 'latest', limit: 500, ...(state ? { state } : {}) });
    n += page.indices.length;
    if (page.nextState === null) return n;
    state = page.nextState;
  }
}

/** Consecutive whole-day ranges from the world's start, each holding at least `min` matches. */
export function pickRanges(world: World, count: number, min: number): Array<{ since: string; until: string; tweets: number }> {
  const out: Array<{ since: string; until: string; tweets: number }> = [];
  let day = DEFAULT_START_MS;
  for (let r = 0; r < count; r++) {
    const since = day;
    let tweets = 0;
    while (tweets < min) {
      tweets += countMatches(world, `${BACKFILL_QUERY} since:${isoDay(day)} until:${isoDay(day + DAY_MS)}`);
      day += DAY_MS;
      if (day - since > 60 * DAY_MS) throw new Error(`the bench world is too small for ${min} matching tweets in a range`);
    }
    out.push({ since: isoDay(since), until: isoDay(day), tweets });
  }
  return out;
}

/** Requests per second over the middle 80% of the given request times. */
export function steadyRate(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  if (sorted.length < 20) return 0;
  const lo = Math.floor(sorted.length * 0.1);
  const hi = Math.ceil(sorted.length * 0.9) - 1;
  const spanS = (sorted[hi]! - sorted[lo]!) / 1000;
  return spanS > 0 ? (hi - lo) / spanS : 0;
}

interface RunResult {
  utilization: number;
  utilizationFullSpan: number;
  status429: number;
  requests: number;
  tweets: number;
  seconds: number;
  rssStartMb: number;
  rssEndMb: number;
  cpuMsPerPage: number;
  /** The same from half of the pages to the end: what is left once the JIT has warmed (reference). */
  cpuMsPerPageSecondHalf: number;
  /** Mean 1-minute load average while the run walked: the machine is shared, the rate moves with it. */
  loadAvg: number;
  /** Most requests that arrived in one wall-clock second (the service's window; 21+ means a 429). */
  busiestSecond: number;
}

function busiestSecond(log: readonly RequestLogEntry[]): number {
  const perSecond = new Map<number, number>();
  for (const r of log) if (r.path.startsWith('/v3/')) perSecond.set(Math.floor(r.at / 1000), (perSecond.get(Math.floor(r.at / 1000)) ?? 0) + 1);
  return Math.max(0, ...perSecond.values());
}

/** Worker CPU per page between the first sample at `from` × the pages and the last sample. */
function cpuPerPageFrom(samples: ReadonlyArray<{ pages: number; ms: number }>, from: number): number {
  const last = samples.at(-1);
  const first = last ? samples.find((s) => s.pages >= last.pages * from) : undefined;
  return first && last && last.pages > first.pages ? (last.ms - first.ms) / (last.pages - first.pages) : 0;
}

async function runBackfill(env: BenchEnv, range: { since: string; until: string }, processes: number): Promise<RunResult> {
  env.sim.control.clearRequestLog();
  const jobId = await env.submit({ kind: 'search', params: { query: BACKFILL_QUERY, since: range.since, until: range.until } });
  const started = Date.now();
  const workers: ChildProcess[] = [];
  for (let i = 0; i < processes; i++) workers.push(startWorker(env.env));
  const first = workers[0]!;
  const rss: Array<{ pages: number; mb: number }> = [];
  let cpuStart: { pages: number; ms: number } | null = null;
  let cpuEnd: { pages: number; ms: number } | null = null;
  const cpuSamples: Array<{ pages: number; ms: number }> = [];
  const loads: number[] = [];
  try {
    for (;;) {
      const snap = await jobSnapshot(env.services.pool, jobId);
      if (!snap) throw new Error(`job ${jobId} vanished`);
      if (snap.status === 'failed' || snap.status === 'cancelled') throw new Error(`backfill ${snap.status}: ${snap.errorMessage ?? ''}`);
      if (snap.status === 'completed') break;
      if (Date.now() - started > RUN_TIMEOUT_MS) throw new Error(`backfill still ${snap.status} after ${RUN_TIMEOUT_MS} ms`);
      loads.push(loadavg()[0] ?? 0);
      const mb = first.pid ? rssMb(first.pid) : null;
      if (mb !== null && snap.pages > 0) rss.push({ pages: snap.pages, mb });
      const cpu = first.pid ? cpuMsOf(first.pid) : null;
      // Worker CPU per page is taken between 10% and the last sample, so start-up (tsx
      // compiling the sources) is not charged to pages.
      if (cpu !== null && processes === 1) {
        if (cpuStart === null && snap.pages >= 0.1 * (MIN_TWEETS / SEARCH_PAGE_SIZE)) cpuStart = { pages: snap.pages, ms: cpu };
        if (cpuStart !== null) cpuEnd = { pages: snap.pages, ms: cpu };
        cpuSamples.push({ pages: snap.pages, ms: cpu });
      }
      await sleep(500);
    }
  } finally {
    await Promise.all(workers.map(stopWorker));
  }
  const seconds = (Date.now() - started) / 1000;
  const log = env.sim.control.requestLog();
  const search = log.filter((r: RequestLogEntry) => r.path === '/v3/search-tweets');
  const times = search.map((r) => r.at);
  const fullSpanS = times.length > 1 ? (Math.max(...times) - Math.min(...times)) / 1000 : 0;
  const { rows } = await env.services.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM job_tweets WHERE job_id = $1::bigint', [jobId]);
  // Early = the first sample after 10% of the pages (warm: sources compiled, pools and caches
  // filled); late = the last sample before the job completed.
  const totalPages = rss.at(-1)?.pages ?? 0;
  // RSS moves ±10% with every major GC, so one sample at each end measures the collector, not a
  // trend: compare the median over 10-30% of the run with the median over its last 20%.
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const window = (from: number, to: number) => rss.filter((s) => s.pages >= totalPages * from && s.pages <= totalPages * to).map((s) => s.mb);
  return {
    utilization: steadyRate(times) / RATE_PER_KEY,
    utilizationFullSpan: fullSpanS > 0 ? (times.length - 1) / fullSpanS / RATE_PER_KEY : 0,
    status429: log.filter((r) => r.status === 429).length,
    requests: search.length,
    tweets: rows[0]?.n ?? 0,
    seconds,
    rssStartMb: median(window(0.1, 0.3)),
    rssEndMb: median(window(0.8, 1)),
    loadAvg: loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length),
    busiestSecond: busiestSecond(log),
    cpuMsPerPage: cpuStart && cpuEnd && cpuEnd.pages > cpuStart.pages ? (cpuEnd.ms - cpuStart.ms) / (cpuEnd.pages - cpuStart.pages) : 0,
    cpuMsPerPageSecondHalf: cpuPerPageFrom(cpuSamples, 0.5),
  };
}

/**
 * CPU per request of a process doing only the HTTP exchange and JSON.parse at the worker's pace
 * (bench/tools/floor-client.ts), on the same simulator and machine, right after the worker's run:
 * what no worker can go below here, so the worker's figure can be read against the machine.
 */
async function floorCpuMsPerPage(env: BenchEnv, range: { since: string; until: string }): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', FLOOR_CLIENT], {
    env: {
      ...process.env,
      FLOOR_BASE_URL: env.sim.url,
      FLOOR_KEY: env.env.HARVEST_API_KEYS!.split(',')[0]!,
      FLOOR_QUERY: `${BACKFILL_QUERY} since:${range.since} until:${range.until}`,
      // The limiter's grant interval at its default 25 ms of headroom a second.
      FLOOR_INTERVAL_MS: String((1000 + 25) / RATE_PER_KEY),
      FLOOR_WARM_MS: String(FLOOR_WARM_MS),
      FLOOR_MS: String(FLOOR_MS),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const result = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { cpuMsPerRequest?: number; failed?: number };
  if (code !== 0 || typeof result.cpuMsPerRequest !== 'number' || result.failed !== 0) throw new Error(`the floor client failed (exit ${code}): ${out}`);
  return result.cpuMsPerRequest;
}

export async function runBackfillBench(): Promise<Record<string, number>> {
  const world = benchWorld();
  const [one, three] = pickRanges(world, 2, MIN_TWEETS);
  const env = await startBenchEnv({ world, latencyMs: [300, 800] });
  try {
    const r1 = await runBackfill(env, one!, 1);
    process.stderr.write(`  1 process: ${one!.since}..${one!.until} ${JSON.stringify(r1)}\n`);
    const floor = await floorCpuMsPerPage(env, one!);
    process.stderr.write(`  floor (HTTP exchange and JSON.parse alone): ${floor.toFixed(3)} ms a request\n`);
    const floorFigures = { worker_floor_cpu_ms_per_page: round(floor, 2), worker_cpu_over_floor: round(r1.cpuMsPerPage / floor, 2) };
    if (ONE_PROCESS_ONLY) {
      return {
        ...floorFigures,
        rate_utilization_1proc: round(r1.utilization),
        backfill_tweets_1proc: r1.tweets,
        worker_rss_mb_start: round(r1.rssStartMb, 1),
        worker_rss_mb_end: round(r1.rssEndMb, 1),
        worker_process_cpu_ms_per_page: round(r1.cpuMsPerPage, 2),
        worker_process_cpu_ms_per_page_second_half: round(r1.cpuMsPerPageSecondHalf, 2),
      };
    }
    const r3 = await runBackfill(env, three!, 3);
    process.stderr.write(`  3 processes: ${three!.since}..${three!.until} ${JSON.stringify(r3)}\n`);
    return {
      rate_utilization_1proc: round(r1.utilization),
      rate_utilization_3proc: round(r3.utilization),
      rate_429s: r1.status429 + r3.status429,
      tweets_per_request: round((r1.tweets + r3.tweets) / (r1.requests + r3.requests), 2),
      page_size: SEARCH_PAGE_SIZE,
      backfill_tweets_1proc: r1.tweets,
      backfill_tweets_3proc: r3.tweets,
      worker_rss_mb_start: round(r1.rssStartMb, 1),
      worker_rss_mb_end: round(r1.rssEndMb, 1),
      worker_process_cpu_ms_per_page: round(r1.cpuMsPerPage, 2),
      worker_process_cpu_ms_per_page_second_half: round(r1.cpuMsPerPageSecondHalf, 2),
      ...floorFigures,
      backfill_load_avg: round((r1.loadAvg + r3.loadAvg) / 2, 2),
    };
  } finally {
    await env.close();
  }
}
