import { describe, it, expect } from 'vitest';
import { parseQuery, SearchQueryError, type QueryNode } from '../../src/simulator/search/index.ts';
import { stem, wordsOf } from '../../src/simulator/search/text.ts';

const word = (w: string, exact = false): QueryNode => ({ kind: 'word', word: w, exact });
const not = (child: QueryNode): QueryNode => ({ kind: 'not', child });
const and = (...children: QueryNode[]): QueryNode => ({ kind: 'and', children });
const or = (...children: QueryNode[]): QueryNode => ({ kind: 'or', children });

describe('parseQuery: grammar', () => {
  const cases: Array<[string, QueryNode]> = [
    ['cats', word('cats')],
    ['Cats dogs', and(word('cats'), word('dogs'))],
    ['cats OR dogs', or(word('cats'), word('dogs'))],
    ['cats or dogs', and(word('cats'), word('or'), word('dogs'))],
    ['a b OR c', or(and(word('a'), word('b')), word('c'))],
    ['a (b OR c)', and(word('a'), or(word('b'), word('c')))],
    ['(a OR b)(c OR d)', and(or(word('a'), word('b')), or(word('c'), word('d')))],
    ['-cats', not(word('cats'))],
    ['a -(b OR c)', and(word('a'), not(or(word('b'), word('c'))))],
    ['+Cats', word('cats', true)],
    ['"hello world"', { kind: 'phrase', words: ['hello', 'world'] }],
    ['"hello * world"', { kind: 'phrase', words: ['hello', null, 'world'] }],
    ['-"a b"', not({ kind: 'phrase', words: ['a', 'b'] })],
    ['"single"', word('single', true)],
    ['e-mail', { kind: 'phrase', words: ['e', 'mail'] }],
    ['#Bitcoin', { kind: 'hashtag', tag: 'bitcoin' }],
    ['$btc', { kind: 'cashtag', tag: 'BTC' }],
    ['@Alice', { kind: 'mention', handle: 'Alice' }],
    ['from:alice', { kind: 'from', handle: 'alice' }],
    ['to:@bob', { kind: 'to', handle: 'bob' }],
    ['list:123', { kind: 'list', listId: '123' }],
    ['filter:verified', { kind: 'filter', filter: 'verified' }],
    ['filter:blue_verified', { kind: 'filter', filter: 'blue_verified' }],
    ['-filter:replies', not({ kind: 'filter', filter: 'replies' })],
    ['include:nativeretweets', { kind: 'includeNativeRetweets' }],
    ['min_faves:10', { kind: 'minCount', metric: 'faves', min: 10 }],
    ['-min_retweets:5', not({ kind: 'minCount', metric: 'retweets', min: 5 })],
    ['min_replies:0', { kind: 'minCount', metric: 'replies', min: 0 }],
    ['card_name:poll2choice_text_only', { kind: 'card', name: 'poll2choice_text_only' }],
    ['card_name:animated_gif', { kind: 'card', name: 'animated_gif' }],
    ['quoted_tweet_id:1234567890123456789', { kind: 'quotedTweetId', id: '1234567890123456789' }],
    ['quoted_user_id:44', { kind: 'quotedUserId', id: '44' }],
    ['conversation_id:0099', { kind: 'conversationId', id: '99' }],
    ['lang:EN', { kind: 'lang', code: 'en' }],
    ['lang:und', { kind: 'lang', code: 'und' }],
    ['source:Twitter_Web_App', { kind: 'source', client: 'twitter web app' }],
    ['url:my_site.com', { kind: 'url', domain: 'my_site.com' }],
    ['since:2026-01-02', { kind: 'timeBound', side: 'since', ms: Date.UTC(2026, 0, 2) }],
    ['until:2026-02-28', { kind: 'timeBound', side: 'until', ms: Date.UTC(2026, 1, 28) }],
    ['since:2026-01-02_13:04:05_UTC', { kind: 'timeBound', side: 'since', ms: Date.UTC(2026, 0, 2, 13, 4, 5) }],
    ['until:2024-02-29_23:59:59_UTC', { kind: 'timeBound', side: 'until', ms: Date.UTC(2024, 1, 29, 23, 59, 59) }],
    ['since_time:1700000000', { kind: 'timeBound', side: 'since', ms: 1_700_000_000_000 }],
    ['until_time:1700000001', { kind: 'timeBound', side: 'until', ms: 1_700_000_001_000 }],
    ['within_time:2d', { kind: 'withinTime', seconds: 172_800 }],
    ['within_time:3h', { kind: 'withinTime', seconds: 10_800 }],
    ['within_time:15m', { kind: 'withinTime', seconds: 900 }],
    ['within_time:30s', { kind: 'withinTime', seconds: 30 }],
    ['since_id:100', { kind: 'idBound', side: 'since', id: '100' }],
    ['max_id:200', { kind: 'idBound', side: 'max', id: '200' }],
    ['near:"New York"', { kind: 'geo', operator: 'near', value: 'New York' }],
    ['within:15km', { kind: 'geo', operator: 'within', value: '15km' }],
    ['geocode:37.78,-122.39,1km', { kind: 'geo', operator: 'geocode', value: '37.78,-122.39,1km' }],
    ['place:5a110d312052166f', { kind: 'geo', operator: 'place', value: '5a110d312052166f' }],
    ['card_domain:example.com', { kind: 'cardLink', operator: 'card_domain', domain: 'example.com' }],
    ['https://example.com', { kind: 'phrase', words: ['https', 'example', 'com'] }],
  ];
  it.each(cases)('%s', (query, expected) => {
    expect(parseQuery(query)).toEqual(expected);
  });

  it('accepts 23 terms and operators but not 24', () => {
    const terms = Array.from({ length: 23 }, (_, k) => `w${k}`);
    expect(() => parseQuery(terms.join(' '))).not.toThrow();
    expect(() => parseQuery([...terms, 'from:x'].join(' OR '))).toThrow(/24 terms.*at most 23/);
  });
});

