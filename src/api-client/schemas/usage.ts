/** Usage record (/v3/key-usage-info). */
import { z } from 'zod';
import { optionalTimestampSchema } from './common.ts';

const requestCount = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]);

export const usageSchema = z
  .object({
    key_requests: requestCount,
    remaining_requests: requestCount,
    total_requests: requestCount,
    valid_until: optionalTimestampSchema,
  })
  .loose();

export type UsageWire = z.infer<typeof usageSchema>;
