/**
 * Seeded pseudo-random numbers (sfc32 seeded through splitmix32). Math.random is never used so a
 * seed reproduces the world byte for byte on every platform.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Pareto-like heavy tail in [min, max]: most values near min, a few near max. */
  heavy(min: number, max: number, alpha: number): number;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export function createRng(seed: number): Rng {
  const init = splitmix32(seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError('pick from an empty list');
      return item;
    },
    heavy(min, max, alpha) {
      const u = 1 - next();
      return Math.min(max, Math.floor(min + (Math.pow(u, -1 / alpha) - 1) * Math.max(1, min)));
    },
  };
}

/**
 * Weighted sampling in O(1) through a lookup table of about `resolution` slots, each item
 * getting at least one slot (so rare users still tweet). Used on the hot path: every generated
 * word and author is one draw, 15M draws for the large world.
 */
export function tableSampler(weights: ArrayLike<number>, resolution = 1 << 16): (rng: Rng) => number {
  let total = 0;
  for (let i = 0; i < weights.length; i++) total += weights[i] ?? 0;
  const slots = new Int32Array(weights.length);
  let size = 0;
  for (let i = 0; i < weights.length; i++) {
    slots[i] = Math.max(1, Math.round(((weights[i] ?? 0) / total) * resolution));
    size += slots[i] ?? 0;
  }
  const table = new Int32Array(size);
  let at = 0;
  for (let i = 0; i < weights.length; i++) {
    table.fill(i, at, at + (slots[i] ?? 0));
    at += slots[i] ?? 0;
  }
  return (rng) => table[Math.floor(rng.next() * size)] ?? 0;
}

/**
 * Weighted sampling by binary search over a cumulative table: O(log n) per draw and one
 * Float64Array, which matters when 1M tweets each draw an author among 50k users.
 */
export function weightedSampler(weights: ArrayLike<number>): (rng: Rng) => number {
  const cumulative = new Float64Array(weights.length);
  let total = 0;
  for (let i = 0; i < weights.length; i++) {
    total += weights[i] ?? 0;
    cumulative[i] = total;
  }
  return (rng) => {
    const target = rng.next() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] ?? 0) > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}
