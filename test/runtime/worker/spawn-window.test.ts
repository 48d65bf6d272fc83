/**
 * Flow control of spawn reports (RunRequest.spawnWindow): a worker never has more than a window of spawn
 * reports unrecorded on its node. The shared word itself (take room, acknowledge, never below zero, not
 * cleared by a new task), then a real worker thread whose task spawns ten batches under a window of 3: it
 * sends three and waits (seen waiting on the word, not guessed with a sleep) until the node acknowledges
 * one, then sends exactly one more; acknowledged as they come, every child arrives once and the task ends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlFlags, SPAWNS_UNRECORDED } from '../../../src/runtime/worker/control-flags.js';
import { decode } from '../../../src/util/codec.js';
import type { RunRequest } from '../../../src/runtime/worker/messages.js';
import type { TaskRecord } from '../../../src/runtime/worker/task-record.js';
import { SPAWN_BATCH } from '../../../src/runtime/worker/task-runner.js';
import { WorkerPool, type WorkerEvent } from '../../../src/runtime/worker/worker-pool.js';
import type { SpawnChecksum } from '../apps/spawn-checksum.js';
import { waitFor } from '../../support/wait.js';

// The variant with retries never runs its children inline: every child is handed over in a batch.
const RETRIED = { module: new URL('../apps/spawn-checksum.ts', import.meta.url).href, export: 'retried' };

describe('spawn window: the shared word', () => {
  it('takes room up to the window, frees it per acknowledgement (never below zero), and survives a new task', () => {
    const flags = ControlFlags.forWorker(ControlFlags.allocate(2), 1);
    for (let i = 0; i < 3; i++) assert.equal(flags.takeSpawnRoom(3), true, `report ${i + 1} of a window of 3`);
    assert.equal(flags.takeSpawnRoom(3), false, 'a fourth waits');
    flags.reset(); // a new task on the slot: its predecessor's reports are still unrecorded
    assert.equal(flags.spawnsUnrecorded, 3);
    flags.spawnsRecorded(1);
    assert.equal(flags.takeSpawnRoom(3), true, 'one acknowledged, one more goes');
    flags.spawnsRecorded(10);
    assert.equal(flags.spawnsUnrecorded, 0, 'late acknowledgements stop at zero');
    let asked = 0;
    flags.spawnsRecorded(0);
    for (let i = 0; i < 3; i++) flags.takeSpawnRoom(3);
    assert.equal(flags.awaitSpawnRoom(3, () => ++asked >= 2, 1), false, 'a wait given up reports no room');
    assert.equal(asked, 2, 'asked before the first wait, then after it');
    assert.equal(flags.spawnsUnrecorded, 4, 'and still counts the report that goes');
  });
});

describe('spawn window on a worker thread', () => {
  let pool: WorkerPool;
  const events: WorkerEvent[] = [];
  before(async () => {
    pool = new WorkerPool(1, (e) => events.push(e));
    await pool.start();
  });
  after(() => pool.close());

  it('a task spawning 10 batches under a window of 3 has at most 3 unrecorded, and sends one more per acknowledgement', async () => {
    const WINDOW = 3;
    const n = 10 * SPAWN_BATCH;
    const req: RunRequest = {
      taskId: 'root', jobId: 'w1', ref: RETRIED, state: { root: true, next: 0, n, value: 0, hold: false } satisfies SpawnChecksum,
      partial: undefined, board: undefined, varNames: [], owner: 'node-1', spawnWindow: WINDOW,
    };
    pool.run(0, req);
    const reports = () => events.filter((e) => e.type === 'encoded-children').length;
    // The pool's control word for slot 0: a worker blocked on it is woken (and counted) by a notify, then waits again.
    const word = (pool as unknown as { slots: Array<{ flags: ControlFlags }> }).slots[0]!.flags;
    const waiting = () => Atomics.notify(word.view, SPAWNS_UNRECORDED, 1) === 1;
    await waitFor(() => reports() === WINDOW && waiting(), 'the worker to send a window of reports and wait');
    assert.equal(word.spawnsUnrecorded, WINDOW);
    assert.equal(reports(), WINDOW, 'nothing more while the window is full');
    assert.ok(!events.some((e) => e.type === 'done'), 'the task waits with its window full');

    pool.spawnsRecorded(0);
    await waitFor(() => reports() === WINDOW + 1 && waiting(), 'exactly one more report after one acknowledgement');
    assert.equal(reports(), WINDOW + 1);

    // Acknowledged as they come (each once), the rest follow, never more than the window unrecorded.
    let acked = 1;
    let most = 0;
    await waitFor(() => {
      const seen = reports();
      most = Math.max(most, seen - acked);
      for (; acked < seen; acked++) pool.spawnsRecorded(0);
      return events.some((e) => e.type === 'done');
    }, 'the task to end');
    assert.ok(most <= WINDOW, `at most ${WINDOW} unrecorded at once (saw ${most})`);
    const values = events.flatMap((e) => e.type === 'encoded-children'
      ? e.records.ends.map((end, i) => decode<TaskRecord>(e.records.bytes.subarray(i === 0 ? 0 : e.records.ends[i - 1]!, end)).state as SpawnChecksum)
      : []).map((s) => s.value);
    assert.deepEqual(values, Array.from({ length: n }, (_, i) => i + 1), 'every child once, in spawn order');
  });
});
