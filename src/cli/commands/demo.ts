/** `harvest demo`: the one-command tour on the bundled simulator (see src/cli/demo/run.ts). */
import type { Command } from 'commander';
import { createLogger } from '../../logger.ts';
import { cliRuntime, type CliState } from '../context.ts';
import { DEMO_DEFAULTS } from '../demo/options.ts';
import { runDemo } from '../demo/run.ts';

export function registerDemoCommand(program: Command, state: CliState): void {
  program
    .command('demo')
    .description('the whole main job end to end on the bundled simulator, no key needed (about a minute)')
    .action(async () => {
      const { config } = cliRuntime(state, { quiet: true });
      // The tour's output is the progress lines and tables; log lines (HARVEST_LOG_LEVEL to see them) would interleave.
      const logger = createLogger({ level: config.logLevelSet ? config.logLevel : 'error', name: 'harvest' });
      const result = await runDemo(
        DEMO_DEFAULTS,
        { databaseUrl: config.databaseUrl, redisUrl: config.redisUrl },
        { out: process.stdout, err: process.stderr, logger },
      );
      state.exitCode = result.exitCode;
    });
}
