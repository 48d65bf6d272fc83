/**
 * Cluster security end to end on the embedded backend (cluster-security.ts): in-process nodes, one secret.
 * Beside the shared cases, what only an embedded cluster has: its nodes share the submitting program, so
 * a file of the program's own (outside tidepool's installation) that its client submits runs there —
 * and only that file: another one of the same directory, named in a spec signed with the secret, does not.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { connect } from '../../src/coord/connect.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { encode } from '../../src/util/codec.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { jobPaths } from '../../src/runtime/job/job-paths.js';
import { signSpec } from '../../src/runtime/job/job-signature.js';
import { withDeadline } from '../support/wait.js';
import { clusterSecuritySuite } from './cluster-security.js';

describe('cluster security (embedded)', () => {
  clusterSecuritySuite(async ({ nodes, allowCode }) => {
    const name = `security-${randomBytes(4).toString('hex')}`;
    const cluster = await Cluster.embedded({ name, nodes, workers: 1, progressIntervalMs: 200, ...(allowCode ? { allowCode } : {}) });
    const stranger = await connect(`embedded:${name}`);
    const monitor = await connect(`embedded:${name}`, { secret: cluster.secret!.monitorCredential() });
    return {
      cluster, stranger, monitor, nodes: cluster.localNodes().map((n) => n.id).sort(),
      close: async () => {
        await stranger.close();
        await monitor.close();
        await cluster.close();
      },
    };
  });

  it('a file of the program\'s own, submitted by its embedded cluster, runs there; another file of its directory does not', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'tidepool-own-'));
    const task = (label: string) => [
      "import { writeFileSync } from 'node:fs';",
      `writeFileSync(${JSON.stringify(join(dir, `${label}-ran`))}, 'ran');`,
      "export default { kind: 'tidepool.task', name: 'own', run(s, ctx) { ctx.emit(s.n * 2); }, result: { initial: () => 0, combine: (a, b) => a + b } };",
    ].join('\n');
    writeFileSync(join(dir, 'own.mjs'), task('own'));
    writeFileSync(join(dir, 'other.mjs'), task('other'));
    const cluster = await Cluster.embedded({ nodes: 1, workers: 1 });
    try {
      const own = await cluster.submit({ module: pathToFileURL(join(dir, 'own.mjs')).href, export: 'default' }, { n: 21 });
      assert.equal(await withDeadline(own.result<number>(), 'the program\'s own module'), 42);
      assert.ok(existsSync(join(dir, 'own-ran')));
      // A spec signed with the secret that names the other file (never submitted through the cluster): refused.
      const other = pathToFileURL(join(dir, 'other.mjs')).href;
      const spec = await submitJob(cluster.coordination, { ...taskPoolJob({ module: pathToFileURL(join(dir, 'own.mjs')).href, export: 'default' }, { n: 1 }), nodes: 0, secret: cluster.secret! });
      await cluster.coordination.setData(jobPaths(spec.id).spec, encode(signSpec({ ...spec, kindSpec: { ...(spec.kindSpec as object), ref: { module: other, export: 'default' } } }, cluster.secret!)));
      const outcome = awaitOutcome(cluster.coordination, spec.id);
      await cluster.scale(spec.id, 1);
      const refused = await withDeadline(outcome, 'the other file\'s job');
      assert.equal(refused.status, 'failed');
      if (refused.status === 'failed') assert.match(refused.error, /task module file:.*other\.mjs refused: a file outside this node's installation/);
      assert.equal(existsSync(join(dir, 'other-ran')), false, 'the other file was never imported');
    } finally {
      await cluster.close();
    }
  });
});
