/**
 * Rotating the cluster secret on real `tidepool node` processes over ZooKeeper, as an operator does it
 * (docs/security.md, "Rotating the secret"): rewrite the secret file and send SIGHUP, with
 * `tidepool secret protect` while both secrets are listed and again once the new one stands alone, all
 * while a job runs. The job ends exactly; then a process with the old secret cannot reach the nodes
 * (refused, and each node logs the refusal), reads nothing in ZooKeeper, and a node holding it cannot
 * start. A tree made before access lists: a node refuses to start on it, naming `tidepool secret
 * protect`, and starts once that has run.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { CoordError } from '../../src/coord/errors.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import type { CoordClient } from '../../src/coord/types.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { jobLeader } from '../../src/runtime/client/job-list.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { listNodes } from '../../src/runtime/scheduler/index.js';
import { clusterPaths } from '../../src/runtime/job/job-paths.js';
import { secretName } from '../../src/transport/channel-credentials.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { tidepool } from '../support/cli.js';
import { openGate } from '../support/gate.js';
import { startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { taggedRoot } from './apps/tagged-compositions.js';

const TAGGED = { module: new URL('./apps/tagged-compositions.ts', import.meta.url).href, export: 'default' };
const N = 14;

interface Protected { root: string; protected: number; refused: string[]; resigned: number; unsigned: string[] }

/** `tidepool secret protect` (the built CLI) with the secrets in `file`, on `conn`. */
async function protect(conn: string, file: string): Promise<Protected> {
  const run = await tidepool(['secret', 'protect', '--zk', conn, '--secret-file', file, '--json']);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as Protected;
}

/** A file holding `content` as a secret file. */
function secretFileOf(content: string): string {
  const file = join(mkdtempSync(join(os.tmpdir(), 'tidepool-secret-')), 'secret');
  writeFileSync(file, content, { mode: 0o600 });
  return file;
}

describe('secret rotation on node processes', { timeout: 240_000 }, () => {
  let zk: ZkEnsemble;
  let admin: CoordClient;
  const nodes: NodeProcess[] = [];
  before(async () => {
    zk = await startEnsemble({ size: 1 });
  });
  after(async () => {
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await admin?.close();
    await zk?.stop();
  });

  it('the documented steps during a job (SIGHUP, protect with both, SIGHUP, protect with the new one); the job ends exactly; the old secret is refused afterwards', async () => {
    const [oldSecret, newSecret] = [randomBytes(24).toString('base64url'), randomBytes(24).toString('base64url')];
    const file = join(mkdtempSync(join(os.tmpdir(), 'tidepool-rotation-')), 'secret');
    writeFileSync(file, `${oldSecret}\n`, { mode: 0o600 });
    admin = await connect(zk.connectionString, { secret: oldSecret });
    nodes.push(...await Promise.all([0, 1].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: file, env: { TIDEPOOL_LOG: 'warn' } }))));
    const spec = await submitJob(admin, { ...taskPoolJob(TAGGED, taggedRoot('tidepool-rotation', N)), nodes: 2, secret: ClusterSecret.from(oldSecret) });
    const outcome = awaitOutcome(admin, spec.id);
    await waitFor(async () => (await jobLeader(admin, spec.id)) !== null, 'the job to run');

    const [oldName, newName] = [secretName(oldSecret), secretName(newSecret)];
    const steps: Array<[string, string]> = [
      [`${oldSecret}\n${newSecret}\n`, `presents ${oldName}; trusts ${oldName}, ${newName}`],
      [`${newSecret}\n${oldSecret}\n`, `presents ${newName}; trusts ${newName}, ${oldName}`],
      [`${newSecret}\n`, `presents ${newName}; trusts ${newName})`],
    ];
    for (const [i, [content, summary]] of steps.entries()) {
      writeFileSync(file, content);
      admin.useSecret(content); // the operator's client takes each step too (its coordination credentials)
      for (const n of nodes) n.kill('SIGHUP');
      for (const n of nodes) {
        await waitFor(() => n.stderr().includes(`node channel credentials reloaded (${summary}`), `${n.id} to reload: ${summary}`);
      }
      if (i === 1) {
        // Both listed, the new one first: every znode accepts both, the running job's spec is signed with the new one.
        const both = await protect(zk.connectionString, file);
        assert.deepEqual([both.refused, both.unsigned, both.resigned], [[], [], 1], JSON.stringify(both));
        assert.ok(both.protected > 10, JSON.stringify(both));
      }
    }
    // The new one alone: the old secret's entries leave every list.
    const last = await protect(zk.connectionString, file);
    assert.deepEqual([last.refused, last.unsigned], [[], []], JSON.stringify(last));

    // The old secret now reads nothing, and a node holding it does not start.
    const old = await connect(zk.connectionString, { secret: oldSecret });
    try {
      await assert.rejects(listNodes(old), (err: unknown) => err instanceof CoordError && err.code === 'NO_AUTH' && /cluster secret or monitor credential required to read/.test(err.message));
    } finally {
      await old.close();
    }
    await assert.rejects(startNodeProcess({ zk: zk.connectionString, secretFile: secretFileOf(`${oldSecret}\n`) }),
      /exited \(1\) before it was ready[^]*the cluster root \/tidepool is not this cluster's: its access list lets this secret neither read it nor change it/);

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

  it('a tree made before access lists: a node refuses to start on it, naming the fix; after tidepool secret protect it starts', async () => {
    const conn = `${zk.connectionString}/legacy`;
    const open = await connect(conn); // no credential: what a tidepool before access lists left behind
    try {
      await mkdirp(open, clusterPaths().nodes);
    } finally {
      await open.close();
    }
    const file = secretFileOf(`${randomBytes(24).toString('base64url')}\n`);
    await assert.rejects(startNodeProcess({ zk: conn, secretFile: file }),
      /exited \(1\) before it was ready[^]*the cluster root \/tidepool is not protected by the cluster secret \(its access list: world:anyone[^)]*\): a client without the secret could read or change the cluster; give the tree the cluster's access list with `tidepool secret protect --zk … --secret-file …`/);
    const done = await protect(conn, file);
    assert.deepEqual(done.refused, []);
    assert.ok(done.protected >= 2, JSON.stringify(done));
    const node = await startNodeProcess({ zk: conn, secretFile: file });
    nodes.push(node);
    const stranger = await connect(conn);
    try {
      await assert.rejects(stranger.getChildren(clusterPaths().nodes), (err: unknown) => err instanceof CoordError && err.code === 'NO_AUTH');
    } finally {
      await stranger.close();
    }
  });
});
