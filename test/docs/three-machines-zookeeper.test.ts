/**
 * docs/three-machines.md, run as written: every sh block of the page, in order, on three "machines"
 * that are the loopback addresses 127.0.0.1, .2 and .3 of this host, plus a "laptop".
 *
 * What the test changes in a command before running it (and nothing else):
 * - the page's addresses 10.0.0.11/.12/.13 become 127.0.0.1/.2/.3, and its ports (ZooKeeper's 2181,
 *   2888 and 3888, the nodes' 7400, the dashboard's 8080) become free ports, one set per machine;
 * - Debian's paths become private directories per machine (`/etc/zookeeper/conf` and
 *   `/var/lib/zookeeper`), and each machine has its own HOME (for `~/.tidepool`);
 * - `sudo` and `sudo -u zookeeper` are dropped (the test owns those directories);
 * - `sudo apt-get install -y zookeeper` runs as `scripts/ensure-zookeeper.sh`, which installs that
 *   package when it is missing (the project's way of installing test prerequisites);
 * - `tidepool` is the built CLI of this repository (a `tidepool` script on PATH), with one worker per
 *   node (TIDEPOOL_NODE_WORKERS=1: three nodes share this host's cores) and no other TIDEPOOL_* variable
 *   of the caller; ZooKeeper's JVMs get a small heap (SERVER_JVMFLAGS).
 * Commands that keep running (ZooKeeper servers, nodes, the monitor) run in process groups of their
 * own, killed when the test ends. The copy of the secret to b, c and the laptop, which the page leaves to scp, is
 * done by the test; so is the SIGTERM the page describes in prose.
 *
 * Checked: one ZooKeeper leader and two followers; the secret's mode; each node publishing the address
 * given with --host; status and metrics listing three nodes; gr48 solved to its published optimum
 * (TSPLIB: 5046) from the laptop, twice; `tidepool drain node-c` while the second job runs moving node-c
 * out of that job while it still runs on the other two; SIGTERM taking node-b out of the cluster.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitFor, withDeadline } from '../support/wait.js';
import { freePorts } from '../support/zk-ensemble.js';
import { commandsFor, shellBlocks, type Machine, type ShellBlock } from './shell-blocks.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = path.join(REPO, 'docs/three-machines.md');
const GR48_OPTIMUM = 5046; // TSPLIB95's published optimum of gr48 (also data/tsplib/optima.json)

const HOSTS = { a: '127.0.0.1', b: '127.0.0.2', c: '127.0.0.3' } as const;
const PAGE_HOSTS = { a: '10.0.0.11', b: '10.0.0.12', c: '10.0.0.13' } as const;
const SERVERS = ['a', 'b', 'c'] as const;
type Server = (typeof SERVERS)[number];

interface Ports { client: number; quorum: number; election: number; node: number }

interface Run { code: number | null; stdout: string; stderr: string }

/** A command that keeps running, with what it printed so far. */
class Background {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  private readonly waiters = new Set<() => void>();

  constructor(readonly what: string, readonly child: ChildProcess) {
    child.stdout!.on('data', (d: Buffer) => this.append(() => (this.stdout += d.toString())));
    child.stderr!.on('data', (d: Buffer) => this.append(() => (this.stderr += d.toString())));
    this.exited = new Promise((resolve) => child.once('exit', (code) => {
      resolve(code);
      this.append(() => undefined);
    }));
  }

  private append(add: () => void): void {
    add();
    for (const wake of this.waiters) wake();
  }

  /** Resolves with the match once stdout matches `pattern`; fails if the command ends first or at the deadline. */
  async line(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    let exited = false;
    void this.exited.then(() => (exited = true));
    return withDeadline(new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(this.stdout);
        if (m) {
          this.waiters.delete(check);
          resolve(m);
        } else if (exited) {
          this.waiters.delete(check);
          reject(new Error(`${this.what} ended before printing ${pattern}:\n${this.stdout}\n${this.stderr}`));
        }
      };
      this.waiters.add(check);
      check();
    }), `${this.what} to print ${pattern} (so far:\n${this.stdout}\n${this.stderr})`, timeoutMs);
  }
}

