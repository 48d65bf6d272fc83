// The kinds' views over time, generic for every job kind: each job's figures as time series (one chart
// per figure or figure family) and each published event list drawn by its shape (spans as a Gantt,
// breakdowns as stacked bars, instants as marks), plus nodes-to-jobs over time. Charts are vega-lite
// specs compiled in the page and rendered by vega (both served from /assets/vendor/). Every chart's
// container holds its vega view as `vegaView`; its data set is `rows` (what the tests read).

/** Client-side bounds, as the server's: samples per job, jobs, events per list. */
const MAX_SAMPLES = 600;
const MAX_JOBS = 16;
const MAX_EVENTS = 1000;
/** Figure values kept in all (as the server): beyond, the oldest samples of the largest history go. */
const MAX_VALUES = 250_000;
const CHART_HEIGHT = 120;
const TIME_AXIS = { field: 't', type: 'temporal', title: null, axis: { format: '%H:%M:%S', labelOverlap: true } };

const history = {
  /** job id → { job, kind, samples: [{t, nodes: {node: {figure: value}}}] } (most recently sampled last) */
  figures: new Map(),
  /** `origin\u0000list` → { origin, list, events: Map(id → event) } */
  events: new Map(),
};

export function chartsReady() {
  return typeof window.vega === 'object' && typeof window.vegaLite === 'object';
}

/** The server's figure history and event lists (the `hello` event). */
export function resetKindHistory(hello) {
  history.figures.clear();
  history.events.clear();
  for (const h of Array.isArray(hello.figures) ? hello.figures : []) {
    if (h && typeof h.job === 'string' && Array.isArray(h.samples)) history.figures.set(h.job, { job: h.job, kind: String(h.kind), samples: h.samples.slice(-MAX_SAMPLES) });
  }
  mergeEvents(hello.events);
}

/** One snapshot: a sample of every job's figures (as the server takes it), and the events that changed. */
export function addKindSnapshot(snapshot) {
  const t = Number(snapshot.at);
  const byJob = new Map();
  for (const n of Array.isArray(snapshot.nodes) ? snapshot.nodes : []) {
    if (!n.job || !n.kind || !n.figures || Object.keys(n.figures).length === 0) continue;
    if (!byJob.has(n.job)) byJob.set(n.job, { kind: n.kind, nodes: {} });
    byJob.get(n.job).nodes[n.id] = n.figures;
  }
  for (const [job, { kind, nodes }] of byJob) {
    const h = history.figures.get(job) ?? { job, kind, samples: [] };
    history.figures.delete(job);
    history.figures.set(job, h);
    if (h.samples.at(-1)?.t === t) continue; // the hello's snapshot, already in its history
    h.samples.push({ t, nodes });
    if (h.samples.length > MAX_SAMPLES) h.samples.splice(0, h.samples.length - MAX_SAMPLES);
  }
  while (history.figures.size > MAX_JOBS) history.figures.delete(history.figures.keys().next().value);
  boundValues();
  mergeEvents(snapshot.events);
}

const valuesOf = (sample) => Object.values(sample.nodes ?? {}).reduce((n, f) => n + Object.keys(f ?? {}).length, 0);

function boundValues() {
  const sizes = new Map([...history.figures].map(([job, h]) => [job, h.samples.reduce((n, s) => n + valuesOf(s), 0)]));
  let total = [...sizes.values()].reduce((a, b) => a + b, 0);
  while (total > MAX_VALUES) {
    const [largest, size] = [...sizes].reduce((a, b) => (b[1] > a[1] ? b : a));
    const h = history.figures.get(largest);
    const dropped = h.samples.length > 1 ? valuesOf(h.samples.shift()) : size;
    if (h.samples.length === 0 || dropped === size) history.figures.delete(largest);
    sizes.set(largest, size - dropped);
    total -= dropped;
  }
}

function mergeEvents(lists) {
  for (const l of Array.isArray(lists) ? lists : []) {
    if (!l || typeof l.origin !== 'string' || typeof l.list !== 'string' || !Array.isArray(l.events)) continue;
    const key = `${l.origin}\u0000${l.list}`;
    let held = history.events.get(key);
    if (!held) history.events.set(key, (held = { origin: l.origin, list: l.list, events: new Map() }));
    for (const e of l.events) if (e && typeof e.id === 'string') held.events.set(e.id, e);
    while (held.events.size > MAX_EVENTS) held.events.delete(held.events.keys().next().value);
  }
}

// ---------------------------------------------------------------------------------------------
// Rows: what each chart plots

/**
 * A job's figures as chart families. A plain figure `x`: a line per node (and their sum when there are
 * several). `x.<number>` (threads, slots): a line per node and number. `x.<word>` (states,
 * categories): stacked areas, one per word, summed over the job's nodes.
 */
