/**
 * Cluster security end to end, shared by the embedded and the ZooKeeper tests (docs/security.md):
 * - a client without the secret can neither change nor read any znode of the cluster, in every path
 *   family under its root (jobs and everything a job has, nodes, assignments, stats, scheduler,
 *   resource manager), and cannot plant a job or assign a node to one;
 * - neither it nor a client with the read-only monitor credential can cancel, scale, drain or ask a
 *   running job through the API a client calls: each is refused (NO_AUTH, naming what the session
 *   holds), and the job runs on, on its node, to its exact result;
 * - a node runs no code a job names unless the job passes code admission: a `data:` module or a file
 *   outside the node's installation, an unsigned spec, a spec changed after signing, a spec moved to
 *   another job id — each runs nothing (a canary file the module would write at import stays absent),
 *   fails the job naming the module and the rule, and leaves the node serving other jobs;
 * - the same file runs on a node whose operator allows its directory.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { CoordError } from '../../src/coord/errors.js';
import { joinPath } from '../../src/coord/paths.js';
import type { CoordClient } from '../../src/coord/types.js';
import { submitManagedJob } from '../../src/frameworks/malleable/manager/manager-store.js';
import { ResourceManager, warnNode } from '../../src/frameworks/malleable/manager/resource-manager.js';
import type { Cluster } from '../../src/runtime/client/cluster.js';
import { decode, encode } from '../../src/util/codec.js';
import { awaitOutcome, cancelJob, type JobOutcome } from '../../src/runtime/job/outcome.js';
import { drainNode, listNodes, scaleJob } from '../../src/runtime/scheduler/index.js';
import { requestJob } from '../../src/runtime/client/job-requests.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { clusterPaths, jobPaths } from '../../src/runtime/job/job-paths.js';
import { signSpec } from '../../src/runtime/job/job-signature.js';
import type { JobSpec } from '../../src/runtime/job/job-spec.js';
import { assignNamedNode } from '../../src/runtime/scheduler/job-sizing.js';
import { openGate } from '../support/gate.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { countSequentially, rootState } from './apps/compositions.js';

const COMPOSITIONS = { module: new URL('./apps/compositions.ts', import.meta.url).href, export: 'default' };
const HELD = { module: new URL('./apps/held-compositions.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 240_000 };

export interface SecureCluster {
  /** A client holding the cluster secret (its coordination session too). */
  cluster: Cluster;
  /** A session on the same coordination service without any credential. */
  stranger: CoordClient;
  /** A session on the same coordination service with the read-only monitor credential. */
  monitor: CoordClient;
  /** The nodes, by id. */
  nodes: string[];
  close(): Promise<void>;
}

/** Starts a cluster of `nodes` nodes; `allowCode`: what their operator allow-lists. */
export type StartCluster = (opts: { nodes: number; allowCode?: string[] }) => Promise<SecureCluster>;

/** A directory outside tidepool's installation holding a task module that writes a canary file when imported. */
function canaryModule(label: string): { url: string; dir: string; canary: string } {
  const dir = mkdtempSync(join(os.tmpdir(), `tidepool-canary-${label}-`));
  const canary = join(dir, 'canary');
  writeFileSync(join(dir, 'task.mjs'), [
    "import { writeFileSync } from 'node:fs';",
    `writeFileSync(${JSON.stringify(canary)}, String(process.pid));`,
    "export default { kind: 'tidepool.task', name: 'canary', run(s, ctx) { ctx.emit(s.n * 2); }, result: { initial: () => 0, combine: (a, b) => a + b } };",
  ].join('\n'));
  return { url: pathToFileURL(join(dir, 'task.mjs')).href, dir, canary };
}

function dataModule(canary: string): string {
  const code = `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(canary)}, 'ran'); export default { kind: 'tidepool.task', name: 'evil', run() {} };`;
  return `data:text/javascript,${encodeURIComponent(code)}`;
}

/** The task-pool spec `spec` with its task module `module` (and `more` of the pool's fields). */
function withTaskModule(spec: JobSpec, module: string, more: Record<string, unknown> = {}): JobSpec {
  return { ...spec, kindSpec: { ...(spec.kindSpec as object), ref: { module, export: 'default' }, ...more } };
}

