/**
 * Completeness of a job from Postgres alone. A time-ranged slice (search, a backfill) walked
 * [lo, hi) newest first; it covered all of it when the service ended the walk or it reached its
 * bound (job_slices.end_reason 'end' / 'bound'), else only down to the oldest tweet it reached.
 * The job's range minus the union of what its slices covered is what is missing, each piece
 * with the reason of the walk that stopped above it. `repairJob` queues slices for exactly those
 * pieces. Other walks (a timeline, a list) have no range: a walk that stopped early is listed
 * whole and repaired by walking it again (a later walk of it to the end makes up for it). A walk
 * the service answered 404 (its target deleted, protected or suspended) ended: nothing is left to
 * read, so it is listed apart and neither keeps the job incomplete nor is bought again. Watch
 * passes are left out: a watch's next pass reads its own gaps (watches.gaps).
 */
import { DAY_MS, loadAuditInput, reopenJobForRepair, type AuditInput, type AuditSliceRow } from '../store/audit.ts';
import type { Pool } from '../store/db.ts';
import type { NewSlice } from '../store/jobs.ts';
import { compareIds } from '../store/page-rows.ts';
import { InputError } from '../errors.ts';
import { isCompleteEnd, SliceEndReason } from '../store/slice-ends.ts';
import type { HarvestQueues } from './queue.ts';

export interface UncoveredRange {
  /** null: the range has no start (a search without --since). */
  sinceMs: number | null;
  untilMs: number;
  reason: string;
  sliceId: string;
  /** What a repair slice walks: the slice's kind and params without their bounds. */
  kind: string;
  base: Record<string, unknown>;
}

export interface UnfinishedWalk {
  sliceId: string;
  kind: string;
  reason: string;
  params: Record<string, unknown>;
  /** Where it stopped, when a repair may go on from there (repairSlices' `resume`); else null. */
  resumeCursor: string | null;
}

/**
 * Stops whose cursor a repair may go on from: the walk was cut short by something outside the
 * listing (a budget, --max-tweets, a failure, a cancel). Not a repeated cursor, empty or stale
 * pages (the cursor itself is suspect). A missing target (404) is not repaired at all.
 */
const RESUMABLE = new Set(['budget', 'max-tweets', 'failed', 'cancelled']);

/** A walk whose target the service answered 404 for (deleted, protected, suspended). */
export interface MissingTarget {
  sliceId: string;
  kind: string;
  params: Record<string, unknown>;
}

/** A walk the service ended at once with nothing (a quiet range, or an outage answering empty). */
export interface EmptyWalk {
  sliceId: string;
  kind: string;
  /** What walking it again takes: the slice's kind and params (a ranged one's own range). */
  params: Record<string, unknown>;
  /** A ranged walk's range. */
  sinceMs: number | null;
  untilMs: number | null;
}

export interface AuditDay {
  day: string;
  tweets: number;
  /**
   * Pages of the ranged walks over the day; null when none covers it (a timeline, a list, a
   * conversation: such a walk is judged whole, so neither its pages per day nor "walked to the end"
   * can be told for a day).
   */
  pages: number | null;
  /**
   * Why parts of the day were not walked to the end of results; empty when complete (or, pages
   * null, when nothing says: the day lies above where any stopped walk without a range got to).
   */
  stopped: string[];
}

export interface AuditReport {
  jobId: string;
  kind: string;
  status: string;
  days: AuditDay[];
  uncovered: UncoveredRange[];
  unfinished: UnfinishedWalk[];
  /**
   * Walks that ended at the service's word with no item at all. They count as complete (a quiet
   * range looks the same), but the service has had outages answering every endpoint empty
   * (service-notes): `--repair --recheck-empty` reads them again. The latest walk of each range or
   * listing only: one read again and still empty is listed once.
   */
  answeredEmpty: EmptyWalk[];
  /** Walks whose target is gone (404): ended, nothing to read; the latest run of each only. */
  missing: MissingTarget[];
  complete: boolean;
}

interface Span {
  lo: number;
  hi: number;
}

