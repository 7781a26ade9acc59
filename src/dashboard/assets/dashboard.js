/*
 * The dashboard's browser code: plain JavaScript served as is (no build step), drawing the JSON
 * that /events streams. Text from the database goes in with textContent only, never innerHTML,
 * so a tweet query or an error message cannot inject markup. Charts are uPlot (served from
 * node_modules at /assets/uplot.js). Only one page of jobs (50 rows) is in the DOM at a time, and
 * charts are updated in place, so a thousand jobs cost what fifty do.
 */
/* global document, window, EventSource, uPlot, history, location, URLSearchParams */
(function () {
  'use strict';

  const main = document.getElementById('main');
  const live = document.getElementById('live');
  const updated = document.getElementById('updated');
  const charts = new Map();
  let source = null;

  // ---- small DOM helpers ----------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k === 'style') node.setAttribute('style', v);
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof window.Node ? c : String(c));
    return node;
  }
  const fmt = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'));
  function duration(seconds) {
    if (seconds === null || seconds === undefined) return '–';
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} m ${s % 60} s`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} m`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  }
  function relative(iso) {
    if (!iso) return '–';
    const d = (Date.parse(iso) - Date.now()) / 1000;
    return d >= 0 ? `in ${duration(d)}` : `${duration(-d)} ago`;
  }
  function stateClass(status, state) {
    if (state.startsWith('running (waiting')) return 'st st-wait';
    if (state.startsWith('stalled')) return 'st st-stalled';
    return `st st-${status}`;
  }
  function progressBar(p) {
    if (p === null || p === undefined) return el('div', { class: 'bar bar-none', title: 'no known end' }, el('span', { text: '–' }));
    const pct = (p * 100).toFixed(1);
    return el('div', { class: 'bar', role: 'progressbar', 'aria-valuenow': pct, title: `${pct}%` }, el('i', { style: `width:${pct}%` }), el('span', { text: `${pct}%` }));
  }
  /**
   * Replaces the page with `root`, keeping what the reader set on the one it replaces: each open
   * <details> (by its summary) and each scroll box's position (by its section). The page is redrawn
   * every second; before, an opened params box snapped shut and a scrolled slice table jumped back
   * to its top within a second.
   */
  function replacePage(root) {
    const open = new Set([...main.querySelectorAll('details[open] > summary')].map((s) => s.textContent));
    const scrolled = new Map([...main.querySelectorAll('.scroll')].map((box) => [scrollKey(box), [box.scrollTop, box.scrollLeft]]));
    main.replaceChildren(root);
    for (const s of main.querySelectorAll('details > summary')) if (open.has(s.textContent)) s.parentElement.open = true;
    for (const box of main.querySelectorAll('.scroll')) {
      const at = scrolled.get(scrollKey(box));
      if (at) [box.scrollTop, box.scrollLeft] = at;
    }
  }
  function scrollKey(box) {
    const owner = box.closest('section');
    return owner ? owner.id : '';
  }
  /** The reader is selecting text on the page (to copy an error, an id): the redraw waits. */
  function selecting() {
    const s = window.getSelection();
    return s !== null && !s.isCollapsed && main.contains(s.anchorNode);
  }
  function section(title, id, ...content) {
    return el('section', { id }, el('h2', { text: title }), ...content);
  }
  function table(head, rows, attrs) {
    return el('table', attrs || {}, el('thead', {}, el('tr', {}, head.map((h) => el('th', { text: h })))), el('tbody', {}, rows));
  }

  // ---- charts (uPlot, kept and updated in place) --------------------------------------------------
  function lineChart(id, container, series, opts) {
    // The page is redrawn on every tick: a chart made before is moved into the new page and given
    // the new data, not built again.
    let chart = charts.get(id);
    const data = [series.map((p) => p[0]), series.map((p) => p[1])];
    if (chart) {
      container.replaceWith(chart.root.parentNode);
      chart.setData(data);
      return;
    }
    const holder = el('div', { class: 'chart' });
    container.replaceWith(holder);
    chart = new uPlot(
      {
        width: opts.width,
        height: opts.height,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(opts.minMax || 1, max)] } },
        axes: [
          { stroke: '#8b93a7', grid: { show: false }, ticks: { show: false }, font: '10px system-ui', space: 60 },
          { stroke: '#8b93a7', grid: { stroke: '#2a3142', width: 1 }, ticks: { show: false }, font: '10px system-ui', size: 34, space: 16 },
        ],
        series: [{}, { stroke: opts.color || '#5ab0ff', fill: opts.fill || 'rgba(90,176,255,0.18)', width: 1.5, paths: opts.bars ? uPlot.paths.bars({ size: [0.8, 40] }) : undefined, points: { show: false } }],
      },
      data,
      holder,
    );
    charts.set(id, chart);
  }

  // ---- overview -----------------------------------------------------------------------------------
  let currentPage = Number(new URLSearchParams(location.search).get('page') || '1') || 1;

  function keyCard(k) {
    const badge = k.disabled ? 'st st-failed' : k.parked ? 'st st-paused_quota' : 'st st-running';
    const card = el(
      'div',
      { class: 'card key', 'data-key': k.fingerprint },
      el('div', { class: 'card-head' }, el('code', { text: k.fingerprint }), el('span', { class: badge, 'data-role': 'key-state', text: k.state })),
      el(
        'dl',
        {},
        el('dt', { text: 'quota left' }), el('dd', { text: k.remaining === null ? 'unknown' : fmt(k.remaining) }),
        el('dt', { text: 'req/s now' }), el('dd', { text: fmt(k.requestsPerSecond) }),
        el('dt', { text: '429s' }), el('dd', { text: fmt(k.rateLimited) }),
        el('dt', { text: 'parked until' }), el('dd', { text: k.parkedUntil ? `${new Date(k.parkedUntil).toISOString().slice(11, 19)} UTC (${relative(k.parkedUntil)})` : '–' }),
      ),
    );
    const slot = el('div');
    card.append(slot);
    return { card, slot };
  }

  function jobRow(j) {
    return el(
      'tr',
      { 'data-job': j.id, 'data-status': j.status },
      el('td', {}, el('a', { href: `/jobs/${j.id}`, text: `#${j.id}` })),
      el('td', { text: j.kind }),
      el('td', { class: 'label', title: j.label, text: j.label }),
      el('td', {}, el('span', { class: stateClass(j.status, j.state), 'data-role': 'state', title: j.note || j.state, text: j.status === 'scheduled' && j.nextDueAt ? `scheduled (next pass ${relative(j.nextDueAt)})` : j.state })),
      el('td', { class: 'progress' }, progressBar(j.progress)),
      el('td', { class: 'num', 'data-role': 'tweets', text: fmt(j.tweets) }),
      el('td', { class: 'num', text: j.maxRequests ? `${fmt(j.requests)} / ${fmt(j.maxRequests)}` : fmt(j.requests) }),
      el('td', { class: 'num', text: fmt(j.requestsPerSecond) }),
      el('td', { class: 'num', text: j.etaSeconds === null ? '–' : duration(j.etaSeconds) }),
    );
  }

  function pager(o) {
    const go = (p) => () => openOverview(p);
    return el(
      'div',
      { class: 'pager' },
      el('button', { type: 'button', 'data-role': 'prev', disabled: o.page <= 1, onclick: go(o.page - 1) }, '‹ newer'),
      el('span', { 'data-role': 'page', text: `page ${o.page} of ${o.pages} · ${fmt(o.total)} jobs` }),
      el('button', { type: 'button', 'data-role': 'next', disabled: o.page >= o.pages, onclick: go(o.page + 1) }, 'older ›'),
    );
  }

  function renderOverview(o) {
    const counts = el(
      'div',
      { class: 'chips' },
      Object.entries(o.byStatus)
        .sort()
        .map(([s, n]) => el('span', { class: `st st-${s}` }, `${s.replace('_', ': ')} ${fmt(n)}`)),
    );
    const keySlots = [];
    const keys = el(
      'div',
      { class: 'cards' },
      o.keys.length === 0
        ? el('p', { class: 'muted', text: 'no API key yet: no worker has synced one' })
        : o.keys.map((k) => {
            const { card, slot } = keyCard(k);
            keySlots.push([k, slot]);
            return card;
          }),
    );
    const jobs = table(['job', 'kind', 'target', 'state', 'progress', 'tweets', 'requests', 'req/s', 'ETA'], o.jobs.map(jobRow), { id: 'jobs-table' });
    const watches = o.watches.length
      ? table(
          ['job', 'kind', 'target', 'state', 'every', 'passes', 'last pass', 'next pass', 'open gaps'],
          o.watches.map((w) =>
            el(
              'tr',
              { 'data-watch': w.jobId },
              el('td', {}, el('a', { href: `/jobs/${w.jobId}`, text: `#${w.jobId}` })),
              el('td', { text: w.kind }),
              el('td', { text: w.target || '' }),
              el('td', {}, el('span', { class: `st st-${w.status}`, text: w.status })),
              el('td', { text: w.everySeconds ? duration(w.everySeconds) : 'once' }),
              el('td', { class: 'num', text: fmt(w.passes) }),
              el('td', { text: relative(w.lastPassFinishedAt) }),
              el('td', { 'data-role': 'next-pass', text: w.nextDueAt ? relative(w.nextDueAt) : '–' }),
              el('td', { class: w.openGaps ? 'num warn' : 'num', text: fmt(w.openGaps) }),
            ),
          ),
          { id: 'watches-table' },
        )
      : el('p', { class: 'muted', text: 'no watches' });
    const failures = o.failures.length
      ? table(
          ['when', 'job', 'slice', 'code', 'reason'],
          o.failures.map((f) =>
            el('tr', {}, el('td', { text: relative(f.at) }), el('td', {}, el('a', { href: `/jobs/${f.jobId}`, text: `#${f.jobId}` })), el('td', { text: f.sliceId || '(job)' }), el('td', {}, el('code', { text: f.errorCode || '' })), el('td', { class: 'reason', text: f.errorMessage || '' })),
          ),
        )
      : el('p', { class: 'muted', text: 'no failures' });
    const quarantine = o.quarantine.items.length
      ? table(
          ['when', 'job', 'endpoint', 'reason'],
          o.quarantine.items.map((q) => el('tr', {}, el('td', { text: relative(q.at) }), el('td', {}, q.jobId ? el('a', { href: `/jobs/${q.jobId}`, text: `#${q.jobId}` }) : '–'), el('td', {}, el('code', { text: q.endpoint })), el('td', { class: 'reason', text: q.reason }))),
        )
      : el('p', { class: 'muted', text: 'nothing quarantined' });

    const root = el(
      'div',
      {},
      counts,
      section('Keys', 'keys', keys),
      section(`Jobs`, 'jobs', pager(o), el('div', { class: 'scroll' }, jobs)),
      el('div', { class: 'two' }, section('Watches', 'watches', watches), el('div', {}, section('Recent failures', 'failures', failures), section(`Quarantined items (${fmt(o.quarantine.total)})`, 'quarantine', quarantine))),
    );
    replacePage(root);
    for (const [k, slot] of keySlots) lineChart(`key:${k.fingerprint}`, slot, k.series, { width: 300, height: 90, minMax: 5 });
  }

  function openOverview(page) {
    currentPage = Math.max(1, page);
    const url = currentPage === 1 ? '/' : `/?page=${currentPage}`;
    if (location.pathname + location.search !== url) history.replaceState(null, '', url);
    connect(`/events?page=${currentPage}`, renderOverview);
  }

  // ---- one job ------------------------------------------------------------------------------------
  const SLICE_COLORS = { done: '#3fb950', running: '#5ab0ff', pending: '#4b5468', failed: '#f85149', cancelled: '#6e7681', stopped: '#d29922' };

  function sliceTimeline(slices) {
    const ranged = slices.filter((s) => s.sinceMs !== null && s.untilMs !== null && s.status !== 'split');
    if (ranged.length === 0) return el('p', { class: 'muted', text: 'this job\'s slices walk without a time range (see the table below)' });
    const lo = Math.min(...ranged.map((s) => s.sinceMs));
    const hi = Math.max(...ranged.map((s) => s.untilMs));
    const span = Math.max(1, hi - lo);
    const pct = (t) => (((t - lo) / span) * 100).toFixed(3);
    const strip = el('div', { class: 'timeline', 'data-role': 'timeline' });
    const order = { pending: 0, cancelled: 1, done: 2, failed: 3, running: 4 };
    for (const s of [...ranged].sort((a, b) => (order[a.status] || 0) - (order[b.status] || 0))) {
      const early = s.status === 'done' && s.endReason && s.endReason !== 'end' && s.endReason !== 'bound';
      const walkedFrom = s.oldestMs !== null ? Math.max(s.sinceMs, Math.min(s.untilMs, s.oldestMs)) : s.status === 'done' && !early ? s.sinceMs : s.untilMs;
      const title = `slice ${s.id}: ${s.status}${s.endReason ? ` (${s.endReason})` : ''}, ${new Date(s.sinceMs).toISOString().slice(0, 16)} → ${new Date(s.untilMs).toISOString().slice(0, 16)}, ${fmt(s.items)} items`;
      // The part not walked (still to go, or left by an early stop), then the walked part.
      const rest = early ? SLICE_COLORS.stopped : s.status === 'failed' ? SLICE_COLORS.failed : SLICE_COLORS.pending;
      if (walkedFrom > s.sinceMs) strip.append(el('i', { title, style: `left:${pct(s.sinceMs)}%;width:${(Number(pct(walkedFrom)) - Number(pct(s.sinceMs))).toFixed(3)}%;background:${rest}` }));
      if (s.untilMs > walkedFrom) strip.append(el('i', { title, style: `left:${pct(walkedFrom)}%;width:${(Number(pct(s.untilMs)) - Number(pct(walkedFrom))).toFixed(3)}%;background:${SLICE_COLORS[s.status] || SLICE_COLORS.done}` }));
    }
    const legend = el('div', { class: 'legend' }, Object.entries({ walked: SLICE_COLORS.done, running: SLICE_COLORS.running, pending: SLICE_COLORS.pending, 'stopped early': SLICE_COLORS.stopped, failed: SLICE_COLORS.failed }).map(([k, c]) => el('span', {}, el('b', { style: `background:${c}` }), k)));
    const axis = el('div', { class: 'axis' }, el('span', { text: new Date(lo).toISOString().slice(0, 16).replace('T', ' ') }), el('span', { text: new Date(hi).toISOString().slice(0, 16).replace('T', ' ') + ' UTC' }));
    return el('div', {}, strip, axis, legend);
  }

  function renderJob(d) {
    if (d === null) {
      main.replaceChildren(el('p', { class: 'muted', text: 'no such job' }));
      return;
    }
    const j = d.job;
    const x = d.extras;
    const headline = el(
      'div',
      { class: 'job-head' },
      el('h1', {}, `#${j.id} `, el('small', { text: `${j.kind} ${j.label}` })),
      el('span', { class: stateClass(j.status, j.state), 'data-role': 'state', text: j.status === 'scheduled' && j.nextDueAt ? `scheduled (next pass ${relative(j.nextDueAt)})` : j.state }),
      progressBar(j.progress),
      el(
        'dl',
        { class: 'facts' },
        el('dt', { text: 'tweets' }), el('dd', { 'data-role': 'tweets', text: fmt(j.tweets) }),
        el('dt', { text: 'requests' }), el('dd', { text: j.maxRequests ? `${fmt(j.requests)} / ${fmt(j.maxRequests)}` : fmt(j.requests) }),
        el('dt', { text: 'req/s' }), el('dd', { text: fmt(j.requestsPerSecond) }),
        el('dt', { text: 'ETA' }), el('dd', { text: j.etaSeconds === null ? '–' : duration(j.etaSeconds) }),
        el('dt', { text: 'slices' }), el('dd', { text: `${j.slices.done} done, ${j.slices.running} running, ${j.slices.pending} pending, ${j.slices.failed} failed` }),
        el('dt', { text: 'open gaps' }), el('dd', { text: fmt(j.gaps) }),
      ),
      j.note ? el('p', { class: 'note', text: j.note }) : null,
      el('details', {}, el('summary', { text: 'params' }), el('pre', { text: JSON.stringify(j.params, null, 2) })),
    );
    const daySlot = el('div');
    const perDay = x.tweetsPerDay.length ? daySlot : el('p', { class: 'muted', text: 'no tweets yet' });
    const SHOWN_SLICES = 200;
    const sliceRows = x.slices.slice(0, SHOWN_SLICES).map((s) =>
      el(
        'tr',
        { 'data-slice': s.id },
        el('td', { text: s.id }),
        el('td', { text: s.kind }),
        el('td', {}, el('span', { class: `st st-${s.status}`, text: s.status })),
        el('td', { text: s.endReason || '' }),
        el('td', { text: s.sinceMs !== null && s.untilMs !== null ? `${new Date(s.sinceMs).toISOString().slice(0, 16)} → ${new Date(s.untilMs).toISOString().slice(0, 16)}` : '' }),
        el('td', { class: 'num', text: fmt(s.pages) }),
        el('td', { class: 'num', text: fmt(s.items) }),
        el('td', { class: 'num', text: fmt(s.requests) }),
        el('td', { class: 'reason', text: s.errorMessage || '' }),
      ),
    );
    const total = x.requestsByStatus.reduce((a, r) => a + r.requests, 0) || 1;
    const byStatus = table(
      ['status', 'requests', ''],
      x.requestsByStatus.map((r) => el('tr', {}, el('td', {}, el('code', { text: r.status === 0 ? 'none' : String(r.status) })), el('td', { class: 'num', text: fmt(r.requests) }), el('td', { class: 'progress' }, el('div', { class: 'bar thin' }, el('i', { style: `width:${((r.requests / total) * 100).toFixed(1)}%;background:${r.status === 200 ? '#3fb950' : r.status === 429 ? '#d29922' : '#f85149'}` }))))),
    );
    const sql = d.sql.map((q) => el('div', { class: 'sql' }, el('h3', { text: q.title }), el('pre', { text: q.sql })));
    replacePage(
      el(
        'div',
        {},
        headline,
        el('div', { class: 'two' }, section('Tweets per day (UTC, by created_at)', 'per-day', perDay), section('Requests by status', 'requests', byStatus)),
        section(
          `Slices over the time range (${fmt(x.slicesTotal)})`,
          'slices',
          sliceTimeline(x.slices),
          el('div', { class: 'scroll short' }, table(['slice', 'kind', 'status', 'end reason', 'range (UTC)', 'pages', 'items', 'requests', 'error'], sliceRows)),
          ...(x.slicesTotal > sliceRows.length ? [el('p', { class: 'muted', text: `showing ${fmt(sliceRows.length)} of ${fmt(x.slicesTotal)} slices: running, pending and failed first` })] : []),
        ),
        section('Example SQL', 'sql', sql),
      ),
    );
    if (x.tweetsPerDay.length) {
      const series = x.tweetsPerDay.map((p) => [Date.parse(`${p.day}T00:00:00Z`) / 1000, p.tweets]);
      lineChart(`days:${j.id}`, daySlot, series, { width: 520, height: 180, bars: true, color: '#5ab0ff', fill: 'rgba(90,176,255,0.6)' });
    }
  }

  // ---- the stream ---------------------------------------------------------------------------------
  function connect(url, render) {
    if (source) source.close();
    source = new EventSource(url);
    source.onopen = () => {
      live.textContent = 'live';
      live.className = 'live on';
    };
    source.onerror = () => {
      live.textContent = 'reconnecting…';
      live.className = 'live off';
    };
    source.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (data && data.error) {
        live.textContent = data.error;
        live.className = 'live off';
        return;
      }
      // A good message after an error: the page is live again (only onopen said so before).
      live.textContent = 'live';
      live.className = 'live on';
      if (selecting()) return;
      render(data);
      updated.textContent = `updated ${new Date(data ? data.at : Date.now()).toISOString().slice(11, 19)} UTC`;
      document.body.dataset.ticks = String(Number(document.body.dataset.ticks || '0') + 1);
    };
  }

  if (document.body.dataset.page === 'job') connect(`/events?job=${document.body.dataset.job}`, renderJob);
  else openOverview(currentPage);
})();
