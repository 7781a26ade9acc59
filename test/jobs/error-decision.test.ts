import { describe, expect, it } from 'vitest';
import { AuthError, BadRequestError, GoneError, NotFoundError, QuotaError, TransientError } from '../../src/api-client/errors.ts';
import { AbortedError, ErrorCode, InputError } from '../../src/errors.ts';
import { decideOnError, MIN_PARK_MS, type ErrorContext } from '../../src/jobs/error-decision.ts';
import { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from '../../src/jobs/limiter/errors.ts';
import { LimiterStateLostError } from '../../src/jobs/limiter/state-lost.ts';
import { StaleSliceError } from '../../src/store/errors.ts';

const api = (status: number) => ({ endpoint: 'POST /v3/search-tweets', keyFingerprint: 'k_0123456789ab', status });
const ctx: ErrorContext = { nowMs: 1_000_000, progressed: false, quotaRecheckMs: 600_000, transientRetryMs: 2000 };

describe('decideOnError: an error and its context become one decision, by code', () => {
  it('one refused or spent key: ask again (the gate has set that key aside)', () => {
    expect(decideOnError(new AuthError(api(401)), ctx)).toEqual({ kind: 'continue' });
    expect(decideOnError(new QuotaError(api(403)), ctx)).toEqual({ kind: 'continue' });
  });

  it('every key refused: the job fails with KEYS_REFUSED (a distinct code from one 401)', () => {
    const error = new KeysRefusedError(['k_aaaaaaaaaaaa', 'k_bbbbbbbbbbbb']);
    expect(error.code).not.toBe(new AuthError(api(401)).code);
    expect(decideOnError(error, ctx)).toEqual({ kind: 'fail-job', code: ErrorCode.KEYS_REFUSED, message: error.message });
  });

  it('no key can grant: park until the earliest unpark, never sooner than a second', () => {
    const at = new Date(ctx.nowMs + 30_000);
    expect(decideOnError(new QuotaExhaustedError(at), ctx)).toMatchObject({ kind: 'park', atMs: at.getTime() });
    expect(decideOnError(new QuotaExhaustedError(new Date(ctx.nowMs - 5000)), ctx)).toMatchObject({ kind: 'park', atMs: ctx.nowMs + MIN_PARK_MS });
  });

  it('no key can grant and none says when: park for the configured recheck', () => {
    const d = decideOnError(new QuotaExhaustedError(null), { ...ctx, quotaRecheckMs: 1500 });
    expect(d).toMatchObject({ kind: 'park', atMs: ctx.nowMs + 1500 });
    expect(d.kind === 'park' && d.note).toMatch(/^paused: quota/);
  });

  it('a wrong request fails the job with its own code and message', () => {
    for (const error of [new BadRequestError(api(400)), new GoneError({ ...api(410), endpoint: 'POST /v2/comments' }), new InputError('bad query')]) {
      expect(decideOnError(error, ctx)).toEqual({ kind: 'fail-job', code: error.code, message: error.message });
    }
  });

  it('404 finishes the slice with a note; the job goes on', () => {
    const d = decideOnError(new NotFoundError(api(404)), ctx);
    expect(d.kind).toBe('finish-slice');
    expect(d.kind === 'finish-slice' && d.note).toMatch(/^target missing \(404/);
  });

  it('a spent --max-requests budget ends the job with a note', () => {
    expect(decideOnError(new BudgetExhaustedError('7'), ctx)).toEqual({ kind: 'end-job', note: 'stopped: the --max-requests budget is spent' });
  });

  it('shutdown puts the slice back at once; a lost limiter state after a short wait, without counting an attempt', () => {
    expect(decideOnError(new AbortedError(), ctx)).toEqual({ kind: 'retry-later', atMs: ctx.nowMs });
    expect(decideOnError(new LimiterStateLostError('7', 'epoch'), ctx)).toEqual({ kind: 'retry-later', atMs: ctx.nowMs + 2000 });
  });

  it('a transient failure is the queue backoff\'s to count, unless this run already made progress', () => {
    const error = new TransientError(api(503));
    expect(decideOnError(error, ctx)).toEqual({ kind: 'rethrow' });
    expect(decideOnError(error, { ...ctx, progressed: true })).toEqual({ kind: 'retry-later', atMs: ctx.nowMs + 2000 });
    expect(decideOnError(new Error('socket hang up'), ctx)).toEqual({ kind: 'rethrow' });
    expect(decideOnError(new StaleSliceError('1', null), ctx)).toEqual({ kind: 'rethrow' });
  });

  it('decides by code, not by class: an AppError with a code steers as that code does', () => {
    const lookalike = Object.assign(new InputError('x'), {});
    Object.defineProperty(lookalike, 'code', { value: ErrorCode.BUDGET_EXHAUSTED });
    expect(decideOnError(lookalike, ctx).kind).toBe('end-job');
  });
});
