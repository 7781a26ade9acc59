/**
 * `harvest <command>`: parses and validates arguments, then calls the same functions the worker
 * uses. Bad input prints one line and exits non-zero before anything is enqueued.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { z } from 'zod';
import { describeIssues } from '../api-client/page.ts';
import { isAppError } from '../errors.ts';
import { registerSimulatorCommand } from '../simulator/cli.ts';
import { registerAuditCommand } from './commands/audit.ts';
import { registerDashboardCommand } from './commands/dashboard.ts';
import { registerExportCommand } from './commands/export.ts';
import { registerJobCommands } from './commands/jobs.ts';
import { registerOperateCommands } from './commands/operate.ts';
import { registerNotifyCommand } from './commands/notify.ts';
import { registerRefreshCommand } from './commands/refresh.ts';
import { registerConversationsCommand } from './commands/conversations.ts';
import { registerDemoCommand } from './commands/demo.ts';
import type { CliState } from './context.ts';

/** package.json's version (src/cli and a build's dist/cli sit at the same depth). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/** An unknown command or option, or a missing argument (sysexits.h's EX_USAGE). */
export const USAGE_EXIT_CODE = 64;

export function buildProgram(state: CliState): Command {
  const program = new Command('harvest')
    .description('Collects public data from the social-data API into Postgres')
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // commander gives "(Did you mean --since?)" a line of its own: a refusal is one line.
      outputError: (s, write) => write(s.replace(/\n\(Did you mean (.+)\?\)/, ' (did you mean $1?)')),
    });
  registerJobCommands(program, state);
  registerOperateCommands(program, state);
  registerDemoCommand(program, state);
  registerExportCommand(program, state);
  registerAuditCommand(program, state);
  registerDashboardCommand(program, state);
  registerRefreshCommand(program, state);
  registerNotifyCommand(program, state);
  registerConversationsCommand(program, state);
  registerSimulatorCommand(program);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/**
 * Runs the CLI with the given arguments (without `node` and the script) and environment, and
 * returns the process exit code. Configuration is read from `env` only, so a test passes its own
 * object instead of mutating `process.env`.
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const state: CliState = { exitCode: 0, env };
  const program = buildProgram(state);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander already printed its one-line reason (or the help text). Not 2: `audit` exits 2
      // for a job not complete, and a cron check must tell that from a mistyped command line.
      return error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
    }
    console.error(`harvest: ${oneLine(error)}`);
    return 1;
  }
}

/** The reason an unexpected error gets: one line (a ZodError's message is a JSON list of issues). */
function oneLine(error: unknown): string {
  if (error instanceof z.ZodError) return describeIssues(error);
  const message = error instanceof Error ? error.message : String(error);
  return isAppError(error) ? message : (message.split('\n')[0] ?? '');
}
