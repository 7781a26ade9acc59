/**
 * Worker CPU per page on the page path, without network or database: recorded simulator response
 * bodies (POST /v3/search-tweets, 20 tweets each, production-like explicit nulls) go through what a
 * worker does between receiving a body and handing the commit's SQL to the driver:
 *   JSON.parse → readPage with the v3 tweet reader (zod validation + normalisation) → the job
 *   layer's tweetPage/oldestMs/cursorHash → commitPage (collectPage dedup/merge/sort, every
 *   statement's parameter arrays, array literals and jsonb text) against a recording pool that
 *   answers at once, with pg's own prepareValue applied to every parameter as the driver would.
 * Not counted: the HTTP exchange and body decoding (undici), the limiter's Redis round trips,
 * BullMQ bookkeeping, pg wire encoding/decoding and the database's work. Measured with
 * process.cpuUsage (user + system, GC included) over many passes after a warm-up pass.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { tweetV3Reader } from '../src/api-client/readers.ts';
import { readPage } from '../src/api-client/page.ts';
import { oldestMs, tweetPage } from '../src/jobs/kinds/pages.ts';
import { cursorHash } from '../src/jobs/slice-runner.ts';
import { startSimulator } from '../src/simulator/index.ts';
import { createWorld } from '../src/simulator/world/index.ts';
import { commitPage } from '../src/store/commit-page.ts';
import type { Pool } from '../src/store/db.ts';
import { round } from './env.ts';

const require = createRequire(import.meta.url);
const { prepareValue } = require('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown };

const PAGES = 200;
const PASSES = Number(process.env.BENCH_CPU_PASSES ?? 10);

async function recordBodies(): Promise<string[]> {
  const key = 'bench-cpu-key';
  const world = createWorld({ seed: 5, scale: { users: 5000, tweets: 50_000 } });
  const sim = await startSimulator({ world, keys: [{ key, quota: 1_000_000 }], ratePerKey: 1000 });
  try {
    const bodies: string[] = [];
    let cursor: string | null = null;
    while (bodies.length < PAGES) {
      const res = await fetch(`${sim.url}/v3/search-tweets`, {
        method: 'POST',
        headers: { ApiKey: key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: 'lang:en', order: 'latest', ...(cursor ? { next_cursor: cursor } : {}) }),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`simulator answered ${res.status}: ${text.slice(0, 200)}`);
      bodies.push(text);
      cursor = (JSON.parse(text) as { next_cursor?: string | null }).next_cursor ?? null;
      if (!cursor) break;
    }
    return bodies;
  } finally {
    await sim.close();
  }
}

/** A pool whose one client answers every statement at once, after preparing its parameters as pg does. */
function recordingPool(): Pool {
  // One row that answers every statement: the lock and the advance find slice '1'.
  const rows = [{ id: '1', stored: 20, new_tweets: 20, new_ids: [], slices: 1, jobs: 1, n: 1, stale_pages: 0, pages: '1', job_tweets: '20' }];
  const answers = new Map<string, { rows: typeof rows; rowCount: number; command: string }>();
  // An emitter, as pg's client is: the store listens for connection errors while it holds one. It
  // also has what a pipelined transaction (db.ts) reaches into: the socket to cork, the pipeline
  // flag, and each result's `command` (a COMMIT is checked to have answered COMMIT).
  const client = Object.assign(new EventEmitter(), {
    pipeline: false,
    connection: { stream: { cork() {}, uncork() {} } },
    query(config: string | pg.QueryConfig) {
      if (typeof config !== 'string') for (const v of config.values ?? []) prepareValue(v);
      const text = typeof config === 'string' ? config : config.text;
      const command = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '';
      let answer = answers.get(command);
      if (!answer) answers.set(command, (answer = { rows, rowCount: 1, command }));
      return Promise.resolve(answer);
    },
    release() {},
  });
  return { connect: () => Promise.resolve(client) } as unknown as Pool;
}

async function processPage(pool: Pool, body: string, cursor: string | null): Promise<void> {
  const json = JSON.parse(body.trim()) as unknown;
  const page = readPage(json, ['tweets'], tweetV3Reader);
  const fetched = tweetPage('POST /v3/search-tweets', page);
  oldestMs(page.items);
  const next = fetched.nextCursor;
  await commitPage(pool, {
    jobId: '1',
    sliceId: '1',
    expectedCursor: cursor,
    nextCursor: next,
    sliceDone: next === null,
    tweets: fetched.tweets,
    users: fetched.users,
    quarantined: fetched.quarantined.map((q) => ({ endpoint: fetched.endpoint, reason: q.reason, payload: q.payload })),
    requests: [{ endpoint: fetched.endpoint, keyFingerprint: 'abcdef012345', status: 200, durationMs: 512, at: new Date() }],
    ...(next !== null ? { recentCursorHash: cursorHash(next) } : {}),
    emptyPage: fetched.itemCount === 0,
  });
}

export async function runCpuBench(): Promise<Record<string, number>> {
  const bodies = await recordBodies();
  const pool = recordingPool();
  const pass = async () => {
    for (const body of bodies) await processPage(pool, body, 'c');
  };
  await pass();
  const before = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < PASSES; i++) await pass();
  const used = process.cpuUsage(before);
  const wallMs = performance.now() - t0;
  const pages = bodies.length * PASSES;
  process.stderr.write(`  cpu: ${pages} pages, ${(wallMs / pages).toFixed(3)} ms wall/page\n`);
  return { cpu_ms_per_page: round((used.user + used.system) / 1000 / pages, 3) };
}
