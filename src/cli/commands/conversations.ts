/**
 * `harvest conversations <job-id> [--max-requests N] [--wait]`: completes the threads of a job's
 * tweets (missing parents up the reply chains, the replies of each root). Every argument is
 * validated before Postgres or Redis is touched; an unknown source job enqueues nothing.
 * `--estimate` counts in Postgres and spends no request.
 */
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { ConversationsJobParams, estimateConversations, submitConversations } from '../../jobs/kinds/conversations.ts';
import type { Queryable } from '../../store/db.ts';
import { jobExists } from '../../store/refresh.ts';
import { capped, confirmSpend, terminalIo } from '../confirm.ts';
import { cliRuntime, withServices, type CliState } from '../context.ts';
import { parseConcurrency, parseJobId, parsePositiveInt } from '../inputs.ts';
import { formatCount } from '../progress.ts';
import { queuedHint, waitForJob } from '../wait.ts';

interface ConversationsOptions {
  estimate?: boolean;
  wait?: boolean;
  yes?: boolean;
  maxRequests?: string;
  concurrency?: string;
}

/** The roots left out because the source job walked their replies to the end ('' when none). */
function skippedText(skipped: number, sourceJobId: string): string {
  if (skipped === 0) return '';
  return `; ${formatCount(skipped)} root${skipped === 1 ? '' : 's'} skipped (job ${sourceJobId} walked ${skipped === 1 ? 'its' : 'their'} replies to the end)`;
}

async function assertSourceJob(db: Queryable, jobId: string): Promise<void> {
  if (!(await jobExists(db, jobId))) throw new InputError(`<job-id>: there is no job ${jobId}; nothing was queued`);
}

export function registerConversationsCommand(program: Command, state: CliState): void {
  program
    .command('conversations')
    .description("completes the threads of a job's tweets: missing parents up the reply chains, and the replies of each root")
    .argument('<job-id>', 'the job whose threads to complete')
    .option('--estimate', 'count missing parents and roots in Postgres (a floor: each level up is known once fetched); no request, enqueue nothing')
    .option('--max-requests <n>', 'request budget: the job never spends more')
    .option('--wait', 'work the job in this process until it ends, showing progress')
    .option('--concurrency <n>', 'with --wait: slices walked at once (default: rate × latency)')
    .option('--yes', 'queue the job even if it is expected to spend more than HARVEST_CONFIRM_ABOVE requests')
    .action(async (jobId: string, o: ConversationsOptions) => {
      const params = ConversationsJobParams.parse({ sourceJobId: parseJobId(jobId) });
      const maxRequests = o.maxRequests === undefined ? undefined : parsePositiveInt(o.maxRequests, '--max-requests');
      const concurrency = o.concurrency === undefined ? undefined : parseConcurrency(o.concurrency);
      const runtime = cliRuntime(state, { quiet: true });
      // An estimate only counts in Postgres: no key needed (openServices asks for one otherwise).
      await withServices(runtime, async (services) => {
        await assertSourceJob(services.pool, params.sourceJobId);
        const e = await estimateConversations(services.pool, params);
        const basis =
          `${formatCount(e.missingParents)} missing parents one level up, 100 a request; ` +
          `${formatCount(e.roots)} roots with ${formatCount(e.rootReplies)} replies by their stored counts, two reply walks each, 20 a page` +
          skippedText(e.skippedRoots, params.sourceJobId);
        if (o.estimate) {
          console.log(`requests   at least ${formatCount(e.requests)}${maxRequests === undefined ? '' : ` (--max-requests ${formatCount(maxRequests)} caps it)`}`);
          console.log(`basis      ${basis}`);
          console.log('probe      none: counted in Postgres; nothing was queued');
          return;
        }
        await confirmSpend(capped({ requests: e.requests, basis }, maxRequests), { threshold: runtime.config.confirmAbove, yes: o.yes === true, io: terminalIo() });
        const submitted = await submitConversations(
          { pool: services.pool, queues: services.queues, budgets: services.gate },
          { params, ...(maxRequests !== undefined ? { maxRequests } : {}), onCreated: (id) => console.log(id) },
        );
        console.error(
          `job ${submitted.jobId}: conversations of job ${params.sourceJobId}, ${submitted.roots} roots in ${submitted.slices} slices queued` +
            skippedText(submitted.skippedRoots, params.sourceJobId),
        );
        if (o.wait !== true) {
          console.error(queuedHint(submitted.jobId));
          return;
        }
        state.exitCode = await waitForJob(services, submitted.jobId, { concurrency });
      }, { keyless: o.estimate === true });
    });
}
