/**
 * The import rules in eslint.config.js, proved by linting small sources as if they sat at the
 * paths that matter: each forbidden import is reported, each allowed one is not.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('..', import.meta.url).pathname });

/** Rule ids reported for `code` placed at `filePath` (only the boundary rules). */
async function violations(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = x;\n`, { filePath });
  return (result?.messages ?? [])
    .map((m) => m.ruleId ?? `fatal: ${m.message}`)
    .filter((id) => id.startsWith('fatal') || id === '@typescript-eslint/no-restricted-imports' || id === 'no-restricted-properties');
}

const IMPORT = '@typescript-eslint/no-restricted-imports';

describe('import boundaries the build enforces', () => {
  it.each([
    ['src/cli/commands/x.ts', "import x from 'ioredis';"],
    ['src/cli/commands/x.ts', "import x from 'bullmq';"],
    ['src/cli/x.ts', "import x from 'pg-copy-streams';"],
    ['src/jobs/kinds/x.ts', "import x from 'bullmq';"],
    ['src/jobs/x.ts', "import x from 'pg';"],
    ['src/jobs/x.ts', "import x from 'undici';"],
    ['src/api-client/client.ts', "import x from 'undici';"],
    ['src/api-client/x.ts', "import x from '../jobs/queue.ts';"],
    ['src/api-client/schemas/x.ts', "import x from '../../store/db.ts';"],
    ['src/api-client/x.ts', "import type x from 'bullmq';"],
    ['src/store/x.ts', "import x from '../jobs/queue.ts';"],
    ['src/store/x.ts', "import x from 'undici';"],
    ['src/simulator/x.ts', "import x from '../api-client/index.ts';"],
    ['src/simulator/world/x.ts', "import x from '../../store/db.ts';"],
    ['src/simulator/x.ts', "import x from '../jobs/queue.ts';"],
    ['src/config.ts', "import x from './jobs/queue.ts';"],
    ['src/logger.ts', "import x from 'pg/lib/client.js';"],
  ])('%s: %s is refused', async (file, code) => {
    expect(await violations(file, code)).toEqual([IMPORT]);
  });

  it.each([
    ['src/store/db.ts', "import x from 'pg';"],
    ['src/store/export.ts', "import x from 'pg-copy-streams';"],
    ['src/api-client/http.ts', "import x from 'undici';"],
    ['src/jobs/queue.ts', "import x from 'bullmq';"],
    ['src/jobs/limiter/x.ts', "import x from 'ioredis';"],
    ['src/cli/commands/x.ts', "import x from '../../jobs/redis-keys.ts';"],
    ['src/cli/commands/x.ts', "import x from '../../store/db.ts';"],
    ['src/jobs/x.ts', "import x from '../api-client/index.ts';"],
    ['src/store/x.ts', "import x from '../api-client/canonical.ts';"],
    ['src/simulator/world/x.ts', "import x from '../../errors.ts';"],
  ])('%s: %s is allowed', async (file, code) => {
    expect(await violations(file, code)).toEqual([]);
  });

  it('only src/config.ts reads process.env', async () => {
    const code = 'const x = process.env.DATABASE_URL;';
    expect(await violations('src/store/db.ts', code)).toEqual(['no-restricted-properties']);
    expect(await violations('src/cli/main.ts', code)).toEqual(['no-restricted-properties']);
    expect(await violations('src/config.ts', code)).toEqual([]);
  });
});
