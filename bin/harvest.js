#!/usr/bin/env node
// Entry point for `npx harvest`: runs the TypeScript sources through tsx, so a checkout works
// right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2), process.env);
