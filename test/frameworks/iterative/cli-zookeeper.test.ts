/**
 * `tidepool iterate --zk` (the built CLI; needs `npm run build`) on a real ZooKeeper ensemble: RUPER on
 * node processes without a script. With --nodes the command starts local node processes that join the
 * cluster for the run (a fresh secret when the cluster has no nodes yet); without, the job takes the
 * cluster's idle nodes, whose secret it then needs. The results equal the sequential fold bit for bit.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import slab, { SLAB_DEFAULTS } from '../../../src/frameworks/iterative/apps/slab.js';
import type { IterativeTaskType } from '../../../src/frameworks/iterative/define-iterative.js';
import { iterateSequentially } from '../../../src/frameworks/iterative/run-iterative.js';
import { childEnv } from '../../support/child-env.js';
import { assertCleanError, runCommand } from '../../support/cli.js';
import { secretFile, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin/tidepool.mjs');
const T = { timeout: 240_000 };

describe('tidepool iterate --zk', () => {
  let zk: ZkEnsemble;
  const nodes: NodeProcess[] = [];
  // The caller's TIDEPOOL_* variables stay out of the commands (the secret especially): childEnv.
  const iterate = (args: string[], cwd = ROOT, conn = zk.hosts) => runCommand(process.execPath, [BIN, 'iterate', ...args, '--zk', conn, '--json'], { cwd, env: childEnv(), timeoutMs: 200_000 });

  before(async () => {
    zk = await startEnsemble({ size: 1 });
  });
  after(async () => {
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await zk?.stop();
  });

  it('--nodes 2: two local node processes join for the run (a fresh secret), ruper balances them, the result is exact', T, async () => {
    const run = await iterate(['slab', '--iterations', '200000', '--nodes', '2', '--workers', '1', '--balance', 'ruper', '--checkpoint-interval', '200ms', '--min-remaining', '50ms']);
    assert.equal(run.code, 0, run.stderr);
    const r = JSON.parse(run.stdout) as { verified: boolean; iterations: number; nodes: number; tally: unknown; ruper: unknown };
    assert.ok(r.verified);
    assert.equal(r.iterations, 200_000);
    assert.deepEqual(r.ruper, { checkpointInterval: 0.2, minRemaining: 0.05, maxDeviation: 0.1 });
    assert.deepEqual(r.tally, iterateSequentially(slab, { iterations: 200_000, params: SLAB_DEFAULTS }).value, 'bit-identical to the sequential fold');
  });

  it('on the cluster\'s own nodes: a user\'s module runs there; local node processes need the cluster\'s secret', T, async () => {
    // A cluster of its own (a chroot): the first case's nodes made /tidepool with their fresh secret.
    const secret = secretFile();
    const own = `${zk.hosts}/own`;
    nodes.push(...await Promise.all([1, 2].map(() => startNodeProcess({ zk: `zk://${own}`, secretFile: secret, workers: 1 }))));
    const project = mkdtempSync(join(tmpdir(), 'tp-iterate-zk-'));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(ROOT, join(project, 'node_modules', 'tidepool-runtime'));
    writeFileSync(join(project, 'package.json'), '{"type": "module"}');
    copyFileSync(join(ROOT, 'examples/iterative/buffon.js'), join(project, 'needle.js'));
    const buffon = ((await import(new URL('../../../examples/iterative/buffon.js', import.meta.url).href)) as { default: IterativeTaskType<unknown, unknown> }).default;
    const run = await iterate(['./needle.js', '--iterations', '60000', '--block-size', '500', '--balance', 'ruper', '--secret-file', secret], project, own);
    assert.equal(run.code, 0, run.stderr);
    const r = JSON.parse(run.stdout) as { iterations: number; value: unknown };
    assert.equal(r.iterations, 60_000);
    assert.deepEqual(r.value, iterateSequentially(buffon, { iterations: 60_000, blockSize: 500 }).value);
    assertCleanError(await iterate(['slab', '--iterations', '1000', '--nodes', '1'], ROOT, own), /holds a cluster secured by its own secret: --secret-file \(or TIDEPOOL_SECRET\) is needed to run on it/);
  });
});
