/**
 * Tweet ids encode their creation time (spec: ms = (id >> 22) + 1288834974657). The store uses it
 * in SQL (how much of a search range is walked), the jobs to cut time slices as exact id ranges.
 * The simulator keeps its own copy on purpose: it shares nothing with the client but the spec.
 */
export const TWITTER_EPOCH_MS = 1288834974657;
