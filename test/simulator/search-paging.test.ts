import { describe, it, expect, beforeAll } from 'vitest';
import type { World } from '../../src/simulator/model.ts';
import { buildWorld, type TweetInput } from '../../src/simulator/world/index.ts';
import { compileQuery, engagementScore, POPULAR_CAP, searchTweets, type SearchOrder } from '../../src/simulator/search/index.ts';
import { bindPlan } from '../../src/simulator/search/plan.ts';

const BASE = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const COUNT = 50_000;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'zeta', 'kappa', 'sigma'];
const HANDLES = Array.from({ length: 50 }, (_, k) => `u${k}`);
const PROTECTED = 'u7';

/** Deterministic LCG so the world and the expectations are the same on every run. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

let world: World;
let inputs: TweetInput[];

beforeAll(() => {
  const rnd = lcg(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  inputs = [];
  for (let k = 0; k < COUNT; k += 1) {
    const author = pick(HANDLES);
    const createdAtMs = BASE + k * MINUTE;
    const prev = inputs[k - 1];
    if (k % 50 === 49 && prev !== undefined) {
      inputs.push({ author, text: `RT @${prev.author}: ${prev.text}`, createdAtMs, retweeted: k - 1 });
    } else {
      const text = [pick(WORDS), pick(WORDS), pick(WORDS)].join(' ');
      inputs.push({ author, text, createdAtMs, likes: Math.floor(rnd() * 40) });
    }
  }
  world = buildWorld({ users: HANDLES.map((username) => ({ username, protected: username === PROTECTED })), tweets: inputs });
});

/** The oracle: fixture k is world index k (creation times strictly increase). */
function expected(test: (input: TweetInput, k: number) => boolean): number[] {
  const out: number[] = [];
  inputs.forEach((input, k) => {
    if (input.author !== PROTECTED && input.retweeted === undefined && test(input, k)) out.push(k);
  });
  return out.reverse();
}

const has = (input: TweetInput, word: string): boolean => input.text.split(' ').includes(word);

function walk(query: string, order: SearchOrder, limit = 20, between?: (page: number) => void): number[] {
  const seen: number[] = [];
  let state: string | undefined;
  for (let page = 0; page < 10_000; page += 1) {
    const result = searchTweets(world, { query, order, limit, nowMs: BASE + COUNT * MINUTE, ...(state === undefined ? {} : { state }) });
    seen.push(...result.indices);
    if (result.nextState === null) return seen;
    expect(result.indices.length).toBeGreaterThan(0);
    state = result.nextState;
    between?.(page);
  }
  throw new Error('walk did not end');
}

function popularOrder(indices: number[]): number[] {
  return [...indices].sort((a, b) => engagementScore(world.tweets, b) - engagementScore(world.tweets, a) || b - a);
}

describe('paging over a 50k-tweet world is exact', () => {
  it('latest: a broad word, every match once, newest first', () => {
    const want = expected((x) => has(x, 'alpha'));
    expect(want.length).toBeGreaterThan(10_000);
    expect(walk('alpha', 'latest', 100)).toEqual(want);
  });

  it('latest: a time-sliced query scans its slice and walks it exactly in pages of 20', () => {
    const from = BASE + 20_000 * MINUTE;
    const to = BASE + 23_000 * MINUTE;
    const query = `beta since_time:${from / 1000} until_time:${to / 1000} -gamma`;
    const want = expected((x) => has(x, 'beta') && !has(x, 'gamma') && x.createdAtMs >= from && x.createdAtMs < to);
    expect(walk(query, 'latest')).toEqual(want);
  });

  it('latest: from: uses the author index and still honours every other term', () => {
    const want = expected((x) => x.author === 'u3' && (has(x, 'delta') || has(x, 'omega')));
    expect(walk('from:u3 (delta OR omega)', 'latest', 7)).toEqual(want);
  });

  it('latest: tweets appended between pages are not part of the walk', () => {
    const want = expected((x) => has(x, 'kappa') && has(x, 'sigma'));
    const got = walk('kappa sigma', 'latest', 20, (page) => {
      if (page === 2) world.addTweets([{ authorHandle: 'u1', text: 'kappa sigma appended', likes: 1000 }]);
    });
    expect(got).toEqual(want);
  });

  it('popular: every match once, by score then id, even with tweets appended mid-walk', () => {
    const want = popularOrder(expected((x) => has(x, 'zeta') && has(x, 'delta')));
    expect(want.length).toBeLessThan(POPULAR_CAP);
    const got = walk('zeta delta', 'popular', 20, (page) => {
      if (page === 1) world.addTweets([{ authorHandle: 'u2', text: 'zeta delta late', likes: 0 }]);
    });
    expect(got).toEqual(want);
  });

  it(`popular: ranks only the ${POPULAR_CAP} most recent matches`, () => {
    const query = `since_time:${BASE / 1000} until_time:${(BASE + COUNT * MINUTE) / 1000}`;
    const all = expected(() => true);
    expect(all.length).toBeGreaterThan(POPULAR_CAP);
    expect(walk(query, 'popular', 1000)).toEqual(popularOrder(all.slice(0, POPULAR_CAP)));
  });
});

describe('query planning', () => {
  const now = BASE + COUNT * MINUTE;

  it('turns top-level time and id bounds into an index range', () => {
    const t = world.tweets;
    const from = BASE + 1_000 * MINUTE;
    const to = BASE + 2_000 * MINUTE;
    const bound = bindPlan(compileQuery(`alpha since_time:${from / 1000} until_time:${to / 1000}`), world, now);
    expect([bound.lo, bound.hi]).toEqual([1_000, 2_000]);
    const ids = bindPlan(compileQuery(`since_id:${t.idString(10)} max_id:${t.idString(20)}`), world, now);
    expect([ids.lo, ids.hi]).toEqual([11, 21]);
    const within = bindPlan(compileQuery('within_time:10m'), world, now);
    expect(within.lo).toBe(COUNT - 10);
    // A bound under OR restricts nothing as a whole.
    const either = bindPlan(compileQuery(`alpha OR since_time:${from / 1000}`), world, now);
    expect([either.lo, either.candidates]).toEqual([0, null]);
  });

  it('scans the smallest top-level candidate index instead of the table', () => {
    const author = world.userByHandle('u3');
    expect(author).toBeDefined();
    const bound = bindPlan(compileQuery('from:u3 beta'), world, now);
    expect(bound.candidates).toEqual(world.tweetsByAuthor(author?.index ?? -1));
    expect(bindPlan(compileQuery('from:nobody'), world, now).candidates).toEqual([]);
    expect(bindPlan(compileQuery('from:u3 OR from:u4'), world, now).candidates).toBeNull();
  });

  it('compiles a query string once', () => {
    expect(compileQuery('alpha -beta')).toBe(compileQuery('alpha -beta'));
  });
});
