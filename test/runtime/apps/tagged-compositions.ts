/**
 * Test application: the compositions count (2^n nodes, see compositions.ts) with a tag carried in every
 * task state, so that a test can look for the tag on the wire when tasks move between nodes. A task
 * whose tag arrives changed fails the job. No task explores anything before the job variable `go` is 1
 * (test/support/gate.ts), but while it waits it still gives work to idle workers that ask (the root
 * starts expanded, so it has n subtrees to give): the job surely still runs, with work to steal, while
 * a test acts on the channel.
 */
import { defineTask } from '../../../src/runtime/worker/task.js';
import { exploreAll } from './compositions.js';

export interface TaggedState {
  tag: string;
  n: number;
  open: number[];
  count: number;
}

/** The root, expanded: counted once, its children 1…n open. */
export function taggedRoot(tag: string, n: number): TaggedState {
  return { tag, n, open: Array.from({ length: n }, (_, i) => i + 1), count: 1 };
}

export default defineTask<TaggedState, number>({
  name: 'count-tagged-compositions',
  run(s, ctx) {
    if (!s.tag.startsWith('tidepool-')) throw new Error(`task state arrived with tag ${JSON.stringify(s.tag)}`);
    const deadline = Date.now() + 60_000; // a safety net: a broken test must not hang the worker forever
    while (ctx.getVar<number>('go') !== 1 && Date.now() < deadline) {
      if (ctx.shouldMigrate()) return;
      ctx.potentialSplit();
    }
    if (!exploreAll(s, ctx)) return;
    ctx.emit(s.count);
  },
  // Give away the oldest open node: the root of the largest unexplored subtree.
  split(s) {
    if (s.open.length < 2) return undefined;
    const sum = s.open.shift()!;
    return { tag: s.tag, n: s.n, open: [sum], count: 0 };
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
  vars: { go: 'max' },
});
