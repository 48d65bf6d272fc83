/** What the reconciler knows between passes: assignments ordered by transaction id, echoes are no news, completeness. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KnownCluster } from '../../../src/runtime/scheduler/known-cluster.js';

describe('known cluster', () => {
  it('an assignment state older than what is known (a watch read overtaken by a commit) never rolls it back', () => {
    const k = new KnownCluster();
    assert.equal(k.learnAssignment('n1', { job: 'a', version: 3, mtime: 30, zxid: 300n }), true, 'the reconciler\'s own commit');
    assert.equal(k.learnAssignment('n1', { job: '', version: 2, mtime: 20, zxid: 200n }), false, 'an older watch delivery processed late');
    assert.equal(k.learnAssignment('n1', { job: 'a', version: 3, mtime: 30, zxid: 300n }), false, 'the echo of the commit is no news');
    assert.deepEqual(k.assignments.get('n1'), { job: 'a', version: 3, mtime: 30, zxid: 300n });
    assert.equal(k.learnAssignment('n1', { job: '', version: 4, mtime: 40, zxid: 410n }), true, 'the node cleared it itself');
    // Deleted and created again (a node that left and rejoined): the version restarts, the transaction id does not.
    k.forgetAssignment('n1');
    assert.equal(k.learnAssignment('n1', { job: '', version: 0, mtime: 50, zxid: 500n }), true);
    assert.equal(k.learnAssignment('n1', { job: 'b', version: 1, mtime: 60, zxid: 600n }), true);
    assert.equal(k.learnAssignment('n1', { job: '', version: 0, mtime: 50, zxid: 500n }), false);
    assert.equal(k.assignments.get('n1')!.job, 'b');
  });

  it('a size changes as its watch delivers it; a finished job stays finished; started only becomes true', () => {
    const k = new KnownCluster();
    assert.equal(k.learnSize('j', { value: null, version: -1 }), true);
    assert.equal(k.learnSize('j', { value: null, version: -1 }), false, 'no change');
    assert.equal(k.learnSize('j', { value: 3, version: 0 }), true);
    assert.equal(k.learnSize('j', { value: 4, version: 1 }), true);
    assert.equal(k.jobs.get('j')!.size!.value, 4);
    assert.equal(k.learnResult('j', false), false);
    assert.equal(k.jobs.get('j')!.finished, false);
    assert.equal(k.learnResult('j', true), true);
    assert.equal(k.learnResult('j', false), false, 'a job never un-finishes');
    assert.equal(k.jobs.get('j')!.finished, true);
    k.learnStarted('j', true);
    k.learnStarted('j', false);
    assert.equal(k.jobs.get('j')!.started, true, 'a stale read cannot take the marker away');
  });

  it('complete only when every listed node and job is known', () => {
    const k = new KnownCluster();
    assert.equal(k.complete(), false, 'nothing listed yet');
    k.members = ['n1', 'n2'];
    k.assignmentIds = ['n1', 'n2'];
    k.jobIds = ['a', 'b'];
    k.learnAssignment('n1', { job: 'a', version: 1, mtime: 1, zxid: 10n });
    assert.equal(k.complete(), false, 'n2\'s assignment unknown');
    k.learnAssignment('n2', { job: '', version: 0, mtime: 1, zxid: 11n });
    k.learnSize('a', { value: null, version: -1 });
    k.learnResult('a', false);
    assert.equal(k.complete(), false, 'whether a has its started marker is unknown; b unknown');
    k.learnStarted('a', true);
    k.learnResult('b', true);
    assert.equal(k.complete(), true, 'a fully known; b finished, nothing more needed');
    k.forgetAssignment('n2');
    assert.equal(k.complete(), false);
  });
});
