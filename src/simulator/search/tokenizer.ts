/**
 * Splits a query into tokens: parentheses, the OR keyword, quoted phrases and terms (words and
 * `name:value` operators). A leading `-` negates the next token; a leading `+` marks a word exact.
 * Positions are kept so errors can point at the offending character.
 */
import { SearchQueryError } from './errors.ts';

export type Token =
  | { readonly type: 'lparen'; readonly negated: boolean; readonly pos: number }
  | { readonly type: 'rparen'; readonly pos: number }
  | { readonly type: 'or'; readonly pos: number }
  | { readonly type: 'phrase'; readonly text: string; readonly negated: boolean; readonly pos: number }
  | {
      readonly type: 'term';
      readonly text: string;
      readonly negated: boolean;
      readonly exact: boolean;
      readonly pos: number;
    };

const WHITESPACE = /\s/u;
/** `name:` immediately followed by a quote takes a quoted value, e.g. near:"New York". */
const OPERATOR_PREFIX = /^[A-Za-z_]+:$/u;

function isWhitespace(c: string): boolean {
  return WHITESPACE.test(c);
}

function endsTerm(c: string): boolean {
  return c === '(' || c === ')' || c === '"' || isWhitespace(c);
}

function readQuoted(query: string, open: number): { text: string; end: number } {
  const close = query.indexOf('"', open + 1);
  if (close < 0) throw new SearchQueryError(`unbalanced quote: the quote at position ${open} is never closed`, open);
  return { text: query.slice(open + 1, close), end: close + 1 };
}

export function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  const n = query.length;
  let i = 0;
  while (i < n) {
    const start = i;
    let c = query[i] as string;
    if (isWhitespace(c)) {
      i += 1;
      continue;
    }
    if (c === ')') {
      tokens.push({ type: 'rparen', pos: i });
      i += 1;
      continue;
    }
    let negated = false;
    if (c === '-') {
      negated = true;
      i += 1;
      c = query[i] ?? '';
      if (c === '' || isWhitespace(c) || c === ')' || c === '-') {
        throw new SearchQueryError(`'-' at position ${start} must be directly followed by a term, phrase or group`, start);
      }
    }
    if (c === '(') {
      tokens.push({ type: 'lparen', negated, pos: start });
      i += 1;
      continue;
    }
    if (c === '"') {
      const { text, end } = readQuoted(query, i);
      tokens.push({ type: 'phrase', text, negated, pos: start });
      i = end;
      continue;
    }
    let exact = false;
    if (c === '+') {
      exact = true;
      i += 1;
      const next = query[i] ?? '';
      if (next === '' || endsTerm(next) || next === '+' || next === '-') {
        throw new SearchQueryError(`'+' at position ${start} must be directly followed by a word`, start);
      }
    }
    let text = '';
    while (i < n && !endsTerm(query[i] as string)) {
      text += query[i];
      i += 1;
    }
    if (query[i] === '"' && OPERATOR_PREFIX.test(text)) {
      const quoted = readQuoted(query, i);
      text += quoted.text;
      i = quoted.end;
    }
    if (text === 'OR' && !negated && !exact) tokens.push({ type: 'or', pos: start });
    else tokens.push({ type: 'term', text, negated, exact, pos: start });
  }
  return tokens;
}
