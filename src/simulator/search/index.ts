/** The simulator's search engine: the query grammar of /v3/search-tweets over a World. */
export type { QueryNode, FilterName, CountMetric, GeoOperator } from './ast.ts';
export { SearchQueryError } from './errors.ts';
export { parseQuery, MAX_QUERY_TERMS } from './parser.ts';
export { bindPlan } from './plan.ts';
export {
  searchTweets,
  compileQuery,
  engagementScore,
  DEFAULT_PAGE_SIZE,
  POPULAR_CAP,
  type SearchOrder,
  type SearchRequest,
  type SearchPage,
} from './search.ts';