/**
 * A walk whose coverage its oldest tweet tells: newest first over a time range. A popular-order
 * search reads its range by engagement, so its first page already spans it (its oldest tweet sits
 * near the start): stopped early, it covered nothing that can be told. It is judged as a listing
 * (by its latest run; a repair walks it again from its first page, the pages the stopped run read
 * not counted stale), where counting it covered down to its oldest tweet called a budget-stopped
 * job complete with a third of its tweets never read.
 */
const isRanged = (s: AuditSliceRow): boolean => typeof s.params.untilMs === 'number' && s.params.pass === undefined && s.params.order !== 'popular';

function reasonOf(s: AuditSliceRow): string | null {
  if (s.status === 'pending' || s.status === 'running') return 'still walking';
  if (s.status === 'failed') return 'failed';
  if (s.status === 'cancelled') return 'cancelled';
  // A slice done without a recorded reason predates migration 0006: it ended as it should. A 404
  // ended it too: reading again buys the same 404 (the target is listed under `missing`).
  if (s.endReason === null || isCompleteEnd(s.endReason) || s.endReason === SliceEndReason.NOT_FOUND) return null;
  return s.endReason;
}

/** The slice's own range: a hand-over point (stopBelowMs) raises its start. */
function nominal(s: AuditSliceRow): Span {
  const since = typeof s.params.sinceMs === 'number' ? s.params.sinceMs : -Infinity;
  const stop = typeof s.params.stopBelowMs === 'number' ? s.params.stopBelowMs : -Infinity;
  return { lo: Math.max(since, stop), hi: s.params.untilMs as number };
}

/** What the walk covered: all of its range, or down to just above its oldest tweet's millisecond. */
function covered(s: AuditSliceRow): Span | null {
  const n = nominal(s);
  if (reasonOf(s) === null) return n;
  if (s.oldestMs === null) return null;
  // Tweets in the oldest millisecond below the one reached may be unread: it counts as missing.
  const lo = Math.min(n.hi, Math.max(n.lo, s.oldestMs + 1));
  return lo < n.hi ? { lo, hi: n.hi } : null;
}

function union(spans: Span[]): Span[] {
  const sorted = spans.filter((s) => s.lo < s.hi).sort((a, b) => a.lo - b.lo);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out.at(-1);
    if (last && s.lo <= last.hi) last.hi = Math.max(last.hi, s.hi);
    else out.push({ ...s });
  }
  return out;
}

function subtract(from: Span[], minus: Span[]): Span[] {
  let rest = from;
  for (const m of minus) {
    rest = rest.flatMap((r) => {
      if (m.hi <= r.lo || m.lo >= r.hi) return [r];
      const parts: Span[] = [];
      if (r.lo < m.lo) parts.push({ lo: r.lo, hi: m.lo });
      if (m.hi < r.hi) parts.push({ lo: m.hi, hi: r.hi });
      return parts;
    });
  }
  return rest;
}

function withoutBounds(params: Record<string, unknown>): Record<string, unknown> {
  const { sinceMs: _s, untilMs: _u, stopBelowMs: _b, ...base } = params;
  return base;
}