/** A job of `nodes: 0` (nothing runs it yet) whose spec then becomes `change(spec)`, written with the secret. */
async function jobWithSpec(cluster: Cluster, change: (spec: JobSpec) => JobSpec): Promise<JobSpec> {
  const client = cluster.coordination;
  const submitted = await submitJob(client, { ...taskPoolJob(COMPOSITIONS, rootState(6)), nodes: 0, secret: cluster.secret! });
  await client.setData(jobPaths(submitted.id).spec, encode(change(submitted)));
  return submitted;
}

/** Gives the job one node by name and resolves with its outcome. */
async function runOn(cluster: Cluster, node: string, jobId: string): Promise<JobOutcome> {
  const outcome = awaitOutcome(cluster.coordination, jobId);
  await waitFor(async () => (await cluster.nodes()).some((n) => n.id === node && n.assignment === ''), `node ${node} to be idle`, 60_000);
  await assignNamedNode(cluster.coordination, node, jobId);
  return withDeadline(outcome, `the outcome of job ${jobId}`, 120_000);
}

function failedWith(outcome: JobOutcome, pattern: RegExp): void {
  assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
  if (outcome.status === 'failed') assert.match(outcome.error, pattern);
}

/** Every znode under `root` (depth first), read with the secret. */
async function tree(client: CoordClient, root: string): Promise<Map<string, { data: string; version: number }>> {
  const out = new Map<string, { data: string; version: number }>();
  const visit = async (path: string): Promise<void> => {
    try {
      const { data, stat } = await client.getData(path);
      out.set(path, { data: data.toString('base64'), version: stat.version });
      for (const name of (await client.getChildren(path)).sort()) await visit(joinPath(path, name));
    } catch (err) {
      if (!(err instanceof CoordError && err.code === 'NO_NODE')) throw err; // gone meanwhile (an ephemeral)
    }
  };
  await visit(root);
  return out;
}

async function refused(op: Promise<unknown>, path: string, what: RegExp): Promise<void> {
  await assert.rejects(op, (err: unknown) => {
    assert.ok(err instanceof CoordError, `${path}: expected a CoordError, got ${String(err)}`);
    assert.equal(err.code, 'NO_AUTH', `${path}: ${err.message}`);
    assert.match(err.message, what);
    return true;
  });
}

