import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterView, JobState } from '../../../src/runtime/scheduler/cluster-view.js';
import { fcfsPolicy } from '../../../src/runtime/scheduler/fcfs-policy.js';
import { plan } from '../../../src/runtime/scheduler/planner.js';

/** Jobs placed by an external resource manager (JobSpec.managedBy) are left alone by the core scheduler. */
const job = (id: string, createdAt: number, extra: Partial<JobState> = {}): JobState =>
  ({ id, createdAt, minNodes: 1, maxNodes: Infinity, desired: 2, finished: false, started: false, ...extra });

describe('external jobs in the core planner', () => {
  it('an external job is neither given nodes, nor cut back, nor blocking the FCFS queue', () => {
    const view: ClusterView = {
      now: 0,
      nodes: [{ id: 'a', assignment: 'E' }, { id: 'b', assignment: 'E' }, { id: 'c', assignment: 'E' }, { id: 'd', assignment: '' }, { id: 'e', assignment: '' }],
      jobs: [job('W', 0, { external: true, desired: 5, minNodes: 5 }), job('E', 1, { external: true, desired: 1, started: true }), job('T', 2)],
    };
    // Without `external`: W (first, min 5) would block T, and E (desired 1) would release two nodes.
    assert.deepEqual(plan(view, fcfsPolicy()), [{ node: 'd', from: '', to: 'T' }, { node: 'e', from: '', to: 'T' }]);
  });

  it('a finished external job still has its nodes released', () => {
    const view: ClusterView = { now: 0, nodes: [{ id: 'a', assignment: 'E' }], jobs: [job('E', 0, { external: true, finished: true, started: true })] };
    assert.deepEqual(plan(view, fcfsPolicy()), [{ node: 'a', from: 'E', to: '' }]);
  });
});
