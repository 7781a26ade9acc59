/**
 * Injected faults and the random source they draw from. Faults are off by default; a seeded
 * generator keeps a run with a fixed seed repeatable when requests arrive in the same order.
 */
import { DEFAULT_FAULTS, type Faults } from './options.ts';

/** mulberry32: tiny, fast, good enough to decide faults. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FaultState {
  #faults: Faults;
  readonly #random: () => number;

  constructor(initial: Partial<Faults> | undefined, random: () => number) {
    this.#faults = { ...DEFAULT_FAULTS, ...validFaults(initial ?? {}) };
    this.#random = random;
  }

  get current(): Faults {
    return { ...this.#faults };
  }

  set(partial: Partial<Faults>): void {
    this.#faults = { ...this.#faults, ...validFaults(partial) };
  }

  #roll(rate: number): boolean {
    return rate > 0 && this.#random() < rate;
  }

  /** Inside a 429 burst: windows of durationMs at the start of every everyMs period of epoch time. */
  inBurst429(nowMs: number): boolean {
    const burst = this.#faults.burst429;
    if (!burst || burst.everyMs <= 0 || burst.durationMs <= 0) return false;
    return nowMs % burst.everyMs < burst.durationMs;
  }

  error500(): boolean {
    return this.#roll(this.#faults.errorRate500);
  }

  emptyPage(): boolean {
    return this.#roll(this.#faults.emptyPageRate);
  }

  emptyEnd(): boolean {
    return this.#roll(this.#faults.emptyEndRate);
  }

  /** True when the page after `pagesServed` pages should hand back the cursor it received. */
  repeatCursor(pagesServed: number): boolean {
    const n = this.#faults.repeatCursorAfterPages;
    return n !== null && pagesServed >= n;
  }

  /** Extra delay for this response. */
  slowDelay(): number {
    return this.#roll(this.#faults.slowRate) ? this.#faults.slowMs : 0;
  }

  random(): number {
    return this.#random();
  }
}

function clampRate(v: number): number {
  return Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
}

function validFaults(partial: Partial<Faults>): Partial<Faults> {
  const out: Partial<Faults> = { ...partial };
  if (out.errorRate500 !== undefined) out.errorRate500 = clampRate(out.errorRate500);
  if (out.emptyPageRate !== undefined) out.emptyPageRate = clampRate(out.emptyPageRate);
  if (out.emptyEndRate !== undefined) out.emptyEndRate = clampRate(out.emptyEndRate);
  if (out.slowRate !== undefined) out.slowRate = clampRate(out.slowRate);
  return out;
}
