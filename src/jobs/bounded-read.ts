/**
 * A Redis read that gives up: the workers' connection holds a command until Redis is back
 * (maxRetriesPerRequest: null, as BullMQ needs), so a caller that must answer meanwhile (a
 * dashboard tick, a /metrics scrape, the notification loop) reads through this.
 */
const REDIS_ANSWER_MS = 3000;

/** Reads still waiting for Redis, per owner (a dashboard, a metrics source set) and what they read. */
const pendingReads = new WeakMap<object, Map<string, Promise<unknown>>>();

/**
 * `read()` or a rejection after REDIS_ANSWER_MS: a dashboard tick awaiting Redis would never end
 * (every open page showing old figures as live), a /metrics scrape lost every series, and the
 * notification loop delivered nothing until Redis came back. A read still unanswered is waited for
 * again rather than sent again, so an outage does not pile up a command per tick.
 */
export async function fromRedis<T>(owner: object, what: string, read: () => Promise<T>): Promise<T> {
  let reads = pendingReads.get(owner);
  if (!reads) pendingReads.set(owner, (reads = new Map()));
  let pending = reads.get(what) as Promise<T> | undefined;
  if (!pending) {
    const started = read();
    pending = started;
    reads.set(what, started);
    void started.then(
      () => reads.delete(what),
      () => reads.delete(what),
    );
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer ${what} within ${REDIS_ANSWER_MS} ms`)), REDIS_ANSWER_MS);
  });
  try {
    return await Promise.race([pending, late]);
  } finally {
    clearTimeout(timer);
  }
}
