/**
 * The example queries a job's page shows, with the job id written in (docs/sql.md #1-#3 and
 * #15, over the analyst views of migrations/0003): what to paste into psql next. The id is a
 * validated digit string, so writing it into the text is safe.
 */
export interface ExampleSql {
  title: string;
  sql: string;
}

export function exampleSqlFor(jobId: string, kind: string): ExampleSql[] {
  if (!/^\d{1,19}$/.test(jobId)) throw new Error(`not a job id: ${jobId}`);
  const queries: ExampleSql[] = [
    {
      title: 'Its tweets with their authors, newest first (docs/sql.md #1)',
      sql: `SELECT id::text, created_at, author_username, like_count, full_text\nFROM job_tweets_with_authors\nWHERE job_id = ${jobId}\nORDER BY created_at DESC\nLIMIT 50;`,
    },
    {
      title: 'Tweets per day (docs/sql.md #2)',
      sql: `SELECT (day AT TIME ZONE 'UTC')::date AS day, tweets, authors, likes\nFROM job_daily_volume\nWHERE job_id = ${jobId}\nORDER BY day;`,
    },
    {
      title: 'The most active authors (docs/sql.md #3)',
      sql: `SELECT author_id::text, username, followers_count, tweets, likes\nFROM job_top_authors\nWHERE job_id = ${jobId}\nORDER BY tweets DESC, likes DESC\nLIMIT 20;`,
    },
  ];
  if (kind === 'list' || kind === 'community') {
    queries.push({
      title: 'Users it stored, by role',
      sql: `SELECT role, count(*)\nFROM job_users\nWHERE job_id = ${jobId}\nGROUP BY role;`,
    });
  }
  queries.push({
    title: 'What was quarantined, and why (docs/sql.md #15)',
    sql: `SELECT at, endpoint, reason\nFROM quarantine\nWHERE job_id = ${jobId}\nORDER BY id DESC;`,
  });
  return queries;
}
