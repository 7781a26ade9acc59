/**
 * `harvest refresh <job-id> [--older-than 24h] [--every 6h --for 7d]`: re-reads a job's tweets
 * 100 per request and records changed engagement counts (tweet_metrics). Every argument is
 * validated before Postgres or Redis is touched; an unknown source job enqueues nothing.
 * `--estimate` counts the tweets in Postgres and spends no request.
 */
import type { Command } from 'commander';
import { InputError } from '../../errors.ts';
import { estimateRefresh, RefreshJobParams, submitRefresh } from '../../jobs/kinds/refresh.ts';
import { createPool, type Queryable } from '../../store/db.ts';
import { jobExists } from '../../store/refresh.ts';
import { LIVE_JOB_STATUSES } from '../../store/states.ts';
import { cliRuntime, withServices, type CliState } from '../context.ts';
import { capped, confirmSpend, terminalIo, type ConfirmIo, type ExpectedSpend } from '../confirm.ts';
import { durationSchema, parseConcurrency, parseEvery, parseJobId, parsePositiveInt } from '../inputs.ts';
import { formatCount, formatDuration } from '../progress.ts';
import { queuedHint, waitForJob } from '../wait.ts';

const SPAN_MESSAGE = 'expected a duration like 30m, 24h, 7d or 1h30m (at most 10 years)';
/** `--older-than` and `--for`: a positive span, at most 10 years. */
const spanSchema = durationSchema({ minS: 1, maxS: 10 * 365 * 86_400, malformed: SPAN_MESSAGE, tooShort: SPAN_MESSAGE, tooLong: SPAN_MESSAGE });

function parseDuration(raw: string, option: string): number {
  const r = spanSchema.safeParse(raw);
  if (r.success) return r.data;
  throw new InputError(`${option}: ${r.error.issues[0]?.message ?? 'expected a duration'}, got ${JSON.stringify(raw)}`, { cause: r.error });
}

interface RefreshOptions {
  olderThan?: string;
  every?: string;
  for?: string;
  estimate?: boolean;
  wait?: boolean;
  maxRequests?: string;
  concurrency?: string;
  yes?: boolean;
}

export interface ParsedRefresh {
  params: RefreshJobParams;
  estimate: boolean;
  wait: boolean;
  maxRequests: number | undefined;
  concurrency: number | undefined;
  yes: boolean;
}

/** Every argument, validated; throws an InputError naming the option. */
export function parseRefreshArgs(jobId: string, o: RefreshOptions): ParsedRefresh {
  const sourceJobId = parseJobId(jobId);
  const olderThanSeconds = o.olderThan === undefined ? undefined : parseDuration(o.olderThan, '--older-than');
  const everySeconds = o.every === undefined ? undefined : parseEvery(o.every);
  const forSeconds = o.for === undefined ? undefined : parseDuration(o.for, '--for');
  if ((everySeconds === undefined) !== (forSeconds === undefined)) {
    throw new InputError(
      everySeconds === undefined
        ? '--for: needs --every (how often to refresh the tweets younger than --for)'
        : '--every: needs --for (how young a tweet must be to keep being refreshed, e.g. --for 7d)',
    );
  }
  if (everySeconds !== undefined && forSeconds !== undefined && everySeconds >= forSeconds) {
    throw new InputError(`--every: must be shorter than --for, or no tweet would be refreshed twice`);
  }
  // A tweet is stored after it is posted: one stored --older-than ago or earlier was posted at
  // least that long ago, so none would also be younger than --for, and the schedule read nothing, ever.
  if (olderThanSeconds !== undefined && forSeconds !== undefined && olderThanSeconds >= forSeconds) {
    throw new InputError(`--older-than: must be shorter than --for, or no tweet would ever be refreshed`);
  }
  return {
    params: RefreshJobParams.parse({
      sourceJobId,
      ...(olderThanSeconds !== undefined ? { olderThanSeconds } : {}),
      ...(everySeconds !== undefined ? { everySeconds, forSeconds } : {}),
    }),
    estimate: o.estimate === true,
    wait: o.wait === true,
    maxRequests: o.maxRequests === undefined ? undefined : parsePositiveInt(o.maxRequests, '--max-requests'),
    concurrency: o.concurrency === undefined ? undefined : parseConcurrency(o.concurrency),
    yes: o.yes === true,
  };
}

const MONTH_S = 30 * 86_400;

/**
 * What a refresh is expected to spend: its first pass (one request per 100 tweets), and for a
 * scheduled one that many passes at that size. A tweet is re-read until it is older than --for,
 * so a source that takes no new tweets costs at most --for ÷ --every passes; one that does (a
 * live watch) keeps every pass about that size: a month of passes.
 */
