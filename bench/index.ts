/**
 * Runs the benches present (every `run…Bench` function exported by a bench/*.ts file) and merges
 * their figures into bench/results.json (read-modify-write: keys of benches not run are kept),
 * then prints a table. `npm run bench -- store backfill` runs only the files named.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { targetTable } from './targets.ts';

type Figures = Record<string, unknown>;
type BenchFn = () => Promise<Figures>;

const HERE = new URL('./', import.meta.url);
const RESULTS = new URL('./results.json', import.meta.url);

async function discover(only: readonly string[]): Promise<Array<{ name: string; fn: BenchFn }>> {
  const files = (await readdir(HERE)).filter((f) => f.endsWith('.ts') && f !== 'index.ts').sort();
  const found: Array<{ name: string; fn: BenchFn }> = [];
  for (const file of files) {
    const base = file.replace(/\.ts$/, '');
    if (only.length > 0 && !only.includes(base)) continue;
    const mod = (await import(new URL(file, HERE).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (/^run\w*Bench$/.test(name) && typeof value === 'function') found.push({ name: `${base}.${name}`, fn: value as BenchFn });
    }
  }
  return found;
}

async function main(): Promise<void> {
  const benches = await discover(process.argv.slice(2));
  const figures: Figures = {};
  for (const bench of benches) {
    console.error(`running ${bench.name}…`);
    Object.assign(figures, await bench.fn());
  }
  const previous = existsSync(RESULTS) ? (JSON.parse(await readFile(RESULTS, 'utf8')) as Figures) : {};
  const merged = { ...previous, ...figures };
  await writeFile(RESULTS, `${JSON.stringify(merged, null, 2)}\n`);
  const width = Math.max(6, ...Object.keys(merged).map((k) => k.length));
  console.log(`${'figure'.padEnd(width)}  value`);
  for (const [key, value] of Object.entries(merged)) {
    console.log(`${key.padEnd(width)}  ${JSON.stringify(value)}${key in figures ? '' : '  (earlier run)'}`);
  }
  console.log(`\n${targetTable(merged).join('\n')}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