describe('docs/three-machines.md, run on three loopback addresses', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'tidepool-three-machines-'));
  const groups: Background[] = [];
  let blocks: ShellBlock[];
  let ports: Record<Server, Ports>;
  let dashboardPort: number;
  let env: NodeJS.ProcessEnv;

  const killAll = () => {
    for (const g of groups) {
      try {
        if (g.child.pid !== undefined) process.kill(-g.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };

  before(async () => {
    blocks = shellBlocks(readFileSync(PAGE, 'utf8'), 'docs/three-machines.md');
    const free = await freePorts(3 * 4 + 1, '0.0.0.0'); // ZooKeeper's client ports listen on every address
    ports = Object.fromEntries(SERVERS.map((s, i) => [s, { client: free[i * 4]!, quorum: free[i * 4 + 1]!, election: free[i * 4 + 2]!, node: free[i * 4 + 3]! }])) as Record<Server, Ports>;
    dashboardPort = free[12]!;
    // What Debian's package and the user's account provide on each machine.
    for (const m of ['a', 'b', 'c', 'laptop'] as const) {
      mkdirSync(path.join(root, m, 'conf'), { recursive: true });
      mkdirSync(path.join(root, m, 'data'), { recursive: true });
      mkdirSync(path.join(root, m, 'home'), { recursive: true });
    }
    const bin = path.join(root, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'tidepool'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(REPO, 'bin/tidepool.mjs')}" "$@"\n`, { mode: 0o755 });
    const own = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEPOOL_')));
    env = {
      ...own,
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      TIDEPOOL_NODE_WORKERS: '1',
      SERVER_JVMFLAGS: '-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -XX:-UsePerfData',
      JMXDISABLE: 'true',
    };
    process.on('exit', killAll);
  });

  after(() => {
    killAll();
    process.off('exit', killAll);
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  });

  /** The page's commands for `machine`, with this host's addresses, ports and directories. */
  function localize(block: ShellBlock, machine: Machine): string {
    let text = commandsFor(block, machine);
    const dir = path.join(root, machine);
    text = text.replaceAll('sudo -u zookeeper ', '').replaceAll('sudo ', '');
    text = text.replaceAll('/etc/zookeeper/conf', path.join(dir, 'conf')).replaceAll('/var/lib/zookeeper', path.join(dir, 'data'));
    for (const s of SERVERS) {
      text = text.replaceAll(`${PAGE_HOSTS[s]}:2888:3888`, `${HOSTS[s]}:${ports[s].quorum}:${ports[s].election}`);
      text = text.replaceAll(`${PAGE_HOSTS[s]}:2181`, `${HOSTS[s]}:${ports[s].client}`);
      text = text.replaceAll(PAGE_HOSTS[s], HOSTS[s]);
    }
    if (machine !== 'laptop') text = text.replaceAll('clientPort=2181', `clientPort=${ports[machine].client}`).replaceAll('--port 7400', `--port ${ports[machine].node}`);
    text = text.replaceAll('127.0.0.1:8080', `127.0.0.1:${dashboardPort}`).replaceAll('--dashboard 8080', `--dashboard ${dashboardPort}`);
    for (const pageOnly of ['10.0.0.', '2181', '2888', '3888', '7400', '8080', 'sudo']) {
      assert.ok(!text.includes(pageOnly), `docs/three-machines.md:${block.line}: "${pageOnly}" is left in the command the test would run on ${machine}; teach the test about it:\n${text}`);
    }
    return text;
  }

  function spawnOn(block: ShellBlock, machine: Machine): ChildProcess {
    return spawn('bash', ['-e', '-o', 'pipefail', '-c', localize(block, machine)], {
      cwd: REPO, env: { ...env, HOME: path.join(root, machine, 'home') }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
  }

  /** Runs a block's commands on `machine` to their end. */
  async function runOn(block: ShellBlock, machine: Machine, timeoutMs = 120_000): Promise<Run> {
    const bg = new Background(`docs/three-machines.md:${block.line} on ${machine}`, spawnOn(block, machine));
    groups.push(bg);
    const code = await withDeadline(bg.exited, `docs/three-machines.md:${block.line} on ${machine} to end`, timeoutMs);
    return { code, stdout: bg.stdout, stderr: bg.stderr };
  }

  /** Starts a block's commands on `machine`, which keep running. */
  function startOn(block: ShellBlock, machine: Machine): Background {
    const bg = new Background(`docs/three-machines.md:${block.line} on ${machine}`, spawnOn(block, machine));
    groups.push(bg);
    return bg;
  }

  /**
   * Runs the block until it succeeds with output that `ok` accepts: reads of another session may lag
   * (docs/testing.md), a server may not serve yet. Fails at the deadline with the last run's output.
   */
  async function runUntil(block: ShellBlock, machine: Machine, ok: RegExp | ((stdout: string) => boolean), what: string, timeoutMs = 90_000): Promise<string> {
    const accepts = typeof ok === 'function' ? ok : (out: string) => ok.test(out);
    let last: Run | undefined;
    try {
      await waitFor(async () => {
        last = await runOn(block, machine);
        return last.code === 0 && accepts(last.stdout);
      }, what, timeoutMs);
    } catch (err) {
      throw new Error(`${(err as Error).message}; last run: exit ${last?.code}\n${last?.stdout}${last?.stderr}`);
    }
    return last!.stdout;
  }

  const zk = () => `zk://${SERVERS.map((s) => `${HOSTS[s]}:${ports[s].client}`).join(',')}`;

  interface NodeRow { id: string; address: string; job: string | null; assignment: string }
  async function nodes(): Promise<NodeRow[]> {
    const bg = new Background('tidepool status --json', spawn('tidepool', ['status', '--zk', zk(), '--secret-file', path.join(root, 'laptop/home/.tidepool/secret'), '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
    groups.push(bg);
    const code = await withDeadline(bg.exited, 'tidepool status --json', 60_000);
    assert.equal(code, 0, bg.stderr);
    return (JSON.parse(bg.stdout) as { nodes: NodeRow[] }).nodes;
  }

  it('runs every command of the page and gets what it says', { timeout: 900_000 }, async () => {
    const steps: { match: RegExp; run: (block: ShellBlock) => Promise<void> }[] = [];
    const step = (match: RegExp, run: (block: ShellBlock) => Promise<void>) => steps.push({ match, run });
    const running = new Map<string, Background>();

    // 1. ZooKeeper
    step(/apt-get install/, async (block) => {
      assert.deepEqual(block.machines, ['a', 'b', 'c']);
      assert.equal(block.body.trim(), 'sudo apt-get install -y zookeeper', 'the page installs the package scripts/ensure-zookeeper.sh installs');
      const ensure = await runOn({ ...block, body: `bash ${path.join(REPO, 'scripts/ensure-zookeeper.sh')}` }, 'a', 15 * 60_000);
      assert.equal(ensure.code, 0, ensure.stderr);
    });
    step(/zoo\.cfg .*<<'EOF'/, async (block) => {
      for (const [i, s] of SERVERS.entries()) {
        const run = await runOn(block, s);
        assert.equal(run.code, 0, run.stderr);
        const cfg = readFileSync(path.join(root, s, 'conf/zoo.cfg'), 'utf8');
        assert.match(cfg, new RegExp(`^clientPort=${ports[s].client}$`, 'm'));
        for (const t of SERVERS) assert.match(cfg, new RegExp(`^server\\.${SERVERS.indexOf(t) + 1}=${HOSTS[t].replaceAll('.', '\\.')}:${ports[t].quorum}:${ports[t].election}$`, 'm'));
        assert.equal(readFileSync(path.join(root, s, 'data/myid'), 'utf8').trim(), String(i + 1));
      }
    });
    step(/zkServer\.sh start-foreground/, async (block) => {
      for (const s of SERVERS) running.set(`zk-${s}`, startOn(block, s));
    });
    step(/zkServer\.sh status/, async (block) => {
      const modes: string[] = [];
      for (const s of SERVERS) {
        const out = await runUntil(block, s, /^Mode: (leader|follower)$/m, `ZooKeeper on ${s} to serve`);
        modes.push(/^Mode: (\w+)$/m.exec(out)![1]!);
      }
      assert.deepEqual(modes.sort(), ['follower', 'follower', 'leader']);
    });

    // 2. The secret
    step(/umask 077/, async (block) => {
      assert.deepEqual(block.machines, ['a']);
      const run = await runOn(block, 'a');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout.trim(), '600');
      const secret = path.join(root, 'a/home/.tidepool/secret');
      assert.ok(readFileSync(secret, 'utf8').trim().length >= 16);
      for (const s of ['b', 'c', 'laptop'] as const) { // "Copy the file to the same place on b, c and the laptop"
        mkdirSync(path.join(root, s, 'home/.tidepool'), { mode: 0o700 });
        copyFileSync(secret, path.join(root, s, 'home/.tidepool/secret'));
        chmodSync(path.join(root, s, 'home/.tidepool/secret'), 0o600);
      }
    });

    // 3. Nodes
    for (const s of SERVERS) {
      step(new RegExp(`tidepool node .*--id node-${s}$`), async (block) => {
        assert.deepEqual(block.machines, [s]);
        const node = startOn(block, s);
        running.set(`node-${s}`, node);
        await node.line(new RegExp(`^node node-${s} ready at tcp://${HOSTS[s].replaceAll('.', '\\.')}:${ports[s].node} with 1 worker\\(s\\)$`, 'm'));
      });
    }
    step(/tidepool status/, async (block) => {
      const rows = (out: string) => SERVERS.every((s) => new RegExp(`^node-${s} +tcp://${HOSTS[s].replaceAll('.', '\\.')}:${ports[s].node} +1 +- +- `, 'm').test(out));
      await runUntil(block, 'laptop', rows, 'status to list the three idle nodes at their addresses');
    });

    // 4. The dashboard
    step(/tidepool monitor/, async (block) => {
      const monitor = startOn(block, 'laptop');
      running.set('monitor', monitor);
      await monitor.line(new RegExp(`^dashboard http://127\\.0\\.0\\.1:${dashboardPort}/$`, 'm'));
    });
    step(/curl/, async (block) => {
      await runUntil(block, 'laptop', /^tidepool_nodes 3$/m, 'the metrics to count three nodes');
    });

    // 5. A job from the laptop
    step(/tidepool solve/, async (block) => {
      const run = await runOn(block, 'laptop', 600_000);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^objective ${GR48_OPTIMUM} \\(verified\\)$`, 'm'));
      await waitFor(async () => (await nodes()).every((n) => n.job === null), 'the nodes to be idle after the job');
    });

    // 6. Draining a machine: the second job runs while the next block drains node-c.
    step(/tidepool solve/, async (block) => {
      running.set('solve', startOn(block, 'laptop'));
      await waitFor(async () => (await nodes()).every((n) => n.job !== null), 'all three nodes to be in the second job', 60_000);
    });
    step(/tidepool drain node-c/, async (block) => {
      assert.ok(running.has('solve'), 'the drain block follows the job it drains');
      const job = (await nodes()).find((n) => n.id === 'node-c')!.job!;
      const run = await runOn(block, 'laptop');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout.trim(), 'node node-c is draining');
      // node-c leaves the job while the job goes on on a and b.
      await waitFor(async () => {
        const now = await nodes();
        return now.find((n) => n.id === 'node-c')!.job === null && now.filter((n) => n.job === job).length === 2;
      }, 'node-c to leave the running job', 60_000);
      const solve = running.get('solve')!;
      assert.equal(await withDeadline(solve.exited, 'the drained job to end', 600_000), 0, solve.stderr);
      assert.match(solve.stdout, new RegExp(`^objective ${GR48_OPTIMUM} \\(verified\\)$`, 'm'));
      assert.ok((await nodes()).some((n) => n.id === 'node-c'), 'node-c stays in the cluster');
    });

    for (const [i, block] of blocks.entries()) {
      const s = steps[i];
      assert.ok(s, `docs/three-machines.md:${block.line}: a block the test does not know; add a step for it:\n${block.body}`);
      assert.match(block.body, s.match, `docs/three-machines.md:${block.line}: expected the block matching ${s.match} here`);
      await s.run(block);
    }
    assert.equal(blocks.length, steps.length, `the test expects ${steps.length} sh blocks, the page has ${blocks.length}`);

    // "stop its node with Ctrl-C, or SIGTERM: the node drains the same way and then deregisters"
    const nodeB = running.get('node-b')!;
    process.kill(-nodeB.child.pid!, 'SIGTERM');
    assert.equal(await withDeadline(nodeB.exited, 'node-b to exit after SIGTERM', 60_000), 0, nodeB.stderr);
    await waitFor(async () => (await nodes()).map((n) => n.id).sort().join() === 'node-a,node-c', 'node-b to leave the cluster');
  });
});
