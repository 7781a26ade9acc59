/**
 * A job id as every entry point takes it (the CLI's arguments, the dashboard's URLs, a refresh or
 * conversations job's source job, queued task data): jobs.id is a Postgres bigint identity, so a
 * canonical positive decimal no larger than int8's maximum; anything else cannot exist and must not
 * reach a query (it would fail there, not answer "no such job").
 */
import { z } from 'zod';

const INT8_MAX = 9_223_372_036_854_775_807n;

export const JOB_ID_MESSAGE = 'expected a job id (a positive integer like 42)';

export function isJobId(value: string): boolean {
  return /^[1-9][0-9]{0,18}$/.test(value) && (value.length < 19 || BigInt(value) <= INT8_MAX);
}

export const jobIdSchema = z.string().refine(isJobId, JOB_ID_MESSAGE);
