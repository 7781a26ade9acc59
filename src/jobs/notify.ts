/**
 * Delivers the outbox (src/store/outbox.ts) to every HARVEST_NOTIFY_URL, at least once, and writes
 * `job.stalled` events. Loops of their own, apart from the slice runs: a webhook that is down or
 * slow only delays notifications, never a page, and each webhook has its own loop, so it delays
 * only its own. Each pass sends at most `batch` events to its webhook, one at a time, oldest first,
 * each POST bounded by `deadlineMs`; a failure waits `baseBackoffMs × 2^attempts` (capped at
 * `maxBackoffMs`) before the next try; after a day of failures an event is given up.
 * Several workers may run the loops: claims are leased in Postgres, so an event goes out once per
 * webhook unless a POST's outcome is lost (then the receiver de-duplicates by the event's id).
 * Order is not kept: workers send their batches side by side and a failed event is retried after
 * later ones (see outbox.id's comment, migration 0023).
 */
import { randomUUID } from 'node:crypto';
import { postJson } from '../api-client/index.ts';
import { fromRedis } from './bounded-read.ts';
import type { NotifyTarget } from '../config.ts';
import type { Logger } from '../logger.ts';
import { sleep } from '../sleep.ts';
import type { Pool, Queryable } from '../store/db.ts';
import { stalledJobs } from '../store/job-status.ts';
import { addEvent, claimDueEvents, EventType, markDelivered, markFailed, pruneEvents, releaseEvent, type EventBody } from '../store/outbox.ts';

export interface NotifyLoopOptions {
  pool: Pool;
  logger: Logger;
  targets: readonly NotifyTarget[];
  /** Jobs idle this long are announced as stalled (config HARVEST_STALLED_AFTER_MS). */
  stalledAfterMs: number;
  /** Time between a webhook's passes when nothing was due; default 1000 ms. */
  pollMs?: number;
  /** Deadline of one POST, connect to end of body; default 5000 ms. */
  deadlineMs?: number;
  /** Events per webhook per pass; default 20. */
  batch?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often stalled jobs are looked for; default 30 s. */
  stalledCheckMs?: number;
  /** The limiter's waiters (RateWaitTracker): a job waiting for its turn is not stalled. */
  rateWaits?: { waitingJobs(): Promise<string[]> };
}

const PRUNE_EVERY_MS = 3_600_000;

/** Sends one event now, outside the outbox (`harvest notify test`): the status per webhook, or the error. */
export async function sendTestEvent(
  targets: readonly NotifyTarget[],
  deadlineMs = 5000,
): Promise<Array<{ target: string; status: number | null; error: string | null }>> {
  const body: EventBody = {
    id: randomUUID(),
    type: EventType.TEST,
    at: new Date().toISOString(),
    jobId: null,
    text: 'harvest: test notification (harvest notify test)',
    data: {},
  };
  return Promise.all(
    targets.map(async (t) => {
      try {
        const status = await postJson(t.url, body, { deadlineMs });
        return { target: t.fingerprint, status, error: status >= 200 && status < 300 ? null : `HTTP ${status}` };
      } catch (error) {
        return { target: t.fingerprint, status: null, error: describeFailure(error) };
      }
    }),
  );
}

/** A failure named without the URL (it may carry a token): a transport code or the error's name. */
function describeFailure(error: unknown): string {
  if (error && typeof error === 'object') {
    const e = error as { code?: unknown; name?: unknown };
    if (typeof e.code === 'string') return e.code;
    if (typeof e.name === 'string') return e.name === 'TimeoutError' ? 'deadline' : e.name;
  }
  return 'error';
}

/**
 * Writes a `job.stalled` event for each stalled job, once per stall: the dedupe key carries the
 * moment progress stopped, so a job that moves and stalls again is announced again.
 */
export async function recordStalledJobs(db: Queryable, stalledAfterMs: number, waitingForRate?: ReadonlySet<string>): Promise<number> {
  let added = 0;
  for (const h of await stalledJobs(db, { stalledAfterMs, ...(waitingForRate ? { waitingForRate } : {}) })) {
    const fresh = await addEvent(db, {
      type: EventType.JOB_STALLED,
      jobId: h.jobId,
      dedupeKey: `stalled:${h.jobId}:${h.lastProgressAt.toISOString()}`,
      text: `harvest: job ${h.jobId} (${h.kind}) is stalled: ${h.waitsOn}`,
      data: { jobId: h.jobId, kind: h.kind, waitsOn: h.waitsOn, lastProgressAt: h.lastProgressAt.toISOString(), runningSlices: h.runningSlices, pendingSlices: h.pendingSlices },
    });
    if (fresh) added += 1;
  }
  return added;
}

export class NotifyLoop {
  readonly #o: Required<Omit<NotifyLoopOptions, 'pool' | 'logger' | 'targets' | 'rateWaits'>> & Pick<NotifyLoopOptions, 'pool' | 'logger' | 'targets' | 'rateWaits'>;
  readonly #abort = new AbortController();
  #running: Promise<void> | null = null;
  #lastPrune = 0;
  #lastStalledCheck = 0;

