import { describe, expect, it } from 'vitest';
import { MIN_SCRUBBED_RUN, prepareSecrets, scrubSecretRuns } from '../src/secret-scrub.ts';

const KEY = 'SECRETKEY-7f3a9c1d2e3';
const scrub = (text: string, secrets: readonly string[] = [KEY]) => scrubSecretRuns(text, prepareSecrets(secrets), '[X]');

describe('scrubSecretRuns', () => {
  it('replaces the whole key, each echo on its own, as an exact scrub did', () => {
    expect(scrub(`key ${KEY} refused`)).toBe('key [X] refused');
    expect(scrub(`${KEY}${KEY}, ${KEY}`)).toBe('[X][X], [X]');
    expect(scrub('nothing here')).toBe('nothing here');
  });

  it('replaces a prefix echo, extended to its longest run', () => {
    expect(scrub('invalid key SECRETKEY-7f... (truncated)')).toBe('invalid key [X]... (truncated)');
  });

  it('replaces a suffix echo', () => {
    expect(scrub('key ending in ...a9c1d2e3 refused')).toBe('key ending in ...[X] refused');
  });

  it('replaces a run from the middle of the key', () => {
    expect(scrub('saw Y-7f3a9c1d here')).toBe('saw [X] here');
  });

  it('replaces both runs of a key masked in the middle, keeping the mask', () => {
    expect(scrub('key SECRETKEY-****a9c1d2e3')).toBe('key [X]****[X]');
  });

  it(`leaves a run shorter than ${MIN_SCRUBBED_RUN} characters`, () => {
    expect(scrub('key ending in ...c1d2e3 and SECRETK')).toBe('key ending in ...c1d2e3 and SECRETK');
    // Seven characters each side of a mask: neither run is long enough.
    expect(scrub('SECRETK****3a9c1d2e')).toBe('SECRETK****[X]');
    expect(scrub('SECRETK****9c1d2e3')).toBe('SECRETK****9c1d2e3');
  });

  it('scrubs runs of two keys, and runs of both that overlap as one', () => {
    const other = 'sk_live_0a1b2c3d4e5f';
    expect(scrub('a=SECRETKEY-7f b=...2c3d4e5f', [KEY, other])).toBe('a=[X] b=...[X]');
    // `SECRETKEY-7f3a` is a run of KEY, `7f3a0a1b2c` one of a key made to overlap it.
    expect(scrub('xSECRETKEY-7f3a0a1b2cx', [KEY, 'zz7f3a0a1b2c'])).toBe('x[X]x');
  });

  it('scrubs a key shorter than the run length only whole', () => {
    expect(scrub('k1 and k12 and k', ['k12'])).toBe('k1 and [X] and k');
  });

  it('drops empty secrets and finds runs at any offset of a key with repeated characters', () => {
    expect(prepareSecrets(['', 'abc']).patterns).toHaveLength(1);
    expect(scrub('anything', [''])).toBe('anything');
    expect(scrub('zzaaaaaaaaaaazz', ['', 'aaaaaaaaab'])).toBe('zz[X]zz');
  });

  it('takes a key with regular-expression characters literally', () => {
    const key = 'a.b*c(d)e[f]g|h\\i^j$k/+?{2}';
    expect(scrub(`got ${key.slice(0, 9)}... and ${key.slice(-10)}`, [key])).toBe('got [X]... and [X]');
    expect(scrub('got aXb*c(d)e and a.b*cXd)e[f]', [key])).toBe('got aXb*c(d)e and a.b*cXd)e[f]');
  });

  it('agrees with a brute-force search on texts cut from pieces of the key', () => {
    // Every start tried with every length: the slow definition of "the longest run from here".
    const reference = (text: string, key: string) => {
      const run = Math.min(MIN_SCRUBBED_RUN, key.length);
      const spans: Array<[number, number]> = [];
      for (let i = 0; i < text.length; i++) {
        let longest = 0;
        while (i + longest < text.length && key.includes(text.slice(i, i + longest + 1))) longest++;
        if (longest >= run) spans.push([i, i + longest]);
      }
      let out = '';
      let at = 0;
      for (let k = 0; k < spans.length; ) {
        const start = spans[k]![0];
        let end = spans[k]![1];
        for (k++; k < spans.length && spans[k]![0] < end; k++) end = Math.max(end, spans[k]![1]);
        out += text.slice(at, start) + '[X]';
        at = end;
      }
      return out + text.slice(at);
    };
    let seed = 42;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const key = round % 3 === 0 ? KEY : Array.from({ length: 1 + next(24) }, () => 'ab9_'[next(4)]).join('');
      let text = '';
      while (text.length < 60) {
        const from = next(key.length);
        text += next(2) === 0 ? key.slice(from, from + 1 + next(key.length)) : ['*', '...', ' ', 'a', 'x9'][next(5)];
      }
      expect(scrub(text, [key]), `${key} in ${text}`).toBe(reference(text, key));
    }
  });
});
