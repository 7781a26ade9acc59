/**
 * Waiters of one process that ask the limiter the same question (same mode, same keys) line up
 * here instead of each polling Redis. Before this line, every waiting acquire re-ran the acquire
 * script at least every 40 ms on its own: 16 waiters on one key at 20 req/s made 31 Lua calls per
 * grant, 64 waiters 122, 200 waiters on 10 keys 28 (each ~0.2 ms of socket write on the bench
 * machine). Now only the front of the line asks, and each answer says when to ask next:
 *
 * - granted: the waiter leaves with its grant; `ready` keys are open now, so that many calls
 *   go at once (10 keys can still be granted 200/s from one process), else the line sleeps until
 *   the next key opens;
 * - wait: the asker keeps its place at the front and the line sleeps until the slot it was told
 *   about (at most `maxSleepMs`, so a watch's registration is refreshed before it expires);
 * - refused: only that waiter leaves with the error (its job's budget or epoch, no key left), the
 *   line behind it asks on at once.
 *
 * Who asks next: the front of the line, except that a waiter of the same job that expects more
 * pages after its request trades places with it (`order`): each place is still served in the order
 * it was queued, for the job that queued it, but of one job's walks the one with the most left
 * goes first, so they end together instead of the longest trailing alone at the job's end (for at
 * most MAX_PASSED_OVER_MS a waiter).
 *
 * At most `concurrency` calls are out at a time. An aborted waiter leaves the line at once, unless
 * its call is already out: then the answer decides, and a grant (quota and budget already spent)
 * is handed out anyway, so it is used rather than lost.
 */
import { AbortedError } from '../../errors.ts';

/** What one call to the limiter told the line. */
export type LineStep<T> =
  /** `ready` more keys are open now; otherwise the next one opens in `nextMs` (null: ask at once). */
  | { kind: 'granted'; value: T; ready: number; nextMs: number | null }
  | { kind: 'wait'; waitMs: number }
  /** Ask again at once, keeping the place (e.g. after learning a key's quota). */
  | { kind: 'again' }
  | { kind: 'refused'; error: unknown };

export interface WaitLineOptions {
  /** Calls out at once at most; one per key of the question. */
  concurrency: number;
  /** Longest sleep between two calls, whatever the limiter said. */
  maxSleepMs: number;
  /** How long a waiter may be passed over for its job's longer walks (default MAX_PASSED_OVER_MS). */
  maxPassedOverMs?: number;
}

/**
 * A waiter that has waited this long is served in its place, whatever its job's others expect. Its
 * estimate was made when it joined and it cannot ask again while it waits: a walk misjudged as
 * nearly done (a lull below the top of its range, read on its first page) would otherwise wait
 * until every other walk of its job came down to its estimate, and then trail alone. Served, its
 * next page estimates again from more pages. Long enough for the job's last page cycles (each
 * ~0.3–1 s) to be ordered.
 */
export const MAX_PASSED_OVER_MS = 5_000;

/**
 * A waiter's claim to go before others of its group (a job): `weight`, the pages its walk still
 * expects after this request.
 */
export interface LineOrder {
  readonly group: string;
  readonly weight: number;
}

interface Entry<T> {
  readonly ask: () => Promise<LineStep<T>>;
  /** A retry: served before every waiter that has not failed yet (after earlier retries). */
  readonly front: boolean;
  readonly order: LineOrder | undefined;
  /** performance.now() when it joined (0 without an order: never compared). */
  readonly joinedAt: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
  readonly onAbort: () => void;
}

export class WaitLine<T> {
  readonly #concurrency: number;
  readonly #maxSleepMs: number;
  readonly #maxPassedOverMs: number;
  readonly #queue: Entry<T>[] = [];
  #inFlight = 0;
  /** Calls that may start once `#notBefore` has passed, as the last answer told. */
  #credits = 1;
  /** performance.now() before which no call starts. */
  #notBefore = 0;
  #timer: NodeJS.Timeout | null = null;
  #timerAt = 0;

  constructor(options: WaitLineOptions) {
    this.#concurrency = Math.max(1, options.concurrency);
    this.#maxSleepMs = options.maxSleepMs;
    this.#maxPassedOverMs = options.maxPassedOverMs ?? MAX_PASSED_OVER_MS;
  }

