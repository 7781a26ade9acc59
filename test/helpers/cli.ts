/** Runs `harvest <argv>` in this process and captures what it printed and its exit code. */
import { vi } from 'vitest';
import { main } from '../../src/cli/main.ts';

export interface CliRun {
  code: number;
  /** console.log lines. */
  out: string;
  /** console.error lines and raw stderr writes (commander's messages), in order. */
  err: string;
}

/** `env` is the whole environment the command sees (default: an empty one); `process.env` is never read or changed. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(`${a.join(' ')}\n`));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  try {
    const code = await main(argv, env);
    return { code, out: out.join('\n'), err: err.join('').trim() };
  } finally {
    log.mockRestore();
    error.mockRestore();
    stderr.mockRestore();
  }
}

/** A write stream that keeps what is written (a command's or the demo's output), and its text. */
export function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  let buf = '';
  const stream = {
    isTTY: false,
    write(chunk: string | Uint8Array) {
      buf += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, text: () => buf };
}
