/** Usage record (/v3/key-usage-info). */
import { z } from 'zod';
import { parseTimestamp } from '../timestamps.ts';
import { countSchema } from './common.ts';

/**
 * Production describes `key_requests` as this period's allotment and `total_requests` as the requests
 * used over all periods (the spec reads them the other way round); only `remaining_requests` and
 * `valid_until` mean the same in both, and only they steer the limiter.
 */
const requestCount = countSchema.pipe(z.number());

/**
 * `valid_until` only says when to look again before the recheck: a form we cannot read (production
 * says "ISO 8601", which has forms this client does not take) is null, as when absent. Refused, it
 * failed the whole usage answer, so the quota stayed unknown and every backfill parked for good.
 */
const lenientTimestamp = z.unknown().transform((v) => (typeof v === 'string' ? parseTimestamp(v) : null));

// Only remaining_requests is required: a null or absent field that nothing reads must not fail a
// quota sync for good.
export const usageSchema = z
  .object({
    key_requests: countSchema,
    remaining_requests: requestCount,
    total_requests: countSchema,
    valid_until: lenientTimestamp,
  })
  .loose();

export type UsageWire = z.infer<typeof usageSchema>;