export function figureCharts(h) {
  const charts = new Map();
  const chart = (name, shape) => {
    if (!charts.has(name)) charts.set(name, { name, shape, rows: [] });
    return charts.get(name);
  };
  for (const s of h.samples) {
    const sums = new Map();
    for (const [node, figures] of Object.entries(s.nodes ?? {})) {
      for (const [figure, value] of Object.entries(figures ?? {})) {
        if (typeof value !== 'number') continue;
        const dot = figure.indexOf('.');
        if (dot < 0) {
          chart(figure, 'lines').rows.push({ t: s.t, series: node, value });
          addTo(sums, `${figure}\u0000all nodes`, value);
          continue;
        }
        const family = `${figure.slice(0, dot)}.*`;
        const part = figure.slice(dot + 1);
        if (/^\d+$/.test(part)) chart(family, 'lines').rows.push({ t: s.t, series: `${node} · ${part}`, value });
        else addTo(sums, `${family}\u0000${part}`, value, chart(family, 'stack'));
      }
    }
    const nodes = Object.keys(s.nodes ?? {}).length;
    for (const [key, { value, into }] of sums) {
      const [name, series] = key.split('\u0000');
      if (into) into.rows.push({ t: s.t, series, value });
      else if (nodes > 1) chart(name, 'lines').rows.push({ t: s.t, series, value });
    }
  }
  return [...charts.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function chartCaption(c) {
  const base = c.name.replace(/\.\*$/, '').replace(/([a-z])([A-Z])/g, '$1 $2');
  if (c.shape === 'stack') return `${base} · stacked by part, all nodes`;
  return c.name.endsWith('.*') ? `${base} · per node and index` : `${base} · per node`;
}

function addTo(sums, key, value, into) {
  const cur = sums.get(key);
  if (cur) cur.value += value;
  else sums.set(key, { value, into });
}

/**
 * How a list is drawn: spans if any event has an end; breakdowns (a stacked bar per event) if its
 * events have values and no labels; otherwise instants (their values in the tooltip).
 */
export function listShape(events) {
  if (events.some((e) => typeof e.end === 'number')) return 'spans';
  if (events.some((e) => e.values && Object.keys(e.values).length > 0) && !events.some((e) => e.label)) return 'breakdown';
  return 'instants';
}

/**
 * Gantt rows. A span still open when its job ended is drawn to the job's end (its last publication
 * came before it). Spans that overlap in one lane (tasks side by side on one node's threads) are
 * packed into sub-rows `lane ·2`, `lane ·3`, … so that none hides another.
 */
export function spanRows(events, jobs) {
  const rows = events.filter((e) => typeof e.end === 'number').map((e) => {
    const job = e.job ? jobs.get(e.job) : undefined;
    const end = e.open && job?.finishedAt && job.finishedAt > e.end ? job.finishedAt : e.end;
    return { id: e.id, lane: e.lane ?? e.job ?? '', start: e.at, end, label: e.label ?? '', job: e.job ?? '', open: Boolean(e.open) && !(job?.finishedAt) };
  }).sort((a, b) => a.start - b.start || a.end - b.end);
  const busyUntil = new Map();
  for (const r of rows) {
    const ends = busyUntil.get(r.lane) ?? [];
    busyUntil.set(r.lane, ends);
    let k = ends.findIndex((end) => end <= r.start);
    if (k < 0) k = ends.push(r.end) - 1;
    else ends[k] = r.end;
    if (k > 0) r.lane = `${r.lane} ·${k + 1}`;
  }
  return rows;
}

function breakdownRows(events) {
  return events.flatMap((e) => Object.entries(e.values ?? {}).map(([part, value]) => ({ id: e.id, at: e.at, part, value, job: e.job ?? '' })));
}

function instantRows(events) {
  return events.map((e) => ({ id: e.id, t: e.at, row: e.job ?? e.lane ?? '', label: e.label ?? '', ...(e.values ?? {}) }));
}

// ---------------------------------------------------------------------------------------------
// Specs

function lineSpec(shape) {
  return {
    width: 'container', height: CHART_HEIGHT, data: { name: 'rows' },
    mark: shape === 'stack' ? { type: 'area', interpolate: 'step-after' } : { type: 'line', interpolate: 'linear' },
    encoding: {
      x: TIME_AXIS,
      y: { field: 'value', type: 'quantitative', title: null, ...(shape === 'stack' ? { stack: 'zero' } : {}) },
      color: { field: 'series', type: 'nominal', title: null },
      tooltip: [{ field: 'series' }, { field: 'value', format: ',.4~g' }, { field: 't', type: 'temporal', format: '%H:%M:%S' }],
    },
  };
}

function ganttSpec(lanes) {
  return {
    width: 'container', height: Math.min(480, Math.max(60, 16 * lanes)), data: { name: 'rows' },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'start', type: 'temporal', title: null, axis: { format: '%H:%M:%S', labelOverlap: true } },
      x2: { field: 'end' },
      y: { field: 'lane', type: 'nominal', title: null, sort: 'ascending' },
      color: { field: 'label', type: 'nominal', title: null },
      opacity: { condition: { test: 'datum.open', value: 0.45 }, value: 0.9 },
      tooltip: [{ field: 'id' }, { field: 'lane' }, { field: 'label' }, { field: 'job' }, { field: 'start', type: 'temporal', format: '%H:%M:%S.%L' }, { field: 'end', type: 'temporal', format: '%H:%M:%S.%L' }],
    },
  };
}