  /** Waiters queued behind the calls that are out. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Calls to the limiter out now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  get idle(): boolean {
    return this.#queue.length === 0 && this.#inFlight === 0;
  }

  /**
   * Queues `ask` (one call to the limiter for this waiter) and settles with its grant or refusal.
   * `front` (a retry after a failed attempt) goes ahead of first attempts: a page that met a 429
   * and waited for the next second must not rejoin at the back, where, behind a full line, its
   * slot lands a fixed distance after the cool-down every time and can meet the next refusal too.
   * `order`: see the top of this file.
   */
  join(ask: () => Promise<LineStep<T>>, signal?: AbortSignal, front = false, order?: LineOrder): Promise<T> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    return new Promise<T>((resolve, reject) => {
      const entry: Entry<T> = {
        ask,
        front,
        order,
        joinedAt: order === undefined ? 0 : performance.now(),
        signal,
        resolve,
        reject,
        onAbort: () => {
          const at = this.#queue.indexOf(entry);
          // Its call is out: the answer settles it (a grant is never dropped).
          if (at < 0) return;
          this.#queue.splice(at, 1);
          if (this.#queue.length === 0) this.#clearTimer();
          reject(new AbortedError());
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      if (front) {
        const at = this.#queue.findIndex((e) => !e.front);
        this.#queue.splice(at < 0 ? this.#queue.length : at, 0, entry);
      } else {
        this.#queue.push(entry);
      }
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#concurrency && this.#credits > 0) {
      const waitMs = this.#notBefore - performance.now();
      if (waitMs > 0) {
        this.#wakeIn(waitMs);
        return;
      }
      const entry = this.#takeNext();
      this.#credits--;
      this.#inFlight++;
      void this.#call(entry);
    }
  }

  async #call(entry: Entry<T>): Promise<void> {
    let step: LineStep<T>;
    try {
      step = await entry.ask();
    } catch (error) {
      step = { kind: 'refused', error };
    }
    this.#inFlight--;
    const now = performance.now();
    switch (step.kind) {
      case 'granted':
        // Keys the calls still out will likely take are not open for the line any more.
        if (step.ready > this.#inFlight) {
          this.#credits = step.ready - this.#inFlight;
          this.#notBefore = now;
        } else {
          this.#credits = 1;
          this.#notBefore = step.nextMs === null ? now : now + Math.min(Math.max(step.nextMs, 0), this.#maxSleepMs);
        }
        this.#leave(entry);
        entry.resolve(step.value);
        break;
      case 'wait':
        this.#credits = 1;
        this.#notBefore = now + Math.min(Math.max(step.waitMs, 0), this.#maxSleepMs);
        this.#requeue(entry);
        break;
      case 'again':
        this.#credits = Math.max(this.#credits, 1);
        this.#notBefore = now;
        this.#requeue(entry);
        break;
      case 'refused':
        // The refusal said nothing about the keys: keep what the last answer said about them.
        if (this.#inFlight === 0) this.#credits = Math.max(this.#credits, 1);
        this.#leave(entry);
        entry.reject(step.error);
        break;
    }
    // The last waiter left: no wake-up is due for anyone.
    if (this.#queue.length === 0) this.#clearTimer();
    this.#pump();
  }

  /**
   * The front waiter, or the waiter of its group that expects the most pages after its request,
   * if more than it does (the first of equals), which then takes the front's place while the front
   * waiter takes its. A retry, a waiter with no order, and one that has waited maxPassedOverMs
   * are served as they stand.
   */
  #takeNext(): Entry<T> {
    const queue = this.#queue;
    const head = queue[0] as Entry<T>;
    const order = head.order;
    if (head.front || order === undefined || performance.now() - head.joinedAt >= this.#maxPassedOverMs) return queue.shift() as Entry<T>;
    let best = 0;
    let weight = order.weight;
    for (let i = 1; i < queue.length; i++) {
      const other = (queue[i] as Entry<T>).order;
      if (other !== undefined && other.group === order.group && other.weight > weight && !(queue[i] as Entry<T>).front) {
        best = i;
        weight = other.weight;
      }
    }
    if (best === 0) return queue.shift() as Entry<T>;
    // The two trade places: the front's place is spent, the waiter passed over takes the later
    // one, and the line behind moves up as before (a job's low waiter never holds the front).
    const chosen = queue[best] as Entry<T>;
    queue[best] = head;
    queue.shift();
    return chosen;
  }

  /** The asker keeps its place at the front, unless it was aborted while its call was out. */
  #requeue(entry: Entry<T>): void {
    if (entry.signal?.aborted) {
      this.#leave(entry);
      entry.reject(new AbortedError());
      return;
    }
    this.#queue.unshift(entry);
  }

  #leave(entry: Entry<T>): void {
    entry.signal?.removeEventListener('abort', entry.onAbort);
  }

  #wakeIn(ms: number): void {
    const at = performance.now() + ms;
    if (this.#timer !== null && this.#timerAt <= at) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#pump();
    }, Math.ceil(ms));
    // A line with waiters always has a call out or this timer; the timer alone must not hold a
    // process open that is shutting down.
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
  }
}