describe('parseQuery: rejected queries', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /empty/],
    ['   ', /empty/],
    ['(a OR b', /'\(' at position 0 is never closed/],
    ['a OR b)', /'\)' at position 6 has no matching/],
    ['()', /'\)' at position 1 must follow a term/],
    ['"open phrase', /quote at position 0 is never closed/],
    ['a "b', /quote at position 2/],
    ['OR a', /'OR' at position 0 must follow a term/],
    ['a OR', /'OR' at position 2 must be followed by a term/],
    ['a - b', /'-' at position 2/],
    ['+ b', /'\+' at position 0/],
    ['since:2026-13-45', /since: '2026-13-45' is not a valid date/],
    ['since:2026-02-30', /not a valid date/],
    ['until:2026-1-2', /until: needs YYYY-MM-DD/],
    ['since:2026-01-01_25:00:00_UTC', /not a valid date/],
    ['min_faves:abc', /min_faves: needs a non-negative whole number, got 'abc'/],
    ['min_retweets:-1', /min_retweets: needs a non-negative/],
    ['within_time:5y', /within_time: needs a number followed by d, h, m or s/],
    ['since_id:12a', /since_id: needs a decimal id/],
    ['max_id:', /max_id: needs a value/],
    ['since_time:soon', /since_time: needs unix seconds/],
    ['from:bad-handle', /from: needs a handle/],
    ['filter:sparkles', /filter:sparkles is not a known filter/],
    ['filter:follows', /only in the platform UI/],
    ['near:me', /only in the platform UI/],
    ['card_name:carousel', /not a known card name/],
    ['include:replies', /only include:nativeretweets/],
    ['form:alice', /unknown operator 'form:'/],
    ['lang:english', /lang: needs a language code/],
    ['within:far', /within: needs a radius/],
    ['!!!', /nothing to search for/],
    ['""', /has no words/],
    ['#', /not a valid hashtag/],
  ];
  it.each(cases)('%j', (query, message) => {
    let caught: unknown;
    try {
      parseQuery(query);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SearchQueryError);
    expect((caught as Error).message).toMatch(message);
  });
});

describe('word matching', () => {
  const groups: string[][] = [
    ['like', 'likes', 'liked', 'liking', 'LIKE'],
    ['run', 'runs', 'running'],
    ['box', 'boxes'],
    ['wish', 'wishes', 'wished'],
    ['add', 'adds', 'added', 'adding'],
    ['stop', 'stops', 'stopped', 'stopping'],
    ["alice's", 'alice'],
    ['glass', 'glasses'],
  ];
  it.each(groups)('%s and its forms share one stem', (...forms) => {
    const stems = new Set(forms.map((f) => stem(f.toLowerCase())));
    expect(stems.size).toBe(1);
  });

  it('keeps short words and words ending in us/is, and never adds characters', () => {
    for (const w of ['is', 'us', 'bus', 'gas', 'status', 'this']) expect(stem(w)).toBe(w);
    for (const w of ['running', 'boxes', 'agreed', 'trees', 'hopping']) expect(w.startsWith(stem(w))).toBe(true);
    expect(stem('cats')).not.toBe(stem('cast'));
  });

  it('splits text into lower-cased words, keeping inner apostrophes and emoji', () => {
    expect(wordsOf("Don't STOP #Bitcoin @Alice's 🚀 e-mail, https://t.co/x")).toEqual([
      "don't", 'stop', 'bitcoin', "alice's", '🚀', 'e', 'mail', 'https', 't', 'co', 'x',
    ]);
  });
});
