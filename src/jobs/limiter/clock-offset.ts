/**
 * How far this process's clock runs ahead of Redis's, read from the acquire calls: each call gives
 * (local time it was SENT − Redis time it ran at), which is never above the true difference (it
 * falls short by the call's way there, and by any wait in Redis). The greatest reading of the last
 * 30–60 s is the tightest: one slow call only lowers its own reading, and a stall while an answer
 * waits to be handled cannot raise any (a reading taken when the answer is handled would count the
 * stall as clock difference and push a grant's send-by back by as much). Rotating windows let a
 * drifting clock move it. Turns a grant's slot (Redis time) into a local send-by time.
 */
const WINDOW_MS = 30_000;

export class ClockOffset {
  #current = Number.NEGATIVE_INFINITY;
  #previous = Number.NEGATIVE_INFINITY;
  #windowStart = Number.NEGATIVE_INFINITY;

  /** One call's reading: the local time it was sent and the Redis time it ran at. */
  observe(localSent: number, remoteNow: number): void {
    if (localSent - this.#windowStart >= WINDOW_MS) {
      this.#previous = this.#current;
      this.#current = Number.NEGATIVE_INFINITY;
      this.#windowStart = localSent;
    }
    this.#current = Math.max(this.#current, localSent - remoteNow);
  }

  /** Milliseconds to add to a Redis time to get the local time (observe first). */
  get ms(): number {
    return Math.max(this.#current, this.#previous);
  }
}
