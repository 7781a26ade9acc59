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
 * validated on its own so one bad item is quarantined instead of failing the page. Production
 * sends empty optional values as explicit `null` (service-production.md), so a `null` list is an
 * empty page; a missing list key is still refused (an answer without it is not this listing).
 */
function buildPageEnvelope(itemsKey: string) {
  return z
    .object({
      [itemsKey]: z.array(z.unknown()).nullable(),
      next_cursor: cursorSchema,
    })
    .loose();
}

const envelopes = new Map<string, ReturnType<typeof buildPageEnvelope>>();

/** The `{<items>: [...], next_cursor}` envelope, built once per items key (it is on every page). */
export function pageEnvelopeSchema(itemsKey: string): ReturnType<typeof buildPageEnvelope> {
  let schema = envelopes.get(itemsKey);
  if (!schema) {
    schema = buildPageEnvelope(itemsKey);
    envelopes.set(itemsKey, schema);
  }
  return schema;
}

export const arrayEnvelopeSchema = z.array(z.unknown());
