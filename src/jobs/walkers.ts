/**
 * One process's walks per queue: how many run, and how many are promised to slices it split off
 * that no walk has taken yet. A split is made only when a walker can take the new slice at once
 * (slice-split.ts), and asking only for walks running left a race: pages that land together each
 * found the same free walkers before any new slice was taken. Seen in the three-key whole job
 * (bench/whole-job.ts, a worker of 64 walks): 17 splits within 50 ms where 13 walkers were free,
 * and the 4 slices too many (~35 pages each) waited 51 s for a walker, then made the job's last
 * 4–5 s run at a third of its rate (0.896–0.932 in five runs against 0.959 in one without it).
 *
 * A promise is kept until a walk starts on its queue (the new slice's, or another's: then the new
 * slice waits, and its job's waiting slice holds back further splits, see activeSliceCounts) or
 * PROMISE_MS passes (the slice went to another process).
 */
import type { RequestPriority } from '../api-client/gate.ts';

/** How long a walk promised to a split-off slice stays promised when no walk of ours starts. */
export const PROMISE_MS = 2000;

export class Walkers {
  readonly #capacity: Record<RequestPriority, number>;
  readonly #running: Record<RequestPriority, number> = { backfill: 0, watch: 0 };
  /** Expiry times (performance.now) of the promised walks, oldest first. */
  readonly #promised: Record<RequestPriority, number[]> = { backfill: [], watch: [] };

  constructor(capacity: Record<RequestPriority, number>) {
    this.#capacity = { ...capacity };
  }

  /** Walks that could start now: capacity less those running and those promised. */
  free(priority: RequestPriority): number {
    return this.#capacity[priority] - this.#running[priority] - this.#live(priority).length;
  }

  /** A walk starts: it takes the oldest promise on its queue, if any. */
  started(priority: RequestPriority): void {
    this.#running[priority]++;
    this.#live(priority).shift();
  }

  ended(priority: RequestPriority): void {
    this.#running[priority]--;
  }

  /**
   * Promises a walk to a slice about to be split off: answers how to take the promise back (no
   * slice was made), or null when no walk is free. `always`: promised even then (a walk that ends
   * splits a remainder for itself, and is still counted as running while it does).
   */
  promise(priority: RequestPriority, options: { always?: boolean } = {}): (() => void) | null {
    if (options.always !== true && this.free(priority) <= 0) return null;
    const promised = this.#promised[priority];
    const expiry = performance.now() + PROMISE_MS;
    promised.push(expiry);
    let kept = true;
    return () => {
      if (!kept) return;
      kept = false;
      const i = promised.indexOf(expiry);
      if (i >= 0) promised.splice(i, 1);
    };
  }

  #live(priority: RequestPriority): number[] {
    const promised = this.#promised[priority];
    const now = performance.now();
    while (promised.length > 0 && promised[0]! <= now) promised.shift();
    return promised;
  }
}
