/**
 * Turning a response body's text into JSON without losing what JSON.parse would lose.
 *
 * The reference types some cursors as int64 (followers, follows, list-members take one back), and
 * a JSON number above 2^53 loses digits in JSON.parse before any schema sees it. So every integer
 * `next_cursor` is quoted in the text first and comes out as the exact decimal string.
 * The pattern is safe on any JSON text: inside a JSON string every `"` is escaped (`\"`), so
 * `{"next_cursor":` or `,"next_cursor":` can only match a real key. A nested `next_cursor` (in an
 * item's unknown fields) is quoted too, which changes nothing but its JSON type.
 */

const INTEGER_CURSOR = /([{,]\s*"next_cursor"\s*:\s*)(-?\d+)(?=\s*[,}])/g;

export function quoteIntegerCursors(text: string): string {
  return text.includes('"next_cursor"') ? text.replace(INTEGER_CURSOR, '$1"$2"') : text;
}

/** Parses a body, naming what is wrong with it when it is not JSON. */
export function parseJsonBody(text: string): { json: unknown } | { reason: string } {
  const trimmed = text.trim();
  if (trimmed.length === 0) return { reason: 'empty body' };
  if (trimmed.startsWith('<')) return { reason: 'HTML page instead of JSON' };
  try {
    return { json: JSON.parse(quoteIntegerCursors(trimmed)) as unknown };
  } catch {
    return { reason: /^[[{]/.test(trimmed) ? 'truncated or malformed JSON' : 'body is not JSON' };
  }
}
