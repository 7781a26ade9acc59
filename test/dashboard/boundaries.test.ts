/**
 * The dashboard reads only: eslint.config.js keeps src/dashboard from pg, ioredis, bullmq and
 * undici (it reads Postgres through src/store and Redis through src/jobs) and from the API
 * client, the CLI and the simulator. Proved by linting small sources placed there.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });
const IMPORT = '@typescript-eslint/no-restricted-imports';

async function violations(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = x;\n`, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? `fatal: ${m.message}`).filter((id) => id.startsWith('fatal') || id === IMPORT);
}

describe('src/dashboard import boundaries', () => {
  it.each([
    "import x from 'pg';",
    "import x from 'ioredis';",
    "import x from 'bullmq';",
    "import x from 'undici';",
    "import x from '../api-client/index.ts';",
    "import x from '../cli/main.ts';",
    "import x from '../simulator/index.ts';",
  ])('src/dashboard/x.ts: %s is refused', async (code) => {
    expect(await violations('src/dashboard/x.ts', code)).toEqual([IMPORT]);
  });

  it.each(["import x from '../store/dashboard.ts';", "import x from '../jobs/limiter/index.ts';", "import x from 'zod';"])('src/dashboard/x.ts: %s is allowed', async (code) => {
    expect(await violations('src/dashboard/x.ts', code)).toEqual([]);
  });
});
