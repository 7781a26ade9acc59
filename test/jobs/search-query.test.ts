import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.ts';
import { checkSearchJob, sliceQuery } from '../../src/jobs/kinds/search.ts';
import {
  checkSearchQuery, countQueryOperators, MAX_QUERY_OPERATORS, ownTimeOperators, withOperators,
} from '../../src/jobs/search-query.ts';

const refusal = (fn: () => void): { code?: string; message: string } => {
  try {
    fn();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a refusal');
};

describe('queries keep their meaning when the harvester bounds them', () => {
  it('brackets a top-level OR, so the bounds apply to every alternative', () => {
    expect(withOperators('coffee OR tea', 'since_id:1 max_id:2')).toBe('(coffee OR tea) since_id:1 max_id:2');
    expect(sliceQuery({ query: 'coffee OR tea', order: 'latest', sinceMs: Date.UTC(2026, 9, 1), untilMs: Date.UTC(2026, 9, 2) })).toMatch(
      /^\(coffee OR tea\) since_id:\d+ max_id:\d+$/,
    );
  });

  it('brackets nested parentheses, negation, quoted phrases and from:a OR from:b whole', () => {
    for (const q of ['(a OR b) (c OR (d -e))', '-filter:replies coffee', '"tea OR coffee" lang:en', 'from:alice OR from:bob']) {
      expect(withOperators(q, 'max_id:9')).toBe(`(${q}) max_id:9`);
    }
  });

  it('adds nothing when there is nothing to add', () => {
    expect(withOperators('conversation_id:123', '')).toBe('conversation_id:123');
    expect(sliceQuery({ query: 'conversation_id:123', order: 'latest' })).toBe('conversation_id:123');
  });

  it('counts terms and operators as the service does: OR, parentheses and "-" are free, a phrase is one', () => {
    expect(countQueryOperators('coffee OR tea')).toBe(2);
    expect(countQueryOperators('(a OR b) (c OR (d -e))')).toBe(5);
    expect(countQueryOperators('"tea OR coffee and more" lang:en')).toBe(2);
    expect(countQueryOperators('from:alice OR from:bob')).toBe(2);
    expect(countQueryOperators('near:"New York" -"x y"')).toBe(2);
  });

  it('refuses a query that the added operators push over the limit, before any request', () => {
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' OR ');
    expect(() => checkSearchQuery(terms(MAX_QUERY_OPERATORS - 2), { addedOperators: 2, boundsTime: true })).not.toThrow();
    const error = refusal(() => checkSearchQuery(terms(MAX_QUERY_OPERATORS - 1), { addedOperators: 2, boundsTime: true }));
    expect(error.code).toBe(ErrorCode.INPUT_INVALID);
    expect(error.message).not.toContain('\n');
    expect(error.message).toMatch(/22 terms and operators; with the 2 the harvester adds .* 24, over the service's limit of 23/);
    // a search without --since adds only max_id:
    expect(() => checkSearchJob({ query: terms(MAX_QUERY_OPERATORS - 1) })).not.toThrow();
    expect(() => checkSearchJob({ query: terms(MAX_QUERY_OPERATORS - 1), since: '2026-10-01' })).toThrow(/over the service's limit/);
  });

  it('refuses its own time or id operators on a job that also bounds time, naming them', () => {
    for (const op of ['since:2026-10-01', 'until:2026-10-02', 'since_time:1790000000', 'until_time:1790000000', 'since_id:5', 'max_id:5']) {
      const error = refusal(() => checkSearchJob({ query: `coffee OR (tea ${op})`, since: '2026-09-01' }));
      expect(error.code).toBe(ErrorCode.INPUT_INVALID);
      expect(error.message).toContain(`${op.split(':')[0]}:`);
      expect(error.message).toMatch(/--since\/--until/);
    }
    // without --since/--until the user's own bounds are the range: allowed (the slice's max_id: is now)
    expect(() => checkSearchJob({ query: 'coffee since:2026-10-01' })).not.toThrow();
    // a time operator inside a quoted phrase is text, not an operator
    expect(ownTimeOperators('"since:2026 was good" coffee')).toEqual([]);
    expect(() => checkSearchJob({ query: '"since:2026 was good"', until: '2026-10-01' })).not.toThrow();
  });

  it('refuses broken nesting and quotes with one line', () => {
    expect(refusal(() => checkSearchJob({ query: '(coffee OR tea' })).message).toMatch(/unclosed/);
    expect(refusal(() => checkSearchJob({ query: 'coffee) OR tea' })).message).toMatch(/closes nothing/);
    expect(refusal(() => checkSearchJob({ query: '"coffee OR tea' })).message).toMatch(/never closed/);
  });
});
