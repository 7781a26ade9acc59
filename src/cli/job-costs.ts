/**
 * What a job command says about cost: the `--estimate` output of every kind (probes through the
 * services' client, so through the shared gate; nothing is queued), and what the spending gate
 * (confirm.ts) weighs before a job is queued: only what is known without a request, except a
 * bounded search backfill, whose 4-request probe is small beside the hundreds of pages it weighs.
 */
import { estimateSearch, MONTH_SECONDS, passesPerMonth, searchJobEstimate, type JobEstimate } from '../jobs/estimate.ts';
import { planContext } from '../jobs/harvester.ts';
import { estimateCommunity, type CommunityJobParams } from '../jobs/kinds/community.ts';
import type { SearchJobParams } from '../jobs/kinds/search.ts';
import type { Services } from '../jobs/services.ts';
import type { ExpectedSpend } from './confirm.ts';
import { cliRuntime, withServices, type CliState } from './context.ts';
import { formatCount, formatDuration } from './progress.ts';
import { quotaLeft } from './wait.ts';

const n = (v: number | null) => (v === null ? 'unknown' : formatCount(v));
/** 300 → "5m", 5400 → "1h30m": the interval as it was typed. */
function every(seconds: number): string {
  const parts: Array<[number, string]> = [[Math.floor(seconds / 86_400), 'd'], [Math.floor((seconds % 86_400) / 3600), 'h'], [Math.floor((seconds % 3600) / 60), 'm'], [seconds % 60, 's']];
  return parts.filter(([v]) => v > 0).map(([v, u]) => `${v}${u}`).join('') || '0s';
}

/** The lines every kind's --estimate prints: requests, a watch's cost, the basis, the probe. */
export function estimateLines(e: JobEstimate): string[] {
  const lines = [`requests   ${e.requests === null ? 'unknown: --max-requests bounds the job' : `${e.atLeast ? 'at least ' : '~'}${n(e.requests)}${e.watch ? ' (the first pass)' : ''}`}`];
  if (e.watch) {
    lines.push(`watch      ~${formatCount(e.watch.perPass)} a pass, ~${formatCount(e.watch.perMonth)} a month (30 days) at a pass every ${every(e.watch.everySeconds)}`);
  }
  lines.push(`basis      ${e.basis}`);
  lines.push(`probe      ${e.probeRequests === 0 ? 'none' : `cost ${e.probeRequests} request${e.probeRequests === 1 ? '' : 's'}`}; nothing was queued`);
  return lines;
}

/** Runs one kind's estimate with the services (client through the gate, Postgres) and prints it. */
export async function printJobEstimate(state: CliState, estimate: (services: Services, now: Date) => Promise<JobEstimate>): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  await withServices(runtime, async (services) => {
    const ctx = await planContext(services);
    for (const line of estimateLines(await estimate(services, ctx.now))) console.log(line);
  });
}

