/**
 * How far this process's clock runs ahead of Redis's: the least (local now − Redis now) seen over
 * the last 30–60 s. A reply handled late (a stall, a slow network) only ever makes the difference
 * larger, so the least one is the truest; rotating windows let a drifting clock move it. Turns a
 * grant's slot (Redis time) into a local send-by time.
 */
const WINDOW_MS = 30_000;

export class ClockOffset {
  #current = Number.POSITIVE_INFINITY;
  #previous = Number.POSITIVE_INFINITY;
  #windowStart = Number.NEGATIVE_INFINITY;

  /** One reply's reading: the local time it was handled and the Redis time it was made. */
  observe(localNow: number, remoteNow: number): void {
    if (localNow - this.#windowStart >= WINDOW_MS) {
      this.#previous = this.#current;
      this.#current = Number.POSITIVE_INFINITY;
      this.#windowStart = localNow;
    }
    this.#current = Math.min(this.#current, localNow - remoteNow);
  }

  /** Milliseconds to add to a Redis time to get the local time (observe first). */
  get ms(): number {
    return Math.min(this.#current, this.#previous);
  }
}
