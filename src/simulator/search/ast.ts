/**
 * The parsed query. Operators are parsed into typed nodes (dates to ms, counts to numbers) so a
 * malformed value fails at parse time with a 400, never half-way through a scan.
 */

export const FILTER_NAMES = [
  'media',
  'images',
  'videos',
  'native_video',
  'consumer_video',
  'pro_video',
  'spaces',
  'links',
  'replies',
  'nativeretweets',
  'retweets',
  'quote',
  'news',
  'safe',
  'hashtags',
  'mentions',
  'platformimg',
  'verified',
  'blue_verified',
  'has_engagement',
] as const;

export type FilterName = (typeof FILTER_NAMES)[number];

export type CountMetric = 'faves' | 'retweets' | 'replies';

export type GeoOperator = 'near' | 'within' | 'geocode' | 'place';

export type QueryNode =
  | { readonly kind: 'and'; readonly children: readonly QueryNode[] }
  | { readonly kind: 'or'; readonly children: readonly QueryNode[] }
  | { readonly kind: 'not'; readonly child: QueryNode }
  /** A bare word; `exact` for `+word` (no stemming). */
  | { readonly kind: 'word'; readonly word: string; readonly exact: boolean }
  /** Lower-cased words of a quoted phrase; null stands for `*` (exactly one word). */
  | { readonly kind: 'phrase'; readonly words: readonly (string | null)[] }
  /** Lower-cased, without `#`. */
  | { readonly kind: 'hashtag'; readonly tag: string }
  /** Upper-cased, without `$`. */
  | { readonly kind: 'cashtag'; readonly tag: string }
  | { readonly kind: 'mention'; readonly handle: string }
  | { readonly kind: 'from'; readonly handle: string }
  | { readonly kind: 'to'; readonly handle: string }
  | { readonly kind: 'list'; readonly listId: string }
  | { readonly kind: 'filter'; readonly filter: FilterName }
  | { readonly kind: 'includeNativeRetweets' }
  | { readonly kind: 'minCount'; readonly metric: CountMetric; readonly min: number }
  /** card_name:… value, lower-cased. */
  | { readonly kind: 'card'; readonly name: string }
  | { readonly kind: 'quotedTweetId'; readonly id: string }
  | { readonly kind: 'quotedUserId'; readonly id: string }
  | { readonly kind: 'conversationId'; readonly id: string }
  | { readonly kind: 'lang'; readonly code: string }
  /** Client name with underscores turned back into spaces, lower-cased. */
  | { readonly kind: 'source'; readonly client: string }
  /** Lower-cased, as typed (underscores kept; the matcher also tries them as hyphens). */
  | { readonly kind: 'url'; readonly domain: string }
  /** since/since_time (inclusive lower bound) or until/until_time (exclusive upper bound). */
  | { readonly kind: 'timeBound'; readonly side: 'since' | 'until'; readonly ms: number }
  | { readonly kind: 'withinTime'; readonly seconds: number }
  /** since_id (exclusive lower bound) or max_id (inclusive upper bound); decimal string. */
  | { readonly kind: 'idBound'; readonly side: 'since' | 'max'; readonly id: string }
  | { readonly kind: 'geo'; readonly operator: GeoOperator; readonly value: string }
  | { readonly kind: 'cardLink'; readonly operator: 'card_domain' | 'card_url'; readonly domain: string };

export type QueryNodeKind = QueryNode['kind'];
