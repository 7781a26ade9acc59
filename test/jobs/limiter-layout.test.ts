/**
 * The limiter's key layout: every name one acquire script touches hashes to one Redis Cluster
 * slot (Redis hashes the text inside the first `{…}` of a name), while the per-key state stays
 * shared across deployment prefixes and the deployment's own keys stay under its prefix.
 */
import { describe, expect, it } from 'vitest';
import { limiterLayout } from '../../src/jobs/limiter/key-layout.ts';

/** Redis Cluster's rule: the hash tag is what lies between the first `{` and the next `}`, if non-empty. */
function hashTag(name: string): string {
  const open = name.indexOf('{');
  const close = open === -1 ? -1 : name.indexOf('}', open + 1);
  return close > open + 1 ? name.slice(open + 1, close) : name;
}

describe('limiter key layout', () => {
  it('puts the key state of every key, the budget, the epoch and the watch waiters under one hash tag', () => {
    const layout = limiterLayout('harvest:limiter', 'harvest-limiter:0123456789ab');
    const names = [
      layout.watchWaiting,
      layout.epoch,
      layout.budget('42'),
      ...['fpA', 'fpB', 'fpC'].flatMap((fp) => [layout.key(fp).state, layout.key(fp).quota]),
    ];
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(names.map(hashTag))).toEqual(new Set(['harvest-limiter:0123456789ab']));
    // The deployment's keys stay under its prefix, so deleting a prefix still removes them.
    for (const name of [layout.watchWaiting, layout.epoch, layout.budget('42')]) expect(name.startsWith('harvest:limiter:')).toBe(true);
  });

  it('gives two deployment prefixes the same per-key state and different budgets', () => {
    const a = limiterLayout('one:limiter', 'ns');
    const b = limiterLayout('two:limiter', 'ns');
    expect(a.key('fp')).toEqual(b.key('fp'));
    expect(a.budget('7')).not.toBe(b.budget('7'));
    expect(a.epoch).not.toBe(b.epoch);
    expect(hashTag(a.budget('7'))).toBe(hashTag(b.key('fp').state));
  });

  it('refuses braces in the prefix or namespace (they would become the hash tag)', () => {
    expect(() => limiterLayout('{harvest}:limiter', 'ns')).toThrow(/braces/);
    expect(() => limiterLayout('harvest:limiter', '{ns}')).toThrow(/braces/);
  });
});
