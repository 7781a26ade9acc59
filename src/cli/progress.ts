/**
 * Live progress for `--wait`: one line rewritten in place on a terminal, a plain log line every
 * few seconds otherwise (CI logs and pipes must not fill with carriage returns).
 * Formatting is pure; ProgressReporter only schedules polls and writes.
 */
import type { Writable } from 'node:stream';
import { etaSeconds } from '../store/job-progress.ts';

export interface ProgressSnapshot {
  jobId: string;
  kind: string;
  status: string;
  pages: number;
  tweets: number;
  users: number;
  requests: number;
  quotaLeft: number | null;
  startedAt: Date;
  /** Milliseconds held (paused, parked for quota) since it started: not counted by the ETA. */
  heldMs: number;
  now: Date;
  /** 0..1 when the job knows its range (e.g. a date window), else null. */
  fractionDone: number | null;
  note?: string;
}

// A fixed locale: output must not depend on the machine's LANG (tests, log parsing).
const thousands = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 98765 → "98,765". */
export function formatCount(n: number): string {
  return thousands.format(n);
}

/** Seconds → "45s", "3m12s", "2h05m", "3d04h": two units at most, enough for an estimate. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${pad(Math.floor((s % 86_400) / 3600))}h`;
}

/** Requests per second: over the interval since `prev` when there is one, else since the start. */
export function requestRate(s: ProgressSnapshot, prev?: ProgressSnapshot): number | null {
  const since = prev && prev.now < s.now ? prev : undefined;
  const from = since ? since.now.getTime() : s.startedAt.getTime();
  const seconds = (s.now.getTime() - from) / 1000;
  if (seconds <= 0) return null;
  return Math.max(0, s.requests - (since?.requests ?? 0)) / seconds;
}

export function formatRate(rate: number | null): string {
  return rate === null ? '- req/s' : `${rate.toFixed(1)} req/s`;
}

export function renderProgressLine(s: ProgressSnapshot, prev?: ProgressSnapshot): string {
  const elapsed = (s.now.getTime() - s.startedAt.getTime()) / 1000;
  const parts = [
    `job ${s.jobId} ${s.kind} ${s.status} ${formatDuration(elapsed)}`,
    `${formatCount(s.pages)} pages`,
    `${formatCount(s.tweets)} tweets`,
    `${formatCount(s.users)} users`,
    `${formatCount(s.requests)} req (${formatRate(requestRate(s, prev))})`,
  ];
  if (s.quotaLeft !== null) parts.push(`quota ${formatCount(s.quotaLeft)} left`);
  if (s.fractionDone !== null) {
    const pct = `${Math.floor(Math.min(1, Math.max(0, s.fractionDone)) * 100)}%`;
    const eta = etaSeconds(s);
    parts.push(eta === null ? pct : `${pct} ETA ${formatDuration(eta)}`);
  }
  if (s.note) parts.push(s.note);
  return parts.join(' | ');
}

export interface ProgressReporterOptions {
  stream: NodeJS.WriteStream | Writable;
  /** Rewrite one line in place (terminal) or append log lines (pipe, file, CI). */
  isTTY: boolean;
  /** Terminal redraw period; default 250 ms. */
  intervalMs?: number;
  /** Log line period when not a terminal; default 10 s. */
  logEveryMs?: number;
  poll: () => Promise<ProgressSnapshot>;
}

/** The rolling req/s looks back this far, so one slow poll does not make the rate jump. */
const RATE_WINDOW_MS = 5000;
const CLEAR_LINE = '\r\x1b[2K';

export class ProgressReporter {
  readonly #stream: NodeJS.WriteStream | Writable;
  readonly #isTTY: boolean;
  readonly #periodMs: number;
  readonly #poll: () => Promise<ProgressSnapshot>;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #history: ProgressSnapshot[] = [];
  #lastLine: string | undefined;
  #stopped = false;

  constructor(opts: ProgressReporterOptions) {
    this.#stream = opts.stream;
    this.#isTTY = opts.isTTY;
    this.#periodMs = opts.isTTY ? (opts.intervalMs ?? 250) : (opts.logEveryMs ?? 10_000);
    this.#poll = opts.poll;
  }

  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#tick();
    this.#timer = setInterval(() => this.#tick(), this.#periodMs);
    // Progress is a by-product: it must never be what keeps the process alive.
    this.#timer.unref();
  }

  /** Stops polling and writes one final line (ending the rewritten line on a terminal). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#inFlight;
    try {
      this.#lastLine = this.#render(await this.#poll());
    } catch (error) {
      this.#lastLine ??= `progress unavailable: ${errorText(error)}`;
    }
    this.#stream.write(this.#isTTY ? `${CLEAR_LINE}${this.#fit(this.#lastLine)}\n` : `${this.#lastLine}\n`);
  }

  #tick(): void {
    // A slow poll (busy database) skips ticks instead of piling up queries.
    if (this.#inFlight) return;
    this.#inFlight = this.#poll()
      .then(
        (snapshot) => {
          if (!this.#stopped) this.#write(this.#render(snapshot));
        },
        (error: unknown) => {
          // Reading progress failing is not the job failing: say so and keep trying.
          if (!this.#stopped) this.#write(`progress unavailable: ${errorText(error)}`);
        },
      )
      .finally(() => {
        this.#inFlight = undefined;
      });
  }

  #render(snapshot: ProgressSnapshot): string {
    const history = this.#history;
    history.push(snapshot);
    const cutoff = snapshot.now.getTime() - RATE_WINDOW_MS;
    // Keep the newest snapshot at least RATE_WINDOW_MS old as the base of the rolling rate.
    while (history.length > 2 && (history[1]?.now.getTime() ?? Infinity) <= cutoff) history.shift();
    const prev = history.length > 1 ? history[0] : undefined;
    return renderProgressLine(snapshot, prev);
  }

  #write(line: string): void {
    if (this.#isTTY) this.#stream.write(`${CLEAR_LINE}${this.#fit(line)}`);
    else this.#stream.write(`${line}\n`);
  }

  /** A line wider than the terminal wraps, and `\r` then rewrites only its last row. */
  #fit(line: string): string {
    const columns = 'columns' in this.#stream ? this.#stream.columns : undefined;
    if (typeof columns !== 'number' || columns < 10 || line.length < columns) return line;
    return `${line.slice(0, columns - 2)}…`;
  }
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
