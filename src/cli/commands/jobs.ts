/**
 * The job commands: search, mentions, user, list, community, replies, hydrate. Each validates
 * every argument BEFORE touching Postgres or Redis (bad input enqueues nothing), creates the job,
 * prints its id on the first line, and with --wait works it to the end in this process.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { requireApiKeys } from '../../config.ts';
import { InputError } from '../../errors.ts';
import { estimateSearch } from '../../jobs/estimate.ts';
import { checkCommunityJob, CommunityJobParams, estimateCommunity } from '../../jobs/kinds/community.ts';
import { checkSearchJob, SearchJobParams } from '../../jobs/kinds/search.ts';
import { planContext } from '../../jobs/harvester.ts';
import type { JobKindName } from '../../jobs/registry.ts';
import { submitJob } from '../../jobs/submit.ts';
import { targetParallelism } from '../../jobs/time-slices.ts';
import { cliRuntime, withServices, type CliState } from '../context.ts';
import {
  assertNoTimeOperators,
  parseCommunityRef,
  parseConcurrency,
  parseDate,
  parseDateRange,
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
import { formatCount, formatDuration } from '../progress.ts';
import { quotaLeft, waitForJob } from '../wait.ts';

interface CommonOptions {
  wait?: boolean;
  maxRequests?: string;
  concurrency?: string;
}

interface ParsedCommon {
  wait: boolean;
  maxRequests: number | undefined;
  concurrency: number | undefined;
}

function parseCommon(o: CommonOptions): ParsedCommon {
  return {
    wait: o.wait === true,
    maxRequests: o.maxRequests === undefined ? undefined : parsePositiveInt(o.maxRequests, '--max-requests'),
    concurrency: o.concurrency === undefined ? undefined : parseConcurrency(o.concurrency),
  };
}

function withCommon(cmd: Command): Command {
  return cmd
    .option('--max-requests <n>', 'request budget: the job never spends more')
    .option('--wait', 'work the job in this process until it ends, showing progress')
    .option('--concurrency <n>', 'with --wait: slices walked at once (default: rate × latency)');
}

/** Creates the job (validated params), prints its id first, then waits if asked. */
async function run(state: CliState, kind: JobKindName, params: unknown, common: ParsedCommon): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  await withServices(runtime, async (services) => {
    const ctx = await planContext(services);
    const { jobId, slices } = await submitJob(
      { pool: services.pool, queues: services.queues, budgets: services.gate, planContext: ctx },
      { kind, params, ...(common.maxRequests !== undefined ? { maxRequests: common.maxRequests } : {}) },
    );
    console.log(jobId);
    console.error(`job ${jobId}: ${kind}, ${slices} slice${slices === 1 ? '' : 's'} queued`);
    if (!common.wait) {
      console.error(`a worker runs it: \`harvest worker\`, or re-run with --wait; \`harvest status ${jobId}\` shows progress`);
      return;
    }
    const concurrency = common.concurrency ?? targetParallelism(ctx.pooledRate, ctx.latencyMs);
    state.exitCode = await waitForJob(services, jobId, { concurrency });
  });
}

