/** Trend item of GET /v3/trends (`{trends: [Trend]}`). */
import { z } from 'zod';
import { textSchema } from './common.ts';

export const trendSchema = z.object({
  name: z.string().min(1),
  query: textSchema,
  url: textSchema,
});

export type TrendWire = z.infer<typeof trendSchema>;
