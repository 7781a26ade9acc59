/**
 * The job commands: search, mentions, user, list, community, replies, hydrate. Each validates
 * every argument BEFORE touching Postgres or Redis (bad input enqueues nothing), creates the job,
 * prints its id on the first line, and with --wait works it to the end in this process.
 * Every one takes --estimate (a probe through the shared gate; nothing queued) and --yes (the
 * spending gate, confirm.ts: a job expected to cost more than HARVEST_CONFIRM_ABOVE requests).
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ErrorCode, InputError, isAppError } from '../../errors.ts';
import { estimateHydrate, estimateList, estimateMentions, estimateReplies, estimateUser } from '../../jobs/estimate.ts';
import { checkCommunityJob, CommunityJobParams } from '../../jobs/kinds/community.ts';
import { MentionsJobParams } from '../../jobs/kinds/mentions.ts';
import { checkUserJob, UserJobParams } from '../../jobs/kinds/user.ts';
import { MAX_HYDRATE_IDS } from '../../jobs/kinds/hydrate.ts';
import { checkSearchJob, SearchJobParams } from '../../jobs/kinds/search.ts';
import { planContext } from '../../jobs/harvester.ts';
import type { JobKindName } from '../../jobs/registry.ts';
import { submitJob } from '../../jobs/submit.ts';
import { claimWorkerPrefix } from '../../store/worker-prefixes.ts';
import { capped, confirmSpend, terminalIo, type ExpectedSpend } from '../confirm.ts';
import { cliRuntime, withServices, type CliState } from '../context.ts';
import {
  assertNoTimeOperators,
  parseCommunityRef,
  parseConcurrency,
  parseDateRange,
  parseRangeDate,
  parseEvery,
  parseHandle,
  parseHydrateLines,
  parseListRef,
  parseNonNegativeInt,
  parseOrder,
  parsePositiveInt,
  parseSearchQuery,
  parseTweetRef,
  parseUserRef,
} from '../inputs.ts';
import { estimateLines, printCommunityEstimate, printJobEstimate, printSearchEstimate, searchSpend, watchSpend, type SpendOf } from '../job-costs.ts';
import { queuedHint, WAIT_EXIT, waitForJob } from '../wait.ts';

interface CommonOptions {
  wait?: boolean;
  maxRequests?: string;
  concurrency?: string;
  yes?: boolean;
  estimate?: boolean;
}

interface ParsedCommon {
  wait: boolean;
  maxRequests: number | undefined;
  concurrency: number | undefined;
  yes: boolean;
}

function parseCommon(o: CommonOptions): ParsedCommon {
  return {
    wait: o.wait === true,
    maxRequests: o.maxRequests === undefined ? undefined : parsePositiveInt(o.maxRequests, '--max-requests'),
    concurrency: o.concurrency === undefined ? undefined : parseConcurrency(o.concurrency),
    yes: o.yes === true,
  };
}

function withCommon(cmd: Command): Command {
  return cmd
    .option('--max-requests <n>', 'request budget: the job never spends more')
    .option('--wait', 'work the job in this process until it ends, showing progress')
    .option('--concurrency <n>', 'with --wait: slices walked at once (default: rate × latency)')
    .option('--yes', 'queue the job even if it is expected to spend more than HARVEST_CONFIRM_ABOVE requests');
}

const ESTIMATE = '--estimate';

/**
 * Creates the job (validated params), prints its id first, then waits if asked. Before it, the
 * spending gate weighs `spend` (skipped with --yes, or when --max-requests is within the threshold).
 */
async function run(state: CliState, kind: JobKindName, params: unknown, common: ParsedCommon, spend?: SpendOf): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  await withServices(runtime, async (services) => {
    const threshold = runtime.config.confirmAbove;
    let expectedPages: number | undefined;
    // The probe runs unless --yes, a cap within the threshold included: no question is asked
    // then, but a search's slices are sized by what it expects (skipped, a sparse query with
    // --max-requests bought a first page for each of 28 slices where 9 would do).
    if (spend && !common.yes) {
      const mustConfirm = !(common.maxRequests !== undefined && common.maxRequests <= threshold);
      let probed: ExpectedSpend | null;
      try {
        probed = await spend(services);
      } catch (error) {
        // No key can grant the probe (every quota spent or held for watches): nothing is known
        // to weigh. Not exit 1, as if the job had failed: 3, as --wait for a job parked for quota.
        // A cap within the threshold needs no weighing: the job is queued, parked until quota returns.
        if (!(isAppError(error) && error.code === ErrorCode.KEYS_EXHAUSTED)) throw error;
        if (mustConfirm) {
          console.error(
            `harvest: ${error.message}: the spending check cannot probe this job's cost now; nothing was queued (--yes, or --max-requests N, queues it parked until quota returns)`,
          );
          state.exitCode = WAIT_EXIT.paused_quota;
          return;
        }
        probed = null;
      }
      const expected = capped(probed, common.maxRequests);
      expectedPages = expected?.pages;
      await confirmSpend(expected, { threshold, yes: false, io: terminalIo() });
    }
    // --wait works the queue in this process: refused for another prefix's database (a worker's
    // start would say so only after the job was queued, leaving it behind).
    if (common.wait) await claimWorkerPrefix(services.pool, services.config.redisPrefix);
    // A probe's expected pages size a search's slices: one slice per page at most.
    const ctx = { ...(await planContext(services)), ...(expectedPages === undefined ? {} : { expectedPages }) };
    const { jobId, slices } = await submitJob(
      { pool: services.pool, queues: services.queues, budgets: services.gate, planContext: ctx },
      // The id first, as soon as the job exists (SubmitInput.onCreated).
      { kind, params, ...(common.maxRequests !== undefined ? { maxRequests: common.maxRequests } : {}), onCreated: (id) => console.log(id) },
    );
    console.error(`job ${jobId}: ${kind}, ${slices} slice${slices === 1 ? '' : 's'} queued`);
    if (!common.wait) {
      console.error(queuedHint(jobId));
      return;
    }
    state.exitCode = await waitForJob(services, jobId, { concurrency: common.concurrency });
  });
}

