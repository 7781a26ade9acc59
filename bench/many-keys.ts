/**
 * Many keys (issue 13, item 4): ten keys (200 req/s) on the simulator, 300–800 ms latency, a search
 * backfill of ~40,000 tweets walked by ONE worker process (`--concurrency 200`), then by three.
 * Per key, utilization is its search requests over the middle 80% of the run's requests (as in
 * backfill.ts) ÷ 20; `many_keys_utilization` is the lowest key's. 429s are every 429 the simulator
 * answered (`many_keys_429s`: the one-process run; `_3proc` and `_total` beside it); worker CPU per page is the first worker's user+system CPU from 10% of the pages to the
 * end, ÷ pages (so with three processes it is not reported).
 */
import { benchWorld, pickRanges, SEARCH_PAGE_SIZE, steadyRate } from './backfill.ts';
import { RATE_PER_KEY, round, startBenchEnv } from './env.ts';
import { runSearchJob, wholeJobUtilization, type JobRun } from './run-job.ts';

const KEYS = 10;
const TWEETS = Number(process.env.BENCH_MANY_KEYS_TWEETS ?? 40_000);

function perKey(run: JobRun): number[] {
  const byKey = new Map<string, number[]>();
  for (const r of run.search) byKey.set(r.keyFingerprint ?? '?', [...(byKey.get(r.keyFingerprint ?? '?') ?? []), r.at]);
  // The window is the run's middle 80% (all keys together), so a key that idles there counts low.
  const all = run.search.map((r) => r.at).sort((a, b) => a - b);
  const lo = all[Math.floor(all.length * 0.1)] ?? 0;
  const hi = all[Math.ceil(all.length * 0.9) - 1] ?? 0;
  const spanS = (hi - lo) / 1000;
  const keys = [...byKey.values()].map((times) => times.filter((t) => t >= lo && t <= hi).length / spanS / RATE_PER_KEY);
  while (keys.length < KEYS) keys.push(0);
  return keys;
}

export async function runManyKeysBench(): Promise<Record<string, number>> {
  const world = benchWorld();
  const ranges = pickRanges(world, 2, TWEETS);
  const out: Record<string, number> = {};
  // BENCH_MANY_KEYS_PROCESSES=3 runs only the three-process case (e.g. to profile or compare it).
  const runs = (process.env.BENCH_MANY_KEYS_PROCESSES ?? '1,3').split(',').map(Number);
  for (const [i, processes] of [1, 3].entries()) {
    if (!runs.includes(processes)) continue;
    const range = ranges[i]!;
    const env = await startBenchEnv({ world, latencyMs: [300, 800] }, { keys: KEYS });
    try {
      const run = await runSearchJob(
        env,
        { query: 'lang:en', since: range.since, until: range.until },
        { processes, workerArgs: ['--concurrency', String(Math.ceil(200 / processes))], expectedPages: range.tweets / SEARCH_PAGE_SIZE },
      );
      const keys = perKey(run);
      const steady = steadyRate(run.search.map((r) => r.at)) / (KEYS * RATE_PER_KEY);
      process.stderr.write(
        `  ${KEYS} keys, ${processes} process(es): requests ${run.search.length} per key ${keys.map((k) => k.toFixed(2)).join(' ')} ` +
          `steady ${steady.toFixed(3)} whole ${wholeJobUtilization(run.search, KEYS).toFixed(3)} 429s ${run.status429} cpu/page ${run.workerCpuMsPerPage.toFixed(2)} load ${run.loadAvg.toFixed(2)}\n`,
      );
      const suffix = processes === 1 ? '' : `_${processes}proc`;
      out[`many_keys_utilization${suffix}`] = round(Math.min(...keys));
      out[`many_keys_utilization_mean${suffix}`] = round(steady);
      out[`many_keys_429s${suffix}`] = run.status429;
      // The headline counts both runs' 429s.
      out.many_keys_429s_total = (out.many_keys_429s_total ?? 0) + run.status429;
      if (processes === 1) out.many_keys_worker_cpu_ms_per_page = round(run.workerCpuMsPerPage, 2);
      out[`many_keys_load_avg${suffix}`] = round(run.loadAvg, 2);
    } finally {
      await env.close();
    }
  }
  return out;
}
