/**
 * The spending gate of job commands: a job expected to spend more than HARVEST_CONFIRM_ABOVE
 * requests is queued only with --yes, or after a "y" on a terminal. Off a terminal (cron, scripts)
 * it is refused with one line and nothing is queued, so a typo cannot spend a month's quota.
 */
import { createInterface } from 'node:readline/promises';
import { InputError } from '../errors.ts';
import { formatCount } from './progress.ts';

/** What a job is expected to spend, and why (one line). */
export interface ExpectedSpend {
  requests: number;
  /** e.g. "a month: a pass every 5m, one request at least" */
  basis: string;
  /** Pages of items the probe expects (search): the plan sizes its slices to it (PlanContext.expectedPages). */
  pages?: number;
}

export interface ConfirmIo {
  /** Whether a person can answer (stdin and stderr are terminals). */
  interactive: boolean;
  ask(question: string): Promise<string>;
}

/**
 * The process's own terminal. Not one a person can answer on once stdin has been read to its end
 * (`harvest hydrate -` typed on the terminal and ended with Ctrl-D): the question would wait on a
 * stdin that gives nothing more, and the command hung with nothing queued.
 */
export function terminalIo(
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; readableEnded?: boolean } = process.stdin,
  stderr: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
): ConfirmIo {
  return {
    interactive: stdin.isTTY === true && stderr.isTTY === true && stdin.readableEnded !== true,
    async ask(question) {
      const rl = createInterface({ input: stdin, output: stderr });
      try {
        return await rl.question(question);
      } finally {
        rl.close();
      }
    },
  };
}

/** --max-requests is an exact cap: a job never spends more, whatever the estimate. */
export function capped(spend: ExpectedSpend | null, maxRequests: number | undefined): ExpectedSpend | null {
  if (spend === null || maxRequests === undefined || spend.requests <= maxRequests) return spend;
  return { requests: maxRequests, basis: `--max-requests ${formatCount(maxRequests)} caps it`, ...(spend.pages === undefined ? {} : { pages: spend.pages }) };
}

/**
 * Returns when the job may be queued; throws an InputError (one line, nothing queued) when it may
 * not. Nothing to ask when --yes was given, the spend is unknown, or it is within `threshold`.
 */
export async function confirmSpend(spend: ExpectedSpend | null, opts: { threshold: number; yes: boolean; io: ConfirmIo }): Promise<void> {
  if (opts.yes || spend === null || spend.requests <= opts.threshold) return;
  const what = `~${formatCount(spend.requests)} requests (${spend.basis})`;
  if (!opts.io.interactive) {
    throw new InputError(
      `this job is expected to spend ${what}, more than HARVEST_CONFIRM_ABOVE=${opts.threshold}: add --yes to queue it; nothing was queued`,
    );
  }
  const answer = await opts.io.ask(`This job is expected to spend ${what}. Queue it? [y/N] `);
  if (!/^\s*y(es)?\s*$/i.test(answer)) throw new InputError('not confirmed; nothing was queued');
}
