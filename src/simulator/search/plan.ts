/**
 * What a query needs besides its predicate: the index range its top-level time and id bounds
 * allow (found by binary search, so a sliced query scans only its slice), and, when the top
 * level names an author, a mention, a conversation or a quoted tweet, the world's index of
 * those tweets as the candidates to test instead of a scan.
 *
 * Only conjuncts of the top-level AND are used: a bound inside OR or under '-' does not
 * restrict the whole result. The predicate still checks every bound, so the range and the
 * candidates are an optimisation that never changes the result.
 */
import type { World } from '../model.ts';
import type { QueryNode } from './ast.ts';
import { CARD_WINDOW_MS, compileNode, type Predicate } from './predicates.ts';
import { TweetTextMemo } from './text.ts';

/** World-independent facts about a parsed query; cached per query string. */
export interface QueryPlan {
  readonly query: string;
  readonly node: QueryNode;
  /** The conditions on tweets: `node` without include:nativeretweets; null matches every tweet. */
  readonly condition: QueryNode | null;
  readonly conjuncts: readonly QueryNode[];
  /** Native retweets stay in the result (they are excluded by default). */
  readonly includeNativeRetweets: boolean;
  /** The result depends on "now" (within_time:, card_name:). */
  readonly usesNow: boolean;
}

/** A plan bound to one world and one "now": ready to scan. */
export interface BoundQuery {
  readonly predicate: Predicate;
  /** Matches lie in [lo, hi). */
  readonly lo: number;
  readonly hi: number;
  /** Ascending tweet indices that contain every match, or null for a range scan. */
  readonly candidates: readonly number[] | null;
}

function visit(node: QueryNode, negated: boolean, fn: (node: QueryNode, negated: boolean) => void): void {
  fn(node, negated);
  if (node.kind === 'and' || node.kind === 'or') node.children.forEach((c) => visit(c, negated, fn));
  else if (node.kind === 'not') visit(node.child, !negated, fn);
}

export function planQuery(query: string, node: QueryNode): QueryPlan {
  let includeNativeRetweets = false;
  let usesNow = false;
  visit(node, false, (n, negated) => {
    if (n.kind === 'withinTime' || n.kind === 'card') usesNow = true;
    const asksForRetweets =
      n.kind === 'includeNativeRetweets' ||
      (n.kind === 'filter' && (n.filter === 'nativeretweets' || n.filter === 'retweets'));
    if (asksForRetweets && !negated) includeNativeRetweets = true;
  });
  const condition = withoutModifiers(node);
  const conjuncts = condition === null ? [] : condition.kind === 'and' ? condition.children : [condition];
  return { query, node, condition, conjuncts, includeNativeRetweets, usesNow };
}

/**
 * include:nativeretweets widens the result instead of testing a tweet, so it is taken out of
 * the tree: compiled as a condition it would turn `a OR include:nativeretweets` into "match
 * everything" and `-include:nativeretweets` into "match nothing".
 */
function withoutModifiers(node: QueryNode): QueryNode | null {
  switch (node.kind) {
    case 'includeNativeRetweets':
      return null;
    case 'not': {
      const child = withoutModifiers(node.child);
      return child === null ? null : { kind: 'not', child };
    }
    case 'and':
    case 'or': {
      const children = node.children.map(withoutModifiers).filter((c): c is QueryNode => c !== null);
      if (children.length === 0) return null;
      return children.length === 1 ? (children[0] as QueryNode) : { kind: node.kind, children };
    }
    default:
      return node;
  }
}

function candidatesOf(node: QueryNode, world: World): readonly number[] | null {
  const t = world.tweets;
  switch (node.kind) {
    case 'from': {
      const user = world.userByHandle(node.handle);
      return user === undefined ? [] : world.tweetsByAuthor(user.index);
    }
    case 'mention': {
      const user = world.userByHandle(node.handle);
      return user === undefined ? [] : world.mentionsOf(user.index);
    }
    case 'conversationId': {
      const root = t.indexOfId(BigInt(node.id));
      return root < 0 ? [] : [root, ...world.conversationReplies(root)];
    }
    case 'quotedTweetId': {
      const target = t.indexOfId(BigInt(node.id));
      return target < 0 ? [] : world.quotesOf(target);
    }
    default:
      return null;
  }
}

export function bindPlan(plan: QueryPlan, world: World, nowMs: number): BoundQuery {
  const t = world.tweets;
  let lo = 0;
  let hi = t.count;
  let candidates: readonly number[] | null = null;
  for (const c of plan.conjuncts) {
    if (c.kind === 'timeBound') {
      if (c.side === 'since') lo = Math.max(lo, t.lowerBoundMs(c.ms));
      else hi = Math.min(hi, t.lowerBoundMs(c.ms));
    } else if (c.kind === 'withinTime') {
      lo = Math.max(lo, t.lowerBoundMs(nowMs - c.seconds * 1000));
    } else if (c.kind === 'card') {
      lo = Math.max(lo, t.lowerBoundMs(nowMs - CARD_WINDOW_MS));
    } else if (c.kind === 'idBound') {
      const next = t.lowerBoundId(BigInt(c.id) + 1n);
      if (c.side === 'since') lo = Math.max(lo, next);
      else hi = Math.min(hi, next);
    } else {
      const list = candidatesOf(c, world);
      if (list !== null && (candidates === null || list.length < candidates.length)) candidates = list;
    }
  }
  const memo = new TweetTextMemo(t);
  const matches: Predicate = plan.condition === null ? () => true : compileNode(plan.condition, { world, nowMs, memo });
  const users = world.users;
  const include = plan.includeNativeRetweets;
  // Author flags are read per tweet, not cached: test control may suspend or protect a user.
  const visible = (i: number): boolean => {
    const u = users[t.author(i)];
    return u !== undefined && !u.protected && !u.suspended && !u.deleted;
  };
  const predicate: Predicate = (i) => (include || t.retweeted(i) < 0) && visible(i) && matches(i);
  return { predicate, lo, hi: Math.max(lo, hi), candidates };
}
