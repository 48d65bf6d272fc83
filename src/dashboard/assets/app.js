// The tidepool dashboard page: listens to /api/events (server-sent events: one `hello` with the
// timeline so far, then one `snapshot` per monitor tick) and renders header stats, the nodes and
// jobs tables and three uPlot charts. Plain browser module, no build step. Every string that comes
// from the data is written with textContent (or as an attribute), never parsed as HTML.
// The kinds' views over time (vega-lite) are in kind-views.js.

import { addKindSnapshot, chartsReady, renderJobNodes, renderKindViews, resetKindHistory } from './kind-views.js';

/** Client-side history: this much time, and never more than this many points. */
const HISTORY_MS = 10 * 60 * 1000;
const HISTORY_MAX_POINTS = 6000;
/** Reconnect delays after the event stream closes for good (EventSource retries by itself otherwise). */
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;
const CHART_HEIGHT = 210;
const PALETTE = ['#0e7c86', '#d9480f', '#5f3dc4', '#2b8a3e', '#c2255c', '#1864ab', '#e67700', '#495057'];

const $ = (id) => document.getElementById(id);
const fmtInt = new Intl.NumberFormat('en');
const fmtCompact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 2 });

function fmtRate(x) {
  if (!Number.isFinite(x)) return '–';
  if (x === 0) return '0';
  if (x < 10) return x.toFixed(1);
  return fmtInt.format(Math.round(x));
}

function fmtNumber(x) {
  if (!Number.isFinite(x)) return String(x);
  return Number.isInteger(x) ? fmtInt.format(x) : String(Number(x.toPrecision(6)));
}

function fmtDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  const s = Math.floor(ms / 1000);
  if (s < 60) return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} m`;
}

function fmtClock(ms) {
  return new Date(ms).toLocaleTimeString([], { hour12: false });
}

/** A task module (file URL or path) shown by its file name. */
function shortTask(task) {
  const s = String(task ?? '');
  const path = s.split(/[?#]/)[0];
  return path.slice(path.lastIndexOf('/') + 1) || s;
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Sets textContent only when it changed (keeps selection and avoids needless layout). */
function setText(node, text) {
  const t = String(text);
  if (node.textContent !== t) node.textContent = t;
}

// ---------------------------------------------------------------------------------------------
// State

const state = {
  /** Timeline points, oldest first. */
  history: [],
  intervalMs: 1000,
  /** The last snapshot received. */
  snapshot: null,
  connected: false,
  lastMessageAt: 0,
};

function resetHistory(points) {
  state.history = [...points].sort((a, b) => a.t - b.t);
  trimHistory();
}

function pushPoint(point) {
  const last = state.history.at(-1);
  if (last && point.t <= last.t) return;
  state.history.push(point);
  trimHistory();
}

function trimHistory() {
  const h = state.history;
  const last = h.at(-1);
  if (!last) return;
  let drop = Math.max(0, h.length - HISTORY_MAX_POINTS);
  while (drop < h.length && h[drop].t < last.t - HISTORY_MS) drop++;
  if (drop > 0) h.splice(0, drop);
}

// ---------------------------------------------------------------------------------------------
// Connection

let source = null;
let reconnectTimer = 0;
let reconnectDelay = RECONNECT_MIN_MS;
let watchdogTimer = 0;

function setConnected(connected, text) {
  state.connected = connected;
  const status = $('status');
  status.dataset.connected = String(connected);
  document.body.dataset.connected = String(connected);
  setText($('status-text'), text ?? (connected ? 'live' : 'disconnected'));
}

function connect() {
  clearTimeout(reconnectTimer);
  if (source) source.close();
  setConnected(false, state.snapshot ? 'reconnecting…' : 'connecting…');
  const es = new EventSource('/api/events');
  source = es;
  es.addEventListener('hello', (ev) => {
    const hello = parseEvent(ev);
    if (!hello) return;
    state.intervalMs = Number(hello.intervalMs) > 0 ? Number(hello.intervalMs) : 1000;
    resetHistory(Array.isArray(hello.history) ? hello.history : []);
    resetKindHistory(hello);
    if (hello.snapshot) {
      if (hello.snapshot.point) pushPoint(hello.snapshot.point);
      received(hello.snapshot);
    }
  });
  es.addEventListener('snapshot', (ev) => {
    const snapshot = parseEvent(ev);
    if (!snapshot) return;
    if (snapshot.point) pushPoint(snapshot.point);
    received(snapshot);
  });
  es.addEventListener('open', () => {
    reconnectDelay = RECONNECT_MIN_MS;
  });
  es.addEventListener('error', () => {
    if (source !== es) return;
    // CONNECTING: the browser retries by itself. CLOSED: it gave up (e.g. an HTTP error); retry here.
    setConnected(false, 'reconnecting…');
    if (es.readyState === EventSource.CLOSED) scheduleReconnect();
  });
}

function scheduleReconnect() {
  if (source) source.close();
  source = null;
  clearTimeout(reconnectTimer);
  reconnectTimer = setTimeout(connect, reconnectDelay);
  reconnectDelay = Math.min(reconnectDelay * 2, RECONNECT_MAX_MS);
}

function parseEvent(ev) {
  try {
    return JSON.parse(ev.data);
  } catch {
    return null;
  }
}

function received(snapshot) {
  addKindSnapshot(snapshot);
  state.snapshot = snapshot;
  state.lastMessageAt = Date.now();
  reconnectDelay = RECONNECT_MIN_MS;
  setConnected(true, 'live');
  armWatchdog();
  render(snapshot);
}

/** No snapshot for several ticks although the stream looks open: the server is gone or stuck; reconnect. */
function armWatchdog() {
  clearTimeout(watchdogTimer);
  const patience = Math.max(5000, state.intervalMs * 5);
  watchdogTimer = setTimeout(() => {
    setConnected(false, 'stale: reconnecting…');
    scheduleReconnect();
  }, patience);
}

// ---------------------------------------------------------------------------------------------
// Rendering: header, tables

function render(snapshot) {
  const nodes = Array.isArray(snapshot.nodes) ? snapshot.nodes : [];
  const jobs = Array.isArray(snapshot.jobs) ? snapshot.jobs : [];
  const point = snapshot.point ?? {};

  setText($('cluster-size'), nodes.length);
  setText($('active-nodes'), nodes.filter((n) => n.job).length);
  const busy = nodes.reduce((a, n) => a + (Number(n.busy) || 0), 0);
  const workers = nodes.reduce((a, n) => a + (Number(n.workers) || 0), 0);
  setText($('busy-workers'), `${busy} / ${workers}`);
  setText($('tasks-per-sec'), fmtRate(Number(point.tasksPerSec ?? nodes.reduce((a, n) => a + (Number(n.tasksPerSec) || 0), 0))));
  setText($('running-jobs'), jobs.filter((j) => j.state === 'running').length);

  renderNodes(nodes);
  renderKinds(nodes);
  renderJobs(jobs, Number(snapshot.at) || Date.now());
  updateCharts();
  renderKindViews($('kind-views'), snapshot);
  renderJobNodes($('chart-jobnodes'), state.history);

  setText($('updated'), `updated ${fmtClock(Number(snapshot.at) || Date.now())} · tick ${fmtInt.format(state.intervalMs)} ms · ${fmtInt.format(state.history.length)} points of history`);
}

/**
 * Keyed reconciliation of a tbody: one row per item, created by `create`, refreshed by `update`,
 * removed when its item is gone, in the order of `items`. Rows are only moved when out of place,
 * so the highlight animation of a new row is not restarted.
 */
function reconcile(tbody, items, keyAttr, keyOf, create, update) {
  const existing = new Map();
  for (const row of tbody.rows) existing.set(row.getAttribute(keyAttr), row);
  const seen = new Set();
  items.forEach((item, i) => {
    const key = String(keyOf(item));
    seen.add(key);
    let row = existing.get(key);
    if (!row) {
      row = create(item);
      row.setAttribute(keyAttr, key);
      row.classList.add('fresh');
      row.addEventListener('animationend', () => row.classList.remove('fresh'), { once: true });
    }
    update(row, item);
    const at = tbody.rows[i];
    if (at !== row) tbody.insertBefore(row, at ?? null);
  });
  for (const [key, row] of existing) if (!seen.has(key)) row.remove();
}

function cells(row, n) {
  for (let i = 0; i < n; i++) row.appendChild(el('td'));
  return row.cells;
}

function createNodeRow() {
  const row = el('tr');
  const c = cells(row, 9);
  c[0].className = 'mono';
  c[1].className = 'mono dim';
  c[2].className = 'mono';
  const bar = el('div', 'bar');
  bar.appendChild(el('span', 'fill'));
  const wrap = el('div', 'busy-cell');
  wrap.append(bar, el('span', 'bar-label'));
  c[3].appendChild(wrap);
  c[3].className = 'busy';
  for (let i = 4; i < 9; i++) c[i].className = 'num';
  return row;
}

function updateNodeRow(row, n) {
  const c = row.cells;
  setText(c[0], n.id);
  setText(c[1], n.address ?? '');
  setText(c[2], n.job ?? 'idle');
  c[2].classList.toggle('dim', !n.job);
  const workers = Number(n.workers) || 0;
  const busy = Number(n.busy) || 0;
  const frac = workers > 0 ? Math.min(1, busy / workers) : 0;
  c[3].querySelector('.fill').style.width = `${(frac * 100).toFixed(1)}%`;
  c[3].dataset.busy = busy > 0 ? 'true' : 'false';
  setText(c[3].querySelector('.bar-label'), `${busy}/${workers}`);
  row.dataset.busy = busy > 0 ? 'true' : 'false';
  setText(c[4], fmtInt.format(Number(n.queued) || 0));
  setText(c[5], fmtRate(Number(n.tasksPerSec) || 0));
  setText(c[6], fmtInt.format(Number(n.tasksDone) || 0));
  setText(c[7], `${fmtInt.format(Number(n.stealsIn) || 0)} / ${fmtInt.format(Number(n.stealsOut) || 0)}`);
  setText(c[8], `${fmtInt.format(Number(n.migrationsIn) || 0)} / ${fmtInt.format(Number(n.migrationsOut) || 0)}`);
}

function renderNodes(nodes) {
  const sorted = [...nodes].sort((a, b) => (a.firstSeen - b.firstSeen) || String(a.id).localeCompare(String(b.id)));
  reconcile($('nodes').tBodies[0], sorted, 'data-node-id', (n) => n.id, createNodeRow, updateNodeRow);
  $('nodes-empty').hidden = nodes.length > 0;
  setText($('nodes-count'), nodes.length > 0 ? String(nodes.length) : '');
}

/**
 * One table per job kind in use: a row per node, a column per figure the kind publishes. Generic on
 * purpose — a layer that publishes new figures appears here without any change to the page.
 */
function renderKinds(nodes) {
  const byKind = new Map();
  for (const n of nodes) {
    if (!n.kind) continue;
    if (!byKind.has(n.kind)) byKind.set(n.kind, []);
    byKind.get(n.kind).push(n);
  }
  const host = $('kinds');
  const key = JSON.stringify([...byKind].map(([k, ns]) => [k, ns.map((n) => [n.id, n.figures])]));
  $('kinds-empty').hidden = byKind.size > 0;
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  host.replaceChildren(...[...byKind].sort(([a], [b]) => a.localeCompare(b)).map(([kind, ns]) => {
    const names = [...new Set(ns.flatMap((n) => Object.keys(n.figures ?? {})))].sort();
    const wrap = el('div', 'table-wrap');
    wrap.dataset.kind = kind;
    const table = el('table');
    table.appendChild(el('caption', '', kind));
    const head = el('tr');
    head.append(el('th', '', 'Node'), ...names.map((f) => el('th', 'num', f.replace(/([a-z])([A-Z])/g, '$1 $2'))));
    table.appendChild(el('thead')).appendChild(head);
    const body = table.appendChild(el('tbody'));
    for (const n of [...ns].sort((a, b) => String(a.id).localeCompare(String(b.id)))) {
      const row = el('tr');
      row.dataset.node = n.id;
      row.append(el('td', 'mono', n.id), ...names.map((f) => el('td', 'num', fmtNumber(Number(n.figures?.[f] ?? 0)))));
      body.appendChild(row);
    }
    wrap.appendChild(table);
    return wrap;
  }));
}

function createJobRow() {
  const row = el('tr');
  const c = cells(row, 8);
  c[0].className = 'mono';
  c[1].className = 'mono dim';
  c[2].appendChild(el('span', 'badge'));
  c[3].className = 'num';
  c[4].className = 'num';
  c[5].className = 'vars';
  c[6].className = 'num';
  c[7].className = 'error';
  return row;
}

function updateJobRow(row, j, now) {
  const c = row.cells;
  row.dataset.state = j.state;
  setText(c[0], j.id);
  setText(c[1], shortTask(j.task));
  c[1].title = String(j.task ?? '');
  const badge = c[2].firstChild;
  setText(badge, j.state);
  badge.dataset.state = j.state;
  setText(c[3], `${Number(j.nodes) || 0} / ${Number(j.requested) || 0}`);
  setText(c[4], fmtInt.format(Number(j.tasksDone) || 0));
  renderVars(c[5], j.vars ?? {});
  const end = j.finishedAt ?? now;
  setText(c[6], fmtDuration(end - j.createdAt));
  c[6].title = j.finishedAt ? `ran ${fmtClock(j.createdAt)} – ${fmtClock(j.finishedAt)}` : `running since ${fmtClock(j.createdAt)}`;
  setText(c[7], j.error ?? '');
  c[7].title = j.error ?? '';
}

function renderVars(td, vars) {
  const text = Object.keys(vars).sort().map((k) => `${k} = ${fmtNumber(vars[k])}`);
  const key = text.join('\n');
  if (td.dataset.key === key) return;
  td.dataset.key = key;
  td.replaceChildren(...text.map((t) => el('span', 'var', t)));
}

const STATE_ORDER = { running: 0, failed: 1, cancelled: 2, done: 3 };

function renderJobs(jobs, now) {
  const sorted = [...jobs].sort((a, b) => ((STATE_ORDER[a.state] ?? 9) - (STATE_ORDER[b.state] ?? 9)) || (b.createdAt - a.createdAt));
  reconcile($('jobs').tBodies[0], sorted, 'data-job-id', (j) => j.id, createJobRow, (row, j) => updateJobRow(row, j, now));
  $('jobs-empty').hidden = jobs.length > 0;
  const running = jobs.filter((j) => j.state === 'running').length;
  setText($('jobs-count'), jobs.length > 0 ? `${running} running · ${jobs.length} in all` : '');
}

// ---------------------------------------------------------------------------------------------
// Charts (uPlot, from /assets/vendor/)

const charts = { throughput: null, size: null, incumbent: null };
/** The job ids the incumbent chart was built for (rebuilt when the set changes). */
let incumbentKeys = '';

function chartWidth(container) {
  return Math.max(260, Math.floor(container.clientWidth || container.parentElement?.clientWidth || 400));
}

function baseOpts(container, series, extra = {}) {
  return {
    width: chartWidth(container),
    height: CHART_HEIGHT,
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
    scales: { x: { time: true } },
    series: [{ label: 'time', value: (u, v) => (v == null ? '–' : fmtClock(v * 1000)) }, ...series.map((s) => ({ points: { show: false }, ...s }))],
    hooks: {
      // Away from the cursor the legend shows the latest values.
      setCursor: [(u) => { if (u.cursor.idx == null) showLatest(u); }],
    },
    ...extra,
  };
}

/** Shows the last point's values in a chart's legend (unless the cursor is over the chart). */
function showLatest(u) {
  const n = u.data[0]?.length ?? 0;
  if (n > 0 && u.cursor.idx == null) u.setLegend({ idx: n - 1 }, false);
}

const axisStyle = { stroke: '#5c6370', grid: { stroke: '#e9ecef', width: 1 }, ticks: { stroke: '#dee2e6', width: 1 } };
/** The time axis: wall-clock times, one line. */
const timeAxis = { ...axisStyle, space: 70, incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200], values: (u, splits) => splits.map((v) => fmtClock(v * 1000)) };
const intAxis = { ...axisStyle, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], values: (u, splits) => splits.map((v) => fmtInt.format(v)) };

function makeThroughputChart(container) {
  const opts = baseOpts(container, [
    { label: 'tasks/s', scale: 'rate', stroke: PALETTE[0], width: 2, fill: 'rgba(14,124,134,0.08)', value: (u, v) => (v == null ? '–' : fmtRate(v)) },
    { label: 'steals/s', scale: 'steals', stroke: PALETTE[1], width: 1.5, value: (u, v) => (v == null ? '–' : fmtRate(v)) },
    { label: 'migrations/s', scale: 'steals', stroke: PALETTE[2], width: 1.5, dash: [4, 3], value: (u, v) => (v == null ? '–' : fmtRate(v)) },
  ], {
    scales: { x: { time: true }, rate: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] }, steals: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [
      timeAxis,
      { ...axisStyle, scale: 'rate', values: (u, splits) => splits.map((v) => fmtCompact.format(v)) },
      { ...axisStyle, scale: 'steals', side: 1, grid: { show: false }, values: (u, splits) => splits.map((v) => fmtCompact.format(v)) },
    ],
  });
  return withLatest(new window.uPlot(opts, throughputData(), container));
}

function makeSizeChart(container) {
  const stepped = window.uPlot.paths.stepped({ align: 1 });
  const opts = baseOpts(container, [
    { label: 'nodes', stroke: PALETTE[0], width: 2, fill: 'rgba(14,124,134,0.10)', paths: stepped },
    { label: 'active nodes', stroke: PALETTE[1], width: 2, paths: stepped },
  ], {
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(2, Math.ceil(max) + 1)] } },
    axes: [timeAxis, intAxis],
  });
  return withLatest(new window.uPlot(opts, sizeData(), container));
}

function makeIncumbentChart(container, jobIds) {
  const opts = baseOpts(container, jobIds.map((id, i) => ({
    label: id,
    stroke: PALETTE[i % PALETTE.length],
    width: 2,
    spanGaps: false,
    paths: window.uPlot.paths.stepped({ align: 1 }),
    value: (u, v) => (v == null ? '–' : fmtNumber(v)),
  })), {
    axes: [timeAxis, { ...axisStyle, size: 64, values: (u, splits) => splits.map((v) => fmtCompact.format(v)) }],
  });
  return withLatest(new window.uPlot(opts, incumbentData(jobIds), container));
}

function withLatest(u) {
  showLatest(u);
  return u;
}

function setData(u, data) {
  u.setData(data);
  showLatest(u);
}

const xs = () => state.history.map((p) => p.t / 1000);
const col = (f) => state.history.map((p) => { const v = Number(f(p)); return Number.isFinite(v) ? v : null; });

function throughputData() {
  return [xs(), col((p) => p.tasksPerSec), col((p) => p.stealsPerSec), col((p) => p.migrationsPerSec)];
}

function sizeData() {
  return [xs(), col((p) => p.nodes), col((p) => p.activeNodes)];
}

function incumbentJobIds() {
  const ids = new Set();
  for (const p of state.history) for (const id of Object.keys(p.incumbent ?? {})) ids.add(id);
  return [...ids].sort();
}

function incumbentData(jobIds) {
  return [xs(), ...jobIds.map((id) => col((p) => p.incumbent?.[id] ?? NaN))];
}

function chartsAvailable() {
  return typeof window.uPlot === 'function';
}

function rebuildCharts() {
  if (!chartsAvailable()) return;
  for (const key of Object.keys(charts)) {
    charts[key]?.destroy();
    charts[key] = null;
  }
  incumbentKeys = '';
  charts.throughput = makeThroughputChart($('chart-throughput'));
  charts.size = makeSizeChart($('chart-size'));
  updateIncumbent();
}

function updateIncumbent() {
  const container = $('chart-incumbent');
  const ids = incumbentJobIds();
  const key = ids.join('\n');
  const running = new Set((state.snapshot?.jobs ?? []).filter((j) => j.state === 'running').map((j) => j.id));
  const note = $('no-search');
  if (ids.length === 0) {
    charts.incumbent?.destroy();
    charts.incumbent = null;
    incumbentKeys = '';
    container.hidden = true;
    note.hidden = false;
    setText(note, 'No search job (no job publishes a bound)');
    return;
  }
  container.hidden = false;
  const anyRunning = ids.some((id) => running.has(id));
  note.hidden = anyRunning;
  setText(note, 'No search job running');
  if (key !== incumbentKeys || !charts.incumbent) {
    charts.incumbent?.destroy();
    charts.incumbent = makeIncumbentChart(container, ids);
    incumbentKeys = key;
  } else {
    setData(charts.incumbent, incumbentData(ids));
  }
}

function updateCharts() {
  if (!chartsAvailable()) return;
  if (!charts.throughput || !charts.size) return rebuildCharts();
  setData(charts.throughput, throughputData());
  setData(charts.size, sizeData());
  updateIncumbent();
}

function resizeCharts() {
  for (const [key, chart] of Object.entries(charts)) {
    if (!chart) continue;
    const container = $(key === 'throughput' ? 'chart-throughput' : key === 'size' ? 'chart-size' : 'chart-incumbent');
    const width = chartWidth(container);
    if (chart.width !== width) chart.setSize({ width, height: CHART_HEIGHT });
  }
}

// ---------------------------------------------------------------------------------------------
// Start

function start() {
  if (!chartsAvailable()) {
    for (const id of ['chart-throughput', 'chart-size', 'chart-incumbent']) {
      $(id).replaceChildren(el('p', 'note', 'Charts unavailable: /assets/vendor/uPlot.iife.min.js did not load.'));
    }
    $('no-search').hidden = true;
  } else {
    if (!chartsReady()) $('chart-jobnodes').replaceChildren(el('p', 'note', 'Charts unavailable: /assets/vendor/vega*.min.js did not load.'));
    rebuildCharts();
  }
  let resizeTimer = 0;
  const onResize = () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(resizeCharts, 100);
  };
  if (typeof ResizeObserver === 'function') {
    const ro = new ResizeObserver(onResize);
    for (const id of ['chart-throughput', 'chart-size', 'chart-incumbent']) ro.observe($(id).parentElement);
  } else {
    window.addEventListener('resize', onResize);
  }
  connect();
}

start();
