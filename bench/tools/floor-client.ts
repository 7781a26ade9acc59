/**
 * Not a bench: the floor the backfill bench measures the worker's CPU against
 * (`worker_floor_cpu_ms_per_page`, bench/README.md). A process that does only what no worker can
 * skip: one search request every grant interval through the worker's own HTTP client
 * (src/api-client/http.ts, undici, one keep-alive pool), its body parsed as the client parses it
 * (parseJsonBody) and dropped; run under tsx, as `harvest worker` is. No limiter, validation,
 * normalising, Postgres or queue. It prints one JSON line: its user+system CPU (/proc/self/stat)
 * per request answered between FLOOR_WARM_MS and FLOOR_WARM_MS + FLOOR_MS.
 *
 * Environment: FLOOR_BASE_URL, FLOOR_KEY, FLOOR_QUERY (the search sent each time),
 * FLOOR_INTERVAL_MS (between two requests), FLOOR_WARM_MS, FLOOR_MS.
 */
import { readFileSync } from 'node:fs';
import { createHttpClient } from '../../src/api-client/http.ts';
import { parseJsonBody } from '../../src/api-client/json-body.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
};

function cpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const intervalMs = Number(env('FLOOR_INTERVAL_MS'));
const warmMs = Number(env('FLOOR_WARM_MS'));
const windowMs = Number(env('FLOOR_MS'));
const http = createHttpClient({ baseUrl: env('FLOOR_BASE_URL') });
const request = {
  method: 'POST' as const,
  path: '/v3/search-tweets',
  body: { query: env('FLOOR_QUERY') },
  key: env('FLOOR_KEY'),
  keyFingerprint: 'floor',
  endpoint: 'POST /v3/search-tweets',
};

let answered = 0;
let failed = 0;
async function once(): Promise<void> {
  try {
    const response = await http.send(request);
    if (response.status !== 200 || !('json' in parseJsonBody(response.text))) failed++;
    answered++;
  } catch {
    failed++;
  }
}

const started = performance.now();
let sent = 0;
let window: { cpu: number; answered: number } | null = null;
// One request every interval, on the clock (a late timer does not push the next one back).
await new Promise<void>((resolve) => {
  const tick = (): void => {
    const elapsed = performance.now() - started;
    if (window === null && elapsed >= warmMs) window = { cpu: cpuMs(), answered };
    if (elapsed >= warmMs + windowMs) {
      resolve();
      return;
    }
    void once();
    sent++;
    setTimeout(tick, Math.max(0, started + sent * intervalMs - performance.now()));
  };
  tick();
});
const end = { cpu: cpuMs(), answered };
const from = window ?? end;
process.stdout.write(`${JSON.stringify({ cpuMsPerRequest: (end.cpu - from.cpu) / Math.max(1, end.answered - from.answered), requests: end.answered - from.answered, failed })}\n`);
await http.close();
