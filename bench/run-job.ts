/**
 * Runs one search backfill to its end on real `harvest worker` processes and returns what the
 * simulator saw (its own request log) and what the first worker spent (CPU from /proc), for the
 * whole-job and many-keys benches.
 */
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import type { RequestLogEntry } from '../src/simulator/index.ts';
import { jobSnapshot } from '../src/store/job-status.ts';
import { cpuMsOf, RATE_PER_KEY, sleep, startWorker, stopWorker, type BenchEnv } from './env.ts';

const RUN_TIMEOUT_MS = 400_000;

export interface JobRun {
  /** The run's search requests as the simulator logged them (arrival time, duration, key). */
  search: RequestLogEntry[];
  status429: number;
  pages: number;
  tweets: number;
  /** CPU of the first worker process per page, from `cpuFrom` of the job's pages to its end (ms). */
  workerCpuMsPerPage: number;
  /** Mean 1-minute load average during the run. */
  loadAvg: number;
}

export async function runSearchJob(
  env: BenchEnv,
  params: { query: string; since: string; until: string },
  options: { processes: number; workerArgs?: readonly string[]; expectedPages: number; cpuFrom?: number },
): Promise<JobRun> {
  env.sim.control.clearRequestLog();
  const jobId = await env.submit({ kind: 'search', params });
  const started = Date.now();
  const workers: ChildProcess[] = [];
  for (let i = 0; i < options.processes; i++) workers.push(startWorker(env.env, options.workerArgs));
  const first = workers[0]!;
  let cpuStart: { pages: number; ms: number } | null = null;
  let cpuEnd: { pages: number; ms: number } | null = null;
  const loads: number[] = [];
  let pages = 0;
  let tweets = 0;
  try {
    for (;;) {
      const snap = await jobSnapshot(env.services.pool, jobId);
      if (!snap) throw new Error(`job ${jobId} vanished`);
      if (snap.status === 'failed' || snap.status === 'cancelled') throw new Error(`backfill ${snap.status}: ${snap.errorMessage ?? ''}`);
      const cpu = first.pid ? cpuMsOf(first.pid) : null;
      // Start-up (tsx compiling the sources, connecting) is not charged to pages.
      if (cpu !== null) {
        if (cpuStart === null && snap.pages >= (options.cpuFrom ?? 0.1) * options.expectedPages) cpuStart = { pages: snap.pages, ms: cpu };
        if (cpuStart !== null) cpuEnd = { pages: snap.pages, ms: cpu };
      }
      pages = snap.pages;
      tweets = snap.tweets;
      if (snap.status === 'completed') break;
      if (Date.now() - started > RUN_TIMEOUT_MS) throw new Error(`backfill still ${snap.status} after ${RUN_TIMEOUT_MS} ms`);
      loads.push(loadavg()[0] ?? 0);
      await sleep(250);
    }
  } finally {
    await Promise.all(workers.map(stopWorker));
  }
  const log = env.sim.control.requestLog();
  return {
    search: log.filter((r) => r.path === '/v3/search-tweets'),
    status429: log.filter((r) => r.status === 429).length,
    pages,
    tweets,
    workerCpuMsPerPage: cpuStart && cpuEnd && cpuEnd.pages > cpuStart.pages ? (cpuEnd.ms - cpuStart.ms) / (cpuEnd.pages - cpuStart.pages) : 0,
    loadAvg: loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length),
  };
}

/**
 * Whole-job utilization: requests ÷ seconds from the first request's arrival to the last
 * response (arrival + the simulator's duration), ÷ the pooled rate. Nothing is left out: the ramp
 * and the tail count.
 */
export function wholeJobUtilization(search: readonly RequestLogEntry[], keys: number): number {
  if (search.length < 2) return 0;
  const first = Math.min(...search.map((r) => r.at));
  const last = Math.max(...search.map((r) => r.at + r.durationMs));
  return search.length / ((last - first) / 1000) / (keys * RATE_PER_KEY);
}
