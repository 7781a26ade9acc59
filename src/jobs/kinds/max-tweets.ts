/** --max-tweets, for every kind that takes it: the job ends once it has stored that many. */

export function maxTweetsStop(maxTweets: number | undefined, progress: { tweets: number }): string | null {
  // The count the runner passes was read after the previous page plus this page's new tweets:
  // other slices' pages since then may end the job one page later, never earlier (--max-tweets
  // is approximate by design).
  return maxTweets !== undefined && progress.tweets >= maxTweets ? `stopped at --max-tweets ${maxTweets}` : null;
}
