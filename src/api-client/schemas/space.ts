/** Audio space (/v3/place). Integer timestamps are epoch values whose unit the spec does not show. */
import { z } from 'zod';
import { boolSchema, countSchema, textSchema } from './common.ts';
import { userV3Schema } from './user-v3.ts';

export const participantSchema = z
  .object({
    id: z
      .union([z.string(), z.null()])
      .optional()
      .transform((v) => v ?? null),
    avatar: textSchema,
    name: textSchema,
    periscope_user_id: textSchema,
    username: textSchema,
    is_muted_by_admin: boolSchema,
    is_muted_by_guest: boolSchema,
    is_verified: boolSchema,
    start: countSchema,
  })
  .loose();

const participantList = z
  .array(participantSchema)
  .nullish()
  .transform((v) => v ?? []);

export const spaceSchema = z
  .object({
    id: z.string().min(1),
    title: textSchema,
    state: textSchema,
    media_key: textSchema,
    is_subscribed: boolSchema,
    created_at: countSchema,
    updated_at: countSchema,
    scheduled_start: countSchema,
    creator: userV3Schema.nullish(),
    participants: z
      .object({
        admins: participantList,
        listeners: participantList,
        speakers: participantList,
        total: countSchema,
      })
      .loose()
      .nullish(),
    settings: z.record(z.string(), z.unknown()).nullish(),
    stats: z
      .object({
        total_live_listeners: countSchema,
        total_participants: countSchema,
        total_replay_watched: countSchema,
      })
      .loose()
      .nullish(),
  })
  .loose();

export type SpaceWire = z.infer<typeof spaceSchema>;

// Space ids are alphanumeric (e.g. 1YqKDqWqdPOKV), unlike tweet and user ids.
export const spaceIdSchema = z.string().regex(/^[A-Za-z0-9]{1,40}$/);