export async function printSearchEstimate(state: CliState, params: SearchJobParams, everySeconds: number | undefined): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  await withServices(runtime, async (services) => {
    const ctx = await planContext(services);
    const e = await estimateSearch(
      { client: services.client, pooledRate: ctx.pooledRate, latencyMs: ctx.latencyMs, quotaLeft: () => quotaLeft(services) },
      params,
      ctx.now,
    );
    const job = searchJobEstimate(e, everySeconds);
    console.log(`tweets     ${e.tweets === null ? 'unbounded (no --since)' : `${e.exact ? '' : '~'}${n(e.tweets)}`}`);
    console.log(`recent     ~${formatCount(e.tweetsPerDayRecent)} tweets/day near the newest`);
    console.log(`requests   ${e.requests === null ? 'unknown' : `~${n(e.requests)} (${e.pageSize} a page, plus each of ${n(e.slices)} slices' last page)`}`);
    if (job.watch) console.log(`watch      ~${formatCount(job.watch.perPass)} a pass, ~${formatCount(job.watch.perMonth)} a month (30 days) at a pass every ${every(job.watch.everySeconds)}`);
    console.log(`basis      ${job.basis}`);
    console.log(`time       ${e.seconds === null ? 'unknown' : `~${formatDuration(Math.ceil(e.seconds))} at ${e.pooledRate} req/s (all keys pooled)`}`);
    console.log(`quota      ${e.quotaLeft === null ? 'left unknown (run `harvest quota`)' : `${n(e.quotaLeft)} left${e.quotaShare === null ? '' : `; this uses ${(e.quotaShare * 100).toFixed(1)}%`}`}`);
    console.log(`probe      cost ${e.probeRequests} request${e.probeRequests === 1 ? '' : 's'}; nothing was queued`);
  });
}

export async function printCommunityEstimate(state: CliState, params: CommunityJobParams): Promise<void> {
  const runtime = cliRuntime(state, { quiet: true });
  await withServices(runtime, async (services) => {
    const e = await estimateCommunity(services.client, params);
    const more = (c: { count: number; exact: boolean }) => (c.exact ? formatCount(c.count) : `more than ${formatCount(c.count)} (the walk goes on past the probe's page)`);
    console.log(`tweets     ${more(e.tweets)}`);
    console.log(`members    ${e.members === null ? 'not walked (--query)' : more(e.members)}`);
    console.log(`recent     ${e.tweetsPerDayRecent === null ? 'unknown' : `~${formatCount(e.tweetsPerDayRecent)} tweets/day near the newest`}`);
    console.log(`requests   ${e.requests === null ? 'unknown: no endpoint tells a community\'s size; --max-requests bounds the job' : formatCount(e.requests)}`);
    if (e.watchRequestsPerDay !== null && params.everySeconds !== undefined) {
      console.log(`watch      ~${formatCount(e.watchRequestsPerDay)} requests/day, ~${formatCount(Math.ceil((e.watchRequestsPerDay * MONTH_SECONDS) / 86_400))} a month (30 days) at a pass every ${every(params.everySeconds)}`);
    }
    console.log(`basis      the first page of ${params.query === undefined ? 'the feed and of the members' : 'the search'}; a pass reads one page plus one per 20 new tweets`);
    console.log(`probe      cost ${e.probeRequests} request${e.probeRequests === 1 ? '' : 's'}; nothing was queued`);
  });
}

/** What the spending gate weighs for a job: known without a request, or from a small probe. */
export type SpendOf = (services: Services) => Promise<ExpectedSpend | null>;

/** A watch's first month: a pass every interval, each one request at least. */
export function watchSpend(everySeconds: number | undefined): ExpectedSpend | null {
  if (everySeconds === undefined) return null;
  return { requests: passesPerMonth(everySeconds), basis: `its first month: a pass every ${every(everySeconds)}, one request each at least` };
}

/** A bounded search backfill: the 4-request probe; plus a keyword watch's first month. */
export function searchSpend(params: SearchJobParams, everySeconds: number | undefined): SpendOf {
  return async (services) => {
    const watch = watchSpend(everySeconds);
    if (params.since === undefined || services.config.apiKeys.length === 0) return watch;
    const ctx = await planContext(services);
    const e = await estimateSearch(
      { client: services.client, pooledRate: ctx.pooledRate, latencyMs: ctx.latencyMs, quotaLeft: async () => null },
      params,
      ctx.now,
    );
    if (e.requests === null || e.tweets === null) return watch;
    const backfill = `the backfill, from a 4-request probe: ${e.exact ? '' : '~'}${formatCount(e.tweets)} tweets`;
    const pages = Math.ceil(e.tweets / e.pageSize);
    return watch === null
      ? { requests: e.requests, basis: backfill, pages }
      : { requests: e.requests + watch.requests, basis: `${backfill}; then ${watch.basis}`, pages };
  };
}
