import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions hold a rate or a latency against the wall clock (the limiter's pace, no
 * request late, a stop within its bound). They run after the rest, one file at a time: next to
 * two forks of integration tests on a two-core machine, a loop that wakes 50 ms late is the
 * machine's doing, not the code's, and a red CI over it says nothing.
 */
const TIMING = [
  // Two requests on one connection time out in the same turn: a loaded machine can fire the two
  // deadlines turns apart, and the second is then dispatched on a fresh connection (sent).
  'test/api-client/bounded-responses.test.ts',
  'test/jobs/limiter-calls.test.ts',
  'test/jobs/limiter-rate.test.ts',
  'test/jobs/limiter-wait-line.test.ts',
  'test/jobs/limiter-quota.test.ts',
  'test/jobs/processes.test.ts',
  'test/reliability/crowded-start.test.ts',
  'test/reliability/redis-cluster.test.ts',
];

export default defineConfig({
  test: {
    // Integration tests share one Postgres and one Redis; files isolate themselves by database
    // and key prefix, so they may run in parallel, but two cores do not gain from more forks.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    projects: [
      // Not isolated: the files of one fork share its module graph (src, pg, bullmq, undici are
      // imported and compiled once per fork, not once per file), which took ~1.7–2.8 s a file and
      // 146 s of the suite's 581 (435 now). Each file still makes its own database, Redis prefix
      // and simulator, and leaves no timer or listener behind; a test must not lean on module
      // state it did not set (reconcile.test.ts planned from the latency its file's earlier jobs
      // measured, and warm code measured less). The timing files stay isolated: a fork's leftovers
      // are load they must not see.
      { extends: true, test: { name: 'parallel', include: ['test/**/*.test.ts'], exclude: TIMING, maxWorkers: 2, isolate: false } },
      { extends: true, test: { name: 'timing', include: TIMING, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
