/**
 * Group commit for one process: pages that become ready while the previous batch is still being
 * written (or in the same turn of the event loop) are committed together by `commitPages`, in one
 * transaction, each still guarded on its own slice cursor and lease (commit-page.ts).
 *
 * No page waits for company: a page that finds a free slot is written on the next turn of the
 * event loop (setImmediate, so pages resolved by the same burst of responses go together). Only
 * when `maxInFlight` batches are already being written do new pages queue, and the queue is taken
 * as the next batch (at most `maxBatch` pages). At 20 pages/s per key most batches hold one page;
 * with many keys (or a slow database) batches grow with the load, which is when sharing COMMIT,
 * the WAL record and the index work pays.
 */
import { commitPages, type CommittedPage, type PageCommit } from './commit-page.ts';
import type { Pool } from './db.ts';

export interface GroupCommitOptions {
  /** Pages in one transaction, at most (default 32). */
  maxBatch?: number;
  /** Batches written at once, each on its own connection (default 2). */
  maxInFlight?: number;
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
  #queue: Waiting[] = [];
  #inFlight = 0;
  #scheduled = false;
  #batches = 0;
  #pages = 0;

  constructor(pool: Pool, options: GroupCommitOptions = {}) {
    this.#pool = pool;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 32);
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 2);
  }

  /** Commits the page with the next batch; rejects with StaleSliceError when its guard fails. */
  commit(page: PageCommit): Promise<CommittedPage> {
    return new Promise<CommittedPage>((resolve, reject) => {
      this.#queue.push({ page, resolve, reject });
      this.#schedule();
    });
  }

  /** Batches written and pages in them so far (pages ÷ batches is the mean batch size). */
  get stats(): { batches: number; pages: number } {
    return { batches: this.#batches, pages: this.#pages };
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#maxInFlight || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch = this.#queue.splice(0, this.#maxBatch);
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
