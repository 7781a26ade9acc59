/** Identifier conversions and envelopes shared by many endpoints. */
import { z } from 'zod';
import { cursorSchema, idSchema } from './common.ts';

export const idAnswerSchema = z.object({ id: idSchema }).loose();
export const handleAnswerSchema = z
  .object({
    handle: z.string().min(1).optional(),
    username: z.string().min(1).optional(),
  })
  .loose()
  .refine((v) => v.handle !== undefined || v.username !== undefined, 'handle missing')
  .transform((v) => (v.handle ?? v.username) as string);

/**
 * A paged envelope: `{<itemsKey>: [...], next_cursor}`. Items stay unknown here: each one is
 * validated on its own so one bad item is quarantined instead of failing the page.
 */
export function pageEnvelopeSchema(itemsKey: string) {
  return z
    .object({
      [itemsKey]: z.array(z.unknown()),
      next_cursor: cursorSchema,
    })
    .loose();
}

export const arrayEnvelopeSchema = z.array(z.unknown());
