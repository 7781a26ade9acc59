/**
 * The page path's JIT budgets (src/jobs/jit.ts): set at run time, they take effect (a function of
 * a page's size reaches TurboFan in a fraction of the calls it needs by default), and a budget the
 * operator gave node is left alone.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pagePathJitFlags } from '../../src/jobs/jit.ts';

const JIT = fileURLToPath(new URL('../../src/jobs/jit.ts', import.meta.url));

/**
 * Calls of a page-shaped function until TurboFan optimized it, in a fresh node; `tuned` runs
 * tuneJitForPages first. Compiled on the main thread (no concurrent recompilation), so the code is
 * in place the moment V8 decides, and the count is exact.
 */
function callsUntilOptimized(tuned: boolean): number {
  const script = `
    ${tuned ? `const { tuneJitForPages } = await import(${JSON.stringify(JIT)}); tuneJitForPages();` : ''}
    function page(items) { let sum = 0; for (const item of items) sum += item.likes * 2 + (item.reply ? 1 : 0); return sum; }
    const items = Array.from({ length: 20 }, (_, i) => ({ likes: i, reply: i % 2 === 0 }));
    let calls = 0;
    while (calls < 5000 && (%GetOptimizationStatus(page) & 16) === 0) { page(items); calls++; }
    process.stdout.write(String(calls));`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return Number(out);
}

describe('tuneJitForPages', () => {
  it.runIf(process.versions.v8.startsWith('11.'))('makes V8 optimize a function of the page path in well under half the calls it takes by default', () => {
    const byDefault = callsUntilOptimized(false);
    const tuned = callsUntilOptimized(true);
    expect(byDefault).toBeLessThan(5000);
    expect(tuned).toBeLessThan(byDefault / 2);
  });

  it('sets both budgets on V8 11, except one given on node’s command line (either spelling)', () => {
    const v8 = '11.3.244.8-node.38';
    expect(pagePathJitFlags([], v8)).toEqual(['--interrupt-budget=16384', '--ticks-before-optimization=1']);
    expect(pagePathJitFlags(['--interrupt_budget=1000'], v8)).toEqual(['--ticks-before-optimization=1']);
    expect(pagePathJitFlags(['--ticks-before-optimization=4', '--interrupt-budget=99'], v8)).toEqual([]);
    expect(pagePathJitFlags(['--max-old-space-size=512'], v8)).toHaveLength(2);
  });

  it('sets nothing on a V8 without those flags (Node 22’s 12.4 would print an error line for each)', () => {
    expect(pagePathJitFlags([], '12.4.254.21-node.57')).toEqual([]);
    expect(pagePathJitFlags([], '13.6.233.17-node.53')).toEqual([]);
  });
});
