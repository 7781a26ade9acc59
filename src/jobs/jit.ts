/**
 * How soon V8 optimizes the page path of a process that walks pages (issue 13: worker CPU per page).
 *
 * A worker runs one page path thousands of times, but at the pace the service allows: at one key's
 * 20 pages a second each of its functions runs once or a few times a second. V8 optimizes a
 * function with TurboFan once it has run about `--interrupt-budget` × `--ticks-before-optimization`
 * bytes of bytecode (66 KB × 3 by default), so most of the page path took a minute or more to get
 * there and ran as Sparkplug baseline code until then: `perf` of a worker 20–45 s into a one-key
 * job put half of the main thread's JavaScript samples in baseline frames. With a 16 KB budget and
 * one tick the same window runs 76% of them in optimized code, and the worker's CPU per page drops
 * by about a tenth (bench/README.md, "Fifteenth pass"). Functions that run often enough to matter
 * get compiled sooner; code that runs rarely stays where it was.
 *
 * V8 reads both values whenever it resets a function's budget, so setting them when a process
 * starts walking pages covers the page path, whose functions have not run yet. A flag the operator
 * gave node itself (`node --interrupt-budget=… bin/harvest.js worker`) is left as given.
 *
 * Only V8 11 (Node 20, where this was measured) has these flags: V8 12 (Node 22) tiers up by
 * invocation counts (`--invocation-count-for-turbofan`) and answers an unknown flag with an error
 * line on stderr, so another V8 is left as it is until it has been measured.
 */
import { setFlagsFromString } from 'node:v8';

/** The budgets a page-walking process runs with on V8 11 (see above). */
export const PAGE_PATH_JIT_FLAGS: Readonly<Record<string, string>> = {
  '--interrupt-budget': '16384',
  '--ticks-before-optimization': '1',
};

/**
 * The flags tuneJitForPages sets: PAGE_PATH_JIT_FLAGS less those given on node's command line, on
 * V8 11 only (`v8Version`, as `process.versions.v8` has it).
 */
export function pagePathJitFlags(execArgv: readonly string[], v8Version: string = process.versions.v8): string[] {
  if (!v8Version.startsWith('11.')) return [];
  // V8 reads `--interrupt_budget` as `--interrupt-budget`.
  const given = new Set(execArgv.map((arg) => arg.replaceAll('_', '-').split('=')[0]));
  return Object.entries(PAGE_PATH_JIT_FLAGS).flatMap(([flag, value]) => (given.has(flag) ? [] : [`${flag}=${value}`]));
}

let tuned = false;

/** Sets the page path's JIT budgets once per process (see above). */
export function tuneJitForPages(): void {
  if (tuned) return;
  tuned = true;
  for (const flag of pagePathJitFlags(process.execArgv)) setFlagsFromString(flag);
}
