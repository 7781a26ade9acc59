/** `harvest notify test`: sends one event to every HARVEST_NOTIFY_URL now and says how each answered. */
import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import { sendTestEvent } from '../../jobs/notify.ts';
import { cliRuntime, type CliState } from '../context.ts';

export function registerNotifyCommand(program: Command, state: CliState): void {
  const notify = program.command('notify').description('notification webhooks (HARVEST_NOTIFY_URL)');
  notify
    .command('test')
    .description('send one test event to every HARVEST_NOTIFY_URL; exit 1 when one does not answer 2xx')
    .action(async () => {
      const { config } = cliRuntime(state, { quiet: true });
      if (config.notifyUrls.length === 0) throw new ConfigError('HARVEST_NOTIFY_URL is not set: give one or more webhook URLs, comma separated');
      for (const r of await sendTestEvent(config.notifyUrls)) {
        // Webhooks are named by fingerprint: their URLs carry secrets.
        console.log(`${r.target}  ${r.error === null ? `delivered (HTTP ${r.status})` : `failed: ${r.error}`}`);
        if (r.error !== null) state.exitCode = 1;
      }
    });
  notify.exitOverride();
}
