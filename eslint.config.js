// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Who may import what (the one-way arrows of docs/architecture.md, kept by the build):
 * cli → jobs → (api-client, store) → config/errors/logger; the simulator shares nothing with the
 * client but the spec. Each package that talks to the outside has exactly one home.
 */
const PACKAGE_HOME = {
  pg: 'src/store (the only code that talks to Postgres)',
  'pg-copy-streams': 'src/store (the only code that talks to Postgres)',
  undici: 'src/api-client/http.ts (the client\'s one HTTP module)',
  bullmq: 'src/jobs/queue.ts (the only BullMQ wiring)',
  ioredis: 'src/jobs (everything else reaches Redis through src/jobs)',
};

/** One `no-restricted-imports` per area: flat config replaces a rule's options, so areas never overlap. */
function boundary({ name, files, ignores = [], allow = [], folders = [] }) {
  const packages = Object.entries(PACKAGE_HOME)
    .filter(([pkg]) => !allow.includes(pkg))
    .map(([pkg, home]) => ({
      // Package names here hold no regex metacharacters but `.`; subpaths (`pg/lib/…`) count too.
      regex: `^${pkg.replace(/\./g, '\\.')}(/|$)`,
      message: `${name} must not import ${pkg}: it is imported only by ${home}.`,
    }));
  const areas =
    folders.length === 0
      ? []
      : [
          {
            // Relative specifiers only (the code has no path aliases): ./x/ from src, ../x/ from below it.
            regex: `^(\\./|(\\.\\./)+)(${folders.join('|')})/`,
            message: `${name} must not import from src/${folders.join(', src/')}: the arrows point cli → jobs → (api-client, store) → config/errors/logger, and the simulator stands apart.`,
          },
        ];
  return {
    name: `boundaries/${name}`,
    files,
    ignores,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...packages, ...areas] }] },
  };
}

const BOUNDARIES = [
  boundary({ name: 'src/cli', files: ['src/cli/**/*.ts'] }),
  boundary({ name: 'src/jobs/queue.ts', files: ['src/jobs/queue.ts'], allow: ['bullmq', 'ioredis'], folders: ['cli', 'simulator'] }),
  boundary({ name: 'src/jobs', files: ['src/jobs/**/*.ts'], ignores: ['src/jobs/queue.ts'], allow: ['ioredis'], folders: ['cli', 'simulator'] }),
  boundary({ name: 'src/store', files: ['src/store/**/*.ts'], allow: ['pg', 'pg-copy-streams'], folders: ['cli', 'jobs', 'simulator'] }),
  boundary({ name: 'src/api-client/http.ts', files: ['src/api-client/http.ts'], allow: ['undici'], folders: ['cli', 'jobs', 'store', 'simulator'] }),
  boundary({ name: 'src/api-client', files: ['src/api-client/**/*.ts'], ignores: ['src/api-client/http.ts'], folders: ['cli', 'jobs', 'store', 'simulator'] }),
  boundary({ name: 'src/simulator', files: ['src/simulator/**/*.ts'], folders: ['cli', 'jobs', 'store', 'api-client'] }),
  // The dashboard only reads: Postgres through src/store functions, Redis through src/jobs, and it
  // never calls the service (so not src/api-client); the CLI starts it, not the other way round.
  boundary({ name: 'src/dashboard', files: ['src/dashboard/**/*.ts'], folders: ['cli', 'simulator', 'api-client'] }),
  boundary({ name: 'src (config, errors, logger…)', files: ['src/*.ts'], folders: ['cli', 'jobs', 'store', 'api-client', 'simulator'] }),
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', performance: 'readonly', structuredClone: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The CLI is the one place that talks to a person's terminal; benches print tables.
    files: ['src/cli/**', 'bench/**', 'bin/**'],
    rules: { 'no-console': 'off' },
  },
  ...BOUNDARIES,
  {
    // src/config.ts validates the environment once; everything else gets a Config (or an env object).
    name: 'boundaries/process.env',
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'src/config.ts is the only reader of the environment: take a Config, or an env object passed in.' },
      ],
    },
  },
);
