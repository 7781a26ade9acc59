/**
 * Queries keep their meaning when the harvester adds operators to them. The service ANDs terms
 * separated by spaces and AND binds tighter than OR (service-spec.md, "Search operators"), so
 * `coffee OR tea since_id:1 max_id:2` bounds only `tea`: the user's query is always bracketed
 * before bounds are appended. Pure: no I/O; the search kind and the estimator call it before any
 * request, so a query the service would refuse costs nothing.
 */
import { InputError } from '../errors.ts';

/**
 * The service's limit: "about 22 to 23 operators at most per query" (service-spec.md, Limits).
 * Counted as the spec's grammar implies: every term, operator and quoted phrase counts once; `OR`,
 * parentheses and a leading `-` do not. We take the upper figure: a query the service refuses
 * fails the job at its first page with the service's 400, never silently.
 */
export const MAX_QUERY_OPERATORS = 23;

/** Operators that bound a query in time or id; the harvester's own slices add since_id:/max_id:. */
export const TIME_OPERATORS = ['since', 'until', 'since_time', 'until_time', 'within_time', 'since_id', 'max_id'] as const;

type Token = { type: 'lparen' | 'rparen' | 'or' } | { type: 'term'; text: string } | { type: 'phrase'; text: string };

const OPERATOR_PREFIX = /^-?[A-Za-z_]+:$/u;

/** Splits a query into parentheses, OR, phrases and terms; throws InputError on broken nesting or quotes. */
export function tokenizeQuery(query: string): Token[] {
  const tokens: Token[] = [];
  let depth = 0;
  let i = 0;
  const closeQuote = (open: number): number => {
    const close = query.indexOf('"', open + 1);
    if (close < 0) throw new InputError(`the search query has a quote at position ${open + 1} that is never closed`);
    return close + 1;
  };
  while (i < query.length) {
    const c = query.charAt(i);
    if (/\s/u.test(c)) {
      i++;
      continue;
    }
    if (c === ')') {
      if (--depth < 0) throw new InputError(`the search query's ")" at position ${i + 1} closes nothing`);
      tokens.push({ type: 'rparen' });
      i++;
      continue;
    }
    const negated = c === '-';
    const at = negated ? i + 1 : i;
    if (query.charAt(at) === '(') {
      depth++;
      tokens.push({ type: 'lparen' });
      i = at + 1;
      continue;
    }
    if (query.charAt(at) === '"') {
      const end = closeQuote(at);
      tokens.push({ type: 'phrase', text: query.slice(i, end) });
      i = end;
      continue;
    }
    let end = at;
    while (end < query.length && !/[\s()"]/u.test(query.charAt(end))) end++;
    // `near:"New York"`: an operator whose value is a quoted phrase is one operator.
    if (query.charAt(end) === '"' && OPERATOR_PREFIX.test(query.slice(i, end))) end = closeQuote(end);
    const text = query.slice(i, end);
    if (text === '' || text === '-') throw new InputError(`the search query's "-" at position ${i + 1} negates nothing`);
    tokens.push(text === 'OR' ? { type: 'or' } : { type: 'term', text });
    i = end;
  }
  if (depth > 0) throw new InputError(`the search query leaves ${depth} "(" unclosed`);
  return tokens;
}

/** Terms and operators as the service counts them (phrases once; OR, parentheses and '-' not). */
export function countQueryOperators(query: string): number {
  return tokenizeQuery(query).filter((t) => t.type === 'term' || t.type === 'phrase').length;
}

/** The time and id operators a query carries itself (outside quoted phrases), by name. */
export function ownTimeOperators(query: string): string[] {
  const found = new Set<string>();
  for (const t of tokenizeQuery(query)) {
    if (t.type !== 'term') continue;
    const name = /^-?([A-Za-z_]+):/u.exec(t.text)?.[1]?.toLowerCase();
    if (name && (TIME_OPERATORS as readonly string[]).includes(name)) found.add(name);
  }
  return [...found];
}

/** The user's query with operators appended: bracketed, so the operators bound all of it. */
export function withOperators(query: string, operators: string): string {
  return operators === '' ? query : `(${query}) ${operators}`;
}

/**
 * Refuses, with one line, a query the harvester cannot run as meant: broken nesting or quotes,
 * more operators than the service allows once the harvester's own are added, or time/id
 * operators of its own on a job that also bounds time (the two ranges would silently intersect;
 * the user says which range they mean instead).
 */
export function checkSearchQuery(query: string, job: { addedOperators: number; boundsTime: boolean }): void {
  const own = countQueryOperators(query);
  if (own === 0) throw new InputError('the search query has no term to search for');
  const total = own + job.addedOperators;
  if (total > MAX_QUERY_OPERATORS) {
    throw new InputError(
      `the search query has ${own} terms and operators; with the ${job.addedOperators} the harvester adds to bound its time slices that is ${total}, over the service's limit of ${MAX_QUERY_OPERATORS}`,
    );
  }
  if (job.boundsTime) {
    const timeOps = ownTimeOperators(query);
    if (timeOps.length > 0) {
      throw new InputError(
        `the search query has its own ${timeOps.map((o) => `${o}:`).join(', ')} while --since/--until also bound the job: give the range one way (drop the operator, or drop --since/--until)`,
      );
    }
  }
}