async function printEstimate(state: CliState, params: SearchJobParams): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  requireApiKeys(runtime.config);
  await withServices(runtime, async (services) => {
    const ctx = await planContext(services);
    const e = await estimateSearch(
      { client: services.client, pooledRate: ctx.pooledRate, latencyMs: ctx.latencyMs, quotaLeft: () => quotaLeft(services) },
      params,
      ctx.now,
    );
    const n = (v: number | null) => (v === null ? 'unknown' : formatCount(v));
    console.log(`tweets     ${e.tweets === null ? 'unbounded (no --since)' : `${e.exact ? '' : '~'}${n(e.tweets)}`}`);
    console.log(`recent     ~${formatCount(e.tweetsPerDayRecent)} tweets/day near the newest`);
    console.log(`requests   ${e.requests === null ? 'unknown' : `~${n(e.requests)} (${e.pageSize} a page, plus each slice's last page)`}`);
    console.log(`time       ${e.seconds === null ? 'unknown' : `~${formatDuration(Math.ceil(e.seconds))} at ${e.pooledRate} req/s (all keys pooled)`}`);
    console.log(`quota      ${e.quotaLeft === null ? 'left unknown (run `harvest quota`)' : `${n(e.quotaLeft)} left${e.quotaShare === null ? '' : `; this uses ${(e.quotaShare * 100).toFixed(1)}%`}`}`);
    console.log(`probe      cost ${e.probeRequests} request${e.probeRequests === 1 ? "" : "s"}; nothing was queued`);
  });
}

async function printCommunityEstimate(state: CliState, params: CommunityJobParams): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  requireApiKeys(runtime.config);
  await withServices(runtime, async (services) => {
    const e = await estimateCommunity(services.client, params);
    const more = (c: { count: number; exact: boolean }) => (c.exact ? formatCount(c.count) : `more than ${formatCount(c.count)} (the walk goes on past the probe's page)`);
    console.log(`tweets     ${more(e.tweets)}`);
    console.log(`members    ${e.members === null ? 'not walked (--query)' : more(e.members)}`);
    console.log(`recent     ${e.tweetsPerDayRecent === null ? 'unknown' : `~${formatCount(e.tweetsPerDayRecent)} tweets/day near the newest`}`);
    console.log(`requests   ${e.requests === null ? 'unknown: no endpoint tells a community\'s size; --max-requests bounds the job' : formatCount(e.requests)}`);
    if (e.watchRequestsPerDay !== null) console.log(`watch      ~${formatCount(e.watchRequestsPerDay)} requests/day (one per pass, plus a page per 20 new tweets)`);
    console.log(`probe      cost ${e.probeRequests} request${e.probeRequests === 1 ? '' : 's'}; nothing was queued`);
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
      .option('--estimate', 'estimate tweets, requests, quota share and time from a 4-request probe; enqueue nothing'),
  ).action(async (query: string, o: CommonOptions & { order: string; since?: string; until?: string; maxTweets?: string; every?: string; estimate?: boolean }) => {
    const q = parseSearchQuery(query);
    const order = parseOrder(o.order);
    const range = parseDateRange(o.since, o.until);
    if (range.since || range.until) assertNoTimeOperators(q);
    const maxTweets = o.maxTweets === undefined ? undefined : parsePositiveInt(o.maxTweets, '--max-tweets');
    const common = parseCommon(o);
    const everySeconds = o.every === undefined ? undefined : parseEvery(o.every);
    const params = { query: q, order, since: range.since?.value, until: range.until?.value, maxTweets, everySeconds };
    if (everySeconds !== undefined) checkSearchJob(params);
    if (o.estimate) await printEstimate(state, SearchJobParams.parse({ ...params, everySeconds: undefined }));
    else await run(state, 'search', params, common);
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
      .option('--full', 'read back to --since (or 7 days) again, whatever earlier passes of this handle and filters read'),
  ).action(async (handle: string, o: CommonOptions & { every?: string; minLikes?: string; minRetweets?: string; minReplies?: string; since?: string; full?: boolean }) => {
    const params = {
      handle: parseHandle(handle),
      everySeconds: o.every === undefined ? undefined : parseEvery(o.every),
      minLikes: o.minLikes === undefined ? undefined : parseNonNegativeInt(o.minLikes, '--min-likes'),
      minRetweets: o.minRetweets === undefined ? undefined : parseNonNegativeInt(o.minRetweets, '--min-retweets'),
      minReplies: o.minReplies === undefined ? undefined : parseNonNegativeInt(o.minReplies, '--min-replies'),
      since: o.since === undefined ? undefined : parseDate(o.since, '--since').value,
      full: o.full === true ? true : undefined,
    };
    await run(state, 'mentions', params, parseCommon(o));
  });

  withCommon(
    program
      .command('user')
      .description('profile and timeline of one user')
      .argument('<user>', 'handle, numeric id or profile URL')
      .option('--max-tweets <n>', 'stop after about this many tweets')
      .option('--every <interval>', 'timeline watch: a pass every interval (e.g. 1h), newest first, down to the last pass'),
  ).action(async (user: string, o: CommonOptions & { maxTweets?: string; every?: string }) => {
    const ref = parseUserRef(user);
    const target = ref.kind === 'id' ? { userId: ref.value } : { username: ref.handle ?? ref.value };
    const maxTweets = o.maxTweets === undefined ? undefined : parsePositiveInt(o.maxTweets, '--max-tweets');
    const everySeconds = o.every === undefined ? undefined : parseEvery(o.every);
    await run(state, 'user', { target, maxTweets, everySeconds }, parseCommon(o));
  });

  withCommon(
    program.command('list').description("a list's tweets, members and followers").argument('<list>', 'list id or URL'),
  ).action(async (list: string, o: CommonOptions) => {
    await run(state, 'list', { listId: parseListRef(list).id }, parseCommon(o));
  });

  withCommon(
    program
      .command('community')
      .description("a community's members and its tweets; with --query a search inside it (members not walked)")
      .argument('<community>', 'community id or URL')
      .option('--query <q>', "search inside the community (the search grammar) instead of walking its members and whole feed")
      .option('--every <interval>', 'watch the feed (or the search) every interval (e.g. 10m, 1h); each pass fetches only what is new')
      .option('--estimate', 'probe one page of each walk (1-2 requests): sizes, recent rate, a watch\'s daily cost; enqueue nothing'),
  ).action(async (community: string, o: CommonOptions & { query?: string; every?: string; estimate?: boolean }) => {
    const params = {
      communityId: parseCommunityRef(community).id,
      query: o.query === undefined ? undefined : parseSearchQuery(o.query, '--query'),
      everySeconds: o.every === undefined ? undefined : parseEvery(o.every),
    };
    checkCommunityJob(params);
    const common = parseCommon(o);
    if (o.estimate) await printCommunityEstimate(state, CommunityJobParams.parse(params));
    else await run(state, 'community', params, common);
  });

  withCommon(
    program
      .command('replies')
      .description('replies to a tweet (the replies listing plus a conversation search)')
      .argument('<tweet>', 'tweet id or URL'),
  ).action(async (tweet: string, o: CommonOptions) => {
    await run(state, 'replies', { tweetId: parseTweetRef(tweet).id }, parseCommon(o));
  });

  withCommon(
    program
      .command('hydrate')
      .description('tweets by id or link, one per line, 100 per request')
      .argument('<file>', 'a file, or - for standard input'),
  ).action(async (file: string, o: CommonOptions) => {
    const common = parseCommon(o);
    const { ids, errors } = parseHydrateLines(await readHydrateInput(file));
    if (errors.length > 0) {
      for (const e of errors.slice(0, 10)) console.error(`line ${e.line}: ${e.reason} (${JSON.stringify(e.text)})`);
      throw new InputError(`<file>: ${errors.length} line${errors.length === 1 ? '' : 's'} are not tweet ids or links; nothing was queued`);
    }
    if (ids.length === 0) throw new InputError('<file>: no tweet ids found; nothing was queued');
    await run(state, 'hydrate', { ids }, common);
  });
}
