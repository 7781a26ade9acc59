/**
 * The service simulator: a separate program that plays the social-data service over HTTP for
 * tests, the demo and `harvest simulator`. It shares nothing with the client but the spec.
 */
export { startSimulator } from './server.ts';
export { DEFAULT_FAULTS, DEFAULT_PROFILE, DEFAULT_QUIRKS, PRODUCTION_QUIRKS, SIMULATOR_PROFILES, SPEC_QUIRKS, quirksFor } from './options.ts';
export type {
  Faults,
  Quirks,
  RequestLogEntry,
  RunningSimulator,
  SimulatorControl,
  SimulatorOptions,
  SimulatorProfile,
  SimulatorStats,
} from './options.ts';
export type { NewTweetSpec, World } from './model.ts';
