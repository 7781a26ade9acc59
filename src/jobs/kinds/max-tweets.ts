/**
 * --max-tweets, for every kind that takes it: the job ends once it has stored that many (an
 * `audit --repair` of a job it stopped has the runner count only the tweets stored since:
 * jobs.max_tweets_base, so each repair gets another --max-tweets).
 */

export function maxTweetsStop(maxTweets: number | undefined, progress: { tweets: number }): string | null {
  // The count the runner passes was read after the previous page plus this page's new tweets:
  // other slices' pages since then may end the job one page later, never earlier (--max-tweets
  // is approximate by design).
  return maxTweets !== undefined && progress.tweets >= maxTweets ? `stopped at --max-tweets ${maxTweets}` : null;
}

/**
 * --max-tweets ends the whole job, and a watch is a job that runs until cancelled: reached, it
 * stopped the watch for good after its first pass (its watch row left enabled and unrecorded).
 */
export const MAX_TWEETS_WITH_EVERY = '--max-tweets ends the job: it cannot go with --every (a watch runs until cancelled)';
