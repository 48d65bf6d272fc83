/**
 * Test application for collectives: each object holds a few numbers of very different magnitudes
 * (so the order of a floating-point sum shows in its last bits) that decay every iteration, coupled
 * to the others through every kind of collective — the previous iteration's global mean (a `sum`),
 * `min`, `max`, an order-sensitive custom fold, the broadcasts of one object per iteration and a
 * message around a ring. Object 0 keeps every iteration's reduced values: the result is the history
 * of the collectives plus every final value. `tol` ends the run once the global maximum is below it
 * (a convergence test); `resizeAt` makes object 0 ask for a node range after chosen iterations (an
 * evolving job). ../plain-decay.ts has the same computation written as plain loops.
 */
import { defineMalleable } from '../../../../src/frameworks/malleable/malleable-app.js';

export interface DecayParams {
  objects: number;
  width: number;
  iterations: number;
  /** Stop once the largest value of an iteration is below this. */
  tol?: number;
  /** After iteration `iteration`, object 0 asks to run on between `min` and `max` nodes. */
  resizeAt?: Array<{ iteration: number; min: number; max: number }>;
}

export interface DecayState {
  values: Float64Array;
  /** Object 0 only: [sum, min, max, trace] of every iteration's reductions, read one iteration later. */
  history: number[];
  steps: number;
}

export interface DecayResult {
  values: number[];
  history: number[];
  steps: number;
}

type Reduced = { sum: number; min: number; max: number; trace: number };

/** The initial value k of object i: magnitudes from 1e-3 to 1e3. */
export const decayInitial = (i: number, k: number): number => (((i * 7 + k * 13) % 11) + 1) * 10 ** (((i + k) % 7) - 3);
/** The order-sensitive custom reduction. */
export const trace = (a: number, b: number): number => a * 1.000001 + b;

export default defineMalleable<DecayParams, DecayState, number, DecayResult, DecayResult, Reduced>({
  name: 'coupled-decay',
  validate: (p) => (Number.isInteger(p?.objects) && p.objects >= 1 ? undefined : `"objects" must be a whole number ≥ 1, got ${String(p?.objects)}`),
  objects: (p) => p.objects,
  iterations: (p) => p.iterations,
  reductions: { sum: 'sum', min: 'min', max: 'max', trace },
  done: (r, _it, p) => p.tol !== undefined && r.max !== undefined && r.max < p.tol,
  init: (index, p) => ({ values: Float64Array.from({ length: p.width }, (_, k) => decayInitial(index, k)), history: [], steps: 0 }),
  step({ index, iteration, params, state, inbox, send, reduced, broadcasts, reduce, broadcast, requestResize }) {
    const mean = (reduced.sum ?? 0) / (params.objects * params.width);
    let fromOthers = 0;
    for (const b of broadcasts) fromOthers += b.msg;
    for (const m of inbox) fromOthers += m.msg * 0.5;
    const v = state.values;
    for (let k = 0; k < v.length; k++) v[k] = v[k]! * 0.5 + mean * 1e-2 + fromOthers * 1e-3;
    if (index === 0 && reduced.sum !== undefined) state.history.push(reduced.sum, reduced.min!, reduced.max!, reduced.trace!);
    let sum = 0;
    for (const x of v) sum += x;
    reduce('sum', sum);
    reduce('min', Math.min(...v));
    reduce('max', Math.max(...v));
    reduce('trace', v[0]!);
    if (iteration % params.objects === index) broadcast(v[v.length - 1]!);
    send((index + 1) % params.objects, v[0]!);
    const wish = index === 0 ? params.resizeAt?.find((r) => r.iteration === iteration) : undefined;
    if (wish) requestResize(wish.min, wish.max);
    state.steps++;
  },
  summary: (_index, state) => ({ values: [...state.values], history: state.history, steps: state.steps }),
  result: (summaries) => ({ values: summaries.flatMap((s) => s.values), history: summaries[0]!.history, steps: summaries[0]!.steps }),
});
