/**
 * Randomized property test of termination detection: random irregular split trees, tasks started
 * and completed in random order by several clients, with connection losses injected. Properties:
 * it never fires while a task is incomplete (one random task is held back until everything else
 * has committed), it is never missed, and it fires exactly once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskTracker, TerminationList } from '../../src/coord/recipes/termination-detection.js';
import type { CoordClient } from '../../src/coord/types.js';
import { Rng } from '../../src/util/rng.js';
import { randomSplitTree } from '../support/split-tree.js';
import { withDeadline } from '../support/wait.js';

export interface PropertyRun {
  seed: number;
  size: number;
  clients: CoordClient[];
  watcherClient: CoordClient;
  maxBatch: number;
  /** Called after each issued completion; may inject a fault (e.g. cut a connection). */
  onCompletionIssued?: (count: number, rng: Rng) => void | Promise<void>;
  timeoutMs?: number;
}

export interface PropertyResult {
  retries: number;
  transactions: number;
  reads: number;
}

export async function runTerminationProperty(run: PropertyRun): Promise<PropertyResult> {
  const rng = new Rng(run.seed);
  const tree = randomSplitTree(rng, run.size);
  assert.equal(tree.size, run.size, 'tree has the requested size');
  const base = `/property/${randomUUID()}`;
  const terminationList = new TerminationList(run.watcherClient, base);
  await terminationList.init('t0');
  let fired = 0;
  let heldBackIssued = false;
  terminationList.on('terminated', () => {
    fired++;
    assert.ok(heldBackIssued, `seed ${run.seed}: termination fired while a task was still incomplete`);
  });
  terminationList.start();
  const trackers = run.clients.map((c) => new TaskTracker(c, base, { maxBatch: run.maxBatch }));

  // Random interleaving of starts (which create the children) and completions.
  const ids = [...tree.keys()];
  const heldBack = rng.pick(ids);
  const available = ['t0'];
  const started: string[] = [];
  const commits: Promise<void>[] = [];
  let issued = 0;
  while (available.length > 0 || started.length > 0) {
    const doStart = available.length > 0 && (started.length === 0 || rng.chance(0.5));
    const list = doStart ? available : started;
    const i = rng.int(0, list.length - 1);
    const id = list[i]!;
    list[i] = list[list.length - 1]!;
    list.pop();
    if (doStart) {
      available.push(...tree.get(id)!);
      started.push(id);
      continue;
    }
    if (id === heldBack) continue;
    commits.push(rng.pick(trackers).completed(id, tree.get(id)!));
    issued++;
    await run.onCompletionIssued?.(issued, rng);
  }
  const deadline = run.timeoutMs ?? 60_000;
  await withDeadline(Promise.all(commits), `seed ${run.seed}: all completions but one to commit`, deadline);

  // Everything but one task has committed: the list must still hold something, nothing fired.
  const remaining = await run.watcherClient.getChildren(`${base}/tasks`);
  assert.ok(remaining.length > 0, `seed ${run.seed}: task list empty with ${heldBack} incomplete`);
  assert.equal(fired, 0, `seed ${run.seed}: fired early`);

  heldBackIssued = true;
  await withDeadline(rng.pick(trackers).completed(heldBack, tree.get(heldBack)!), `seed ${run.seed}: last completion`, deadline);
  await withDeadline(terminationList.finished(), `seed ${run.seed}: termination (missed?)`, deadline);
  assert.equal(fired, 1, `seed ${run.seed}: fired exactly once`);
  assert.deepEqual(await run.watcherClient.getChildren(`${base}/tasks`), []);
  terminationList.stop();
  return trackers.reduce(
    (acc, t) => ({ retries: acc.retries + t.stats.retries, transactions: acc.transactions + t.stats.transactions, reads: acc.reads + t.stats.reads }),
    { retries: 0, transactions: 0, reads: 0 },
  );
}
