/**
 * The task pool's leader recovers the tasks of vanished members; a recovery scan that fails (the
 * connection lost under load) is repeated rather than leaving those tasks to a dead owner.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EmbeddedClient } from '../../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../../src/coord/embedded/embedded-server.js';
import { CoordError } from '../../../src/coord/errors.js';
import { GroupMembership } from '../../../src/coord/recipes/group-membership.js';
import { TerminationCoordinator } from '../../../src/coord/recipes/termination-detection.js';
import { encode } from '../../../src/runtime/codec.js';
import { jobPaths } from '../../../src/runtime/job-paths.js';
import { TaskPoolLeaderDuties } from '../../../src/runtime/kinds/task-pool-leader.js';
import { Ledger } from '../../../src/runtime/ledger.js';
import type { TaskSnapshot } from '../../../src/runtime/task-record.js';
import { waitFor } from '../../support/wait.js';

describe('task pool leader duties', () => {
  it('a recovery scan that fails is repeated: the root is still adopted', async () => {
    const server = new EmbeddedServer();
    const client = new EmbeddedClient(server, 600_000);
    const paths = jobPaths('rescan');
    await new TerminationCoordinator(client, paths.termination).init('root', encode({ owner: '', state: { n: 1 }, partial: undefined }));
    const ledger = new Ledger(client, { tasks: paths.tasks, txns: paths.txns }, 'n1');
    const list = ledger.list.bind(ledger);
    let failures = 0;
    ledger.list = () => (failures++ === 0 ? Promise.reject(new CoordError('CONNECTION_LOSS', paths.tasks)) : list());
    const members = new GroupMembership(client, paths.members);
    await members.join('n1');
    await members.watch();
    const adopted: TaskSnapshot[] = [];
    const duties = new TaskPoolLeaderDuties(client, paths, ledger, members, { initial: () => 0, combine: (a, b) => (a as number) + (b as number) }, (s) => adopted.push(s));
    try {
      duties.start();
      await waitFor(() => adopted.length > 0, 'the root to be recovered after the failed scan', 10_000);
      assert.ok(failures >= 2, 'the first scan failed and a second one ran');
      assert.deepEqual(adopted.map((s) => s.id), ['root']);
    } finally {
      duties.stop();
      members.stop();
    }
  });
});
