/** Id schemas of job params. Ids stay strings end to end (ARCHITECTURE invariant 5). */
import { z } from 'zod';
import { isCanonicalId } from '../../api-client/schemas/common.ts';

/** A tweet or user id: a canonical positive int64 in decimal, as the client sends it. */
export const snowflakeId = z.string().refine(isCanonicalId, 'a positive int64 id in decimal');

/**
 * A list or community id: the same canonical int64, since the client refuses anything else before
 * sending: a job must refuse it when queued, not fail on its first page.
 */
export const numericId = snowflakeId;