export function refreshSpend(params: RefreshJobParams, firstPass: { tweets: number; requests: number }, sourceGrows: boolean): ExpectedSpend {
  if (params.everySeconds === undefined) {
    return { requests: firstPass.requests, basis: `${formatCount(firstPass.tweets)} tweets, 100 a request` };
  }
  const horizon = sourceGrows ? MONTH_S : Math.min(MONTH_S, params.forSeconds ?? MONTH_S);
  const passes = Math.ceil(horizon / params.everySeconds);
  const span = horizon < MONTH_S ? `--for ${formatDuration(horizon)}` : 'a month';
  return {
    requests: firstPass.requests * passes,
    basis: `${span}: ${formatCount(passes)} passes, ${formatCount(firstPass.requests)} requests a pass now (${formatCount(firstPass.tweets)} tweets)`,
  };
}

/** Whether the job is a scheduled watch still running: its tweets keep coming. */
async function isLiveWatch(db: Queryable, jobId: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM watches w JOIN jobs j ON j.id = w.job_id
      WHERE w.job_id = $1::bigint AND w.every_seconds IS NOT NULL AND j.status = ANY($2::text[])`,
    [jobId, LIVE_JOB_STATUSES],
  );
  return rows.length > 0;
}

async function assertSourceJob(db: Queryable, jobId: string): Promise<void> {
  if (!(await jobExists(db, jobId))) throw new InputError(`<job-id>: there is no job ${jobId}; nothing was queued`);
}

async function printEstimate(state: CliState, args: ParsedRefresh): Promise<void> {
  const { config } = cliRuntime(state, { quiet: true });
  const pool = createPool(config.databaseUrl, { max: 1, applicationName: 'harvest-refresh' });
  try {
    await assertSourceJob(pool, args.params.sourceJobId);
    const e = await estimateRefresh(pool, args.params);
    const budget = args.maxRequests === undefined ? '' : ` (--max-requests ${formatCount(args.maxRequests)} caps it)`;
    console.log(`tweets     ${formatCount(e.tweets)}`);
    console.log(`requests   ${formatCount(e.requests)}${args.params.everySeconds === undefined ? '' : ' per pass'}${budget}`);
    console.log('probe      none: counted in Postgres; nothing was queued');
  } finally {
    await pool.end();
  }
}

async function run(state: CliState, args: ParsedRefresh, io: ConfirmIo): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  await withServices(runtime, async (services) => {
    await assertSourceJob(services.pool, args.params.sourceJobId);
    if (!args.yes) {
      const firstPass = await estimateRefresh(services.pool, args.params);
      const spend = refreshSpend(args.params, firstPass, await isLiveWatch(services.pool, args.params.sourceJobId));
      await confirmSpend(capped(spend, args.maxRequests), { threshold: runtime.config.confirmAbove, yes: false, io });
    }
    const { jobId, slices, tweets, completed } = await submitRefresh(
      { pool: services.pool, queues: services.queues, budgets: services.gate },
      { params: args.params, ...(args.maxRequests !== undefined ? { maxRequests: args.maxRequests } : {}) },
    );
    console.log(jobId);
    // Recorded, but ended already: no worker will run it, and --wait has nothing to wait for.
    if (completed !== undefined) {
      console.error(`nothing to refresh: job ${jobId} completed (${completed})`);
      return;
    }
    console.error(`job ${jobId}: refresh of job ${args.params.sourceJobId}, ${tweets} tweets in ${slices} slice${slices === 1 ? '' : 's'} queued`);
    if (!args.wait) {
      console.error(queuedHint(jobId));
      return;
    }
    state.exitCode = await waitForJob(services, jobId, { concurrency: args.concurrency });
  });
}

export function registerRefreshCommand(program: Command, state: CliState): void {
  program
    .command('refresh')
    .description("re-reads a job's tweets 100 per request and records changed engagement counts")
    .argument('<job-id>', 'the job whose tweets to re-read')
    .option('--older-than <duration>', 'only tweets first stored at least this long ago (e.g. 24h)')
    .option('--every <interval>', 'keep refreshing every interval (e.g. 6h); needs --for')
    .option('--for <duration>', 'with --every: the tweets posted within this span (e.g. 7d); ends when none is that young and the job has ended')
    .option('--estimate', 'count the tweets and requests (one per 100 tweets); no request, enqueue nothing')
    .option('--max-requests <n>', 'request budget: the job never spends more')
    .option('--wait', 'work the job in this process until it ends, showing progress')
    .option('--concurrency <n>', 'with --wait: slices walked at once (default: rate × latency)')
    .option('--yes', 'queue the job even if it is expected to spend more than HARVEST_CONFIRM_ABOVE requests (with --every: a month of passes)')
    .action(async (jobId: string, o: RefreshOptions) => {
      const args = parseRefreshArgs(jobId, o);
      if (args.estimate) await printEstimate(state, args);
      else await run(state, args, terminalIo());
    });
}
