/**
 * The usage call costs a request of quota like any other: worker starts and `--wait` commands
 * share one quota sync a key per interval (an idle worker asked every 10 minutes for each key,
 * each process on its own), while `harvest quota` always asks.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { useHarness } from '../helpers/harness.ts';

describe('quota syncs', () => {
  const h = useHarness({ ownKey: true });
  const usageCalls = () => h.sim.control.requestLog().filter((r) => r.path === '/v3/key-usage-info').length;

  it('two --wait jobs in a row ask the service for the quota once; harvest quota asks again', { timeout: 30_000 }, async () => {
    const user = h.sim.world.users.find((u) => !u.protected && !u.suspended && !u.deleted)!;
    const before = usageCalls();
    for (let i = 0; i < 2; i++) expect((await runCli(['user', user.username, '--max-tweets', '20', '--wait'], h.env)).code).toBe(0);
    expect(usageCalls() - before).toBe(1);
    expect((await runCli(['quota'], h.env)).code).toBe(0);
    expect(usageCalls() - before).toBe(2);
  });
});
