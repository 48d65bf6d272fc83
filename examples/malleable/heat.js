/**
 * A malleable application in plain JavaScript, as `tidepool malleable run` takes a module (a file
 * resolved from the current directory, or a package; every node imports it): the steady temperature
 * of a rod held at 1 at its left end that loses heat along its length, by Jacobi iterations until
 * they converge. The rod's `cells` are cut into `segments` objects that exchange their edge cells;
 * two reductions make it a convergence test — the largest change of any cell in an iteration (`max`)
 * ends the run once below `tol`, and the rod's total heat (`sum`) is reported.
 *
 *   tidepool malleable run examples/malleable/heat.js --input '{"cells":2000,"segments":16,"loss":0.1,"tol":1e-9,"iterations":5000}' --nodes 2 --scale 40it:1 --check
 *   # result {"iterations":…,"change":…,"heat":…}, bit-identical to the sequential run, done before 5000 iterations
 */
import { defineMalleable } from 'tidepool-runtime/malleable';

/** Cells [first, end) of segment `s`. */
const span = (p, s) => [Math.floor((p.cells * s) / p.segments), Math.floor((p.cells * (s + 1)) / p.segments)];

export default defineMalleable({
  name: 'heat-rod',
  validate(p) {
    if (!Number.isInteger(p?.cells) || !Number.isInteger(p?.segments) || p.segments < 1 || p.cells < p.segments) return '"cells" and "segments" must be whole numbers, 1 ≤ segments ≤ cells';
    if (!(p.loss > 0)) return `"loss" must be a number > 0, got ${p.loss}`;
    if (!(p.tol > 0)) return `"tol" must be a number > 0, got ${p.tol}`;
    if (!Number.isInteger(p.iterations) || p.iterations < 0) return `"iterations" must be a whole number ≥ 0, got ${p.iterations}`;
    return undefined;
  },
  objects: (p) => p.segments,
  iterations: (p) => p.iterations,
  reductions: { change: 'max', heat: 'sum' },
  done: (reduced, _iteration, p) => reduced.change !== undefined && reduced.change < p.tol,
  init(index, p, send) {
    const [first, end] = span(p, index);
    const u = new Float64Array(end - first);
    if (index > 0) send(index - 1, 0);
    if (index < p.segments - 1) send(index + 1, 0);
    return { u, steps: 0, change: Infinity };
  },
  step({ index, params, state, inbox, send, reduce, reduced }) {
    // The edge cells of the neighbours (the rod's ends: 1 on the left, insulated on the right).
    const left = index === 0 ? 1 : inbox.find((m) => m.from === index - 1).msg;
    const right = index === params.segments - 1 ? state.u[state.u.length - 1] : inbox.find((m) => m.from === index + 1).msg;
    const { u } = state;
    const next = new Float64Array(u.length);
    let change = 0;
    let heat = 0;
    for (let i = 0; i < u.length; i++) {
      const west = i === 0 ? left : u[i - 1];
      const east = i === u.length - 1 ? right : u[i + 1];
      next[i] = (west + east) / (2 + params.loss);
      change = Math.max(change, Math.abs(next[i] - u[i]));
      heat += next[i];
    }
    reduce('change', change);
    reduce('heat', heat);
    if (index > 0) send(index - 1, next[0]);
    if (index < params.segments - 1) send(index + 1, next[next.length - 1]);
    return { u: next, steps: state.steps + 1, change: reduced.change ?? Infinity };
  },
  summary: (_index, state) => ({ steps: state.steps, change: state.change, heat: state.u.reduce((a, b) => a + b, 0) }),
  // `change`: the largest change of the iteration before the last (what the last one read).
  result: (segments) => ({ iterations: segments[0].steps, change: segments[0].change, heat: segments.reduce((a, s) => a + s.heat, 0) }),
});
