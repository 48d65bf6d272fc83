/**
 * Rotating the cluster secret on real `tidepool node` processes over ZooKeeper, as an operator does it:
 * rewrite the secret file and send SIGHUP, in three steps, while a job runs. The job ends exactly; then a
 * process with the old secret cannot reach the nodes (refused, and each node logs the refusal).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { jobLeader } from '../../src/runtime/client/job-list.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { secretName } from '../../src/transport/channel-credentials.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import { openGate } from '../support/gate.js';
import { startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { taggedRoot } from './apps/tagged-compositions.js';

const TAGGED = { module: new URL('./apps/tagged-compositions.ts', import.meta.url).href, export: 'default' };
const N = 14;

describe('secret rotation on node processes', { timeout: 240_000 }, () => {
  let zk: ZkEnsemble;
  let admin: CoordClient;
  const nodes: NodeProcess[] = [];
  before(async () => {
    zk = await startEnsemble({ size: 1 });
    admin = await connect(zk.connectionString);
  });
  after(async () => {
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await admin?.close();
    await zk?.stop();
  });

  it('three SIGHUP steps during a job; the job ends exactly; the old secret is refused afterwards', async () => {
    const [oldSecret, newSecret] = [randomBytes(24).toString('base64url'), randomBytes(24).toString('base64url')];
    const file = join(mkdtempSync(join(os.tmpdir(), 'tidepool-rotation-')), 'secret');
    writeFileSync(file, `${oldSecret}\n`, { mode: 0o600 });
    nodes.push(...await Promise.all([0, 1].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: file, env: { TIDEPOOL_LOG: 'warn' } }))));
    const spec = await submitJob(admin, { ...taskPoolJob(TAGGED, taggedRoot('tidepool-rotation', N)), nodes: 2 });
    const outcome = awaitOutcome(admin, spec.id);
    await waitFor(async () => (await jobLeader(admin, spec.id)) !== null, 'the job to run');

    const [oldName, newName] = [secretName(oldSecret), secretName(newSecret)];
    const steps: Array<[string, string]> = [
      [`${oldSecret}\n${newSecret}\n`, `presents ${oldName}; trusts ${oldName}, ${newName}`],
      [`${newSecret}\n${oldSecret}\n`, `presents ${newName}; trusts ${newName}, ${oldName}`],
      [`${newSecret}\n`, `presents ${newName}; trusts ${newName})`],
    ];
    for (const [content, summary] of steps) {
      writeFileSync(file, content);
      for (const n of nodes) n.kill('SIGHUP');
      for (const n of nodes) {
        await waitFor(() => n.stderr().includes(`node channel credentials reloaded (${summary}`), `${n.id} to reload: ${summary}`);
      }
    }

    // A process that kept the old secret: refused by each node, which logs why.
    const stale = new TcpTransport({ nodeId: 'stale', secret: [oldSecret, newSecret] });
    await stale.start();
    try {
      for (const n of nodes) {
        await assert.rejects(stale.send({ nodeId: n.id, address: n.address }, { type: 'hello' }), /refused by peer: certificate from .*tidepool cluster [0-9a-f]{12} refused/);
        await waitFor(() => /dropping connection from 127\.0\.0\.1:\d+: certificate from .*tidepool cluster [0-9a-f]{12} refused/.test(n.stderr()), `${n.id} to log the refusal`);
      }
    } finally {
      await stale.close();
    }

    await openGate(admin, spec.id);
    const end = await withDeadline(outcome, 'the outcome', 120_000);
    assert.equal(end.status, 'done', JSON.stringify(end));
    if (end.status === 'done') assert.equal(end.value, 2 ** N);
  });
});
