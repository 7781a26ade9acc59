/**
 * Growable storage behind the tweet table. Typed arrays double when full, so appends (test
 * control) are O(1) amortised; variable-length per-row data lives in one shared pool per kind,
 * addressed by count+1 offsets (row i spans [offset[i], offset[i+1])), instead of one small
 * JS array per tweet.
 */

type Column = BigInt64Array | Float64Array | Int32Array | Uint32Array | Uint8Array;

export function grow<T extends Column>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  const Ctor = array.constructor as new (n: number) => T;
  const next = new Ctor(Math.max(needed, array.length * 2, 16));
  (next as unknown as { set(a: T): void }).set(array);
  return next;
}

/** Runs of 32-bit integers per row. Rows are filled in order: add…, then close(row). */
export class IntRuns {
  #off = new Uint32Array(1);
  #pool = new Int32Array(0);
  #len = 0;

  reserveRows(rows: number): void {
    this.#off = grow(this.#off, rows + 1);
  }

  add(value: number): void {
    if (this.#len >= this.#pool.length) this.#pool = grow(this.#pool, this.#len + 1);
    this.#pool[this.#len++] = value;
  }

  /** Adds unless the open row already holds the value (entities are listed once per tweet). */
  addUnique(row: number, value: number): void {
    for (let k = this.#off[row] ?? 0; k < this.#len; k++) if (this.#pool[k] === value) return;
    this.add(value);
  }

  close(row: number): void {
    this.#off[row + 1] = this.#len;
  }

  start(row: number): number {
    return this.#off[row] ?? 0;
  }

  end(row: number): number {
    return this.#off[row + 1] ?? 0;
  }

  at(k: number): number {
    return this.#pool[k] ?? 0;
  }

  /** A view, not a copy: valid until the next add. */
  view(row: number): Int32Array {
    return this.#pool.subarray(this.start(row), this.end(row));
  }
}

const EMPTY: readonly never[] = Object.freeze([]);

/** Runs of shared objects or strings per row; rare (links, media), so a plain array pool. */
export class ObjectRuns<T> {
  #off = new Uint32Array(1);
  readonly #pool: T[] = [];

  reserveRows(rows: number): void {
    this.#off = grow(this.#off, rows + 1);
  }

  append(row: number, values: readonly T[]): void {
    for (const v of values) this.#pool.push(v);
    this.#off[row + 1] = this.#pool.length;
  }

  count(row: number): number {
    return (this.#off[row + 1] ?? 0) - (this.#off[row] ?? 0);
  }

  /** A fresh array (callers may keep it), or a shared frozen empty one. */
  get(row: number): readonly T[] {
    const start = this.#off[row] ?? 0;
    const end = this.#off[row + 1] ?? start;
    return end <= start ? EMPTY : this.#pool.slice(start, end);
  }
}
