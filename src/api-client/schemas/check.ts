/** check-comment (v2 and v3) and check-quoted answers. */
import { z } from 'zod';
import { boolSchema, optionalTimestampSchema, textSchema } from './common.ts';

/** The tweet is validated by the caller with its version's tweet schema. */
export const checkCommentSchema = z
  .object({
    commented: z.boolean(),
    tweet: z.unknown().optional(),
  })
  .loose();

export const checkQuotedSchema = z
  .object({
    date: optionalTimestampSchema,
    status: textSchema,
    text: textSchema,
    user_protected: boolSchema,
  })
  .loose();

export type CheckQuotedWire = z.infer<typeof checkQuotedSchema>;
