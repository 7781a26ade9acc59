/**
 * Runs the benches present (every `run…Bench` function exported by a bench/*.ts file) and merges
 * their figures into bench/results.json (read-modify-write: keys of benches not run are kept),
 * then prints a table. `npm run bench -- store backfill` runs only the files named.
 *
 * Each file runs in a fresh Node process, one after another: a bench's figures must not carry the
 * heap, JIT state or leftover work of the bench before it (the CPU-per-page bench read ~2× after
 * the backfill bench's 250 MB world in the same process).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { targetTable } from './targets.ts';

type Figures = Record<string, unknown>;
type BenchFn = () => Promise<Figures>;

const HERE = new URL('./', import.meta.url);
const RESULTS = new URL('./results.json', import.meta.url);
/** argv[2] of a child: run one file's benches and print their figures after this marker. */
const CHILD_FLAG = '--in-process';
const FIGURES_MARK = 'bench-figures:';

async function benchFiles(only: readonly string[]): Promise<string[]> {
  const files = (await readdir(HERE)).filter((f) => f.endsWith('.ts') && f !== 'index.ts').sort();
  return files.map((f) => f.replace(/\.ts$/, '')).filter((base) => only.length === 0 || only.includes(base));
}

/** In a child: the file's `run…Bench` functions, in their export order; their figures go to stdout. */
async function runInProcess(base: string): Promise<void> {
  const mod = (await import(new URL(`${base}.ts`, HERE).href)) as Record<string, unknown>;
  const figures: Figures = {};
  for (const [name, value] of Object.entries(mod)) {
    if (!/^run\w*Bench$/.test(name) || typeof value !== 'function') continue;
    console.error(`running ${base}.${name}…`);
    Object.assign(figures, await (value as BenchFn)());
  }
  process.stdout.write(`${FIGURES_MARK}${JSON.stringify(figures)}\n`);
}

/** Runs one bench file in a fresh process (stderr passed through) and returns its figures. */
function runChild(base: string): Promise<Figures> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), CHILD_FLAG, base], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    // 'close', not 'exit': stdout may still hold the figures line when the process has exited.
    child.once('close', (code, signal) => {
      const line = out.split('\n').find((l) => l.startsWith(FIGURES_MARK));
      if (code !== 0 || !line) {
        reject(new Error(`bench ${base} failed (${signal ?? `exit ${code}`})`));
        return;
      }
      resolve(JSON.parse(line.slice(FIGURES_MARK.length)) as Figures);
    });
  });
}

async function main(): Promise<void> {
  if (process.argv[2] === CHILD_FLAG) {
    await runInProcess(process.argv[3] ?? '');
    return;
  }
  const figures: Figures = {};
  for (const base of await benchFiles(process.argv.slice(2))) Object.assign(figures, await runChild(base));
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
