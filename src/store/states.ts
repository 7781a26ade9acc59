/**
 * Every state a job, a slice and an edge can be in: the one home of these names (they are the
 * CHECK constraints of migrations/0002_jobs.sql and the edge tables). `as const` objects, not
 * enums (pg-boss): the values are the strings stored in Postgres.
 */

export const JobStatus = {
  QUEUED: 'queued',
  RUNNING: 'running',
  /** Paused by a person (`harvest pause`); only `resume` brings it back. */
  PAUSED: 'paused',
  /** No key can grant: parked until the earliest unpark or recheck, then resumed by the runner. */
  PAUSED_QUOTA: 'paused_quota',
  /** A watch between passes. */
  SCHEDULED: 'scheduled',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
} as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

/**
 * Statuses in which a job's slices may run and Redis must hold its work (reconcile restores
 * them): everything that is neither ended nor paused by a person.
 */
export const LIVE_JOB_STATUSES = [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.PAUSED_QUOTA, JobStatus.SCHEDULED] as const;
/** Statuses a job never leaves. */
export const TERMINAL_JOB_STATUSES = [JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED] as const;

export function isLiveJobStatus(status: string): boolean {
  return (LIVE_JOB_STATUSES as readonly string[]).includes(status);
}

export function isTerminalJobStatus(status: string): boolean {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

export const SliceStatus = {
  PENDING: 'pending',
  RUNNING: 'running',
  DONE: 'done',
  FAILED: 'failed',
  /** A search slice that handed its range on (kept for the record). */
  SPLIT: 'split',
  CANCELLED: 'cancelled',
} as const;
export type SliceStatus = (typeof SliceStatus)[keyof typeof SliceStatus];

/** Slices still to walk: they count toward a job's parallelism and keep it from rolling up. */
export const ACTIVE_SLICE_STATUSES = [SliceStatus.PENDING, SliceStatus.RUNNING] as const;

export function isActiveSliceStatus(status: string): boolean {
  return (ACTIVE_SLICE_STATUSES as readonly string[]).includes(status);
}

export const JobPriority = { WATCH: 'watch', BACKFILL: 'backfill' } as const;
export type JobPriority = (typeof JobPriority)[keyof typeof JobPriority];

/**
 * Relationship edges a page may carry. list_member / list_follower: owner is the list;
 * community_member: the community; follows: the owner follows each user; followers: each user
 * follows the owner.
 */
export const EdgeKind = {
  LIST_MEMBER: 'list_member',
  LIST_FOLLOWER: 'list_follower',
  COMMUNITY_MEMBER: 'community_member',
  FOLLOWS: 'follows',
  FOLLOWERS: 'followers',
} as const;
export type EdgeKind = (typeof EdgeKind)[keyof typeof EdgeKind];
