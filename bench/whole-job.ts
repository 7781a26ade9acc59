/**
 * Whole-job utilization (issue 13, item 1): a search backfill of a few hundred requests (300–800 ms
 * latency), counted from its first request to its last response, on one key (one worker process,
 * default concurrency) and on three keys (one worker process, `--concurrency 64`: the default 16
 * slices cannot keep 60 req/s busy). Each run has its own database and simulator (same world).
 * The key's limiter spaces grants 1025/20 ms apart, so a run of N requests can reach at most
 * N / ((N − 1) × 51.25 ms + one latency) / 20: 0.94 at N = 300, 0.96 at 650, 0.965 at 1,000, which
 * is why the runs are ~1,000 (1 key) and ~3,000 (3 keys) requests long: at 650 the ceiling left
 * 0.01 for the ramp, the tail and a loaded machine, and runs read 0.946-0.960.
 */
import { benchWorld, pickRanges, SEARCH_PAGE_SIZE } from './backfill.ts';
import { round, startBenchEnv } from './env.ts';
import { runSearchJob, wholeJobUtilization } from './run-job.ts';

const ONE_KEY_TWEETS = Number(process.env.BENCH_WHOLE_JOB_TWEETS ?? 20_000);
/** Which runs to make: `BENCH_WHOLE_JOB_KEYS=1` runs only the one-key job (~35 s), e.g. to profile the worker. */
const KEY_COUNTS = (process.env.BENCH_WHOLE_JOB_KEYS ?? '1,3').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0);

export async function runWholeJobBench(): Promise<Record<string, number>> {
  const world = benchWorld();
  const out: Record<string, number> = {};
  for (const keys of KEY_COUNTS) {
    const [range] = pickRanges(world, 1, ONE_KEY_TWEETS * keys);
    const env = await startBenchEnv({ world, latencyMs: [300, 800] }, { keys });
    try {
      const run = await runSearchJob(
        env,
        { query: 'lang:en', since: range!.since, until: range!.until },
        { processes: 1, workerArgs: keys > 1 ? ['--concurrency', '64'] : [], expectedPages: range!.tweets / SEARCH_PAGE_SIZE },
      );
      const u = wholeJobUtilization(run.search, keys);
      process.stderr.write(
        `  whole job, ${keys} key(s): ${range!.since}..${range!.until} requests ${run.search.length} tweets ${run.tweets} utilization ${u.toFixed(3)} 429s ${run.status429} worker CPU ${run.workerCpuMsPerPage.toFixed(2)} ms/page load ${run.loadAvg.toFixed(2)}\n`,
      );
      const name = keys === 1 ? '1key' : `${keys}keys`;
      out[`rate_utilization_whole_job_${name}`] = round(u);
      out[`whole_job_requests_${name}`] = run.search.length;
      out[`whole_job_tweets_per_request_${name}`] = round(run.tweets / Math.max(1, run.search.length), 2);
      out[`whole_job_429s_${name}`] = run.status429;
      // The worker process's user+system CPU per page from 10% of the pages on (as backfill's
      // worker_process_cpu_ms_per_page, over a shorter job): a quick check of a CPU change.
      out[`whole_job_worker_cpu_ms_per_page_${name}`] = round(run.workerCpuMsPerPage, 2);
      out.whole_job_load_avg = round(run.loadAvg, 2);
    } finally {
      await env.close();
    }
  }
  return out;
}
