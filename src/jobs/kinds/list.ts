/** A list's tweets, members and followers: three walks, each its own slice. */
import { z } from 'zod';
import type { JobKind, SliceHandler } from '../kind.ts';
import { numericId } from './ids.ts';
import { noteEmptyFirstPage, tweetPage, userPage } from './pages.ts';

export const ListJobParams = z.object({ listId: numericId }).strict();
export type ListJobParams = z.infer<typeof ListJobParams>;

const ListSlice = z.object({ listId: numericId });
type ListSlice = z.infer<typeof ListSlice>;

export const listJob: JobKind<ListJobParams> = {
  kind: 'list',
  params: ListJobParams,
  priority: 'backfill',
  plan(params) {
    return ['list-tweets', 'list-members', 'list-followers'].map((kind) => ({ kind, params: { listId: params.listId } }));
  },
};

export const listTweetsSlice: SliceHandler<ListSlice> = {
  kind: 'list-tweets',
  params: ListSlice,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.listTweets(
      { listId: p.listId, ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return tweetPage('GET /v3/list-tweets', page);
  },
  afterPage: noteEmptyFirstPage("the list's tweets"),
};

export const listMembersSlice: SliceHandler<ListSlice> = {
  kind: 'list-members',
  params: ListSlice,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.listMembers(
      { listId: p.listId, ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return userPage('GET /v3/list-members', page, { kind: 'list_member', ownerId: p.listId }, 'list_member');
  },
  afterPage: noteEmptyFirstPage("the list's members"),
};

export const listFollowersSlice: SliceHandler<ListSlice> = {
  kind: 'list-followers',
  params: ListSlice,
  fetchAhead: true,
  async fetchPage(p, cursor, ctx) {
    const page = await ctx.client.listFollowers(
      { listLink: p.listId, ...(cursor ? { cursor } : {}) },
      ctx.call,
    );
    return userPage('GET /v3/list-followers', page, { kind: 'list_follower', ownerId: p.listId }, 'list_follower');
  },
  afterPage: noteEmptyFirstPage("the list's followers"),
};
