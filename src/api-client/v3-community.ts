/** v3 community endpoints: members, the community's feed, a search inside it, a membership check. */
import { z } from 'zod';
import type { CanonicalTweet, CanonicalUser } from './canonical.ts';
import type { CallOptions, Execute } from './executor.ts';
import {
  cursorInput,
  defined,
  exactlyOneUser,
  idOrLinkInput,
  numericIdInput,
  orderInput,
  queryInput,
  userRefShape,
  validateInput,
} from './input.ts';
import { readOne, readPage, type Page } from './page.ts';
import { reducedUserReader, tweetV3Reader } from './readers.ts';
import { checkCommunityMemberSchema } from './schemas/check.ts';

const communityInput = z.object({ communityLink: idOrLinkInput, cursor: cursorInput }).strict();
export type CommunityParams = z.input<typeof communityInput>;

/** Members as CommunityUser records (six fields: source `v3-reduced`). */
export async function communityMembers(execute: Execute, params: CommunityParams, options?: CallOptions): Promise<Page<CanonicalUser>> {
  const p = validateInput(communityInput, params, 'POST /v3/community-members');
  return execute(
    {
      method: 'POST',
      route: '/v3/community-members',
      body: defined({ community_link: p.communityLink, next_cursor: p.cursor }),
      read: (json) => readPage(json, ['users'], reducedUserReader),
    },
    options,
  );
}

const communityTweetsInput = z.object({ communityId: numericIdInput, order: orderInput.optional(), cursor: cursorInput }).strict();
export type CommunityTweetsParams = z.input<typeof communityTweetsInput>;

/** The community's feed, up to 20 a page; production's default order is `latest`. */
export async function communityTweets(execute: Execute, params: CommunityTweetsParams, options?: CallOptions): Promise<Page<CanonicalTweet>> {
  const p = validateInput(communityTweetsInput, params, 'POST /v3/community-tweets');
  return execute(
    {
      method: 'POST',
      route: '/v3/community-tweets',
      body: defined({ community_id: p.communityId, order: p.order, next_cursor: p.cursor }),
      read: (json) => readPage(json, ['tweets'], tweetV3Reader),
    },
    options,
  );
}

const communitySearchInput = z
  .object({ communityLink: idOrLinkInput, query: queryInput.optional(), order: orderInput.optional(), cursor: cursorInput })
  .strict();
export type CommunitySearchTweetsParams = z.input<typeof communitySearchInput>;

/** A search inside one community, up to 20 a page. */
export async function communitySearchTweets(
  execute: Execute,
  params: CommunitySearchTweetsParams,
  options?: CallOptions,
): Promise<Page<CanonicalTweet>> {
  const p = validateInput(communitySearchInput, params, 'POST /v3/community-search-tweets');
  return execute(
    {
      method: 'POST',
      route: '/v3/community-search-tweets',
      body: defined({ community_link: p.communityLink, query: p.query, order: p.order, next_cursor: p.cursor }),
      read: (json) => readPage(json, ['tweets'], tweetV3Reader),
    },
    options,
  );
}

const memberCheckInput = z
  .object({ communityId: numericIdInput, ...userRefShape })
  .strict()
  .refine(exactlyOneUser, 'give exactly one of userId, username, userLink');
export type CheckCommunityMemberParams = z.input<typeof memberCheckInput>;

/** Whether a user belongs to a community: body `community_id` (an id, not a link) plus one user field. */
export async function checkCommunityMember(execute: Execute, params: CheckCommunityMemberParams, options?: CallOptions): Promise<boolean> {
  const p = validateInput(memberCheckInput, params, 'POST /v3/check-community-member');
  return execute(
    {
      method: 'POST',
      route: '/v3/check-community-member',
      body: defined({ community_id: p.communityId, user_id: p.userId, username: p.username, user_link: p.userLink }),
      read: (json) => readOne(json, { schema: checkCommunityMemberSchema, normalize: (c) => c.is_member }),
    },
    options,
  );
}
