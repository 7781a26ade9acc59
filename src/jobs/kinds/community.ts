/** A community's members (reduced user records) as one walk. */
import { z } from 'zod';
import type { JobKind, SliceHandler } from '../kind.ts';
import { numericId } from './ids.ts';
import { userPage } from './pages.ts';

export const CommunityJobParams = z.object({ communityId: numericId }).strict();
export type CommunityJobParams = z.infer<typeof CommunityJobParams>;

export const communityJob: JobKind<CommunityJobParams> = {
  kind: 'community',
  params: CommunityJobParams,
  priority: 'backfill',
  plan(params) {
    return [{ kind: 'community-members', params: { communityId: params.communityId } }];
  },
};

export const communityMembersSlice: SliceHandler<CommunityJobParams> = {
  kind: 'community-members',
  params: CommunityJobParams,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.communityMembers(
      { communityLink: p.communityId, ...(cursor ? { cursor } : {}) },
      { priority: ctx.priority, jobId: ctx.jobId, signal: ctx.signal },
    );
    return userPage(
      'POST /v3/community-members',
      page,
      { kind: 'community_member', ownerId: p.communityId },
      'community_member',
    );
  },
};
