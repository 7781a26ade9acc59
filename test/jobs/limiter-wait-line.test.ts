/**
 * The limiter's in-process waiting line (wait-line.ts), with scripted answers in place of Redis:
 * only its front asks, it sleeps until the slot it was told about, a refusal or an abort takes out
 * one waiter only, a grant whose call was already out is never lost to an abort, and of one job's
 * waiters the one that expects the most pages after its request goes first, in its job's place.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.ts';
import { WaitLine, type LineStep } from '../../src/jobs/limiter/wait-line.ts';

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** Answers 'wait' (`waitMs`) until opened, then grants at once: the first to join holds the front while others queue. */
function closedUntilOpened(waitMs = 30): { ask: (who: string) => () => Promise<LineStep<string>>; open: () => void } {
  let open = false;
  return {
    ask: (who) => async () => (open ? { kind: 'granted', value: who, ready: 0, nextMs: 0 } : { kind: 'wait', waitMs }),
    open: () => {
      open = true;
    },
  };
}

/** The waiters' values in the order they were granted. */
async function servedOrder(joined: readonly Promise<string>[]): Promise<string[]> {
  const order: string[] = [];
  await Promise.all(joined.map((p) => p.then((v) => order.push(v))));
  return order;
}

const A = (weight: number) => ({ group: 'job-a', weight });
const B = (weight: number) => ({ group: 'job-b', weight });

