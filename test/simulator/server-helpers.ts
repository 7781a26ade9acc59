/** Shared fixture world and raw-HTTP helpers for the simulator server tests (not the API client). */
import { request } from 'undici';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/index.ts';
import { buildWorld, type TweetInput, type UserInput } from '../../src/simulator/world/index.ts';
import type { World } from '../../src/simulator/model.ts';

export const KEY = 'test-key-1';
export const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const MIN = 60_000;

/** Fixture indices of interesting tweets (input order, not world index). */
export const FX = { aliceRoot: 0, bobQuote: 45, bobRetweet: 46, carolTweet: 47, mediaTweet: 48 } as const;

export function fixtureWorld(): World {
  const users: UserInput[] = [
    { username: 'alice', displayName: 'Alice A', verified: true, location: 'Paris', bioUrls: ['https://alice.example'] },
    { username: 'bob', id: '1800000000000000001' },
    { username: 'carol', protected: true },
    { username: 'dave', suspended: true },
    { username: 'erin', deleted: true },
  ];
  for (let k = 0; k < 450; k++) users.push({ username: `u${String(k).padStart(3, '0')}`, verified: k % 10 === 0 });
  const tweets: TweetInput[] = [];
  // 45 tweets by alice, one a minute; the first is the root of a 25-reply conversation
  for (let k = 0; k < 45; k++) tweets.push({ author: 'alice', text: `alice post ${k} hello @bob`, createdAtMs: T0 + k * MIN, likes: k });
  tweets.push({ author: 'bob', text: 'bob quotes alice', createdAtMs: T0 + 50 * MIN, quoted: 1 });
  tweets.push({ author: 'bob', text: 'RT @alice: alice post 2 hello @bob', createdAtMs: T0 + 51 * MIN, retweeted: 2 });
  tweets.push({ author: 'carol', text: 'carol secret', createdAtMs: T0 + 52 * MIN });
  tweets.push({
    author: 'alice',
    text: 'media tweet https://t.co/x',
    createdAtMs: T0 + 53 * MIN,
    media: [{ type: 'photo', native: true, url: 'https://pbs.twimg.com/media/a.jpg', preview: 'https://pbs.twimg.com/media/a_small.jpg' }],
    urls: ['https://example.com/article'],
  });
  for (let k = 0; k < 25; k++) {
    tweets.push({ author: `u${String(k).padStart(3, '0')}`, text: `reply ${k} @alice`, createdAtMs: T0 + (60 + k) * MIN, inReplyTo: 0, likes: k % 7 });
  }
  const follows: Array<[string, string]> = [];
  for (let k = 0; k < 450; k++) follows.push([`u${String(k).padStart(3, '0')}`, 'alice']);
  follows.push(['carol', 'alice'], ['dave', 'alice'], ['alice', 'bob']);
  const handles = (n: number): string[] => Array.from({ length: n }, (_, k) => `u${String(k).padStart(3, '0')}`);
  return buildWorld({
    seed: 7,
    users,
    tweets,
    follows,
    lists: [{ id: '1700000000000000001', owner: 'alice', members: ['alice', 'bob', ...handles(43)], followers: handles(30) }],
    // the feed: every alice post, the media tweet, carol's (protected: never served) and u003's reply
    communities: [
      {
        id: '1700000000000000002',
        members: ['alice', 'carol', ...handles(41)],
        tweets: [...Array.from({ length: 45 }, (_, k) => k), FX.carolTweet, FX.mediaTweet, 52],
      },
    ],
    spaces: [{ creator: 'alice', speakers: ['bob'], listeners: handles(3) }],
  });
}

export async function startFixture(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  // endpoint tests fire far more than 20 requests a second; the rate tests set ratePerKey themselves
  return startSimulator({ world: fixtureWorld(), keys: [KEY], ratePerKey: 1_000_000, ...options });
}

/**
 * The spec profile with explicit nulls: the shapes the endpoint, key and fault tests were written
 * for before production became the default (the conformance and profile tests cover both).
 */
export function startSpecFixture(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  return startFixture({ ...options, profile: 'spec', quirks: { explicitNulls: true, ...options.quirks } });
}

export interface Call {
  status: number;
  body: unknown;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  /** Raw body text (overrides body). */
  raw?: string;
  key?: string | null;
  headers?: Record<string, string>;
}

export async function call(sim: RunningSimulator, method: 'GET' | 'POST' | 'DELETE', path: string, options: CallOptions = {}): Promise<Call> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? KEY : options.key;
  if (key !== null) headers.ApiKey = key;
  let body: string | undefined;
  if (options.raw !== undefined || options.body !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    body = options.raw ?? JSON.stringify(options.body);
  }
  const res = await request(`${sim.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.body.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: res.statusCode, body: parsed, text };
}

export const get = (sim: RunningSimulator, path: string, o?: CallOptions): Promise<Call> => call(sim, 'GET', path, o);
export const post = (sim: RunningSimulator, path: string, body: unknown, o?: CallOptions): Promise<Call> => call(sim, 'POST', path, { ...o, body });

/** Walks a paged endpoint to its end; returns every item and the number of pages. */
export async function walk(
  next: (cursor: string | null) => Promise<Call>,
  field: string,
  maxPages = 100,
): Promise<{ items: Array<Record<string, unknown>>; pages: number; cursors: string[] }> {
  const items: Array<Record<string, unknown>> = [];
  const cursors: string[] = [];
  let cursor: string | null = null;
  for (let pages = 1; pages <= maxPages; pages++) {
    const res = await next(cursor);
    if (res.status !== 200) throw new Error(`page ${pages}: ${res.status} ${res.text}`);
    const body = res.body as Record<string, unknown>;
    items.push(...(body[field] as Array<Record<string, unknown>>));
    const c = body.next_cursor as string | null | undefined;
    if (c === null || c === undefined || c === '') return { items, pages, cursors };
    cursors.push(c);
    cursor = c;
  }
  throw new Error('walk did not end');
}

/** Waits until the start of the next wall-clock second (plus a little), so a burst stays in one window. */
export async function alignToSecond(): Promise<void> {
  const wait = 1000 - (Date.now() % 1000) + 5;
  await new Promise((resolve) => setTimeout(resolve, wait));
}
