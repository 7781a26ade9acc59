import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AuthError,
  BadRequestError,
  GoneError,
  InvalidResponseError,
  NotFoundError,
  QuotaError,
  RateLimitedError,
  TransientError,
} from '../../src/api-client/errors.ts';
import { AbortedError, ErrorCode, InputError } from '../../src/errors.ts';
import { decideOnError, isPermanentError, MIN_PARK_MS, type ErrorContext } from '../../src/jobs/error-decision.ts';
import { BudgetExhaustedError, KeysRefusedError, QuotaExhaustedError } from '../../src/jobs/limiter/errors.ts';
import { LimiterStateLostError } from '../../src/jobs/limiter/state-lost.ts';
import { StaleSliceError } from '../../src/store/errors.ts';

const api = (status: number) => ({ endpoint: 'POST /v3/search-tweets', keyFingerprint: 'k_0123456789ab', status });
const ctx: ErrorContext = { nowMs: 1_000_000, progressed: false, quotaRecheckMs: 600_000, transientRetryMs: 2000, pageRequests: 1, maxAttemptsPerPage: 6 };

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

  it('every usable key has an unknown quota and asking failed: park, and the note says so and why', () => {
    const at = new Date(ctx.nowMs + 5000);
    const d = decideOnError(new QuotaExhaustedError(at, { unknownQuota: 'connect ECONNREFUSED 127.0.0.1:9' }), ctx);
    expect(d).toMatchObject({ kind: 'park', atMs: at.getTime() });
    expect(d.kind === 'park' && d.note).toBe(
      `paused: quota unknown (asking the service for it failed: connect ECONNREFUSED 127.0.0.1:9; asking again at ${at.toISOString()})`,
    );
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

  it('one retry layer: a 5xx, 429 or broken body is fetched again while the page has requests left, then the slice fails naming it; never the queue', () => {
    for (const error of [new TransientError(api(503)), new RateLimitedError(api(429)), new InvalidResponseError({ ...api(200), reason: 'empty body' })]) {
      for (const progressed of [false, true]) {
        expect(decideOnError(error, { ...ctx, progressed, pageRequests: 5 })).toEqual({ kind: 'refetch', atMs: ctx.nowMs + 2000 });
        const d = decideOnError(error, { ...ctx, progressed, pageRequests: 6 });
        expect(d).toEqual({ kind: 'fail-slice', code: error.code, message: `gave up on a page after 6 tries: ${error.message}` });
      }
    }
    expect(decideOnError(new TransientError(api(500)), { ...ctx, pageRequests: 6 })).toMatchObject({ message: expect.stringMatching(/\(500\)/) });
  });

  it('JSON of the wrong shape fails the slice at once: the same request answers the same', () => {
    const error = new InvalidResponseError({ ...api(200), reason: 'tweets: expected array', permanent: true });
    expect(decideOnError(error, ctx)).toEqual({ kind: 'fail-slice', code: ErrorCode.API_INVALID_RESPONSE, message: error.message });
  });

  it('a failure outside a request (database, a bug) is the queue backoff\'s to count, unless this run already made progress', () => {
    expect(decideOnError(new Error('socket hang up'), ctx)).toEqual({ kind: 'rethrow' });
    expect(decideOnError(new Error('socket hang up'), { ...ctx, progressed: true })).toEqual({ kind: 'retry-later', atMs: ctx.nowMs + 2000 });
    expect(decideOnError(new StaleSliceError('1', null), ctx)).toEqual({ kind: 'rethrow' });
  });

  it('permanent errors that escape a run skip the queue\'s attempts; transient ones do not', () => {
    const zodError = z.object({ a: z.string() }).safeParse({}).error;
    expect(isPermanentError(zodError)).toBe(true);
    expect(isPermanentError(new InputError('slice 7: unknown slice kind "x"'))).toBe(true);
    expect(isPermanentError(new BadRequestError(api(400)))).toBe(true);
    expect(isPermanentError(new GoneError(api(410)))).toBe(true);
    expect(isPermanentError(new InvalidResponseError({ ...api(200), reason: 'shape', permanent: true }))).toBe(true);
    expect(isPermanentError(new InvalidResponseError({ ...api(200), reason: 'empty body' }))).toBe(false);
    expect(isPermanentError(new TransientError(api(503)))).toBe(false);
    expect(isPermanentError(new Error('Connection terminated unexpectedly'))).toBe(false);
  });

  it('decides by code, not by class: an AppError with a code steers as that code does', () => {
    const lookalike = Object.assign(new InputError('x'), {});
    Object.defineProperty(lookalike, 'code', { value: ErrorCode.BUDGET_EXHAUSTED });
    expect(decideOnError(lookalike, ctx).kind).toBe('end-job');
  });
});
