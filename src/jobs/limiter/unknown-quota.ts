/**
 * Learning a key's quota when a backfill finds it unknown (before the first sync, after a park or a
 * Redis loss) and must keep the watch reserve. One usage call per key at a time, shared by every
 * acquire of the process that waits for it; a failed call is not repeated for a while, so a down
 * usage endpoint costs one request per key per backoff, not one per acquire.
 */
import { AsyncResource } from 'node:async_hooks';

export const UNKNOWN_SYNC_BACKOFF_MS = 5000;

export class UnknownQuotaSyncs {
  readonly #inFlight = new Map<string, Promise<boolean>>();
  readonly #retryAfter = new Map<string, number>();
  /**
   * Runs a sync in the async context this object was made in: a usage call that a job's acquire
   * starts is no request of that job (it spends no budget), so it must not land in the job's
   * per-page request accounting, which follows the async context.
   */
  readonly #detached = AsyncResource.bind((fn: () => Promise<boolean>): Promise<boolean> => fn());

  /**
   * Syncs each fingerprint not backing off with `syncOne` (true = the quota is now known). True
   * when at least one key is now known; false when none could be asked or every call failed.
   */
  async sync(fingerprints: readonly string[], syncOne: (fingerprint: string) => Promise<boolean>): Promise<boolean> {
    const now = Date.now();
    const syncs = fingerprints.flatMap((fp) => {
      if ((this.#retryAfter.get(fp) ?? 0) > now) return [];
      let sync = this.#inFlight.get(fp);
      if (!sync) {
        sync = this.#detached(async () => {
          const ok = await syncOne(fp);
          if (!ok) this.#retryAfter.set(fp, Date.now() + UNKNOWN_SYNC_BACKOFF_MS);
          return ok;
        });
        this.#inFlight.set(fp, sync);
        void sync.finally(() => this.#inFlight.delete(fp));
      }
      return [sync];
    });
    return (await Promise.all(syncs)).some(Boolean);
  }
}
