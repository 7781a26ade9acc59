/**
 * Prints the large world's build time and memory: `npx tsx src/simulator/world/measure.ts [seed]`.
 * Kept out of the test run because it takes seconds of a shared 2-core machine.
 */
import { createWorld } from './create.ts';

const seed = Number(process.argv[2] ?? 1);
const before = performance.now();
const world = createWorld({ seed, scale: 'large' });
const buildMs = performance.now() - before;
const mem = process.memoryUsage();
const mb = (n: number): string => `${(n / 1048576).toFixed(0)} MB`;
process.stdout.write(
  `tweets=${world.tweets.count} users=${world.users.length} build=${buildMs.toFixed(0)} ms ` +
    `rss=${mb(mem.rss)} heapUsed=${mb(mem.heapUsed)} external+arrayBuffers=${mb(mem.external + mem.arrayBuffers)}\n`,
);
