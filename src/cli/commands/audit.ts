/**
 * `harvest audit <job-id> [--repair]`: per day of the job's range, tweets stored, pages, and
 * whether every id range was walked to the service's end of results or stopped early, and why.
 * Reads Postgres only (no request; Redis only with --repair). Exit 0 when complete, 2 when not.
 */
import type { Command } from 'commander';
import { auditJob, repairJob, type AuditReport } from '../../jobs/audit.ts';
import { openCheckedPool } from '../../jobs/services.ts';
import { cliRuntime, withServices, type CliState } from '../context.ts';
import { parseJobId, parsePositiveInt } from '../inputs.ts';
import { formatCount } from '../progress.ts';
import { InputError } from '../../errors.ts';

const iso = (ms: number | null): string => (ms === null ? 'the beginning' : new Date(ms).toISOString());

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

function printReport(r: AuditReport): void {
  console.log(`job ${r.jobId} (${r.kind}, ${r.status}): ${r.complete ? 'complete' : 'NOT complete'}`);
  // "failed" beside "complete": the job failed only because its target is missing (a 404, nothing read).
  if (r.status === 'failed' && r.complete && r.missing.length > 0) {
    console.log('  it failed because its target is missing and nothing was read: nothing is left to read, and --repair queues nothing');
  }
  if (r.days.length > 0) {
    const rows = [['day', 'tweets', 'pages', 'walked']];
    for (const d of r.days) {
      // pages null: no walk with a range covers the day (only a timeline, a list...: judged whole, below).
      const walked = d.stopped.length > 0 ? `stopped early: ${d.stopped.join(', ')}` : d.pages === null ? '-' : 'to the end of results';
      rows.push([d.day, formatCount(d.tweets), d.pages === null ? '-' : formatCount(d.pages), walked]);
    }
    console.log(table(rows));
  }
  if (r.uncovered.length > 0) {
    console.log('uncovered ranges:');
    for (const u of r.uncovered) console.log(`  ${iso(u.sinceMs)} .. ${iso(u.untilMs)}  ${u.reason} (slice ${u.sliceId})`);
  }
  if (r.unfinished.length > 0) {
    console.log('walks that stopped early:');
    for (const w of r.unfinished) console.log(`  slice ${w.sliceId} (${w.kind}): ${w.reason}`);
  }
  if (r.answeredEmpty.length > 0) {
    console.log(`answered empty (a quiet range, or an outage that answers empty; --repair --recheck-empty reads them again): ${r.answeredEmpty.length}`);
    for (const w of r.answeredEmpty.slice(0, SHOWN_EMPTY)) {
      const range = w.untilMs === null ? '' : `  ${iso(w.sinceMs)} .. ${iso(w.untilMs)}`;
      console.log(`  slice ${w.sliceId} (${w.kind})${range}`);
    }
    if (r.answeredEmpty.length > SHOWN_EMPTY) console.log(`  … and ${r.answeredEmpty.length - SHOWN_EMPTY} more`);
  }
  if (r.missing.length > 0) {
    console.log(`targets missing (404: deleted, protected or suspended; nothing to read, not repaired): ${r.missing.length}`);
    for (const w of r.missing.slice(0, SHOWN_EMPTY)) console.log(`  slice ${w.sliceId} (${w.kind}) ${clip(JSON.stringify(w.params))}`);
    if (r.missing.length > SHOWN_EMPTY) console.log(`  … and ${r.missing.length - SHOWN_EMPTY} more`);
  }
}

/** Walks answered empty, or missing, listed by name (the count says how many in all). */
const SHOWN_EMPTY = 10;

/** A walk's params as its target's name (a tweet id, a user), cut to a line. */
const clip = (text: string): string => (text.length > 80 ? `${text.slice(0, 79)}…` : text);

export function registerAuditCommand(program: Command, state: CliState): void {
  program
    .command('audit')
    .description("completeness of a job per day, from Postgres alone (no request); exit 0 complete, 2 not")
    .argument('<job-id>')
    .option('--repair', 'queue slices for exactly the uncovered ranges (a worker, or --wait elsewhere, runs them)')
    .option('--max-requests <n>', "with --repair: the repair's request budget (default: the job's own budget again, else none)")
    .option('--recheck-empty', 'with --repair: also walk again what the service answered empty (after an outage that answered empty)')
    .option(
      '--resume',
      'with --repair: a timeline or list walk stopped by its budget, --max-tweets, a failure or a cancel goes on from its saved cursor, not its first page (a cursor the service no longer honours fails the repair: run it again without --resume)',
    )
    .action(async (id: string, o: { repair?: boolean; maxRequests?: string; recheckEmpty?: boolean; resume?: boolean }) => {
      const jobId = parseJobId(id);
      const maxRequests = o.maxRequests === undefined ? undefined : parsePositiveInt(o.maxRequests, '--max-requests');
      if (o.recheckEmpty && !o.repair) throw new InputError('--recheck-empty goes with --repair');
      if (o.resume && !o.repair) throw new InputError('--resume goes with --repair');
      const runtime = cliRuntime(state, { quiet: true });
      const pool = await openCheckedPool(runtime.config, { max: 1, applicationName: 'harvest-audit' });
      let report: AuditReport | null;
      try {
        report = await auditJob(pool, jobId);
      } finally {
        await pool.end().catch(() => undefined);
      }
      if (!report) {
        console.error(`harvest: no job ${jobId}`);
        state.exitCode = 1;
        return;
      }
      printReport(report);
      state.exitCode = report.complete ? 0 : 2;
      const recheckEmpty = o.recheckEmpty === true && report.answeredEmpty.length > 0;
      if (!o.repair || (report.complete && !recheckEmpty)) return;
      const queued = await withServices(runtime, (services) =>
        repairJob({ pool: services.pool, queues: services.queues, budgets: services.gate }, report, {
          ...(maxRequests === undefined ? {} : { maxRequests }),
          recheckEmpty,
          resume: o.resume === true,
        }),
      );
      console.log(queued.length === 0 ? 'nothing to repair yet (walks still running)' : `repair: queued ${queued.length} slice(s): ${queued.join(', ')}`);
    });
}