async function readHydrateInput(source: string): Promise<string> {
  if (source === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(source, 'utf8');
  } catch (error) {
    throw new InputError(`<file>: cannot read ${JSON.stringify(source)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

export function registerJobCommands(program: Command, state: CliState): void {
  withCommon(
    program
      .command('search')
      .description('bulk backfill of a search query')
      .argument('<query>', 'search query (operators as the service documents them)')
      .option('--order <order>', 'latest or popular', 'latest')
      .option('--since <date>', 'first day, YYYY-MM-DD (inclusive)')
      .option('--until <date>', 'last day, YYYY-MM-DD (exclusive)')
      .option('--max-tweets <n>', 'stop after about this many tweets (page granularity)')
      .option('--every <interval>', 'keyword watch: a pass every interval (e.g. 10m), newest first, down to the last pass; with --since after a backfill of [since, now)')
      .option(ESTIMATE, 'estimate tweets, requests, quota share and time from a 4-request probe (with --every: a pass\'s and a month\'s requests); enqueue nothing'),
  ).action(async (query: string, o: CommonOptions & { order: string; since?: string; until?: string; maxTweets?: string; every?: string; estimate?: boolean }) => {
    const q = parseSearchQuery(query);
    const order = parseOrder(o.order);
    const range = parseDateRange(o.since, o.until);
    if (range.since || range.until) assertNoTimeOperators(q);
    const maxTweets = o.maxTweets === undefined ? undefined : parsePositiveInt(o.maxTweets, '--max-tweets');
    const common = parseCommon(o);
    const everySeconds = o.every === undefined ? undefined : parseEvery(o.every);
    const params = { query: q, order, since: range.since?.value, until: range.until?.value, maxTweets, everySeconds };
    // Every check of the query, before anything is opened (the plan runs them again at submit).
    checkSearchJob(params);
    const backfill = SearchJobParams.parse({ ...params, everySeconds: undefined });
    if (o.estimate) await printSearchEstimate(state, backfill, everySeconds);
    else await run(state, 'search', params, common, searchSpend(backfill, everySeconds));
  });

  withCommon(
    program
      .command('mentions')
      .description('mention watch: one pass, or every --every; each pass fetches only what is new')
      .argument('<handle>', 'handle, with or without @')
      .option('--every <interval>', 'run a pass every interval (e.g. 5m, 1h)')
      .option('--min-likes <n>', 'only tweets with at least n likes')
      .option('--min-retweets <n>', 'only tweets with at least n retweets')
      .option('--min-replies <n>', 'only tweets with at least n replies')
      .option('--since <date>', 'how far back the first pass reads, YYYY-MM-DD (default: 7 days); with --every, [since, now) is backfilled in parallel first')
      .option('--full', 'read back to --since (or 7 days) again, whatever earlier passes of this handle and filters read')
      .option(ESTIMATE, 'probe the first page (1 request): the first pass\'s requests, with --every a pass\'s and a month\'s; enqueue nothing'),
  ).action(async (handle: string, o: CommonOptions & { every?: string; minLikes?: string; minRetweets?: string; minReplies?: string; since?: string; full?: boolean }) => {
    const params = {
      handle: parseHandle(handle),
      everySeconds: o.every === undefined ? undefined : parseEvery(o.every),
      minLikes: o.minLikes === undefined ? undefined : parseNonNegativeInt(o.minLikes, '--min-likes'),
      minRetweets: o.minRetweets === undefined ? undefined : parseNonNegativeInt(o.minRetweets, '--min-retweets'),
      minReplies: o.minReplies === undefined ? undefined : parseNonNegativeInt(o.minReplies, '--min-replies'),
      since: o.since === undefined ? undefined : parseRangeDate(o.since, '--since').value,
      full: o.full === true ? true : undefined,
    };
    const common = parseCommon(o);
    if (o.estimate) await printJobEstimate(state, (services, now) => estimateMentions(services.client, MentionsJobParams.parse(params), now));
    else await run(state, 'mentions', params, common, async () => watchSpend(params.everySeconds));
  });

  withCommon(
    program
      .command('user')
      .description('profile and timeline of one user')
      .argument('<user>', 'handle, numeric id or profile URL')
      .option('--max-tweets <n>', 'stop after about this many tweets')
      .option('--every <interval>', 'timeline watch: a pass every interval (e.g. 1h), newest first, down to the last pass')
      .option(ESTIMATE, 'probe the profile (1 request; with --every also the timeline\'s first page): requests from its tweet count; enqueue nothing'),
  ).action(async (user: string, o: CommonOptions & { maxTweets?: string; every?: string }) => {
    const ref = parseUserRef(user);
    const target = ref.kind === 'id' ? { userId: ref.value } : { username: ref.handle ?? ref.value };
    const maxTweets = o.maxTweets === undefined ? undefined : parsePositiveInt(o.maxTweets, '--max-tweets');
    const everySeconds = o.every === undefined ? undefined : parseEvery(o.every);
    const params = { target, maxTweets, everySeconds };
    checkUserJob(params);
    const common = parseCommon(o);
    if (o.estimate) await printJobEstimate(state, (services) => estimateUser(services.client, UserJobParams.parse(params)));
    else await run(state, 'user', params, common, async () => watchSpend(everySeconds));
  });

  withCommon(
    program
      .command('list')
      .description("a list's tweets, members and followers")
      .argument('<list>', 'list id or URL')
      .option(ESTIMATE, 'probe the first page of each walk (3 requests); enqueue nothing'),
  ).action(async (list: string, o: CommonOptions) => {
    const listId = parseListRef(list).id;
    const common = parseCommon(o);
    if (o.estimate) await printJobEstimate(state, (services) => estimateList(services.client, listId));
    else await run(state, 'list', { listId }, common);
  });

  withCommon(
    program
      .command('community')
      .description("a community's members and its tweets; with --query a search inside it (members not walked)")
      .argument('<community>', 'community id or URL')
      .option('--query <q>', "search inside the community (the search grammar) instead of walking its members and whole feed")
      .option('--every <interval>', 'watch the feed (or the search) every interval (e.g. 10m, 1h); each pass fetches only what is new')
      .option(ESTIMATE, 'probe one page of each walk (1-2 requests): sizes, recent rate, a watch\'s daily and monthly cost; enqueue nothing'),
  ).action(async (community: string, o: CommonOptions & { query?: string; every?: string; estimate?: boolean }) => {
    const params = {
      communityId: parseCommunityRef(community).id,
      query: o.query === undefined ? undefined : parseSearchQuery(o.query, '--query'),
      everySeconds: o.every === undefined ? undefined : parseEvery(o.every),
    };
    checkCommunityJob(params);
    const common = parseCommon(o);
    if (o.estimate) await printCommunityEstimate(state, CommunityJobParams.parse(params));
    else await run(state, 'community', params, common, async () => watchSpend(params.everySeconds));
  });

  withCommon(
    program
      .command('replies')
      .description('replies to a tweet (the replies listing plus a conversation search)')
      .argument('<tweet>', 'tweet id or URL')
      .option(ESTIMATE, 'probe the tweet (1 request): requests from its reply count; enqueue nothing'),
  ).action(async (tweet: string, o: CommonOptions) => {
    const tweetId = parseTweetRef(tweet).id;
    const common = parseCommon(o);
    if (o.estimate) await printJobEstimate(state, (services) => estimateReplies(services.client, tweetId));
    else await run(state, 'replies', { tweetId }, common);
  });

  withCommon(
    program
      .command('hydrate')
      .description('tweets by id or link, one per line, 100 per request')
      .argument('<file>', 'a file, or - for standard input')
      .option(ESTIMATE, 'count the requests (one per 100 distinct ids); no request, enqueue nothing'),
  ).action(async (file: string, o: CommonOptions) => {
    const common = parseCommon(o);
    const { ids, errors } = parseHydrateLines(await readHydrateInput(file));
    if (errors.length > 0) {
      const shown = errors.slice(0, 3).map((e) => `line ${e.line}: ${e.reason} (${JSON.stringify(e.text.slice(0, 40))})`);
      const more = errors.length > shown.length ? `; ${errors.length - shown.length} more` : '';
      const lines = `${errors.length} line${errors.length === 1 ? ' is' : 's are'}`;
      throw new InputError(`<file>: ${lines} not tweet ids or links (${shown.join('; ')}${more}); nothing was queued`);
    }
    if (ids.length === 0) throw new InputError('<file>: no tweet ids found; nothing was queued');
    if (ids.length > MAX_HYDRATE_IDS) {
      throw new InputError(`<file>: ${ids.length} distinct ids; one hydrate job takes at most ${MAX_HYDRATE_IDS} (split the file); nothing was queued`);
    }
    const e = estimateHydrate(ids);
    if (o.estimate) for (const line of estimateLines(e)) console.log(line);
    else await run(state, 'hydrate', { ids }, common, async () => ({ requests: e.requests ?? 0, basis: e.basis }));
  });
}
