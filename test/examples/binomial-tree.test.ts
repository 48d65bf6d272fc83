/**
 * The binomial-tree example: its SHA-1 stream is SHA-1, it reproduces UTS's published T3 count, its split
 * loses and repeats no node, and on a 2-node embedded cluster it counts the same tree as a plain loop.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import binomialTree, { countSequentially, hasWork, rootTask, TREES, visit, type TreeState } from '../../examples/tasks/binomial-tree.js';
import { nodeDraw, writeChildState, writeRootState } from '../../examples/tasks/uts-rng.js';
import { childEnv } from '../support/child-env.js';

const run = promisify(execFile);

/** Five state words as the 20 big-endian bytes of the digest. */
const bytes = (words: ArrayLike<number>) => Buffer.concat(Array.from(words, (w) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(w);
  return b;
}));

/** Counts what is left in `s` with the plain loop. */
function finish(s: TreeState): number {
  while (hasWork(s)) visit(s);
  return s.nodes;
}

describe('examples/binomial-tree', () => {
  it('node states are SHA-1 digests as UTS defines them (root: 16 zero bytes ‖ seed; child i: parent ‖ i)', () => {
    for (const seed of [0, 42, 0x7fffffff]) {
      const root = new Int32Array(5);
      writeRootState(seed, root);
      const seedBytes = Buffer.alloc(20);
      seedBytes.writeInt32BE(seed, 16);
      assert.deepEqual(bytes(root), createHash('sha1').update(seedBytes).digest(), `root of seed ${seed}`);
      const children = new Int32Array(5 * 9);
      for (let i = 0; i < 9; i++) writeChildState(root, i, children, 5 * i);
      for (let i = 0; i < 9; i++) {
        const index = Buffer.alloc(4);
        index.writeInt32BE(i);
        assert.deepEqual(bytes(children.slice(5 * i, 5 * i + 5)), createHash('sha1').update(Buffer.concat([bytes(root), index])).digest(), `child ${i}`);
      }
    }
  });

  it('UTS T3 (b0 2000, q 0.124875, m 8, seed 42): 4,112,897 nodes and 3,599,034 leaves, as published', { timeout: 60_000 }, () => {
    assert.deepEqual(countSequentially(TREES.t3), { nodes: 4_112_897, leaves: 3_599_034 });
  });

  it('split gives away the upper half of the root\'s children as a range: a few numbers, however many children', () => {
    const whole = countSequentially(TREES.t3).nodes;
    const s = rootTask(TREES.t3);
    const child = binomialTree.split!(s)!;
    assert.deepEqual([s.rootNext, s.rootEnd, s.atRoot, child.rootNext, child.rootEnd, child.atRoot, child.size, child.stack.length], [0, 1000, true, 1000, 2000, false, 0, 0]);
    assert.equal(finish(s) + finish(child), whole, 'every node counted once');
  });

  it('then the bottom half of the stack; both parts together count every node once', () => {
    /** The subtree of the root's child `k` alone. */
    const subtree = (k: number): TreeState => ({ ...rootTask(TREES.t3), atRoot: false, rootNext: k, rootEnd: k + 1 });
    const sizes = Array.from({ length: 40 }, (_, k) => finish(subtree(k)));
    const k = sizes.indexOf(Math.max(...sizes));
    const s = subtree(k);
    for (let i = 0; i < 200; i++) visit(s);
    const before = s.size / 5;
    const bottom = s.stack.slice(0, 5 * Math.floor(before / 2));
    const top = s.stack.slice(5 * Math.floor(before / 2), s.size);
    const child = binomialTree.split!(s)!;
    assert.deepEqual(child.stack, bottom, 'the child gets exactly the bottom half (its buffer holds nothing more)');
    assert.equal(child.size, bottom.length);
    assert.deepEqual(s.stack.slice(0, s.size), top, 'the parent keeps the top half, moved down');
    assert.equal(child.size / 5 + s.size / 5, before);
    assert.deepEqual([child.atRoot, child.nodes, child.rootNext, child.rootEnd, child.shape], [false, 0, 0, 0, TREES.t3]);
    assert.equal(finish(s) + finish(child), sizes[k]);
  });

  it('a lone node is opened up until two can be shared; a lone leaf ends the task', () => {
    const root = new Int32Array(5);
    writeRootState(TREES.t3.seed, root);
    const draws = Array.from({ length: 2000 }, (_, i) => {
      const child = new Int32Array(5);
      writeChildState(root, i, child, 0);
      return nodeDraw(child, 0);
    });
    const only = (k: number): TreeState => ({ ...rootTask(TREES.t3), atRoot: false, rootNext: k, rootEnd: k + 1 });
    const leaf = only(draws.findIndex((d) => d >= TREES.t3.q));
    assert.equal(binomialTree.split!(leaf), undefined);
    assert.deepEqual([hasWork(leaf), leaf.nodes, leaf.leaves], [false, 1, 1]);
    const inner = draws.findIndex((d) => d < TREES.t3.q);
    const s = only(inner);
    const whole = finish(only(inner));
    const child = binomialTree.split!(s)!;
    assert.ok(s.nodes >= 1 && child.size >= 5, 'opened up, then shared');
    assert.equal(finish(s) + finish(child), whole);
  });

  it('on a 2-node embedded cluster the count equals the sequential one', { timeout: 120_000 }, async () => {
    const script = fileURLToPath(new URL('../../examples/binomial-tree.ts', import.meta.url));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script, 'small', '2', '1'], { timeout: 110_000, env: childEnv() });
    const out = JSON.parse(stdout) as { nodes: number; leaves: number; sequentialNodes: number };
    assert.equal(out.sequentialNodes, 39_137);
    assert.equal(out.nodes, out.sequentialNodes);
    assert.equal(out.leaves, countSequentially(TREES.small).leaves);
  });
});
