/**
 * Recursive descent over the tokens:
 *   query  := or EOF
 *   or     := and ('OR' and)*          (OR binds looser than juxtaposition)
 *   and    := unary+
 *   unary  := term | phrase | '(' or ')'   (each optionally negated by a leading '-')
 */
import type { QueryNode } from './ast.ts';
import { SearchQueryError } from './errors.ts';
import { parseOperatorTerm } from './operators.ts';
import { wordsOf } from './text.ts';
import { tokenize, type Token } from './tokenizer.ts';

/** The service documents "about 22 to 23 operators at most per query". */
export const MAX_QUERY_TERMS = 23;

class Parser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parse(): QueryNode {
    const node = this.#or();
    const rest = this.#tokens[this.#at];
    if (rest !== undefined) {
      throw new SearchQueryError(`unbalanced parentheses: ')' at position ${rest.pos} has no matching '('`, rest.pos);
    }
    return node;
  }

  #or(): QueryNode {
    const children = [this.#and()];
    while (this.#tokens[this.#at]?.type === 'or') {
      this.#at += 1;
      children.push(this.#and());
    }
    return children.length === 1 ? (children[0] as QueryNode) : { kind: 'or', children };
  }

  #and(): QueryNode {
    const children: QueryNode[] = [];
    for (;;) {
      const token = this.#tokens[this.#at];
      if (token === undefined || token.type === 'rparen' || token.type === 'or') break;
      children.push(this.#unary(token));
    }
    if (children.length === 0) {
      const token = this.#tokens[this.#at];
      if (token === undefined) {
        const prev = this.#tokens[this.#at - 1];
        throw new SearchQueryError(
          prev === undefined ? 'the query is empty' : `'${describe(prev)}' at position ${prev.pos} must be followed by a term`,
        );
      }
      throw new SearchQueryError(`'${describe(token)}' at position ${token.pos} must follow a term`, token.pos);
    }
    return children.length === 1 ? (children[0] as QueryNode) : { kind: 'and', children };
  }

  #unary(token: Token): QueryNode {
    this.#at += 1;
    switch (token.type) {
      case 'lparen': {
        const inner = this.#or();
        const close = this.#tokens[this.#at];
        if (close?.type !== 'rparen') {
          throw new SearchQueryError(`unbalanced parentheses: '(' at position ${token.pos} is never closed`, token.pos);
        }
        this.#at += 1;
        return token.negated ? { kind: 'not', child: inner } : inner;
      }
      case 'phrase': {
        const node = phrase(token.text, token.pos);
        return token.negated ? { kind: 'not', child: node } : node;
      }
      case 'term': {
        const node = term(token.text, token.exact, token.pos);
        return token.negated ? { kind: 'not', child: node } : node;
      }
      default:
        throw new SearchQueryError(`unexpected '${describe(token)}' at position ${token.pos}`, token.pos);
    }
  }
}

function describe(token: Token): string {
  switch (token.type) {
    case 'lparen':
      return '(';
    case 'rparen':
      return ')';
    case 'or':
      return 'OR';
    case 'phrase':
      return `"${token.text}"`;
    case 'term':
      return token.text;
  }
}

function phrase(text: string, pos: number): QueryNode {
  const words: (string | null)[] = [];
  for (const chunk of text.split(/\s+/u)) {
    if (chunk === '*') words.push(null);
    else words.push(...wordsOf(chunk));
  }
  if (!words.some((w) => w !== null)) throw new SearchQueryError(`the phrase at position ${pos} has no words`, pos);
  if (words.length === 1 && words[0] !== null) return { kind: 'word', word: words[0] as string, exact: true };
  return { kind: 'phrase', words };
}

function term(text: string, exact: boolean, pos: number): QueryNode {
  if (!exact) {
    const operator = parseOperatorTerm(text, pos);
    if (operator !== null) return operator;
  }
  const words = wordsOf(text);
  if (words.length === 0) throw new SearchQueryError(`'${text}' at position ${pos} has nothing to search for`, pos);
  // "e-mail" or "don't" style terms are searched as the phrase of their parts.
  if (words.length > 1) return { kind: 'phrase', words };
  return { kind: 'word', word: words[0] as string, exact };
}

/** Terms and operators of the query (OR, parentheses and '-' do not count). */
export function countTerms(node: QueryNode): number {
  switch (node.kind) {
    case 'and':
    case 'or':
      return node.children.reduce((sum, child) => sum + countTerms(child), 0);
    case 'not':
      return countTerms(node.child);
    default:
      return 1;
  }
}

/** Parses a query into its AST; throws SearchQueryError with a message meant for people. */
export function parseQuery(query: string): QueryNode {
  if (query.trim() === '') throw new SearchQueryError('the query is empty');
  const node = new Parser(tokenize(query)).parse();
  const terms = countTerms(node);
  if (terms > MAX_QUERY_TERMS) {
    throw new SearchQueryError(`the query has ${terms} terms and operators; at most ${MAX_QUERY_TERMS} are allowed`);
  }
  return node;
}
