/**
 * What the dashboard shows, assembled from the store (Postgres) and the limiter (Redis, through
 * src/jobs): the overview (a page of jobs, every key, watches, failures, quarantine) and one job's
 * detail. Pure reads: nothing here writes, enqueues or sends a request to the service. Keys appear
 * only as fingerprints (the limiter's KeyState has no key field).
 */
import { fromRedis } from '../jobs/bounded-read.ts';
import type { KeyState } from '../jobs/limiter/index.ts';
import {
  dashboardJobsPage,
  dashboardWatches,
  jobDetailExtras,
  keyRequestBuckets,
  recentFailures,
  recentQuarantine,
  type DashboardFailure,
  type DashboardJobRow,
  type DashboardWatch,
  type JobDetailExtras,
  type QuarantinedItem,
} from '../store/dashboard.ts';
import type { Queryable } from '../store/db.ts';
import { describeJobState, jobHealth, jobSnapshot, type JobHealth, type JobSnapshot } from '../store/job-status.ts';
import { etaSeconds as etaOf } from '../store/job-progress.ts';
import { JobStatus } from '../store/states.ts';
import { exampleSqlFor, type ExampleSql } from './example-sql.ts';

export const JOBS_PER_PAGE = 50;
/** Minutes of request history per key in the overview's charts. */
export const KEY_HISTORY_MINUTES = 5;
export const KEY_BUCKET_SECONDS = 10;

export interface DashboardDeps {
  pool: Queryable;
  /** The keys' limiter state (Services.keyStates: the configured keys, or those the workers synced). */
  keyStates(): Promise<KeyState[]>;
  rateWaits: { waitingJobs(): Promise<string[]> };
  /** HARVEST_STALLED_AFTER_MS: runnable slices and no progress this long is `stalled`. */
  config: { stalledAfterMs: number };
}

export interface JobView {
  id: string;
  kind: string;
  status: string;
  /** What a person reads: `running (waiting for rate)`, `paused: quota`, `scheduled`, `failed: <reason>`… */
  state: string;
  /** 0…1, or null when the job has no known end (a watch between passes, a walk without range). */
  progress: number | null;
  tweets: number;
  requests: number;
  maxRequests: number | null;
  requestsPerSecond: number;
  etaSeconds: number | null;
  nextDueAt: string | null;
  note: string | null;
  label: string;
}

export interface KeyView {
  fingerprint: string;
  remaining: number | null;
  state: string;
  parked: boolean;
  parkedUntil: string | null;
  disabled: boolean;
  granted: number;
  rateLimited: number;
  /** Request rate per bucket over the last minutes: [bucket start (Unix s), req/s, 429s]. */
  series: Array<[number, number, number]>;
  requestsPerSecond: number;
}

export interface Overview {
  at: string;
  page: number;
  pages: number;
  perPage: number;
  total: number;
  byStatus: Record<string, number>;
  jobs: JobView[];
  keys: KeyView[];
  watches: Array<Omit<DashboardWatch, 'lastPassFinishedAt' | 'nextDueAt'> & { lastPassFinishedAt: string | null; nextDueAt: string | null }>;
  failures: Array<Omit<DashboardFailure, 'at'> & { at: string }>;
  quarantine: { total: number; items: Array<Omit<QuarantinedItem, 'at'> & { at: string }> };
}

export interface JobDetail {
  at: string;
  job: JobView & { params: unknown; errorMessage: string | null; slices: JobSnapshot['slices']; createdAt: string; gaps: number };
  extras: JobDetailExtras;
  sql: ExampleSql[];
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** A short human label from a job's params: the query, handle, list or tweet it works on. */
function labelOf(params: unknown): string {
  if (typeof params !== 'object' || params === null) return '';
  const p = params as Record<string, unknown>;
  for (const k of ['query', 'handle', 'listId', 'communityId', 'tweetId', 'sourceJobId', 'file']) {
    const v = p[k];
    if (typeof v === 'string' || typeof v === 'number') return k === 'handle' ? `@${v}` : String(v);
  }
  return '';
}

export function jobView(r: DashboardJobRow, waiting: Set<string>, health: Map<string, JobHealth>, now: number): JobView {
  const sliceTotal = r.slices.pending + r.slices.running + r.slices.done + r.slices.failed + r.slices.cancelled;
  const fractionDone: number | null =
    r.status === JobStatus.COMPLETED
      ? 1
      : r.rangeFraction !== null
        ? r.rangeFraction
        : r.maxRequests !== null
          ? Math.min(1, r.requests / r.maxRequests)
          : !r.isWatch && sliceTotal > 0
            ? (r.slices.done + r.slices.failed + r.slices.cancelled) / sliceTotal
            : null;
  // Rounded for display only: the ETA from the rounded figure was "–" below 0.05% and up to 50%
  // off below 1% (41.6 days for 29.7 an hour into a long job).
  const progress = fractionDone === null ? null : Math.round(fractionDone * 1000) / 1000;
  const requestsPerSecond = Math.round((r.recentRequests / 60) * 10) / 10;
  let etaSeconds: number | null = null;
  if ((r.status === JobStatus.RUNNING || r.status === JobStatus.QUEUED) && r.startedAt) {
    const eta = etaOf({ fractionDone, startedAt: r.startedAt, heldMs: r.heldMs, now: new Date(now) });
    etaSeconds = eta === null ? null : Math.round(eta);
  }
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    state: describeJobState({ status: r.status, errorMessage: r.errorMessage }, waiting.has(r.id), health.get(r.id)),
    progress,
    tweets: r.tweets,
    requests: r.requests,
    maxRequests: r.maxRequests,
    requestsPerSecond,
    etaSeconds,
    nextDueAt: iso(r.nextDueAt),
    note: r.note,
    label: labelOf(r.params),
  };
}

