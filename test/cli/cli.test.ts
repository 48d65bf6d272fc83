import assert from 'node:assert/strict';
import { assertCleanError, tidepool, tidepool as runTidepool } from '../support/cli.js';
import { allCommands, buildProgram } from '../../src/cli/main.js';
import { commandPath } from '../../src/cli/settings/settings-command.js';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import { mkdirp } from '../../src/coord/tree-ops.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listNodes } from '../../src/runtime/scheduler/index.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { rootState } from '../runtime/apps/compositions.js';
import { secretFile, secretIn, startNodeProcess } from '../support/node-process.js';
import { waitFor } from '../support/wait.js';


/** Repeats `run` until `ok` holds for its result (under a deadline) and returns that result. */
async function until<T>(run: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  let last: T | undefined;
  await waitFor(async () => ok((last = await run())), 'the cluster state to become visible', timeoutMs);
  return last!;
}

describe('tidepool CLI', () => {
  it('prints help with every command and exits 0; every command has --help with --json and an example', async () => {
    const run = await tidepool(['--help']);
    assert.equal(run.code, 0);
    const program = buildProgram();
    const top = program.commands.map((c) => c.name()).filter((name) => name !== 'help');
    for (const cmd of top) assert.match(run.stdout, new RegExp(`^\\s+${cmd}\\b`, 'm'), `${cmd} is listed`);
    for (const cmd of allCommands(program).filter((c) => c.parent && c.name() !== 'help' && c.commands.length === 0)) {
      const name = commandPath(cmd).join(' ');
      const sub = await tidepool([...commandPath(cmd), '--help']);
      assert.equal(sub.code, 0, name);
      assert.match(sub.stdout, /--json/, `${name} --help lists --json`);
      assert.match(sub.stdout, /Examples?:\n(\s+.*\n)*?\s+(npx )?tidepool /, `${name} --help shows an example`);
    }
  });

  it('rejects bad flags and bad values with a clear message and exit code 2', async () => {
    assertCleanError(await tidepool(['demo', '--bogus']), /unknown option '--bogus'/);
    assertCleanError(await tidepool(['--log-level', 'loud', 'demo']), /--log-level: "loud"/);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'zk://nope']), /--zk: .*"nope" is not host:port/);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'nope:70000']), /--zk: .*"nope:70000" is not host:port/);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'http://x:1']), /--zk: bad connection string "http:\/\/x:1": only zk:\/\//);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'zk://127.0.0.1:1', '--timeout', 'soon']), /^error: --timeout: "soon" is not a duration: 500ms, 10s, 2m, 1h/m);
    assertCleanError(await tidepool(['coord', 'ls', 'relative', '--zk', 'zk://127.0.0.1:1']), /not an absolute znode path/);
    assertCleanError(await tidepool(['coord', 'ls', '/', '--zk', 'zk://127.0.0.1:1', '--depth', '0']), /--depth: "0"/);
  });

  it('node: missing or bad flags and secrets are clear errors', async () => {
    assertCleanError(await tidepool(['node']), /--zk is required/);
    assertCleanError(await tidepool(['node', '--zk', 'zk://127.0.0.1:1']), /cluster secret is required/);
    assertCleanError(await tidepool(['node', '--zk', 'zk://127.0.0.1:1', '--secret-file', '/nonexistent/secret']), /--secret-file: cannot read \/nonexistent\/secret: ENOENT/);
    const short = join(mkdtempSync(join(tmpdir(), 'tp-')), 'short');
    writeFileSync(short, 'abc');
    assertCleanError(await tidepool(['node', '--zk', 'zk://127.0.0.1:1', '--secret-file', short]), /holds 3 bytes; a cluster secret needs at least 16/);
    const good = join(mkdtempSync(join(tmpdir(), 'tp-')), 'secret');
    writeFileSync(good, 'a-long-enough-cluster-secret');
    assertCleanError(await tidepool(['node', '--zk', 'zk://127.0.0.1:1', '--secret-file', good, '--workers', '0']), /--workers: "0" is not a positive whole number/);
    assertCleanError(await tidepool(['node', '--zk', 'zk://127.0.0.1:1', '--secret-file', good, '--port', '70000']), /--port: "70000" is not a port number/);
    assertCleanError(await tidepool(['scale', 'j', 'many', '--zk', 'zk://127.0.0.1:1']), /NODES: "many" is not a whole number ≥ 0/);
    assertCleanError(await tidepool(['status']), /--zk is required/);
  });

  it('every command that changes a cluster needs the secret: a one-line error before it connects', async () => {
    const secret = secretFile();
    const monitor = join(mkdtempSync(join(tmpdir(), 'tp-')), 'monitor');
    writeFileSync(monitor, (await tidepool(['secret', 'monitor', '--secret-file', secret])).stdout);
    const zk = ['--zk', 'zk://127.0.0.1:1'];
    const writes = [['scale', 'j', '2'], ['cancel', 'j'], ['drain', 'n'], ['control', 'j', 'status'], ['jobs', '--prune', '3'], ['submit', 'x-package', '--flexibility', 'rigid'],
      ['manager'], ['warn', 'n'], ['clear', 'n'], ['node'], ['secret', 'protect'], ['solve', 'nqueens', '6'], ['malleable', 'run', 'stencil'], ['workflow', 'run', 'test/data/workflows/none.json']];
    for (const args of writes) {
      const run = await tidepool([...args, ...zk]);
      assertCleanError(run, /a cluster secret is required: --secret-file FILE \(or TIDEPOOL_SECRET\)/);
      assert.equal(run.stderr.trim().split('\n').length, 1, `${args.join(' ')}: one line (${run.stderr})`);
      if (args[0] !== 'node') assertCleanError(await tidepool([...args, ...zk, '--secret-file', monitor]), /holds a read-only monitor credential; this command changes the cluster and needs the cluster secret/);
    }
    const made = await tidepool(['secret', 'new', '--json']);
    assert.match((JSON.parse(made.stdout) as { secret: string }).secret, /^[A-Za-z0-9_-]{43}$/);
    assert.match(await tidepool(['secret', 'monitor', '--secret-file', secret]).then((r) => r.stdout), /^tidepool-monitor:[A-Za-z0-9_-]{43}\n$/);
  });

  describe('against a ZooKeeper ensemble', () => {
    let zk: ZkEnsemble;
    const root = `/cli-${randomUUID()}`;
    before(async () => {
      zk = await startEnsemble({ size: 3 });
      const client = await connect(zk.connectionString); // an open tree of its own, outside any cluster's root
      await mkdirp(client, `${root}/jobs/j1/vars`);
      await client.create(`${root}/jobs/j1/vars/bound`, Buffer.from('42'));
      await client.close();
    });
    after(async () => zk.stop());

    it('coord ls prints the tree, as text and as JSON', { timeout: 60_000 }, async () => {
      const json = await tidepool(['coord', 'ls', root, '--zk', zk.connectionString, '--depth', '3', '--json']);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), { path: root, tree: { jobs: { j1: { vars: null } } } });
      const text = await tidepool(['coord', 'ls', `${root}/jobs/j1`, '--zk', zk.connectionString]);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /^\s+vars$/m);
    });

    it('coord get prints data and version; a missing znode is a clear error', { timeout: 60_000 }, async () => {
      const run = await tidepool(['coord', 'get', `${root}/jobs/j1/vars/bound`, '--zk', zk.connectionString, '--json']);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { path: `${root}/jobs/j1/vars/bound`, data: '42', version: 0, numChildren: 0, ephemeralOwner: null });
      assertCleanError(await tidepool(['coord', 'get', `${root}/missing`, '--zk', zk.connectionString]), /no znode at/);
    });

    it('status, jobs, scale and drain act on a running cluster', { timeout: 120_000 }, async () => {
      const file = secretFile();
      const node = await startNodeProcess({ zk: zk.connectionString, secretFile: file });
      const tidepool = (args: string[]) => runTidepool([...args, '--secret-file', file]);
      try {
        // Each CLI run is a new session that may read from a server a moment behind: repeat until it sees the change.
        const status = await until(async () => JSON.parse((await tidepool(['status', '--zk', zk.connectionString, '--json'])).stdout) as { nodes: Array<{ id: string; job: string | null; workers: number }> }, (st) => st.nodes.length === 1);
        assert.deepEqual(status.nodes.map((n) => [n.id, n.job, n.workers]), [[node.id, null, 1]]);
        const row = new RegExp(`^NODE\\s+ADDRESS\\s+WORKERS\\s+JOB\\s+ASSIGNED\\s+BUSY\\s+QUEUED\\s+DONE\\n${node.id}\\s+tcp://127\\.0\\.0\\.1:\\d+\\s+1\\s+-\\s+-\\s+0\\s+0\\s+0`);
        const text = await until(() => tidepool(['status', '--zk', zk.connectionString]), (r) => row.test(r.stdout));
        assert.match(text.stdout, row);
        // A long job with no nodes yet, then scaled to one node, then drained off it.
        const client = await connect(zk.connectionString, { secret: secretIn(file) });
        const spec = await submitJob(client, { ...taskPoolJob({ module: new URL('../runtime/apps/compositions.ts', import.meta.url).href, export: 'default' }, rootState(30, 1000)), nodes: 0, secret: secretIn(file) });
        const jobs = await until(async () => JSON.parse((await tidepool(['jobs', '--zk', zk.connectionString, '--json'])).stdout) as { jobs: Array<{ id: string; state: string; nodes: number }> }, (j) => j.jobs.length === 1);
        assert.deepEqual(jobs.jobs.map((j) => [j.id, j.state, j.nodes]), [[spec.id, 'running', 0]]);
        const scaled = await until(async () => JSON.parse((await tidepool(['scale', spec.id, '1', '--zk', zk.connectionString, '--json'])).stdout) as { added: string[]; size: number }, (r) => r.size === 1);
        assert.deepEqual(scaled, { job: spec.id, added: [node.id], released: [], size: 1 });
        await waitFor(async () => (await listNodes(client)).some((n) => n.job === spec.id), 'the node to join the job');
        // What the node publishes about its load reaches `status`: its one worker busy on the job.
        const loaded = await until(async () => JSON.parse((await tidepool(['status', '--zk', zk.connectionString, '--json'])).stdout) as { nodes: Array<{ stats: { job: string | null; busy: number; workers: number } | null }> },
          (st) => st.nodes[0]?.stats?.job === spec.id && st.nodes[0].stats.busy === 1);
        assert.equal(loaded.nodes[0]!.stats!.workers, 1);
        const drained = JSON.parse((await tidepool(['drain', node.id, '--zk', zk.connectionString, '--json'])).stdout) as { draining: boolean };
        assert.equal(drained.draining, true);
        assertCleanError(await tidepool(['scale', 'j-nope', '1', '--zk', zk.connectionString]), /no job j-nope/);
        // Control channel: the running job's leader acknowledges a status request; an unknown type is the job's clear refusal.
        await tidepool(['scale', spec.id, '1', '--zk', zk.connectionString]);
        const acked = await until(async () => (await tidepool(['control', spec.id, 'status', '--zk', zk.hosts, '--json', '--wait', '20s'])), (r) => r.code === 0);
        const reply = JSON.parse(acked.stdout) as { result: { job: string; kind: string; leader: string; members: string[] } };
        assert.deepEqual([reply.result.job, reply.result.kind, reply.result.leader, reply.result.members], [spec.id, 'task-pool', node.id, [node.id]]);
        assertCleanError(await tidepool(['control', spec.id, 'rescale', '{"nodes":2}', '--zk', zk.connectionString]), /does not take control requests of type "rescale"/);
        assertCleanError(await tidepool(['control', spec.id, 'status', '{bad', '--zk', zk.connectionString]), /BODY: not JSON/);
        // Cancel: the job's outcome becomes "cancelled" once; a second cancel and an unknown job say so.
        assert.deepEqual(JSON.parse((await tidepool(['cancel', spec.id, '--zk', zk.connectionString, '--json'])).stdout), { job: spec.id, cancelled: true });
        await until(async () => JSON.parse((await tidepool(['jobs', '--zk', zk.connectionString, '--json'])).stdout) as { jobs: Array<{ state: string }> }, (j) => j.jobs[0]?.state === 'cancelled');
        assert.match((await tidepool(['cancel', spec.id, '--zk', zk.connectionString])).stdout, /had already ended/);
        assertCleanError(await tidepool(['cancel', 'j-nope', '--zk', zk.connectionString]), /no job j-nope/);
        assertCleanError(await tidepool(['drain', 'n-nope', '--zk', zk.connectionString]), /no node n-nope/);
        await client.close();
      } finally {
        node.kill('SIGKILL');
        await node.exited;
      }
    });

    it('on a secured cluster, a command without a credential or with another cluster\'s secret fails in one line naming what it lacks; none hangs', { timeout: 240_000 }, async () => {
      // A cluster of its own (a chroot): the case before made /tidepool with another secret.
      const file = secretFile();
      const other = secretFile();
      const conn = `${zk.connectionString}/secured`;
      const node = await startNodeProcess({ zk: conn, secretFile: file });
      try {
        const reading = [['status'], ['jobs'], ['jobs', '--managed'], ['coord', 'ls', '/tidepool'], ['result', 'j-x'], ['monitor', '--dashboard', '0']];
        const holding = [['status', '--secret-file', other], ['manager', '--secret-file', other], ['solve', 'nqueens', '6', '--secret-file', other, '--zk']];
        for (const args of [...reading, ...holding]) {
          const run = await runTidepool([...args, ...(args.at(-1) === '--zk' ? [] : ['--zk']), conn], 60_000);
          assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
          const errors = run.stderr.split('\n').filter((l) => l.startsWith('error:'));
          assert.equal(errors.length, 1, `${args.join(' ')}: ${run.stderr}`);
          assert.match(errors[0]!, args.includes(other)
            ? /^error: NO_AUTH at \/tidepool\/\S+: cluster secret (or monitor credential )?required( to read)?: this session's secret is not one this znode's access list accepts \(another cluster's, or rotated out\)$/
            : /^error: NO_AUTH at \/tidepool(\/\S+)?: cluster secret or monitor credential required to read: this session holds no credential \(give the secret: --secret-file or TIDEPOOL_SECRET/, args.join(' '));
        }
      } finally {
        node.kill('SIGKILL');
        await node.exited;
      }
    });

    it('an unreachable cluster fails within the timeout, naming the address, on every command that talks to ZooKeeper', { timeout: 120_000 }, async () => {
      const secret = secretFile();
      const oneShot = [['coord', 'ls', '/'], ['coord', 'get', '/x'], ['status'], ['jobs'], ['scale', 'j', '1'], ['cancel', 'j'], ['control', 'j', 'status'], ['drain', 'n'], ['result', 'j'],
        ['submit', 'x-package', '--flexibility', 'rigid'], ['solve', 'nqueens', '4', '--zk'], ['workflow', 'run', fileURLToPath(new URL('../data/workflows/pegasus-dax-2.1/Montage_25.xml', import.meta.url)), '--replay', '0.01', '--shared', mkdtempSync(join(tmpdir(), 'tp-wf-')), '--zk'], ['malleable', 'run', 'wave', '--zk']];
      const lasting = [['node', '--secret-file', secret], ['monitor'], ['manager'], ['serve', '--insecure', '--token-file', secret, '--secret-file', secret, '--port', '0', '--zk']];
      for (const args of [...oneShot, ...lasting]) {
        const zkGiven = args.at(-1) === '--zk';
        const started = performance.now();
        // With the secret: commands that change the cluster check for it before they connect.
        const withSecret = args.includes('--secret-file') ? [] : ['--secret-file', secret];
        const run = await tidepool([...args, ...(zkGiven ? [] : ['--zk']), '127.0.0.1:1', '--timeout', '1500ms', ...withSecret], 30_000);
        const seconds = (performance.now() - started) / 1000;
        assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
        assert.match(run.stderr, /^error: no ZooKeeper server at zk:\/\/127\.0\.0\.1:1 answered within 1\.5s \(--timeout\)$/m, args.join(' '));
        assert.ok(seconds < 15, `${args.join(' ')} took ${seconds.toFixed(1)} s`);
      }
    });

    it('--zk takes the forms the help shows: host:port[,host:port][/chroot], with or without zk://', { timeout: 60_000 }, async () => {
      for (const conn of [zk.hosts, zk.connectionString, `${zk.hosts.split(',')[0]}`, `${zk.connectionString}${root}`, `${zk.hosts}${root}`]) {
        const run = await tidepool(['coord', 'ls', '/', '--zk', conn, '--json']);
        assert.equal(run.code, 0, `${conn}: ${run.stderr}`);
        const tree = (JSON.parse(run.stdout) as { tree: Record<string, unknown> }).tree;
        if (conn.endsWith(root)) assert.deepEqual(Object.keys(tree), ['jobs'], `${conn} is chrooted at ${root}`);
        else assert.ok(root.slice(1) in tree, `${conn} sees ${root}`);
      }
    });
  });
});