function breakdownSpec() {
  return {
    width: 'container', height: CHART_HEIGHT + 40, data: { name: 'rows' },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'id', type: 'ordinal', title: null, sort: { field: 'at' }, axis: { labelAngle: -40, labelLimit: 90 } },
      y: { field: 'value', type: 'quantitative', title: null, stack: 'zero' },
      color: { field: 'part', type: 'nominal', title: null },
      tooltip: [{ field: 'id' }, { field: 'part' }, { field: 'value', format: ',.4~g' }, { field: 'job' }],
    },
  };
}

function instantSpec() {
  return {
    width: 'container', height: CHART_HEIGHT, data: { name: 'rows' },
    mark: { type: 'point', filled: true, size: 70 },
    encoding: {
      x: TIME_AXIS,
      y: { field: 'row', type: 'nominal', title: null },
      color: { field: 'label', type: 'nominal', title: null },
      tooltip: { content: 'data' },
    },
  };
}

/** Nodes to jobs over time (seed 003 Fig. 6), with the instants that name a job (rescales) as rules. */
function jobNodesSpec(height) {
  return {
    width: 'container', height,
    layer: [
      {
        data: { name: 'rows' },
        mark: { type: 'area', interpolate: 'step-after' },
        encoding: {
          x: TIME_AXIS,
          y: { field: 'nodes', type: 'quantitative', title: null, stack: 'zero', axis: { tickMinStep: 1 } },
          color: { field: 'job', type: 'nominal', title: null },
          tooltip: [{ field: 'job' }, { field: 'nodes' }, { field: 't', type: 'temporal', format: '%H:%M:%S' }],
        },
      },
      {
        data: { name: 'marks' },
        mark: { type: 'rule', strokeDash: [4, 3] },
        encoding: { x: TIME_AXIS, color: { field: 'job', type: 'nominal' }, tooltip: [{ field: 'job' }, { field: 'label' }, { field: 't', type: 'temporal', format: '%H:%M:%S.%L' }] },
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Views

function makeView(container, vl) {
  const spec = window.vegaLite.compile({ $schema: 'https://vega.github.io/schema/vega-lite/v5.json', autosize: { type: 'fit-x', contains: 'padding' }, ...vl }).spec;
  const view = new window.vega.View(window.vega.parse(spec), { renderer: 'svg', container, hover: true });
  container.vegaView = view;
  container.dataset.shapeKey = JSON.stringify([vl.height]);
  return view;
}

/** Replaces a view's data set `name` with `rows` (and re-renders). */
function setRows(view, name, rows) {
  view.change(name, window.vega.changeset().remove(() => true).insert(rows));
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A keyed child of `parent` (created by `create` when missing), so views survive re-renders. */
function keyed(parent, attr, key, create) {
  for (const child of parent.children) if (child.getAttribute(attr) === key) return child;
  const made = create();
  made.setAttribute(attr, key);
  parent.appendChild(made);
  return made;
}

/** A chart card with a caption; its view is (re)made when its spec's size changes. */
function chartCard(parent, attr, key, caption, vl) {
  const card = keyed(parent, attr, key, () => {
    const c = el('figure', 'kind-chart');
    c.append(el('figcaption', '', caption), el('div', 'vega'));
    return c;
  });
  const box = card.querySelector('.vega');
  if (!box.vegaView || box.dataset.shapeKey !== JSON.stringify([vl.height])) {
    box.vegaView?.finalize();
    box.replaceChildren();
    makeView(box, vl);
  }
  card.dataset.seen = '1';
  return box.vegaView;
}

/** Drops children not marked as seen in this render, and clears the marks of the rest. */
function sweep(parent) {
  for (const child of [...parent.children]) {
    if (child.dataset.seen) delete child.dataset.seen;
    else {
      for (const box of child.querySelectorAll('.vega')) box.vegaView?.finalize();
      child.remove();
    }
  }
}

/**
 * The kinds' views: one section per origin (a job kind, or an event source such as a service), with
 * a chart per figure family for each of its jobs and a view per event list.
 */
export function renderKindViews(host, snapshot) {
  if (!chartsReady()) return;
  const jobs = new Map((snapshot.jobs ?? []).map((j) => [j.id, j]));
  const origins = new Map();
  const originOf = (name) => {
    if (!origins.has(name)) origins.set(name, { jobs: [], lists: [] });
    return origins.get(name);
  };
  for (const h of history.figures.values()) originOf(h.kind).jobs.push(h);
  for (const l of history.events.values()) originOf(l.origin).lists.push(l);
  for (const [origin, { jobs: histories, lists }] of [...origins].sort(([a], [b]) => a.localeCompare(b))) {
    const section = keyed(host, 'data-origin', origin, () => {
      const s = el('section', 'kind-origin');
      s.append(el('h3', '', origin), el('div', 'kind-jobs'), el('div', 'kind-lists'));
      return s;
    });
    section.dataset.seen = '1';
    const jobsBox = section.querySelector('.kind-jobs');
    // Running jobs first, then the most recently sampled.
    const ordered = [...histories].reverse().sort((a, b) => Number(jobs.get(b.job)?.state === 'running') - Number(jobs.get(a.job)?.state === 'running'));
    for (const h of ordered) {
      const job = jobs.get(h.job);
      const box = keyed(jobsBox, 'data-job', h.job, () => {
        const d = el('details', 'kind-job');
        d.open = true;
        d.append(el('summary'), el('div', 'kind-charts'));
        return d;
      });
      box.dataset.seen = '1';
      const summary = box.querySelector('summary');
      const text = `job ${h.job}${job ? ` · ${job.state}` : ''}`;
      if (summary.textContent !== text) summary.textContent = text;
      const grid = box.querySelector('.kind-charts');
      for (const c of figureCharts(h)) setRows(chartCard(grid, 'data-chart', c.name, chartCaption(c), lineSpec(c.shape)), 'rows', c.rows);
      sweep(grid);
    }
    sweep(jobsBox);
    const listsBox = section.querySelector('.kind-lists');
    for (const l of lists.sort((a, b) => a.list.localeCompare(b.list))) {
      const events = [...l.events.values()];
      const shape = listShape(events);
      const caption = `${l.list} · ${shape === 'spans' ? 'spans by lane' : shape === 'breakdown' ? 'breakdown per event' : 'events'}`;
      if (shape === 'spans') {
        const rows = spanRows(events, jobs);
        setRows(chartCard(listsBox, 'data-list', l.list, caption, ganttSpec(new Set(rows.map((r) => r.lane)).size)), 'rows', rows);
      } else if (shape === 'breakdown') {
        setRows(chartCard(listsBox, 'data-list', l.list, caption, breakdownSpec()), 'rows', breakdownRows(events));
      } else {
        setRows(chartCard(listsBox, 'data-list', l.list, caption, instantSpec()), 'rows', instantRows(events));
      }
      for (const card of listsBox.children) if (card.getAttribute('data-list') === l.list) card.dataset.shape = shape;
    }
    sweep(listsBox);
  }
  sweep(host);
  for (const box of host.querySelectorAll('.vega')) box.vegaView?.runAsync();
}

/** Nodes to jobs over time from the timeline points, with every instant that names a job as a rule. */
export function renderJobNodes(container, points) {
  if (!chartsReady()) return;
  const rows = [];
  let previous = new Set();
  for (const p of points) {
    const now = new Set(Object.keys(p.jobNodes ?? {}));
    // A job that left ends at 0 (not at its last height): a stacked step chart otherwise smears it.
    for (const job of previous) if (!now.has(job)) rows.push({ t: p.t, job, nodes: 0 });
    for (const job of now) rows.push({ t: p.t, job, nodes: Number(p.jobNodes[job]) || 0 });
    previous = now;
  }
  const marks = [];
  for (const l of history.events.values()) {
    const events = [...l.events.values()];
    if (listShape(events) !== 'instants') continue;
    for (const e of events) if (e.job) marks.push({ t: e.at, job: e.job, label: e.label ?? l.list });
  }
  // No chart before there is something to draw (vega cannot lay out an empty time axis).
  if (rows.length === 0 && !container.vegaView) return;
  const view = container.vegaView ?? makeView(container, jobNodesSpec(170));
  setRows(view, 'rows', rows);
  setRows(view, 'marks', marks);
  void view.runAsync();
}
