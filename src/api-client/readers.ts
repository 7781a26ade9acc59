/** Schema + normaliser pairs, one per item shape, used by the endpoint functions. */
import type { CanonicalTweet, CanonicalUser } from './canonical.ts';
import {
  normalizeBasicAccount,
  normalizeFollowerV3,
  normalizeNewFollower,
  normalizeTopFollower,
  normalizeReducedUser,
  normalizeTweetV2,
  normalizeTweetV3,
  normalizeUserV3,
} from './normalize.ts';
import type { ItemReader } from './page.ts';
import { tweetV2Schema } from './schemas/tweet-v2.ts';
import { tweetV3Schema } from './schemas/tweet-v3.ts';
import { basicAccountSchema, newFollowerSchema } from './schemas/user-v2.ts';
import { followerV3Schema, reducedUserSchema, topFollowerSchema, userV3Schema } from './schemas/user-v3.ts';
import type { DatedUser, ScoredUser } from './results.ts';

export const tweetV3Reader: ItemReader<typeof tweetV3Schema, CanonicalTweet> = {
  schema: tweetV3Schema,
  normalize: normalizeTweetV3,
};

export const tweetV2Reader: ItemReader<typeof tweetV2Schema, CanonicalTweet> = {
  schema: tweetV2Schema,
  normalize: normalizeTweetV2,
};

export const userV3Reader: ItemReader<typeof userV3Schema, CanonicalUser> = {
  schema: userV3Schema,
  normalize: normalizeUserV3,
};

export const reducedUserReader: ItemReader<typeof reducedUserSchema, CanonicalUser> = {
  schema: reducedUserSchema,
  normalize: normalizeReducedUser,
};

export const basicAccountReader: ItemReader<typeof basicAccountSchema, CanonicalUser> = {
  schema: basicAccountSchema,
  normalize: normalizeBasicAccount,
};

export const newFollowerReader: ItemReader<typeof newFollowerSchema, CanonicalUser> = {
  schema: newFollowerSchema,
  normalize: normalizeNewFollower,
};

export const followerV3Reader: ItemReader<typeof followerV3Schema, DatedUser> = {
  schema: followerV3Schema,
  normalize: (user, raw) => ({ user: normalizeFollowerV3(user, raw), followedAt: user.followerDate }),
};

export const topFollowerReader: ItemReader<typeof topFollowerSchema, ScoredUser> = {
  schema: topFollowerSchema,
  normalize: (user, raw) => ({ user: normalizeTopFollower(user, raw), score: user.score }),
};
