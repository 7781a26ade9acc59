import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainArray } from '../../src/store/db.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('plainArray', () => {
  it('reads back in Postgres exactly as the same values encoded by pg', async () => {
    const columns: Array<{ cast: string; values: Array<string | number | boolean | null> }> = [
      { cast: 'bigint[]', values: ['1900000000000000001', '-5', null, '0', '9223372036854775807'] },
      { cast: 'bigint[]', values: [42, 0, null, -7, 2 ** 53] },
      { cast: 'int[]', values: [1, 2, 3] },
      { cast: 'boolean[]', values: [true, false, null] },
      { cast: 'bigint[]', values: [] },
      { cast: 'text[]', values: ['plain', 'with "quote"', 'back\\slash', '{brace}', 'a,b', 'NULL', '', ' lead ', '123', '-4', 'ünï ✓', 'tab\there', null] },
      { cast: 'text[]', values: ['{"a","b\\"c"}', '{}', null] },
    ];
    for (const { cast, values } of columns) {
      const { rows } = await db.pool.query<{ a: unknown; b: unknown }>(`SELECT $1::${cast}::text AS a, $2::${cast}::text AS b`, [plainArray(values), values]);
      expect(rows[0]!.a).toBe(rows[0]!.b);
    }
  });

  it('quotes what is not a plain integer, so a malformed id fails its cast instead of becoming two elements', async () => {
    expect(plainArray(['1,2', 'x"y', null])).toBe('{"1,2","x\\"y",NULL}');
    await expect(db.pool.query(`SELECT $1::bigint[]`, [plainArray(['1', '2,3'])])).rejects.toMatchObject({ code: '22P02' });
    const { rows } = await db.pool.query<{ n: number }>(`SELECT cardinality($1::text[]) AS n`, [plainArray(['1,2', '{3}'])]);
    expect(rows[0]!.n).toBe(2);
  });
});
