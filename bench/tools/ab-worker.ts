/**
 * A/B of the worker's CPU per page: two builds measured at the same time, so both see the same
 * machine. On the shared 2-core box, one build's `worker_process_cpu_ms_per_page` moves 12–30%
 * between full runs; two A/A runs of this tool (one build on both sides) read B/A 0.983 and 1.071.
 *
 *   git worktree add ../harvest-b <commit> && ln -s "$PWD/node_modules" ../harvest-b/node_modules
 *   AB_B=../harvest-b npx tsx bench/tools/ab-worker.ts
 *
 * Each round starts two bench environments (own simulator with the backfill bench's world and
 * 300–800 ms latency, own database and Redis prefix, one key at 20 requests/s), submits one search
 * job to each over two disjoint date ranges of ~AB_TWEETS tweets, and runs build A's
 * `harvest worker` on one and build B's on the other at once; odd rounds swap the ranges. CPU per
 * page is the worker process's user+system CPU from 10% of the pages to the end, as the backfill
 * bench takes it.
 *
 * AB_A / AB_B: checkouts (default A: this one); AB_ROUNDS (default 2); AB_TWEETS (default 20,000,
 * ~1 minute a round); AB_A_ARGS / AB_B_ARGS: node options for that worker (`--max-semi-space-size=64`);
 * AB_A_ENV / AB_B_ENV: `NAME=value …` added to that worker's environment (`HARVEST_RATE_PER_KEY=10`).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchWorld, pickRanges, SEARCH_PAGE_SIZE } from '../backfill.ts';
import { cpuMsOf, sleep, startBenchEnv, stopWorker, type BenchEnv } from '../env.ts';
import { jobSnapshot } from '../../src/store/job-status.ts';

type Variant = 'A' | 'B';

const HERE_TREE = fileURLToPath(new URL('../../', import.meta.url));
const ROUNDS = Number(process.env.AB_ROUNDS ?? 2);
const TWEETS = Number(process.env.AB_TWEETS ?? 20_000);

function tree(variant: Variant): string {
  const dir = process.env[`AB_${variant}`] ?? (variant === 'A' ? HERE_TREE : undefined);
  if (!dir) throw new Error('AB_B must name the other checkout (see the top of bench/tools/ab-worker.ts)');
  return resolve(dir);
}

const words = (name: string): string[] => (process.env[name] ?? '').split(' ').filter((w) => w.length > 0);

/** Runs one job to its end on `variant`'s worker; answers its CPU ms per page from 10% of the pages on. */
async function cpuPerPage(variant: Variant, env: BenchEnv, range: { since: string; until: string; tweets: number }): Promise<number> {
  const jobId = await env.submit({ kind: 'search', params: { query: 'lang:en', since: range.since, until: range.until } });
  const extraEnv = Object.fromEntries(words(`AB_${variant}_ENV`).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const child = spawn(process.execPath, [...words(`AB_${variant}_ARGS`), `${tree(variant)}/bin/harvest.js`, 'worker'], {
    env: { ...process.env, ...env.env, ...extraEnv },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const from = 0.1 * (range.tweets / SEARCH_PAGE_SIZE);
  let start: { pages: number; ms: number } | null = null;
  let end: { pages: number; ms: number } | null = null;
  try {
    for (;;) {
      const snap = await jobSnapshot(env.services.pool, jobId);
      if (!snap) throw new Error(`job ${jobId} vanished`);
      const cpu = child.pid ? cpuMsOf(child.pid) : null;
      if (cpu !== null) {
        if (start === null && snap.pages >= from) start = { pages: snap.pages, ms: cpu };
        if (start !== null) end = { pages: snap.pages, ms: cpu };
      }
      if (snap.status === 'failed' || snap.status === 'cancelled') throw new Error(`${variant}: job ${snap.status}: ${snap.errorMessage ?? ''}`);
      if (snap.status === 'completed') break;
      await sleep(250);
    }
  } finally {
    await stopWorker(child);
  }
  return start && end && end.pages > start.pages ? (end.ms - start.ms) / (end.pages - start.pages) : Number.NaN;
}

async function main(): Promise<void> {
  const world = benchWorld();
  const ranges = pickRanges(world, 2, TWEETS);
  const seen: Record<Variant, number[]> = { A: [], B: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const envs = await Promise.all([0, 1].map(() => startBenchEnv({ world, latencyMs: [300, 800] })));
    try {
      const order: Variant[] = round % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
      const out = await Promise.all(order.map((v, i) => cpuPerPage(v, envs[i]!, ranges[i]!)));
      order.forEach((v, i) => seen[v].push(out[i]!));
      process.stdout.write(`round ${round + 1}: ${order.map((v, i) => `${v} ${out[i]!.toFixed(2)}`).join('  ')} ms/page\n`);
    } finally {
      await Promise.all(envs.map((e) => e.close()));
    }
  }
  const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  process.stdout.write(`A ${mean(seen.A).toFixed(2)}  B ${mean(seen.B).toFixed(2)} ms/page  B/A ${(mean(seen.B) / mean(seen.A)).toFixed(3)}\n`);
}

await main();