/** Pure: the report from what loadAuditInput read. */
export function auditFromInput(input: AuditInput): AuditReport {
  const ranged = input.slices.filter(isRanged);
  const uncovered: UncoveredRange[] = [];
  // Slices of different queries (a watch's backfill and another) cover different things.
  const groups = new Map<string, AuditSliceRow[]>();
  for (const s of ranged) {
    const key = `${s.kind}:${JSON.stringify(withoutBounds(s.params))}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const slices of groups.values()) {
    const walked = union(slices.flatMap((s) => covered(s) ?? []));
    // What each walk that stopped early left: its own range minus what any walk covered (a
    // repair slice, a split's other half).
    for (const s of slices) {
      const reason = reasonOf(s);
      if (reason === null) continue;
      for (const m of subtract([nominal(s)], walked)) {
        uncovered.push({
          sinceMs: Number.isFinite(m.lo) ? m.lo : null,
          untilMs: m.hi,
          reason,
          sliceId: s.id,
          kind: s.kind,
          base: withoutBounds(s.params),
        });
      }
    }
  }
  // A walk without a range is judged by its latest run: a repair read to the end makes up for the
  // runs stopped before it, and a walk stopped again is listed (and queued by a repair) once.
  const stoppedWalks = latestWalks(input.slices, (s) => !isRanged(s)).filter((s) => reasonOf(s) !== null);
  const unfinished: UnfinishedWalk[] = stoppedWalks.map((s) => {
    const reason = reasonOf(s)!;
    return { sliceId: s.id, kind: s.kind, reason, params: s.params, resumeCursor: RESUMABLE.has(reason) ? (s.cursor ?? null) : null };
  });
  return {
    jobId: input.job.id,
    kind: input.job.kind,
    status: input.job.status,
    days: auditDays(input, ranged, uncovered, stoppedWalks),
    uncovered,
    unfinished,
    answeredEmpty: answeredEmpty(input.slices),
    missing: latestWalks(input.slices, () => true)
      .filter((s) => s.status === 'done' && s.endReason === SliceEndReason.NOT_FOUND)
      .map((s) => ({ sliceId: s.id, kind: s.kind, params: s.params })),
    complete: uncovered.length === 0 && unfinished.length === 0,
  };
}

/** What walking `s` again takes: a ranged walk over its own range (a hand-over point included). */
function rewalkParams(s: AuditSliceRow): Record<string, unknown> {
  if (!isRanged(s)) return s.params;
  const n = nominal(s);
  return { ...withoutBounds(s.params), ...(Number.isFinite(n.lo) ? { sinceMs: n.lo } : {}), untilMs: n.hi };
}

/**
 * Which walks are one for answeredEmpty: a ranged walk by its declared range (a recheck that found
 * tweets and handed part of its range over keeps it), any other by its params.
 */
function walkKey(s: AuditSliceRow): string {
  const p = isRanged(s) ? { ...withoutBounds(s.params), sinceMs: s.params.sinceMs, untilMs: s.params.untilMs } : s.params;
  return `${s.kind}:${JSON.stringify(p)}`;
}

/** The latest run (highest slice id) of each walk `include` takes, watch passes left out; by slice id. */
function latestWalks(slices: readonly AuditSliceRow[], include: (s: AuditSliceRow) => boolean): AuditSliceRow[] {
  const latest = new Map<string, AuditSliceRow>();
  for (const s of slices) {
    if (s.params.pass !== undefined || !include(s)) continue;
    const seen = latest.get(walkKey(s));
    if (!seen || compareIds(s.id, seen.id) > 0) latest.set(walkKey(s), s);
  }
  return [...latest.values()].sort((a, b) => compareIds(a.id, b.id));
}

function answeredEmpty(slices: readonly AuditSliceRow[]): EmptyWalk[] {
  return latestWalks(slices, (s) => s.status === 'done')
    // A walk that sent no request (a parents walk with nothing missing) was not answered at all.
    .filter((s) => s.items === 0 && s.endReason === SliceEndReason.END && s.requests !== 0)
    .map((s) => {
      const params = rewalkParams(s);
      return {
        sliceId: s.id,
        kind: s.kind,
        params,
        sinceMs: typeof params.sinceMs === 'number' ? params.sinceMs : null,
        untilMs: typeof params.untilMs === 'number' ? params.untilMs : null,
      };
    });
}

/**
 * Per UTC day of the job's range: tweets stored, pages (a walk's pages spread over the days it
 * covered), stops. A day no ranged walk covers gets its stops from the walks without a range that
 * stopped early: such a walk did not read the day of its oldest tweet, nor any day below it, to
 * the end (what it read above it depends on its order, so nothing is claimed there).
 */
function auditDays(input: AuditInput, ranged: AuditSliceRow[], uncovered: UncoveredRange[], stoppedWalks: AuditSliceRow[]): AuditDay[] {
  const storedDays = [...input.tweetsPerDay.keys()];
  const bounds = ranged.map(nominal);
  const finiteLows = bounds.map((b) => b.lo).filter(Number.isFinite);
  const firstDay = Math.min(...finiteLows.map((lo) => Math.floor(lo / DAY_MS)), ...storedDays);
  const lastDay = Math.max(...bounds.map((b) => Math.floor((b.hi - 1) / DAY_MS)), ...storedDays);
  if (!Number.isFinite(firstDay) || !Number.isFinite(lastDay)) return [];
  const pages = new Map<number, number>();
  for (const s of ranged) {
    const c = covered(s);
    const span = c ?? nominal(s);
    const lo = Number.isFinite(span.lo) ? span.lo : Math.min(span.hi - 1, (s.oldestMs ?? span.hi - 1));
    const width = Math.max(1, span.hi - lo);
    for (let d = Math.floor(lo / DAY_MS); d <= Math.floor((span.hi - 1) / DAY_MS); d++) {
      const overlap = Math.min(span.hi, (d + 1) * DAY_MS) - Math.max(lo, d * DAY_MS);
      if (overlap > 0) pages.set(d, (pages.get(d) ?? 0) + (s.pages * overlap) / width);
    }
  }
  const days: AuditDay[] = [];
  for (let d = firstDay; d <= lastDay; d++) {
    const overlaps = (lo: number, hi: number): boolean => lo < (d + 1) * DAY_MS && hi > d * DAY_MS;
    const stopped = [
      ...uncovered.filter((u) => overlaps(u.sinceMs ?? -Infinity, u.untilMs)),
      ...stoppedWalks.filter((s) => s.oldestMs !== null && s.oldestMs >= d * DAY_MS).map((s) => ({ reason: reasonOf(s)!, sliceId: s.id })),
    ].map((u) => `${u.reason} (slice ${u.sliceId})`);
    days.push({
      day: new Date(d * DAY_MS).toISOString().slice(0, 10),
      tweets: input.tweetsPerDay.get(d) ?? 0,
      pages: bounds.some((b) => overlaps(b.lo, b.hi)) ? Math.round(pages.get(d) ?? 0) : null,
      stopped: [...new Set(stopped)],
    });
  }
  return days;
}

export async function auditJob(pool: Pool, jobId: string): Promise<AuditReport | null> {
  const input = await loadAuditInput(pool, jobId);
  return input ? auditFromInput(input) : null;
}

/**
 * The slices that walk exactly the uncovered ranges and the unfinished walks again, and with
 * `recheckEmpty` the walks the service answered empty.
 */
export function repairSlices(report: AuditReport, options: RepairOptions = {}): NewSlice[] {
  return [
    ...report.uncovered.map((u) => ({
      kind: u.kind,
      params: { ...u.base, ...(u.sinceMs !== null ? { sinceMs: u.sinceMs } : {}), untilMs: u.untilMs },
    })),
    ...report.unfinished
      .filter((w) => w.reason !== 'still walking')
      .map((w) => ({ kind: w.kind, params: w.params, ...(options.resume && w.resumeCursor !== null ? { cursor: w.resumeCursor } : {}) })),
    ...(options.recheckEmpty ? report.answeredEmpty.map((w) => ({ kind: w.kind, params: w.params })) : []),
  ];
}

export interface RepairOptions {
  /** Also walk again what the service answered empty (after an outage that answered empty). */
  recheckEmpty?: boolean;
  /**
   * A listing walk stopped by a budget, --max-tweets, a failure or a cancel goes on from its saved
   * cursor instead of its first page: the pages it read are not bought again. Off by default:
   * nothing says how long the service honours a cursor, and one refused fails the repair.
   */
  resume?: boolean;
}

const isClaimed = (s: AuditSliceRow): boolean => s.status === 'pending' || s.status === 'running';

/**
 * What a repair queues now: the audit's uncovered ranges minus the whole range of every slice
 * still pending or running (a repair slice no worker took yet covers nothing, but it will), and
 * the unfinished walks no pending or running slice walks again; so too the rechecks of walks
 * answered empty (a second `--recheck-empty` before a worker ran the first bought each twice).
 */
export function repairPlanSlices(input: AuditInput, options: RepairOptions = {}): NewSlice[] {
  const report = auditFromInput(input);
  const claimed = new Map<string, Span[]>();
  const walking = new Set<string>();
  for (const s of input.slices.filter(isClaimed)) {
    if (isRanged(s)) {
      const key = `${s.kind}:${JSON.stringify(withoutBounds(s.params))}`;
      claimed.set(key, [...(claimed.get(key) ?? []), nominal(s)]);
    } else {
      walking.add(walkKey(s));
    }
  }
  const uncovered = report.uncovered
    .filter((u) => u.reason !== 'still walking')
    .flatMap((u) =>
      subtract([{ lo: u.sinceMs ?? -Infinity, hi: u.untilMs }], union(claimed.get(`${u.kind}:${JSON.stringify(u.base)}`) ?? [])).map((m) => ({
        ...u,
        sinceMs: Number.isFinite(m.lo) ? m.lo : null,
        untilMs: m.hi,
      })),
    );
  const unfinished = report.unfinished.filter((w) => !walking.has(`${w.kind}:${JSON.stringify(w.params)}`));
  const answeredEmpty = report.answeredEmpty.flatMap((w): EmptyWalk[] => {
    if (w.untilMs === null) return walking.has(`${w.kind}:${JSON.stringify(w.params)}`) ? [] : [w];
    const base = withoutBounds(w.params);
    return subtract([{ lo: w.sinceMs ?? -Infinity, hi: w.untilMs }], union(claimed.get(`${w.kind}:${JSON.stringify(base)}`) ?? [])).map((m) => ({
      ...w,
      params: { ...base, ...(Number.isFinite(m.lo) ? { sinceMs: m.lo } : {}), untilMs: m.hi },
      sinceMs: Number.isFinite(m.lo) ? m.lo : null,
      untilMs: m.hi,
    }));
  });
  return repairSlices({ ...report, uncovered, unfinished, answeredEmpty }, options);
}

export interface RepairDeps {
  pool: Pool;
  queues: HarvestQueues;
  budgets: { setBudget(jobId: string, maxRequests: number, options?: { replace?: boolean }): Promise<number> };
}

/**
 * Queues slices for exactly what is missing now (not what is still walking or already queued by
 * an earlier repair), computed from a fresh read under the job's lock, and makes the job
 * runnable again (a cancelled one too, but not a cancelled watch: that would run it again). The
 * repair gets `maxRequests` requests when given, whether or not the job had a budget; else a job
 * with one gets its original budget again. A job its --max-tweets stopped counts that stop anew
 * from the tweets it holds (reopenJobForRepair), so the repair is not stopped after one page.
 * Returns the queued slices' ids.
 */
export async function repairJob(
  deps: RepairDeps,
  report: Pick<AuditReport, 'jobId'>,
  options: { maxRequests?: number } & RepairOptions = {},
): Promise<string[]> {
  const done = await reopenJobForRepair(deps.pool, report.jobId, (input) => {
    if (input.job.status === 'cancelled' && input.job.watch === true) {
      throw new InputError(`job ${input.job.id} is a cancelled watch: a repair would run it again; nothing was queued (submit the watch anew)`);
    }
    const audit = auditFromInput(input);
    const slices = repairPlanSlices(input, options);
    return {
      slices,
      // An explicit --max-requests always holds: dropped for a job without a budget of its own, a
      // repair asked for 3 requests spent 27.
      budget: options.maxRequests ?? (input.job.maxRequests === null ? null : (input.job.runBudget ?? input.job.maxRequests)),
      raiseMaxTweets: [...audit.uncovered, ...audit.unfinished].some((w) => w.reason === SliceEndReason.MAX_TWEETS),
      note: `repair: ${slices.length} slice(s) queued by harvest audit --repair`,
    };
  });
  if (!done) return [];
  if (done.budget !== null) await deps.budgets.setBudget(report.jobId, done.budget, { replace: true });
  for (const s of done.slices) await deps.queues.enqueueSlice(s.priority, { jobId: report.jobId, sliceId: s.id });
  return done.slices.map((s) => s.id);
}
