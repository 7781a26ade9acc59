import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ProgressReporter,
  formatCount,
  formatDuration,
  formatRate,
  renderProgressLine,
  requestRate,
  type ProgressSnapshot,
} from '../../src/cli/progress.ts';
import { describeEnd } from '../../src/cli/wait.ts';
import { etaSeconds } from '../../src/store/job-progress.ts';
import type { JobSnapshot } from '../../src/store/job-status.ts';

const T0 = Date.parse('2026-03-01T12:00:00Z');

function snap(overrides: Partial<ProgressSnapshot> = {}, atSeconds = 64): ProgressSnapshot {
  return {
    jobId: '42',
    kind: 'search',
    status: 'running',
    pages: 1234,
    tweets: 24_680,
    users: 0,
    requests: 1280,
    quotaLeft: 98_765,
    startedAt: new Date(T0),
    heldMs: 0,
    now: new Date(T0 + atSeconds * 1000),
    fractionDone: null,
    ...overrides,
  };
}

function fakeStream(columns?: number): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      writes.push(String(chunk));
      callback();
    },
  });
  if (columns !== undefined) Object.assign(stream, { columns });
  return { stream, writes };
}

/** A poll whose job advances 20 requests and 1 second per call. */
function steadyPoll(overrides: Partial<ProgressSnapshot> = {}) {
  let calls = 0;
  const poll = vi.fn(async () => {
    calls++;
    return snap({ requests: calls * 20, pages: calls, ...overrides }, calls);
  });
  return poll;
}

describe('progress formatting', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [98_765, '98,765'],
    [1_234_567, '1,234,567'],
  ])('formatCount(%d) = %s', (n, text) => {
    expect(formatCount(n)).toBe(text);
  });

  it.each([
    [0, '0s'],
    [45.4, '45s'],
    [59.6, '1m00s'],
    [192, '3m12s'],
    [3600, '1h00m'],
    [7500, '2h05m'],
    [273_600, '3d04h'],
    [-5, '0s'],
  ])('formatDuration(%d) = %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it('averages req/s since the start without a previous snapshot', () => {
    expect(requestRate(snap({ requests: 128 }, 64))).toBe(2);
    expect(formatRate(requestRate(snap({ requests: 128 }, 64)))).toBe('2.0 req/s');
  });

  it('uses the interval since the previous snapshot when there is one', () => {
    const prev = snap({ requests: 100 }, 60);
    expect(requestRate(snap({ requests: 180 }, 64), prev)).toBe(20);
  });

  it('has no rate at the very start, nor from a snapshot taken at the same instant', () => {
    expect(requestRate(snap({}, 0))).toBeNull();
    expect(formatRate(null)).toBe('- req/s');
    // same instant: falls back to the average rather than dividing by zero
    expect(requestRate(snap({ requests: 64 }, 64), snap({ requests: 10 }, 64))).toBe(1);
  });

  it('estimates the time left from the fraction done', () => {
    expect(etaSeconds(snap({ fractionDone: 0.25 }, 64))).toBe(192);
    expect(etaSeconds(snap({ fractionDone: 0 }, 64))).toBeNull();
    expect(etaSeconds(snap({ fractionDone: 1 }, 64))).toBeNull();
    expect(etaSeconds(snap({ fractionDone: null }, 64))).toBeNull();
  });

  it('counts only the time the job ran: a pause or a quota park does not stretch the ETA', () => {
    // 64 s since it started, 48 of them paused: 16 s for a quarter, 48 s for the rest.
    expect(etaSeconds(snap({ fractionDone: 0.25, heldMs: 48_000 }, 64))).toBe(48);
    expect(renderProgressLine(snap({ fractionDone: 0.25, heldMs: 48_000 }, 64))).toContain('25% ETA 48s');
    // Held the whole time (a clock skew, a hold that began at start): nothing known yet.
    expect(etaSeconds(snap({ fractionDone: 0.25, heldMs: 64_000 }, 64))).toBeNull();
  });

  it('renders pages, tweets, users, req/s, quota and ETA on one line', () => {
    expect(renderProgressLine(snap({ fractionDone: 0.25, note: 'window 2026-01-03' }))).toBe(
      'job 42 search running 1m04s | 1,234 pages | 24,680 tweets | 0 users | 1,280 req (20.0 req/s) | ' +
        'quota 98,765 left | 25% ETA 3m12s | window 2026-01-03',
    );
  });

  it('leaves out an unknown quota and range', () => {
    const line = renderProgressLine(snap({ quotaLeft: null, fractionDone: null }));
    expect(line).toBe('job 42 search running 1m04s | 1,234 pages | 24,680 tweets | 0 users | 1,280 req (20.0 req/s)');
  });

  it('shows a finished range without an ETA', () => {
    expect(renderProgressLine(snap({ fractionDone: 1, status: 'completed' }))).toMatch(/\| 100%$/);
  });
});

