/**
 * Group commit for one process: pages that become ready while the previous batch is still being
 * written (or in the same turn of the event loop) are committed together by `commitPages`, in one
 * transaction, each still guarded on its own slice cursor and lease (commit-page.ts).
 *
 * A page that finds a free slot is written on the next turn of the event loop (setImmediate, so
 * pages resolved by the same burst of responses go together), unless its walk is fetching its next
 * page meanwhile (`waitsFor`) and the process commits under GATHER_MAX_PAGES_PER_S: then it waits
 * for company until that fetch lands, `gatherMs` passes or GATHER_PAGES are queued. At one key's
 * 20 pages/s that makes batches of ~3.7 pages instead of ~1.03 (bench backfill, 2,165 pages: 582
 * transactions against 2,093; worker CPU a page 6.6 against 7.8 ms, A/B on one machine state).
 * When `maxInFlight` batches are already being written, new pages queue, and the queue is taken as
 * the next batch (at most `maxBatch` pages): with many keys (or a slow database) batches grow with
 * the load by themselves, which is when sharing COMMIT, the WAL record and the index work pays.
 *
 * A queue of at least 2 × MIN_SHARE pages is shared among the free slots: 16 pages ready at once
 * with two slots free go as two batches of 8 on two connections instead of one of 16 with the
 * second connection idle. The server then works on one batch while this process prepares the
 * other (bench/store.ts, 16 walks: ~23 ms of Postgres CPU and ~13 ms of ours per 16 pages, which
 * one batch at a time runs back to back). A batch costs one socket write (the commit is
 * pipelined), so the split adds ~0.2 ms per 8 pages; below MIN_SHARE pages per batch it is not made.
 */
import { commitPages, type CommittedPage, type PageCommit } from './commit-page.ts';
import type { Pool } from './db.ts';

/** Pages each batch holds at least before a queue is shared among free slots. */
const MIN_SHARE = 4;
/** Pages a gathering batch waits for at most (see gatherMs). */
const GATHER_PAGES = 2 * MIN_SHARE;
/** Above this many pages a second (the last full second) pages do not gather. */
const GATHER_MAX_PAGES_PER_S = 50;

export interface GroupCommitOptions {
  /** Pages in one transaction, at most (default 32). */
  maxBatch?: number;
  /** Batches written at once, each on its own connection (default 2). */
  maxInFlight?: number;
  /**
   * How long a page committed with `waitsFor` may wait for company before its batch is written
   * (default 0). Meant for walks that fetch their next page while this one commits
   * (slice-runner): at one key's 20 pages/s most batches would otherwise hold one page (issue 13:
   * worker CPU per page). A page without `waitsFor` (a walk's last page, a walk that reads the
   * store for its next request) is written on the next turn, with whatever waits.
   */
  gatherMs?: number;
}

export interface CommitOptions {
  /**
   * What the caller does meanwhile (its next page's fetch): the page's batch may gather for up to
   * `gatherMs`, but is written as soon as this settles, when the caller needs the commit to go on.
   */
  waitsFor?: Promise<unknown>;
}

interface Waiting {
  page: PageCommit;
  resolve(committed: CommittedPage): void;
  reject(error: unknown): void;
}

export class GroupCommitter {
  readonly #pool: Pool;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  readonly #gatherMs: number;
  #queue: Waiting[] = [];
  #inFlight = 0;
  #scheduled = false;
  /** The gathering wait, while one runs: a page that may not wait cuts it short. */
  #gathering: NodeJS.Timeout | null = null;
  /** Pages handed in since `#secondAt`, and the count of the last full second. */
  #secondAt = 0;
  #inSecond = 0;
  #lastSecond = 0;
  #batches = 0;
  #pages = 0;

  /** Pages queued or committing: a stop waits for them. */
  get busy(): boolean {
    return this.#queue.length > 0 || this.#inFlight > 0;
  }

  constructor(pool: Pool, options: GroupCommitOptions = {}) {
    this.#pool = pool;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 32);
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 2);
    this.#gatherMs = Math.max(0, options.gatherMs ?? 0);
  }

  /** Commits the page with the next batch; rejects with StaleSliceError when its guard fails. */
  commit(page: PageCommit, options: CommitOptions = {}): Promise<CommittedPage> {
    this.#countPage();
    return new Promise<CommittedPage>((resolve, reject) => {
      const waiting: Waiting = { page, resolve, reject };
      this.#queue.push(waiting);
      const waitsFor = this.#gatherMs > 0 ? options.waitsFor : undefined;
      this.#schedule(waitsFor !== undefined);
      // The caller needs its commit now: its batch stops gathering (if it is still queued).
      const needed = (): void => {
        if (this.#queue.includes(waiting)) this.#schedule();
      };
      void waitsFor?.then(needed, needed);
    });
  }

  /** Batches written and pages in them so far (pages ÷ batches is the mean batch size). */
  get stats(): { batches: number; pages: number } {
    return { batches: this.#batches, pages: this.#pages };
  }

  #countPage(): void {
    const now = Date.now();
    if (now - this.#secondAt >= 1000) {
      // A second with no page at all in between counts as quiet.
      this.#lastSecond = now - this.#secondAt < 2000 ? this.#inSecond : 0;
      this.#secondAt = now;
      this.#inSecond = 0;
    }
    this.#inSecond++;
  }

  /** Pages a second lately: the last full second's, or this one's if it already has more. */
  #pageRate(): number {
    return Math.max(this.#lastSecond, this.#inSecond);
  }

  #schedule(mayWait = false): void {
    if (this.#inFlight >= this.#maxInFlight || this.#queue.length === 0) return;
    // Gathering is for a quiet committer (one key: 20 pages/s). At high rates batches fill while
    // the previous one is written, and a gather only holds walks behind bigger batches (10 keys at
    // 200 pages/s: 0.94 of the rate without a gather, 0.82 with gathers up to 32 pages).
    const now = !mayWait || this.#gatherMs === 0 || this.#queue.length >= GATHER_PAGES || this.#pageRate() > GATHER_MAX_PAGES_PER_S;
    if (this.#scheduled) {
      if (!now || this.#gathering === null) return;
      clearTimeout(this.#gathering);
      this.#gathering = null;
    }
    this.#scheduled = true;
    const flush = (): void => {
      this.#scheduled = false;
      this.#gathering = null;
      this.#flush();
    };
    if (now) setImmediate(flush);
    else this.#gathering = setTimeout(flush, this.#gatherMs);
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const free = this.#maxInFlight - this.#inFlight;
      const size = this.#queue.length < 2 * MIN_SHARE ? this.#queue.length : Math.max(MIN_SHARE, Math.ceil(this.#queue.length / free));
      const batch = this.#queue.splice(0, Math.min(this.#maxBatch, size));
      this.#inFlight++;
      this.#batches++;
      this.#pages += batch.length;
      void commitPages(
        this.#pool,
        batch.map((w) => w.page),
      )
        .then((outcomes) => {
          batch.forEach((w, i) => {
            const o = outcomes[i]!;
            if (o.ok) w.resolve({ result: o.result, after: o.after });
            else w.reject(o.error);
          });
        })
        .catch((error: unknown) => {
          for (const w of batch) w.reject(error);
        })
        .finally(() => {
          this.#inFlight--;
          this.#schedule();
        });
    }
  }
}
