/**
 * The HTML shell of both pages; assets/dashboard.js fills it from the event stream. Only a
 * validated job id is written into it (digits), so nothing here needs escaping beyond that.
 */
export function pageHtml(input: { page: 'overview' } | { page: 'job'; jobId: string }): string {
  const title = input.page === 'job' ? `harvest · job ${input.jobId}` : 'harvest · dashboard';
  const data = input.page === 'job' ? `data-page="job" data-job="${input.jobId}"` : 'data-page="overview"';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="/assets/uplot.css">
<link rel="stylesheet" href="/assets/dashboard.css">
</head>
<body ${data}>
<header><a href="/" class="brand">harvest</a><span id="live" class="live">connecting…</span><span id="updated"></span></header>
<main id="main"><p class="muted">loading…</p></main>
<script src="/assets/uplot.js"></script>
<script src="/assets/dashboard.js"></script>
</body>
</html>
`;
}
