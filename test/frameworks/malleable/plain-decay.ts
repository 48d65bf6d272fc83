/**
 * The coupled-decay test application (apps/coupled-decay.ts) written as plain loops over arrays,
 * without the object model: the reference its runs must match bit for bit, reductions included.
 */
import assert from 'node:assert/strict';
import { decayInitial, trace, type DecayParams, type DecayResult } from './apps/coupled-decay.js';

/** The coupled-decay application as plain loops over arrays: no objects, no runtime. */
export function plainDecay(p: DecayParams): DecayResult {
  const n = p.objects;
  const v = Array.from({ length: n }, (_, i) => Float64Array.from({ length: p.width }, (_, k) => decayInitial(i, k)));
  let reduced: { sum: number; min: number; max: number; trace: number } | undefined;
  let broadcasts: number[] = [];
  let ring: number[] | undefined;
  const history: number[] = [];
  let steps = 0;
  for (let t = 0; t < p.iterations; t++) {
    const sums: number[] = [], mins: number[] = [], maxs: number[] = [], firsts: number[] = [];
    const nextBroadcasts: number[] = [];
    const nextRing = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const mean = (reduced?.sum ?? 0) / (n * p.width);
      let fromOthers = 0;
      for (const b of broadcasts) fromOthers += b;
      if (ring) fromOthers += ring[i]! * 0.5;
      const x = v[i]!;
      for (let k = 0; k < x.length; k++) x[k] = x[k]! * 0.5 + mean * 1e-2 + fromOthers * 1e-3;
      if (i === 0 && reduced) history.push(reduced.sum, reduced.min, reduced.max, reduced.trace);
      let s = 0;
      for (const y of x) s += y;
      sums.push(s);
      mins.push(Math.min(...x));
      maxs.push(Math.max(...x));
      firsts.push(x[0]!);
      if (t % n === i) nextBroadcasts.push(x[x.length - 1]!);
      nextRing[(i + 1) % n] = x[0]!;
    }
    steps++;
    let sum = sums[0]!, min = mins[0]!, max = maxs[0]!, tr = firsts[0]!;
    for (let i = 1; i < n; i++) {
      sum += sums[i]!;
      min = Math.min(min, mins[i]!);
      max = Math.max(max, maxs[i]!);
      tr = trace(tr, firsts[i]!);
    }
    reduced = { sum, min, max, trace: tr };
    broadcasts = nextBroadcasts;
    ring = nextRing;
    if (p.tol !== undefined && max < p.tol) break;
  }
  return { values: v.flatMap((x) => [...x]), history, steps };
}

/** Bit for bit: every float compared by its 8 bytes. */
export function assertBitIdentical(got: DecayResult, want: DecayResult, what: string): void {
  assert.equal(got.steps, want.steps, `${what}: iterations run`);
  assert.equal(got.history.length, want.history.length, `${what}: history length`);
  assert.ok(Buffer.from(Float64Array.from(got.history).buffer).equals(Buffer.from(Float64Array.from(want.history).buffer)), `${what}: reductions bit-identical`);
  assert.ok(Buffer.from(Float64Array.from(got.values).buffer).equals(Buffer.from(Float64Array.from(want.values).buffer)), `${what}: values bit-identical`);
}
