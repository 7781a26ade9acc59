/** Starts the project's simulator and a client wired to it through a static gate. */
import { ApiClient, type ApiClientOptions } from '../../src/api-client/client.ts';
import type { AttemptRecord } from '../../src/api-client/executor.ts';
import { createStaticGate } from '../../src/api-client/static-gate.ts';
import { keyFingerprint } from '../../src/key-fingerprint.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { pickFixtures, type Fixtures } from './sim-fixtures.ts';

export const SIM_KEY = 'sim-test-key-0123456789';

export interface SimHarness {
  sim: Awaited<ReturnType<typeof startSimulator>>;
  client: ApiClient;
  fx: Fixtures;
  attempts: AttemptRecord[];
  close(): Promise<void>;
}

export async function startHarness(
  simOptions: Parameters<typeof startSimulator>[0] = {},
  clientOptions: Partial<ApiClientOptions> = {},
): Promise<SimHarness> {
  const sim = await startSimulator({ port: 0, keys: [SIM_KEY], seed: 7, scale: 'small', ...simOptions });
  const attempts: AttemptRecord[] = [];
  const client = new ApiClient({
    baseUrl: sim.url,
    gate: createStaticGate([{ key: SIM_KEY, fingerprint: keyFingerprint(SIM_KEY) }]),
    timeoutMs: 5000,
    retry: { transientDelayMinMs: 5, transientDelayMaxMs: 10 },
    onAttempt: (a) => attempts.push(a),
    ...clientOptions,
  });
  return {
    sim,
    client,
    fx: pickFixtures(sim.world),
    attempts,
    async close() {
      await client.close();
      await sim.close();
    },
  };
}

/** Follows next_cursor until null (bounded), collecting every item. */
export async function walk<T>(fetch: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>, maxPages = 100) {
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await fetch(cursor);
    pages++;
    items.push(...page.items);
    if (page.nextCursor === null) return { items, pages, ended: true };
    if (pages >= maxPages) return { items, pages, ended: false };
    cursor = page.nextCursor;
  }
}
