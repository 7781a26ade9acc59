/**
 * A query the engine refuses: empty, unbalanced, too many operators, or an operator with a
 * malformed value. The simulator's HTTP layer answers it with 400 and `{message}`, so the message
 * is written for the person who typed the query.
 */
export class SearchQueryError extends Error {
  /** Character offset in the query where the problem was found, when known. */
  readonly position: number | undefined;

  constructor(message: string, position?: number) {
    super(message);
    this.name = 'SearchQueryError';
    this.position = position;
  }
}
