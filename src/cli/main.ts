/**
 * `harvest <command>`: parses and validates arguments, then calls the same functions the worker
 * uses. Bad input prints one line and exits non-zero before anything is enqueued.
 */
import { Command, CommanderError } from 'commander';
import { isAppError } from '../errors.ts';

export function buildProgram(): Command {
  const program = new Command('harvest')
    .description('Collects public data from the social-data API into Postgres')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  return program;
}

/** Runs the CLI and returns the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander already printed its one-line reason (or the help text)
      return error.exitCode === 0 ? 0 : 2;
    }
    if (isAppError(error)) {
      console.error(`harvest: ${error.message}`);
      return 1;
    }
    console.error(`harvest: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
