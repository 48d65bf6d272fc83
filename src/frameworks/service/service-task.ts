/**
 * The task type a service batch becomes on the cluster: a range of the batch's task indexes, split
 * in halves when other workers want work; each task runs in an isolated-vm sandbox process of this
 * worker thread. The captured graph is the job's input (through the data plane when large); the
 * outcomes are emitted keyed by index, so the job's result lists them in task order.
 */
import { defineTask } from '../../runtime/task.js';
import type { CaptureGraph } from './graph-format.js';
import { SandboxPool, type SandboxLimits } from './sandbox-pool.js';
import { packOutcomes, type OutcomeChunk } from './outcome-chunks.js';

export interface BatchInput {
  graph: string;
  limits?: SandboxLimits;
}

let pool: SandboxPool | undefined;

/** A chunk of tasks should take about this long (ms): few messages for tiny tasks, a split point soon for idle workers. */
const CHUNK_MS = 10;
/**
 * The runtime consults its control words on every 16th split point or migration check (cheap for tasks
 * that offer one per tiny unit of work); a batch offers one per chunk, so it calls 16 times for one real check.
 */
const CHECK_EVERY = 16;

function checked(probe: () => boolean): boolean {
  for (let i = 0; i < CHECK_EVERY; i++) if (probe()) return true;
  return false;
}
/** The current job's codes and package bundles, parsed once per job. */
let codes: { key: string; codes: CaptureGraph['codes']; packages: string[] } | undefined;

export { unpackOutcomes, type OutcomeChunk } from './outcome-chunks.js';

export default defineTask<{ lo: number; hi: number }, OutcomeChunk[], BatchInput>({
  name: 'tidepool-service-batch',
  async run(range, ctx) {
    pool ??= new SandboxPool();
    if (codes?.key !== ctx.jobId) {
      const graph = JSON.parse(ctx.input.graph) as CaptureGraph;
      codes = { key: ctx.jobId, codes: graph.codes, packages: (graph.packages ?? []).map((p) => p.code ?? '') };
    }
    let chunk = 1;
    while (range.lo < range.hi) {
      if (ctx.cancelled() || checked(() => ctx.shouldMigrate())) return;
      // Before each chunk, not after: idle workers get their share before a long first task.
      checked(() => ctx.potentialSplit());
      const indexes = Array.from({ length: Math.min(chunk, range.hi - range.lo) }, (_, i) => range.lo + i);
      const t0 = Date.now();
      // The outcomes of a chunk come back in one message from the sandbox process.
      const outs = await pool.run(ctx.jobId, ctx.input.graph, codes.codes, indexes, undefined, ctx.input.limits, codes.packages, true);
      ctx.emit([packOutcomes(indexes.map((i) => [i, outs.get(i)!]))], range.lo);
      range.lo += indexes.length;
      // Short tasks go to the sandbox in chunks of about CHUNK_MS (fewer messages); long ones one by one.
      const elapsed = Date.now() - t0;
      if (elapsed < CHUNK_MS / 2) chunk = Math.min(256, chunk * 2);
      else if (elapsed > CHUNK_MS * 2) chunk = Math.max(1, chunk >> 1);
    }
  },
  split(range) {
    if (range.hi - range.lo < 2) return undefined;
    const mid = range.lo + ((range.hi - range.lo) >> 1);
    const upper = { lo: mid, hi: range.hi };
    range.hi = mid;
    return upper;
  },
  result: { initial: () => [], combine: (a, b) => a.concat(b), ordered: true },
});