  constructor(options: NotifyLoopOptions) {
    this.#o = {
      pollMs: 1000,
      deadlineMs: 5000,
      batch: 20,
      baseBackoffMs: 1000,
      maxBackoffMs: 5 * 60_000,
      stalledCheckMs: 30_000,
      ...options,
    };
  }

  /**
   * Starts one loop per webhook and one for the stalled check and the prune. Separate, so a webhook
   * that hangs until each POST's deadline holds back its own events only: when the webhooks took
   * turns in one pass, 100 events took 24 s to reach a healthy second webhook behind a hanging first.
   */
  start(): void {
    if (this.#running) return;
    const o = this.#o;
    this.#running = Promise.all([
      this.#repeat(async () => {
        await this.#housekeep();
        return false;
      }),
      ...o.targets.map((target) => this.#repeat(async () => (await this.#deliver(target)) >= o.batch)),
    ]).then(() => undefined);
  }

  /**
   * One delivery pass now, waited for at most `ms` (a `--wait` whose job just ended: its
   * job.completed was written a moment ago, and the loop, polling once a second, was stopped
   * with the process before it sent it). Safe beside the loop's own pass: claims are leased.
   */
  async flush(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.runOnce().catch((error: unknown) => this.#o.logger.warn({ err: error }, 'notification pass failed')),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  /** Stops after the POSTs in flight (bounded by their deadline, aborted now). */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#running;
    this.#running = null;
  }

  /** Runs `pass` until stopped: again at once after a full batch, else after `pollMs`. */
  async #repeat(pass: () => Promise<boolean>): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let busy = false;
      try {
        busy = await pass();
      } catch (error) {
        this.#o.logger.warn({ err: error }, 'notification pass failed');
      }
      await sleep(busy ? 0 : this.#o.pollMs, signal).catch(() => undefined);
    }
  }

  /** One pass: stalled check and prune when due, then every webhook's due events at once. True when a batch was full. */
  async runOnce(): Promise<boolean> {
    await this.#housekeep();
    const sent = await Promise.all(this.#o.targets.map((target) => this.#deliver(target)));
    return sent.some((n) => n >= this.#o.batch);
  }

  async #housekeep(): Promise<void> {
    const o = this.#o;
    const now = Date.now();
    if (o.targets.length > 0 && now - this.#lastStalledCheck >= o.stalledCheckMs) {
      this.#lastStalledCheck = now;
      // Bounded: while Redis is away the loop still delivers, and a stall is judged without the
      // rate waits (a job waiting for rate is then taken for stalled, which is what it looks like).
      const rateWaits = o.rateWaits;
      const waiting = rateWaits
        ? await fromRedis(this, 'the rate waits', () => rateWaits.waitingJobs()).then(
            (ids) => new Set(ids),
            (error: unknown) => {
              o.logger?.warn({ err: error }, 'notifications: Redis did not answer the rate waits; stalled jobs judged without them');
              return undefined;
            },
          )
        : undefined;
      await recordStalledJobs(o.pool, o.stalledAfterMs, waiting);
    }
    if (now - this.#lastPrune >= PRUNE_EVERY_MS) {
      this.#lastPrune = now;
      await pruneEvents(o.pool);
    }
  }

  async #deliver(target: NotifyTarget): Promise<number> {
    const o = this.#o;
    // The lease covers the whole batch sent one by one, plus slack.
    const events = await claimDueEvents(o.pool, target.fingerprint, o.batch, o.deadlineMs * (o.batch + 1));
    for (const [i, e] of events.entries()) {
      if (this.#abort.signal.aborted) {
        // Not sent: release the rest at once for the next worker.
        for (const rest of events.slice(i)) await releaseEvent(o.pool, target.fingerprint, rest.outboxId, 0).catch(() => undefined);
        break;
      }
      let failure: string | null;
      let status = 0;
      try {
        status = await postJson(target.url, e.body, { deadlineMs: o.deadlineMs, signal: this.#abort.signal });
        failure = status >= 200 && status < 300 ? null : `HTTP ${status}`;
      } catch (error) {
        failure = describeFailure(error);
      }
      if (failure === null) {
        await markDelivered(o.pool, target.fingerprint, e.outboxId);
      } else {
        const wait = Math.min(o.maxBackoffMs, o.baseBackoffMs * 2 ** e.attempts);
        await markFailed(o.pool, target.fingerprint, e.outboxId, failure, wait);
        o.logger.warn({ target: target.fingerprint, event: e.body.id, type: e.body.type, attempts: e.attempts + 1, error: failure, retryInMs: wait }, 'notification not delivered');
        // The webhook answered and refused this event (a 4xx but 408 and 429): it is up, so the rest
        // of the batch goes now. Held back with the refused one's backoff, it came after it in every
        // later batch (oldest first) and expired unsent with it a day later.
        if (status >= 400 && status < 500 && status !== 408 && status !== 429) continue;
        // The webhook is failing: the rest of this batch waits for the next pass, not for more deadlines.
        for (const rest of events.slice(i + 1)) await releaseEvent(o.pool, target.fingerprint, rest.outboxId, wait).catch(() => undefined);
        break;
      }
    }
    return events.length;
  }
}
