/**
 * The task type a service batch becomes on the cluster: a range of the batch's task indexes, split
 * in halves when other workers want work; each task runs in an isolated-vm sandbox process of this
 * worker thread. The captured graph is the job's input (through the data plane when large); the
 * outcomes are emitted keyed by index, so the job's result lists them in task order.
 */
import { CONTROL_CHECK_EVERY, defineTask } from '../../runtime/task.js';
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
 * The runtime consults its control words on every CONTROL_CHECK_EVERY-th split point or migration check
 * (cheap for tasks that offer one per tiny unit of work); a batch offers one per chunk, so it calls that many
 * times for one real check.
 */
function checked(probe: () => boolean): boolean {
  for (let i = 0; i < CONTROL_CHECK_EVERY; i++) if (probe()) return true;
  return false;
}
/** The current job's codes and package bundles, parsed once per job. */
let codes: { key: string; codes: CaptureGraph['codes']; packages: string[] } | undefined;

export { unpackOutcomes, type OutcomeChunk } from './outcome-chunks.js';

type Range = { lo: number; hi: number };

/**
 * The first index of a running range not yet sent to its sandbox: a chunk is sent while the one
 * before it runs, so that the sandbox never waits for this thread. The range's state stays what has
 * been emitted (`lo` onwards is owed, so a migrated or recovered range runs a chunk in flight again);
 * a split gives away only indexes not sent.
 */
const sentUpTo = new WeakMap<Range, number>();

export default defineTask<Range, OutcomeChunk[], BatchInput>({
  name: 'tidepool-service-batch',
  async run(range, ctx) {
    pool ??= new SandboxPool();
    if (codes?.key !== ctx.jobId) {
      const graph = JSON.parse(ctx.input.graph) as CaptureGraph;
      codes = { key: ctx.jobId, codes: graph.codes, packages: (graph.packages ?? []).map((p) => p.code ?? '') };
    }
    const { codes: taskCodes, packages } = codes;
    const lane = {}; // this range's chunks go to one sandbox process, the next queued behind the running one
    let chunk = 1;
    let lastDone = Date.now();
    // Once a chunk proved short, the next is sent while one runs; long tasks go one by one (a cancel then leaves none queued).
    let pipelined = false;
    type Sent = { indexes: number[]; at: number; outs: Promise<Map<number, string>> };
    const finish = async (sent: Sent) => {
      const outs = await sent.outs;
      ctx.emit([packOutcomes(sent.indexes.map((i) => [i, outs.get(i)!]))], range.lo);
      range.lo += sent.indexes.length;
      // Short tasks go to the sandbox in chunks of about CHUNK_MS (fewer messages); long ones one by one.
      const now = Date.now();
      const elapsed = now - Math.max(sent.at, lastDone);
      lastDone = now;
      pipelined = elapsed <= CHUNK_MS * 2;
      if (elapsed < CHUNK_MS / 2) chunk = Math.min(256, chunk * 2);
      else if (elapsed > CHUNK_MS * 2) chunk = Math.max(1, chunk >> 1);
    };
    let running: Sent | undefined;
    try {
      sentUpTo.set(range, range.lo);
      while (sentUpTo.get(range)! < range.hi) {
        if (ctx.cancelled()) {
          running?.outs.catch(() => undefined);
          return;
        }
        if (checked(() => ctx.shouldMigrate())) {
          if (running) await finish(running); // its outcomes leave with this worker, not run twice
          return;
        }
        if (running && !pipelined) {
          await finish(running);
          running = undefined;
          continue; // the checks again before the next chunk
        }
        // Before each chunk, not after: idle workers get their share before a long first task.
        checked(() => ctx.potentialSplit());
        const from = sentUpTo.get(range)!;
        const indexes = Array.from({ length: Math.min(chunk, range.hi - from) }, (_, i) => from + i);
        sentUpTo.set(range, from + indexes.length);
        // The outcomes of a chunk come back in one message from the sandbox process.
        const next: Sent = { indexes, at: Date.now(), outs: pool.run(ctx.jobId, ctx.input.graph, taskCodes, indexes, undefined, ctx.input.limits, packages, { together: true, lane }) };
        next.outs.catch(() => undefined); // awaited after the running chunk: no unhandled rejection meanwhile
        if (running) await finish(running);
        running = next;
      }
      if (running) await finish(running);
    } finally {
      sentUpTo.delete(range);
    }
  },
  split(range) {
    const from = Math.max(range.lo, sentUpTo.get(range) ?? range.lo);
    if (range.hi - from < 2) return undefined;
    const mid = from + ((range.hi - from) >> 1);
    const upper = { lo: mid, hi: range.hi };
    range.hi = mid;
    return upper;
  },
  result: { initial: () => [], combine: (a, b) => a.concat(b), ordered: true },
});
