import type { World } from '../model.ts';
import { CELEBRITIES, SEARCH_TERMS } from './vocabulary.ts';

export interface WorldCatalog {
  /** Handles. */
  users: { public: string[]; protected: string[]; suspended: string[] };
  /** Ids of public tweets by public authors that have replies. */
  tweets: string[];
  lists: string[];
  communities: string[];
  spaces: string[];
  /** Terms that match many tweets. */
  searchTerms: string[];
  /** Handles mentioned very often. */
  celebrities: string[];
}

const PICK = 5;

/**
 * Deterministic handles and ids for tests and demos: the first few of each kind in index order.
 * O(users + tweets) once; callers keep the result.
 */
export function catalog(world: World): WorldCatalog {
  const isPublic = (u: number): boolean => {
    const user = world.users[u];
    return user !== undefined && !user.protected && !user.suspended && !user.deleted;
  };
  // Users with tweets first: timelines and watches are more telling with something in them.
  const handles = (keep: (u: World['users'][number]) => boolean): string[] => {
    const matching = world.users.filter(keep);
    const active = matching.filter((u) => world.tweetsByAuthor(u.index).length > 0);
    return [...active, ...matching.filter((u) => world.tweetsByAuthor(u.index).length === 0)].slice(0, PICK).map((u) => u.username);
  };
  const t = world.tweets;
  const tweets: string[] = [];
  for (let i = 0; i < t.count && tweets.length < PICK; i++) {
    if (t.retweeted(i) < 0 && isPublic(t.author(i)) && world.conversationReplies(i).length > 0) tweets.push(t.idString(i));
  }
  const celebrities = CELEBRITIES.filter((h) => {
    const u = world.userByHandle(h);
    return u !== undefined && isPublic(u.index) && world.mentionsOf(u.index).length > 0;
  });
  const terms = SEARCH_TERMS.filter((term) => {
    for (let i = 0; i < t.count; i++) if (t.text(i).includes(term)) return true;
    return false;
  });
  return {
    users: {
      public: handles((u) => isPublic(u.index)),
      protected: handles((u) => u.protected && !u.suspended && !u.deleted),
      suspended: handles((u) => u.suspended),
    },
    tweets,
    lists: world.lists.slice(0, PICK).map((l) => l.id),
    communities: world.communities.slice(0, PICK).map((c) => c.id),
    spaces: world.spaces.slice(0, PICK).map((s) => s.id),
    searchTerms: terms,
    celebrities,
  };
}
