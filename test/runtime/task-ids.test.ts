/**
 * Task ids (src/runtime/pool/task-snapshot.ts TaskIds): a node's participations in one job never hand
 * out the same id twice. A node that leaves a job and joins it again gets a new counter; its ids must
 * still differ from the ones it gave before (the manager's sticky-scale test once failed with
 * "task n-….0: running → recording" when a rejoined node reused its earlier tasks' ids), also when the
 * clock stands still or goes back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskIds } from '../../src/runtime/pool/task-snapshot.js';

/** Ids as ZooKeeper accepts them in a znode name: no '/', not '.' or '..', printable. */
const ZNODE_NAME = /^[A-Za-z0-9_.-]+$/;

function take(ids: TaskIds, n: number): string[] {
  return Array.from({ length: n }, () => ids.fresh());
}

describe('TaskIds', () => {
  it('gives distinct ids within one participation, each a valid znode name that starts with the node id', () => {
    const got = take(new TaskIds('n-1a2b'), 5000);
    assert.equal(new Set(got).size, 5000);
    for (const id of got) {
      assert.match(id, ZNODE_NAME);
      assert.ok(id.startsWith('n-1a2b.'), id);
    }
  });

  it('gives a rejoining node (a second participation in the same millisecond, or with the clock gone back) ids it never gave before', () => {
    const first = take(new TaskIds('n-1', 1_000_000), 100);
    const again = take(new TaskIds('n-1', 1_000_000), 100);
    const back = take(new TaskIds('n-1', 999_000), 100);
    assert.equal(new Set([...first, ...again, ...back]).size, 300);
  });
});
