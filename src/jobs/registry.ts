/** Every job kind and slice handler, by name. A new job kind is one file in kinds/ plus a line here. */
import type { JobKind, SliceHandler } from './kind.ts';
import { conversationParentsSlice, conversationsJob } from './kinds/conversations.ts';
import { communityJob, communityMembersSlice, communitySearchSlice, communityTweetsSlice } from './kinds/community.ts';
import { hydrateJob, hydrateSlice } from './kinds/hydrate.ts';
import { listFollowersSlice, listJob, listMembersSlice, listTweetsSlice } from './kinds/list.ts';
import { mentionsJob, mentionsSlice } from './kinds/mentions.ts';
import { refreshJob } from './kinds/refresh.ts';
import { commentsSlice, repliesJob } from './kinds/replies.ts';
import { searchJob, searchSlice } from './kinds/search.ts';
import { profileSlice, userJob, userTweetsSlice } from './kinds/user.ts';

const jobKinds = [searchJob, mentionsJob, userJob, listJob, communityJob, repliesJob, hydrateJob, refreshJob, conversationsJob] as const;

const sliceHandlers = [
  searchSlice,
  mentionsSlice,
  profileSlice,
  userTweetsSlice,
  listTweetsSlice,
  listMembersSlice,
  listFollowersSlice,
  communityMembersSlice,
  communityTweetsSlice,
  communitySearchSlice,
  commentsSlice,
  hydrateSlice,
  conversationParentsSlice,
] as const;

export type JobKindName = (typeof jobKinds)[number]['kind'];

const jobsByName = new Map<string, JobKind<unknown>>(jobKinds.map((k) => [k.kind, k as JobKind<unknown>]));
const slicesByName = new Map<string, SliceHandler<unknown>>(sliceHandlers.map((h) => [h.kind, h as SliceHandler<unknown>]));

export function jobKind(name: string): JobKind<unknown> {
  const kind = jobsByName.get(name);
  if (!kind) throw new Error(`unknown job kind ${JSON.stringify(name)}`);
  return kind;
}

export function sliceHandler(name: string): SliceHandler<unknown> {
  const handler = slicesByName.get(name);
  if (!handler) throw new Error(`unknown slice kind ${JSON.stringify(name)}`);
  return handler;
}