export function clusterSecuritySuite(start: StartCluster): void {
  it('a client without the secret can neither change nor read any znode, in every path family; it cannot plant a job', T, async () => {
    const { cluster, stranger, nodes, close } = await start({ nodes: 2 });
    const client = cluster.coordination;
    const manager = new ResourceManager(client, { id: 'security-test', policy: 'equipartition', tGapMs: 0 });
    try {
      // Fill every family: a finished job (result, tallies, ledger), a running one (members, election,
      // vars, control requests and acknowledgements, scheduler size), a managed job, a manager election,
      // a warning, every node's registration, assignment and stats.
      const done = await cluster.submit(COMPOSITIONS, rootState(10), { nodes: 1 });
      assert.equal(await withDeadline(done.result<number>(), 'the first job'), countSequentially(10));
      const held = await cluster.submit(HELD, rootState(12), { nodes: 1 });
      await waitFor(async () => (await cluster.nodes()).some((n) => n.job === held.id), 'the held job to run');
      await requestJob(client, held.id, 'status', null, { timeoutMs: 60_000 });
      await manager.start();
      await submitManagedJob(client, { ...taskPoolJob(HELD, rootState(8)), flexibility: 'rigid', nodes: 1, secret: cluster.secret! });
      await warnNode(client, nodes.at(-1)!);
      await waitFor(async () => (await client.getChildren(clusterPaths().stats).catch(() => [])).length === nodes.length, 'every node\'s stats');

      const root = clusterPaths().root;
      const before = await tree(client, root);
      const paths = [...before.keys()];
      const family = (re: RegExp) => assert.ok(paths.some((p) => re.test(p)), `the tree holds ${re.source}: ${paths.join(' ')}`);
      for (const re of [/^\/tidepool\/nodes\/./, /^\/tidepool\/assign\/./, /^\/tidepool\/stats\/./, /^\/tidepool\/scheduler$/, /^\/tidepool\/manager-election/,
        /^\/tidepool\/manager-warnings\/./, /\/jobs\/[^/]+\/spec$/, /\/jobs\/[^/]+\/result$/, /\/jobs\/[^/]+\/tallies\/./, /\/jobs\/[^/]+\/termination\/tasks\/./,
        /\/jobs\/[^/]+\/termination\/txns\/./, /\/jobs\/[^/]+\/members\/./, /\/jobs\/[^/]+\/election\/./, /\/jobs\/[^/]+\/control\/requests/,
        /\/jobs\/[^/]+\/control\/acks$/, /\/jobs\/[^/]+\/vars$/, /\/jobs\/[^/]+\/started$/, /\/jobs\/[^/]+\/managed$/, /^\/tidepool\/scheduler-election\/./]) family(re);

      const write = /cluster secret required: this session holds no credential/;
      const read = /cluster secret or monitor credential required to read: this session holds no credential/;
      for (const path of paths) {
        await refused(stranger.create(joinPath(path, 'intruder'), Buffer.from('x')), joinPath(path, 'intruder'), write);
        await refused(stranger.setData(path, Buffer.from('x')), path, write);
        if (path !== root) await refused(stranger.delete(path), path, write);
        await refused(stranger.getData(path), path, read);
        await refused(stranger.multi([{ op: 'setData', path, data: Buffer.from('x') }]), path, write);
      }
      // Nor a new job, nor an assignment that would make a node take one.
      await refused(stranger.create(jobPaths('j-planted').base), jobPaths('j-planted').base, write);
      await refused(stranger.setData(joinPath(clusterPaths().assignments, nodes[0]!), Buffer.from(held.id)), joinPath(clusterPaths().assignments, nodes[0]!), write);
      const after = await tree(client, root);
      for (const [path, was] of before) if (path.endsWith('/spec')) assert.deepEqual(after.get(path), was, `${path} is unchanged`);
      for (const path of after.keys()) assert.ok(!path.endsWith('/intruder') && !path.includes('j-planted'), `${path} was planted`);
      await openGate(client, held.id);
      assert.equal(await withDeadline(held.result<number>(), 'the held job'), countSequentially(12));
    } finally {
      await manager.stop();
      await close();
    }
  });

  it('control needs the secret: without it, or with the monitor credential, cancel, scale, drain and requests are refused; the job ends exact', T, async () => {
    const { cluster, stranger, monitor, close } = await start({ nodes: 2 });
    const client = cluster.coordination;
    try {
      const held = await cluster.submit(HELD, rootState(12), { nodes: 1 });
      await waitFor(async () => (await cluster.nodes()).some((n) => n.job === held.id), 'the held job to run');
      const running = async () => (await listNodes(client)).filter((n) => n.assignment === held.id).map((n) => n.id);
      const on = await running();
      assert.equal(on.length, 1);
      // The monitor credential reads what the job is, and where.
      assert.deepEqual((await listNodes(monitor)).filter((n) => n.assignment === held.id).map((n) => n.id), on);
      const sessions = [
        { who: 'a client without the secret', session: stranger, holds: /(cluster secret required|cluster secret or monitor credential required to read): this session holds no credential/ },
        { who: 'a monitor', session: monitor, holds: /cluster secret required: this session holds a read-only monitor credential/ },
      ];
      for (const { who, session, holds } of sessions) {
        for (const [what, op] of [
          ['cancel', () => cancelJob(session, held.id)],
          ['scale to 2', () => scaleJob(session, held.id, 2)],
          ['drain its node', () => drainNode(session, on[0]!)],
          ['a status request', () => requestJob(session, held.id, 'status', null, { timeoutMs: 30_000 })],
        ] as const) {
          await assert.rejects(withDeadline(op(), `${who}: ${what}`, 60_000), (err: unknown) => {
            assert.ok(err instanceof CoordError, `${who}: ${what}: expected a CoordError, got ${String(err)}`);
            assert.equal(err.code, 'NO_AUTH', `${who}: ${what}: ${err.message}`);
            assert.match(err.message, holds, `${who}: ${what}`);
            return true;
          }, `${who}: ${what} is refused`);
        }
      }
      // Nothing changed: the job has no outcome, still its one node, and runs to its exact result.
      assert.equal(await client.exists(jobPaths(held.id).result), null, 'no outcome was written');
      assert.deepEqual(await running(), on);
      await openGate(client, held.id);
      assert.equal(await withDeadline(held.result<number>(), 'the held job'), countSequentially(12));
    } finally {
      await close();
    }
  });

  it('a node runs no code a job names unless admitted: data:, a file outside its installation, unsigned or changed specs fail naming the rule; it goes on serving', T, async () => {
    const { cluster, nodes, close } = await start({ nodes: 1 });
    const node = nodes[0]!;
    const outside = canaryModule('refused');
    const dataCanary = join(outside.dir, 'data-canary');
    try {
      // A data: module, even in a spec signed with the secret.
      const dataJob = await jobWithSpec(cluster, (s) => signSpec(withTaskModule(s, dataModule(dataCanary)), cluster.secret!));
      failedWith(await runOn(cluster, node, dataJob.id), new RegExp(`node ${node} refused job ${dataJob.id}: task module data:text/javascript,.* refused: data: URLs are code written into the job spec itself`));
      // A file outside the installation, even in a spec signed with the secret.
      const fileJob = await jobWithSpec(cluster, (s) => signSpec(withTaskModule(s, outside.url), cluster.secret!));
      failedWith(await runOn(cluster, node, fileJob.id), new RegExp(`task module ${outside.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} refused: a file outside this node's installation .* runs only from a location the operator allows \\(--allow-code file://`));
      // An installed module, but no signature; a signature over different fields; a signed spec copied under another id.
      const unsigned = await jobWithSpec(cluster, (s) => ({ ...s, signature: undefined }));
      failedWith(await runOn(cluster, node, unsigned.id), /the spec of job .* refused: it carries no HMAC by the cluster secret/);
      const changed = await jobWithSpec(cluster, (s) => ({ ...s, input: { injected: true } }));
      failedWith(await runOn(cluster, node, changed.id), /refused: its HMAC does not verify with the cluster secret \(written without the secret, or changed after it was signed\)/);
      const copied = await jobWithSpec(cluster, (s) => signSpec({ ...s, id: 'j-elsewhere' }, cluster.secret!));
      failedWith(await runOn(cluster, node, copied.id), new RegExp(`the spec of job j-elsewhere refused: it is stored as job ${copied.id}`));
      assert.equal(existsSync(outside.canary), false, 'the file module was never imported');
      assert.equal(existsSync(dataCanary), false, 'the data: module was never imported');
      // The node refused them all and still runs an admitted job.
      const fine = await cluster.submit(COMPOSITIONS, rootState(11), { nodes: 1 });
      assert.equal(await withDeadline(fine.result<number>(), 'a job after the refusals'), countSequentially(11));
    } finally {
      await close();
    }
  });

  it('the same file runs on a node whose operator allows its directory', T, async () => {
    const allowed = canaryModule('allowed');
    const { cluster, nodes, close } = await start({ nodes: 1, allowCode: [pathToFileURL(`${allowed.dir}/`).href] });
    try {
      const job = await jobWithSpec(cluster, (s) => signSpec(withTaskModule(s, allowed.url, { varNames: [] }), cluster.secret!));
      const outcome = await runOn(cluster, nodes[0]!, job.id);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome));
      assert.ok(existsSync(allowed.canary), 'the allowed module ran');
      if (outcome.status === 'done') assert.equal(outcome.value, 12, 'its task ran on the root state (n = 6)');
      // The decoded spec is what the node checked: the module it names is the allowed file.
      assert.equal(decode<JobSpec<{ ref: { module: string } }>>((await cluster.coordination.getData(jobPaths(job.id).spec)).data).kindSpec.ref.module, allowed.url);
    } finally {
      await close();
    }
  });
}