function keyView(k: KeyState, buckets: Array<{ at: number; requests: number; rateLimited: number }>, now: number): KeyView {
  const state = k.disabled ? `disabled (${k.reason ?? 'auth'})` : k.parkedUntil ? `parked (${k.reason ?? 'quota'})` : 'active';
  // Every bucket of the window, zeros included, so the chart's time axis is the same for all keys.
  const end = Math.floor(now / 1000 / KEY_BUCKET_SECONDS) * KEY_BUCKET_SECONDS;
  const byAt = new Map(buckets.map((b) => [b.at, b]));
  const series: Array<[number, number, number]> = [];
  for (let at = end - KEY_HISTORY_MINUTES * 60 + KEY_BUCKET_SECONDS; at <= end; at += KEY_BUCKET_SECONDS) {
    const b = byAt.get(at);
    series.push([at, b ? Math.round((b.requests / KEY_BUCKET_SECONDS) * 10) / 10 : 0, b?.rateLimited ?? 0]);
  }
  // The last full bucket is the current rate (the newest one is still filling).
  const current = series.length >= 2 ? series[series.length - 2]![1] : 0;
  return {
    fingerprint: k.fingerprint,
    remaining: k.remaining,
    state,
    parked: k.parkedUntil !== null,
    parkedUntil: iso(k.parkedUntil),
    disabled: k.disabled,
    granted: k.granted,
    rateLimited: k.rateLimited,
    series,
    requestsPerSecond: current,
  };
}

/** How long a tick waits for Redis (its connection queues commands while Redis is down). */
export async function loadOverview(deps: DashboardDeps, page: number): Promise<Overview> {
  const now = Date.now();
  const [jobs, keys, waiting, buckets, watches, failures, quarantine] = await Promise.all([
    dashboardJobsPage(deps.pool, (page - 1) * JOBS_PER_PAGE, JOBS_PER_PAGE),
    fromRedis(deps, 'the key states', () => deps.keyStates()),
    fromRedis(deps, 'the rate waits', () => deps.rateWaits.waitingJobs()),
    keyRequestBuckets(deps.pool, KEY_HISTORY_MINUTES, KEY_BUCKET_SECONDS),
    dashboardWatches(deps.pool),
    recentFailures(deps.pool),
    recentQuarantine(deps.pool),
  ]);
  const waitingSet = new Set(waiting);
  // Stalled is computed by the store's jobHealth (the same as `harvest status`): live jobs only.
  const health = new Map((await jobHealth(deps.pool, { stalledAfterMs: deps.config.stalledAfterMs, waitingForRate: waitingSet })).map((h) => [h.jobId, h]));
  return {
    at: new Date(now).toISOString(),
    page,
    pages: Math.max(1, Math.ceil(jobs.total / JOBS_PER_PAGE)),
    perPage: JOBS_PER_PAGE,
    total: jobs.total,
    byStatus: jobs.byStatus,
    jobs: jobs.jobs.map((j) => jobView(j, waitingSet, health, now)),
    keys: keys.map((k) => keyView(k, buckets.filter((b) => b.fingerprint === k.fingerprint), now)),
    watches: watches.map((w) => ({ ...w, lastPassFinishedAt: iso(w.lastPassFinishedAt), nextDueAt: iso(w.nextDueAt) })),
    failures: failures.map((f) => ({ ...f, at: f.at.toISOString() })),
    quarantine: { total: quarantine.total, items: quarantine.items.map((q) => ({ ...q, at: q.at.toISOString() })) },
  };
}

export async function loadJobDetail(deps: DashboardDeps, jobId: string): Promise<JobDetail | null> {
  const now = Date.now();
  const snap = await jobSnapshot(deps.pool, jobId);
  if (!snap) return null;
  const [extras, waiting] = await Promise.all([jobDetailExtras(deps.pool, jobId), fromRedis(deps, 'the rate waits', () => deps.rateWaits.waitingJobs())]);
  const row: DashboardJobRow = {
    id: snap.id,
    kind: snap.kind,
    status: snap.status,
    params: snap.params,
    tweets: snap.tweets,
    requests: snap.requests,
    maxRequests: snap.maxRequests,
    note: snap.note,
    errorMessage: snap.errorMessage,
    createdAt: snap.createdAt,
    startedAt: snap.startedAt,
    finishedAt: snap.finishedAt,
    heldMs: snap.heldMs,
    recentRequests: extras.recentRequests,
    slices: snap.slices,
    rangeFraction: snap.fractionDone,
    isWatch: snap.watch !== null,
    nextDueAt: snap.watch?.nextDueAt ?? null,
  };
  const waitingSet = new Set(waiting);
  const health = await jobHealth(deps.pool, { stalledAfterMs: deps.config.stalledAfterMs, waitingForRate: waitingSet, jobId });
  const view = jobView(row, waitingSet, new Map(health.map((h) => [h.jobId, h])), now);
  return {
    at: new Date(now).toISOString(),
    job: { ...view, params: snap.params, errorMessage: snap.errorMessage, slices: snap.slices, createdAt: snap.createdAt.toISOString(), gaps: snap.watch?.gaps.length ?? 0 },
    extras,
    sql: exampleSqlFor(snap.id, snap.kind),
  };
}