describe('ProgressReporter', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('on a terminal rewrites one line about 4 times a second and ends it on stop', async () => {
    const { stream, writes } = fakeStream();
    const poll = steadyPoll();
    const reporter = new ProgressReporter({ stream, isTTY: true, poll });
    reporter.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(writes).toHaveLength(5); // the first draw at start, then every 250 ms
    for (const w of writes) {
      expect(w.startsWith('\r\x1b[2K')).toBe(true);
      expect(w).not.toContain('\n');
    }
    await reporter.stop();
    expect(vi.getTimerCount()).toBe(0);
    const last = writes.at(-1) ?? '';
    expect(last.startsWith('\r\x1b[2Kjob 42 search running 6s | 6 pages ')).toBe(true);
    expect(last.endsWith('\n')).toBe(true);
    const count = writes.length;
    await vi.advanceTimersByTimeAsync(5000);
    expect(writes).toHaveLength(count);
    expect(poll).toHaveBeenCalledTimes(6);
  });

  it('off a terminal logs a plain line every logEveryMs and a final line', async () => {
    const { stream, writes } = fakeStream();
    const reporter = new ProgressReporter({ stream, isTTY: false, poll: steadyPoll() });
    reporter.start();
    await vi.advanceTimersByTimeAsync(9999);
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toHaveLength(2);
    await reporter.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(writes).toHaveLength(3);
    for (const w of writes) {
      expect(w).not.toContain('\r');
      expect(w.endsWith('\n')).toBe(true);
    }
    expect(writes[2]).toMatch(/^job 42 search running 3s \| 3 pages/);
  });

  it('stop() clears its timer even when called before any tick and twice', async () => {
    const { stream, writes } = fakeStream();
    const reporter = new ProgressReporter({ stream, isTTY: false, logEveryMs: 50, poll: steadyPoll() });
    reporter.start();
    expect(vi.getTimerCount()).toBe(1);
    await reporter.stop();
    await reporter.stop();
    expect(vi.getTimerCount()).toBe(0);
    reporter.start(); // a stopped reporter stays stopped
    expect(vi.getTimerCount()).toBe(0);
    expect(writes.at(-1)).toMatch(/\n$/);
  });

  it('skips ticks while a slow poll is still running instead of piling up', async () => {
    const { stream, writes } = fakeStream();
    let release: (() => void) | undefined;
    const poll = vi.fn(
      () =>
        new Promise<ProgressSnapshot>((resolve) => {
          release = () => resolve(snap());
        }),
    );
    const reporter = new ProgressReporter({ stream, isTTY: true, intervalMs: 10, poll });
    reporter.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(poll).toHaveBeenCalledTimes(1);
    release?.();
    await vi.advanceTimersByTimeAsync(10);
    expect(poll).toHaveBeenCalledTimes(2);
    expect(writes).toHaveLength(1);
    const stopped = reporter.stop();
    release?.(); // the in-flight poll
    await vi.advanceTimersByTimeAsync(0);
    release?.(); // the final poll
    await stopped;
    expect(vi.getTimerCount()).toBe(0);
    expect(writes.at(-1)).toMatch(/\n$/);
  });

  it('reports a failing poll and keeps going', async () => {
    const { stream, writes } = fakeStream();
    let calls = 0;
    const poll = async () => {
      calls++;
      if (calls === 1) throw new Error('connection reset\nstack');
      return snap({}, calls);
    };
    const reporter = new ProgressReporter({ stream, isTTY: false, logEveryMs: 100, poll });
    reporter.start();
    await vi.advanceTimersByTimeAsync(100);
    await reporter.stop();
    expect(writes[0]).toBe('progress unavailable: connection reset\n');
    expect(writes[1]).toMatch(/^job 42 search running 2s/);
  });

  it('computes req/s over a rolling window, not since the start', async () => {
    const { stream, writes } = fakeStream();
    let calls = 0;
    // 1 request per second for the first 10 s, then 50 per second
    const poll = async () => {
      calls++;
      const requests = calls <= 10 ? calls : 10 + (calls - 10) * 50;
      return snap({ requests }, calls);
    };
    const reporter = new ProgressReporter({ stream, isTTY: false, logEveryMs: 1000, poll });
    reporter.start();
    await vi.advanceTimersByTimeAsync(19_000);
    await reporter.stop();
    // the average since the start would be (10 + 11*50)/21 = 26.7 req/s
    expect(writes.at(-1)).toContain('(50.0 req/s)');
  });

  it('cuts the line to the terminal width so \\r can rewrite it', async () => {
    const { stream, writes } = fakeStream(40);
    const reporter = new ProgressReporter({ stream, isTTY: true, poll: steadyPoll() });
    reporter.start();
    await reporter.stop();
    for (const w of writes) {
      const visible = w.replace('\r\x1b[2K', '').replace('\n', '');
      expect(visible.length).toBeLessThan(40);
      expect(visible.endsWith('…')).toBe(true);
    }
  });
});

describe('describeEnd', () => {
  it('counts a completed job as the progress line does, with thousands separators', () => {
    const end = describeEnd({ id: '7', status: 'completed', tweets: 9126, users: 2113, requests: 476, note: null } as unknown as JobSnapshot);
    expect(end).toBe('job 7 completed: 9,126 tweets, 2,113 users, 476 requests');
  });

  it('a job parked because the service did not say its quota points at the service, not at quota', () => {
    const note = 'paused: quota unknown (asking the service for it failed: connect ECONNREFUSED 127.0.0.1:18799; asking again at 2026-11-24T22:40:00.000Z)';
    const unknown = describeEnd({ id: '9', status: 'paused_quota', note } as unknown as JobSnapshot);
    expect(unknown).toBe(`job 9 ${note}; it resumes by itself once the service answers (keep a worker running; check HARVEST_BASE_URL and the network)`);
    const spent = describeEnd({ id: '9', status: 'paused_quota', note: 'paused: quota (no key can grant until 2026-12-01T00:00:00.000Z)' } as unknown as JobSnapshot);
    expect(spent).toMatch(/it resumes by itself when quota returns/);
  });
});
