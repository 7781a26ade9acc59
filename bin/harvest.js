#!/usr/bin/env node
// Entry point for `npx harvest`: runs the TypeScript sources through tsx, so a checkout works
// right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
// A reader that goes away (`harvest status | head`) ends the output, not the command: further
// writes are dropped and the command's own exit code stands (audit's 0/2, say), where an
// unhandled EPIPE printed a stack trace and exited 1. export handles its stream itself.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
  process.stdout.write = () => true;
});
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2), process.env);
