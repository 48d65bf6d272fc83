/**
 * `tidepool result JOB` (the built CLI) against a ZooKeeper ensemble and a node process: a finished
 * job's value decoded, as text and as JSON; a large result fetched from the job's nodes through the
 * data plane with the cluster secret (and a clear refusal with only the read-only monitor credential);
 * unfinished, cancelled and unknown jobs.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { cancelJob } from '../../src/runtime/job/outcome.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { assemble, streamBytes, type Piece } from '../runtime/apps/big-result.js';
import { countSequentially, rootState } from '../runtime/apps/compositions.js';
import { assertCleanError, tidepool, type Run } from '../support/cli.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const app = (name: string): TaskRef => ({ module: new URL(`../runtime/apps/${name}.ts`, import.meta.url).href, export: 'default' });
const T = { timeout: 180_000 };

describe('tidepool result', () => {
  let zk: ZkEnsemble;
  let client: CoordClient;
  let node: NodeProcess;
  const secret = secretFile();
  const monitor = `${secret}.monitor`;
  /** `tidepool ARGS` reading with the credential in `credentialFile` (by default the cluster secret). */
  const cli = (args: string[], credentialFile = secret): Promise<Run> => tidepool([...args, '--secret-file', credentialFile], 150_000);
  before(async () => {
    zk = await startEnsemble({ size: 1 });
    writeFileSync(monitor, secretIn(secret).monitorCredential(), { mode: 0o600 });
    client = await connect(zk.connectionString, { secret: secretIn(secret) });
    node = await startNodeProcess({ zk: zk.connectionString, secretFile: secret });
  });
  after(async () => {
    node.kill('SIGKILL');
    await node.exited;
    await client.close();
    await zk.stop();
  });

  it('prints a finished job\'s value: decoded text, or JSON with --json; waits with --wait', T, async () => {
    const spec = await submitJob(client, { ...taskPoolJob(app('compositions'), rootState(12)), nodes: 1, secret: secretIn(secret) });
    const json = await cli(['result', spec.id, '--zk', zk.hosts, '--wait', '2m', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), { job: spec.id, status: 'done', value: countSequentially(12) });
    const text = await cli(['result', spec.id, '--zk', zk.hosts], monitor); // reading: the monitor credential does

    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, `${inspect(countSequentially(12))}\n`);
  });

  it('fetches a result too large for ZooKeeper from the job\'s nodes with the cluster secret, and says what is missing without it', T, async () => {
    const total = 1024 * 1024 + 5;
    const spec = await submitJob(client, { ...taskPoolJob(app('big-result'), { lo: 0, hi: total }), nodes: 1, secret: secretIn(secret) });
    const run = await cli(['result', spec.id, '--zk', zk.hosts, '--wait', '2m', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { status: string; value: Array<{ lo: number; bytes: string }> };
    assert.equal(out.status, 'done');
    const pieces: Piece[] = out.value.map((p) => ({ lo: p.lo, bytes: Buffer.from(p.bytes, 'base64') }));
    assert.equal(Buffer.compare(Buffer.from(assemble(pieces, total)), Buffer.from(streamBytes(0, total))), 0, 'every byte, in place');
    const refused = await cli(['result', spec.id, '--zk', zk.hosts], monitor);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`^error: the result of job ${spec.id} \\(\\d+ bytes\\) is held in the data plane: --secret-file \\(or TIDEPOOL_SECRET\\) with the cluster secret fetches it$`, 'm'));
  });

  it('an unfinished job: exit 1 at once, or after --wait; a cancelled job: its outcome, exit 1; an unknown job: exit 2', T, async () => {
    const waiting = await submitJob(client, { ...taskPoolJob(app('compositions'), rootState(30)), nodes: 0, secret: secretIn(secret) }); // no node: it never starts
    const now = await cli(['result', waiting.id, '--zk', zk.hosts]);
    assert.equal(now.code, 1);
    assert.match(now.stderr, new RegExp(`^error: job ${waiting.id} has not finished yet \\(--wait DURATION waits for it\\)$`, 'm'));
    const later = await cli(['result', waiting.id, '--zk', zk.hosts, '--wait', '300ms']);
    assert.equal(later.code, 1);
    assert.match(later.stderr, new RegExp(`^error: job ${waiting.id} did not finish within 300ms \\(--wait\\)$`, 'm'));
    assert.equal(await cancelJob(client, waiting.id), true);
    const cancelled = await cli(['result', waiting.id, '--zk', zk.hosts, '--json']);
    assert.equal(cancelled.code, 1);
    assert.deepEqual(JSON.parse(cancelled.stdout), { job: waiting.id, status: 'cancelled' });
    assert.match((await cli(['result', waiting.id, '--zk', zk.hosts])).stderr, new RegExp(`^job ${waiting.id} was cancelled$`, 'm'));
    assertCleanError(await cli(['result', 'j-nope', '--zk', zk.hosts]), /^error: no job j-nope in the cluster$/m);
    assertCleanError(await cli(['result', 'j-nope', '--zk', zk.hosts, '--wait', 'forever']), /^error: --wait: "forever" is not a duration/m);
  });
});