describe('WaitLine', () => {
  it('asks for one waiter at a time, first come first served, and sleeps until the slot it was told about', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    const asks: { who: string; at: number }[] = [];
    const t0 = performance.now();
    let nextFree = t0;
    // A key with a slot every 30 ms: a grant says when the next one opens, an early ask hears 'wait'.
    const askFor = (who: string) => async (): Promise<LineStep<string>> => {
      const now = performance.now();
      asks.push({ who, at: now - t0 });
      if (now < nextFree) return { kind: 'wait', waitMs: nextFree - now };
      nextFree = now + 30;
      return { kind: 'granted', value: who, ready: 0, nextMs: 30 };
    };
    const order: string[] = [];
    await Promise.all(['a', 'b', 'c', 'd'].map((who) => line.join(askFor(who)).then((v) => order.push(v))));
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    // One ask per grant (no polling), the next asked only once the slot it was told about came.
    expect(asks.map((a) => a.who)).toEqual(['a', 'b', 'c', 'd']);
    for (let i = 1; i < asks.length; i++) expect(asks[i]!.at - asks[i - 1]!.at).toBeGreaterThanOrEqual(29);
    expect(line.idle).toBe(true);
  });

  it('serves a retry before the first attempts already waiting, and retries among themselves in order', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    let nextFree = performance.now() + 20;
    const askFor = (who: string) => async (): Promise<LineStep<string>> => {
      const now = performance.now();
      if (now < nextFree) return { kind: 'wait', waitMs: nextFree - now };
      nextFree = now + 10;
      return { kind: 'granted', value: who, ready: 0, nextMs: 10 };
    };
    const order: string[] = [];
    const joined = ['a', 'b', 'c'].map((who) => line.join(askFor(who)).then((v) => order.push(v)));
    // 'a' is at the front, told to wait; two pages back from a 429 join behind it but before b and c.
    joined.push(line.join(askFor('r1'), undefined, true).then((v) => order.push(v)));
    joined.push(line.join(askFor('r2'), undefined, true).then((v) => order.push(v)));
    joined.push(line.join(askFor('d')).then((v) => order.push(v)));
    await Promise.all(joined);
    expect(order).toEqual(['a', 'r1', 'r2', 'b', 'c', 'd']);
  });

  it('lets as many calls out at once as the answer says keys are open, up to its concurrency', async () => {
    const line = new WaitLine<number>({ concurrency: 3, maxSleepMs: 1000 });
    let out = 0;
    let most = 0;
    let granted = 0;
    const ask = async (): Promise<LineStep<number>> => {
      out++;
      most = Math.max(most, out);
      await tick(5);
      out--;
      granted++;
      return { kind: 'granted', value: granted, ready: 10, nextMs: null };
    };
    await Promise.all(Array.from({ length: 12 }, () => line.join(ask)));
    expect(most).toBe(3);
  });

  it('lets one call out at a time when the answers say no other key is open, whatever its concurrency', async () => {
    const line = new WaitLine<number>({ concurrency: 3, maxSleepMs: 1000 });
    let out = 0;
    let most = 0;
    const ask = async (): Promise<LineStep<number>> => {
      out++;
      most = Math.max(most, out);
      await tick(2);
      out--;
      return { kind: 'granted', value: 1, ready: 0, nextMs: 0 };
    };
    await Promise.all(Array.from({ length: 8 }, () => line.join(ask)));
    expect(most).toBe(1);
    expect(line.idle).toBe(true);
  });

  it('refuses one waiter without holding up or failing the ones behind it', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    const spent = new Error('budget spent');
    const ask = (who: string) => async (): Promise<LineStep<string>> =>
      who === 'spent' ? { kind: 'refused', error: spent } : { kind: 'granted', value: who, ready: 0, nextMs: 0 };
    const results = await Promise.allSettled(['a', 'spent', 'b'].map((who) => line.join(ask(who))));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : r.reason))).toEqual(['a', spent, 'b']);
  });

  it('takes an aborted waiter out at once while the front sleeps, and the front keeps its place', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    let open = false;
    const asked: string[] = [];
    const ask = (who: string) => async (): Promise<LineStep<string>> => {
      asked.push(who);
      return open ? { kind: 'granted', value: who, ready: 0, nextMs: 0 } : { kind: 'wait', waitMs: 200 };
    };
    const first = line.join(ask('first'));
    const controller = new AbortController();
    const second = line.join(ask('second'), controller.signal);
    await tick(20);
    const started = performance.now();
    controller.abort();
    expect(await rejection(second)).toMatchObject({ code: ErrorCode.ABORTED });
    expect(performance.now() - started).toBeLessThan(100); // not the 200 ms wait
    open = true;
    expect(await first).toBe('first');
    expect(asked).toEqual(['first', 'first']);
  });

  it('hands out a grant whose call was already out when its waiter aborted (its quota is spent)', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    const controller = new AbortController();
    const granted = line.join(async () => {
      controller.abort();
      await tick(5);
      return { kind: 'granted', value: 'spent-grant', ready: 0, nextMs: 0 };
    }, controller.signal);
    expect(await granted).toBe('spent-grant');
    // An abort heard while the answer was 'wait' ends the waiter instead.
    const waiting = new AbortController();
    const refused = line.join(async () => {
      waiting.abort();
      return { kind: 'wait', waitMs: 50 };
    }, waiting.signal);
    expect(await rejection(refused)).toMatchObject({ code: ErrorCode.ABORTED });
    expect(line.idle).toBe(true);
  });

  it('asks again at least every maxSleepMs, whatever wait it was told', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 30 });
    const at: number[] = [];
    const t0 = performance.now();
    const value = await line.join(async () => {
      at.push(performance.now() - t0);
      return at.length < 3 ? { kind: 'wait', waitMs: 10_000 } : { kind: 'granted', value: 'late', ready: 0, nextMs: null };
    });
    expect(value).toBe('late');
    expect(at[2]!).toBeLessThan(200);
  });

  it("serves a job's waiter that expects the most pages left in the job's own place, and other jobs' places in their order", async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    const { ask, open } = closedUntilOpened();
    // 'a1' reaches the front alone and is told to wait; the others queue behind it meanwhile.
    const joined = [line.join(ask('a1'), undefined, false, A(1))];
    await tick(5);
    joined.push(line.join(ask('b5'), undefined, false, B(5)));
    joined.push(line.join(ask('a9'), undefined, false, A(9)));
    joined.push(line.join(ask('a?'))); // no estimate: served in its place, never passed over for one
    joined.push(line.join(ask('a3'), undefined, false, A(3)));
    joined.push(line.join(ask('b10'), undefined, false, B(10)));
    open();
    // Places were queued A B A A A B; they are served in that order, each by its job's waiter with
    // the most left. FIFO would read a1 b5 a9 a? a3 b10.
    expect(await servedOrder(joined)).toEqual(['a9', 'b10', 'a3', 'a?', 'a1', 'b5']);
  });

  it('serves a retry before a waiter of its job that expects more pages', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    const { ask, open } = closedUntilOpened();
    const joined = [line.join(ask('first'), undefined, false, A(2))];
    await tick(5);
    joined.push(line.join(ask('long'), undefined, false, A(50)));
    joined.push(line.join(ask('retry'), undefined, true, A(0)));
    open();
    // The retry goes before every first attempt, whatever they expect; then 'long' trades places
    // with 'first', its job's front waiter.
    expect(await servedOrder(joined)).toEqual(['retry', 'long', 'first']);
  });

  it("keeps each job's places when the waiter that took one is told to wait, or the one passed over leaves", async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000 });
    let open = false;
    const toldToWait = new Set(['a9']);
    const leaving = new AbortController();
    const ask = (who: string) => async (): Promise<LineStep<string>> => {
      if (!open) return { kind: 'wait', waitMs: 30 };
      // a9 takes a1's place and is told to wait once: it keeps that place, at the front.
      if (toldToWait.delete(who)) return { kind: 'wait', waitMs: 5 };
      // By a3's turn b5 was passed over for b10 (and moved to b10's place): it leaves now.
      if (who === 'a3') leaving.abort();
      return { kind: 'granted', value: who, ready: 0, nextMs: 0 };
    };
    const joined = [line.join(ask('a1'), undefined, false, A(1))];
    await tick(5);
    const gone = line.join(ask('b5'), leaving.signal, false, B(5));
    joined.push(line.join(ask('a9'), undefined, false, A(9)));
    joined.push(line.join(ask('a3'), undefined, false, A(3)));
    joined.push(line.join(ask('b0'), undefined, false, B(0)));
    joined.push(line.join(ask('b10'), undefined, false, B(10)));
    open = true;
    const order = await servedOrder(joined);
    expect(await rejection(gone)).toMatchObject({ code: ErrorCode.ABORTED });
    // Places A B A A B B: a9, b10, a3, a1, then b0 (b5 gone).
    expect(order).toEqual(['a9', 'b10', 'a3', 'a1', 'b0']);
    expect(line.idle).toBe(true);
  });

  it('serves a waiter passed over for maxPassedOverMs where it stands', async () => {
    const line = new WaitLine<string>({ concurrency: 1, maxSleepMs: 1000, maxPassedOverMs: 20 });
    const { ask, open } = closedUntilOpened(40);
    const joined = [line.join(ask('short'), undefined, false, A(1))];
    await tick(5);
    joined.push(line.join(ask('long'), undefined, false, A(50)));
    open();
    // 'short' had waited 40 ms at the front when its turn came: past the 20 allowed, so not passed over.
    expect(await servedOrder(joined)).toEqual(['short', 'long']);
  });
});
