/**
 * Runs the benches present and merges their figures into bench/results.json (read-modify-write:
 * keys written by other benches are kept), then prints a table.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';

type Figures = Record<string, number>;
type Bench = { name: string; file: string; exportName: string };

const BENCHES: Bench[] = [{ name: 'store', file: './store.ts', exportName: 'runStoreBench' }];
const RESULTS = new URL('./results.json', import.meta.url);

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const figures: Figures = {};
  for (const bench of BENCHES) {
    if (only.length > 0 && !only.includes(bench.name)) continue;
    if (!existsSync(new URL(bench.file, import.meta.url))) continue;
    const mod = (await import(bench.file)) as Record<string, () => Promise<Figures>>;
    const run = mod[bench.exportName];
    if (typeof run !== 'function') continue;
    console.error(`running ${bench.name}…`);
    Object.assign(figures, await run());
  }
  const previous: Record<string, unknown> = existsSync(RESULTS) ? JSON.parse(await readFile(RESULTS, 'utf8')) : {};
  const merged = { ...previous, ...figures };
  await writeFile(RESULTS, `${JSON.stringify(merged, null, 2)}\n`);
  const width = Math.max(...Object.keys(merged).map((k) => k.length), 6);
  console.log(`${'figure'.padEnd(width)}  value`);
  for (const [key, value] of Object.entries(merged)) {
    console.log(`${key.padEnd(width)}  ${value}${key in figures ? '' : '  (earlier run)'}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
