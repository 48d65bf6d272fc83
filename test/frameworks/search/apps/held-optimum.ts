/**
 * Test application: a branch-and-bound whose run that finds the optimum holds right after publishing it,
 * so a test can kill its node while the optimum is the job's incumbent and the run has not counted.
 *
 * The tree: the root has ten leaves; `opt` (value 1) is explored first, then `w1` … `w9` (values 11 … 19).
 * The thread that evaluated `opt` holds at its next leaf, once per job (the first to create `<gate>/held`
 * holds; the re-run after the kill does not), until its node is killed (a safety net ends it after a minute).
 * Ten search nodes in all: a job that counts each once reports exactly that.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineSearch } from '../../../../src/frameworks/search/define-search.js';
import type { OptimisationProblem } from '../../../../src/frameworks/search/search-problem.js';

export interface HeldOptimumInstance {
  /** A directory shared by the test and every node (same machine). */
  gate: string;
}

export const LEAVES = 10;
export const OPTIMUM = 1;

let sawOptimum = false;
const pause = new Int32Array(new SharedArrayBuffer(4));

function holdOnce(gate: string): void {
  try {
    mkdirSync(join(gate, 'held'));
  } catch {
    return; // another run held already
  }
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) Atomics.wait(pause, 0, 0, 20);
}

export const heldOptimum: OptimisationProblem<string, HeldOptimumInstance> = {
  name: 'held-optimum',
  kind: 'optimise',
  sense: 'min',
  root: () => 'root',
  children: (node) => (node === 'root' ? ['opt', ...Array.from({ length: LEAVES - 1 }, (_, i) => `w${i + 1}`)] : []),
  objective(node, inst) {
    if (node === 'root') return undefined;
    if (node === 'opt') {
      sawOptimum = true;
      return OPTIMUM;
    }
    if (sawOptimum) holdOnce(inst.gate);
    return 10 + Number(node.slice(1));
  },
  bound: () => 0,
  solutionOf: (node) => node,
};

export default defineSearch(heldOptimum);
