/**
 * The targets for each figure, and the table that judges a results object against them.
 * A missed target is explained in bench/README.md, never lowered here.
 */
type Figures = Record<string, unknown>;

export interface Target {
  key: string;
  /** How the target reads in the table. */
  label: string;
  pass(value: number, all: Figures): boolean;
}

const num = (all: Figures, key: string): number => (typeof all[key] === 'number' ? (all[key] as number) : Number.NaN);

/** Worker RSS may grow this much between early and late samples and still count as flat. */
export const RSS_FLAT_TOLERANCE = 0.1;

export const TARGETS: Target[] = [
  { key: 'rate_utilization_1proc', label: '>= 0.97', pass: (v) => v >= 0.97 },
  { key: 'rate_utilization_3proc', label: '>= 0.97', pass: (v) => v >= 0.97 },
  { key: 'rate_429s', label: '= 0', pass: (v) => v === 0 },
  { key: 'tweets_per_request', label: '>= 0.95 x page_size', pass: (v, all) => v >= 0.95 * num(all, 'page_size') },
  { key: 'page_size', label: '(reference)', pass: () => true },
  { key: 'store_tweets_per_s', label: '>= 20000', pass: (v) => v >= 20_000 },
  { key: 'store_vs_copy_ratio', label: '>= 0.5', pass: (v) => v >= 0.5 },
  { key: 'rate_utilization_whole_job_1key', label: '>= 0.95', pass: (v) => v >= 0.95 },
  { key: 'rate_utilization_whole_job_3keys', label: '>= 0.95', pass: (v) => v >= 0.95 },
  { key: 'worker_process_cpu_ms_per_page', label: '<= 2.5', pass: (v) => v <= 2.5 },
  { key: 'worker_floor_cpu_ms_per_page', label: '(reference)', pass: () => true },
  { key: 'worker_cpu_over_floor', label: '(reference)', pass: () => true },
  { key: 'many_keys_utilization', label: '>= 0.95 (every key)', pass: (v) => v >= 0.95 },
  { key: 'many_keys_429s', label: '= 0', pass: (v) => v === 0 },
  { key: 'many_keys_worker_cpu_ms_per_page', label: '(reference)', pass: () => true },
  { key: 'cpu_ms_per_page', label: '<= 1', pass: (v) => v <= 1 },
  { key: 'watch_first_request_ms', label: '<= 1000 (max)', pass: (v) => v <= 1000 },
  { key: 'worker_rss_mb_start', label: '(reference)', pass: () => true },
  {
    key: 'worker_rss_mb_end',
    label: `<= start x ${1 + RSS_FLAT_TOLERANCE}`,
    pass: (v, all) => v <= num(all, 'worker_rss_mb_start') * (1 + RSS_FLAT_TOLERANCE),
  },
];

/** One line per target: figure, value, target, PASS/MISS (or "not run"). */
export function targetTable(all: Figures): string[] {
  const width = Math.max(...TARGETS.map((t) => t.key.length));
  const lines = [`${'figure'.padEnd(width)}  ${'value'.padStart(10)}  ${'target'.padEnd(20)}  verdict`];
  for (const t of TARGETS) {
    const v = all[t.key];
    const value = typeof v === 'number' ? v : null;
    const verdict = value === null ? 'not run' : t.label === '(reference)' ? '' : t.pass(value, all) ? 'PASS' : 'MISS';
    lines.push(`${t.key.padEnd(width)}  ${String(value ?? '-').padStart(10)}  ${t.label.padEnd(20)}  ${verdict}`);
  }
  return lines;
}
