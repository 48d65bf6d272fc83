/**
 * The runs of issue 27's tests across test hosts, one per job kind, each started with the `tidepool`
 * command on the client host of a HostCluster (test/support/host-cluster.ts) and checked for an exact
 * result with every unit of its work counted once (test/support/exactly-once.ts). A fault test starts a
 * run at its 'fault' size (long enough for a fault to strike mid-run), waits until it is under way
 * (`underWay`), breaks something, and then checks it the same way, told which nodes were lost
 * (`FaultRecord`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Distribution } from '../../src/frameworks/service/index.js';
import { runSequential } from '../../src/frameworks/malleable/sequential.js';
import stencil from '../../src/frameworks/malleable/apps/stencil2d.js';
import type { Cluster } from '../../src/runtime/client/cluster.js';
import type { HostCluster } from '../support/host-cluster.js';
import type { HostProcess } from '../support/hosts.js';
import { assertCountedTotal, ExactlyOnce, tspTreeSize, workflowCompletions } from '../support/exactly-once.js';
import { waitFor, withDeadline } from '../support/wait.js';

const DATA = new URL('../data/', import.meta.url);
const OPTIMA = JSON.parse(readFileSync(new URL('tsplib/optima.json', DATA), 'utf8')) as Record<string, { optimal_tour_length: number }>;
const OMEGA = JSON.parse(readFileSync(new URL('clique/omega.json', DATA), 'utf8')) as Record<string, { omega: number }>;

/** How long a run may take, faults included (each takes well under a minute on a quiet machine). */
const RUN_DEADLINE_MS = 300_000;

/** What a fault did to a run, for its check: the nodes that were lost (killed, or cut off past their session). */
export interface FaultRecord {
  lost: Set<string>;
}

/** The run without faults, or one long enough (a few seconds of work on two nodes) for a fault to strike mid-run. */
export type RunSize = 'plain' | 'fault';

/** A run of one job kind, under way in the background. */
export interface KindRun {
  /** The process whose end is the run's end (the `tidepool` command; for the service, `tidepool serve`). */
  process: HostProcess;
  /** Waits for the run's end, then checks its result and that each unit of its work was counted once. */
  finish(fault?: FaultRecord): Promise<void>;
  /** Stops what the run left running (the service); also after a failure. */
  close(): Promise<void>;
}

/** A job kind as the tests across hosts run it. */
export interface JobKindCase {
  /** What the case checks, for its title. */
  title: string;
  start(c: HostCluster, size: RunSize): Promise<KindRun>;
  /** Its work is the task pool's: records in the job's ledger, each owned by a node. */
  ledger: boolean;
  /** The message in which a node hands work to the other, answering a steal (none: the kind does not steal). */
  handover?: string;
}

function tidepoolOnClient(c: HostCluster, args: readonly string[]): HostProcess {
  return c.client.tidepool([...args, '--zk', c.zkAddress, '--json'], { env: { TIDEPOOL_SECRET_FILE: c.secretFile } });
}

/** The JSON line a `tidepool … --json` run printed last, once it exits 0 (fails with its output otherwise). */
async function reportOf<R>(process: HostProcess, what: string): Promise<R> {
  const code = await withDeadline(process.exited, `${what} on the client host`, RUN_DEADLINE_MS);
  if (code !== 0) throw new Error(`${what} on the client host exited ${code}:\n${process.stdout()}\n${process.stderr()}`);
  return JSON.parse(process.stdout().trim().split('\n').at(-1)!) as R;
}

/** A `tidepool …` run on the client host whose JSON report `check` judges. */
function commandRun<R>(c: HostCluster, args: readonly string[], check: (report: R, fault?: FaultRecord) => void | Promise<void>): KindRun {
  const process = tidepoolOnClient(c, args);
  return {
    process,
    async finish(fault) {
      await check(await reportOf<R>(process, `tidepool ${args.join(' ')}`), fault);
    },
    async close() {
      if (process.exitCode !== undefined) return;
      process.kill('SIGKILL');
      await process.exited;
    },
  };
}

/** Resolves with the job once a job of the cluster runs on every node in `nodes` (by the job assignments in ZooKeeper). */
export async function underWay(observer: Cluster, nodes: readonly string[], what: string, process?: HostProcess): Promise<string> {
  let job = '';
  await waitFor(async () => {
    if (process?.exitCode !== undefined) throw new Error(`${what} ended before it was under way on ${nodes.join(', ')}:\n${process.stdout()}\n${process.stderr()}`);
    const all = await observer.nodes();
    const jobs = nodes.map((id) => all.find((n) => n.id === id)?.assignment ?? '');
    if (jobs[0] && jobs.every((j) => j === jobs[0])) job = jobs[0];
    return job !== '';
  }, `${what} to run on ${nodes.join(' and ')}`, 120_000);
  return job;
}

// ---------------------------------------------------------------------------------------------
// Search

interface SolveReport {
  objective: number;
  verified: boolean | null;
  stats: { searchNodes: number; tasks: number; steals: number };
}

/** `tidepool solve tsp` of a TSPLIB instance: its optimum, verified. */
export const TSP: JobKindCase = {
  title: 'tidepool solve tsp finds a TSPLIB optimum',
  ledger: true,
  handover: 'offer',
  async start(c, size) {
    const instance = size === 'plain' ? 'gr17' : 'att48';
    return commandRun<SolveReport>(c, ['solve', 'tsp', `test/data/tsplib/${instance}.tsp`], (r) => {
      assert.equal(r.objective, OPTIMA[instance]!.optimal_tour_length, `${instance}: the optimum`);
      assert.equal(r.verified, true, `${instance}: the tour's length recomputed`);
    });
  },
};

/** `tidepool solve clique`: ω of the graph. */
export const CLIQUE: JobKindCase = {
  title: 'tidepool solve clique finds ω of a DIMACS graph',
  ledger: true,
  handover: 'offer',
  async start(c, size) {
    const graph = size === 'plain' ? 'brock200_2' : 'p_hat300-3';
    return commandRun<SolveReport>(c, ['solve', 'clique', `test/data/clique/${graph}.clq`], (r) => {
      assert.equal(r.objective, OMEGA[graph]!.omega, `${graph}: ω`);
      assert.equal(r.verified, true, `${graph}: the clique checked`);
    });
  },
};

/**
 * `tidepool solve tsp random:N --no-prune`: the whole tree, so every search node is counted once
 * exactly when the count is the tree's size (a closed form of N).
 */
export const UNPRUNED_SEARCH: JobKindCase = {
  title: 'an unpruned search counts every search node once',
  ledger: true,
  handover: 'offer',
  async start(c, size) {
    const cities = size === 'plain' ? 10 : 11;
    return commandRun<SolveReport>(c, ['solve', 'tsp', `random:${cities}:7`, '--no-prune'], (r) => {
      assert.equal(r.verified, true, `random:${cities}: the tour's length recomputed`);
      assertCountedTotal('search nodes', r.stats.searchNodes, tspTreeSize(cities), `random:${cities} unpruned`);
    });
  },
};

// ---------------------------------------------------------------------------------------------
// Iterative

interface IterateReport {
  iterations: number;
  estimate: number;
  stderr: number;
  tally: { histories: number } & Record<string, number>;
}

/** The run on one embedded node of the client host that a run on the cluster must equal, by its arguments. */
const iterateReferences = new Map<string, Promise<IterateReport>>();

function iterateReference(c: HostCluster, args: readonly string[]): Promise<IterateReport> {
  const key = args.join(' ');
  if (!iterateReferences.has(key)) {
    iterateReferences.set(key, c.client.runTidepool([...args, '--nodes', '1', '--workers', '1', '--json'], { timeoutMs: 300_000 }).then((one) => {
      assert.equal(one.code, 0, one.stderr);
      return JSON.parse(one.stdout.trim().split('\n').at(-1)!) as IterateReport;
    }));
  }
  return iterateReferences.get(key)!;
}

/**
 * `tidepool iterate slab` on the cluster's two nodes, against the same run on one embedded node:
 * bit-identical (estimate and every counter of the tally), and every history counted once.
 */
export const ITERATE: JobKindCase = {
  title: 'tidepool iterate is bit-identical to the same run on one node, every iteration counted once',
  ledger: true,
  handover: 'offer',
  async start(c, size) {
    const iterations = size === 'plain' ? 200_000 : 2_000_000;
    const args = ['iterate', 'slab', '--iterations', String(iterations), '--seed', '7'];
    // With --zk the job takes every idle node of the cluster: both node hosts.
    return commandRun<IterateReport>(c, args, async (r) => {
      const reference = await iterateReference(c, args);
      assertCountedTotal('iterations (histories)', r.tally.histories, iterations, 'iterate slab');
      assert.equal(r.iterations, iterations);
      assert.deepEqual({ estimate: r.estimate, stderr: r.stderr, tally: r.tally }, { estimate: reference.estimate, stderr: reference.stderr, tally: reference.tally }, 'bit-identical to the run on one node');
    });
  },
};

// ---------------------------------------------------------------------------------------------
// Workflow

const MONTAGE = new URL('workflows/pegasus-dax-2.1/Montage_25.xml', DATA);

interface WorkflowFile {
  name: string;
  size: number;
}

/** The Montage workflow's tasks (one per `<job>`) and its final outputs (outputs no task reads), from the file itself. */
export function montage(): { tasks: number; outputs: WorkflowFile[] } {
  const text = readFileSync(MONTAGE, 'utf8');
  const uses = [...text.matchAll(/<uses\s+([^>]*?)\/>/g)].map((m) => Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])));
  const inputs = new Set(uses.filter((u) => u.link === 'input').map((u) => u.file));
  const outputs = new Map<string, number>();
  for (const u of uses) if (u.link === 'output' && !inputs.has(u.file)) outputs.set(u.file!, Number(u.size));
  return { tasks: [...text.matchAll(/<job\s/g)].length, outputs: [...outputs].map(([name, size]) => ({ name, size })) };
}

interface WorkflowReport {
  tasks: number;
  completed: number;
  retries: number;
  recreated: number;
}

/** The journal directory of the one workflow run recorded in `shared` (`<shared>/.tidepool/runs/<run>/journal`). */
function journalOf(shared: string): string {
  const runs = path.join(shared, '.tidepool', 'runs');
  const dirs = existsSync(runs) ? readdirSync(runs) : [];
  assert.equal(dirs.length, 1, `one workflow run recorded in ${runs}: ${dirs.join(', ')}`);
  return path.join(runs, dirs[0]!, 'journal');
}

let workflowRuns = 0;

/**
 * `tidepool workflow run` replaying Montage (25 tasks) on both nodes, in a shared directory all hosts
 * see: every final output present with its recorded size × the scale, and every task's completion
 * recorded once in the journal (test/support/exactly-once.ts says why a completion a lost node wrote
 * there counts). At the 'fault' size each task lasts 5 times longer.
 */
export const WORKFLOW: JobKindCase = {
  title: 'tidepool workflow run (a Montage replay) writes every output at its recorded size, each task completed once',
  ledger: false,
  handover: 'wf-stolen',
  async start(c, size) {
    const shared = c.client.dir(`workflow-${++workflowRuns}`);
    const file = path.join(shared, 'Montage_25.xml');
    copyFileSync(MONTAGE, file);
    const scale = size === 'plain' ? 0.01 : 0.05;
    return commandRun<WorkflowReport>(c, ['workflow', 'run', file, '--replay', String(scale), '--nodes', '2', '--shared', shared], (r) => {
      const wf = montage();
      assert.equal(r.tasks, wf.tasks);
      assert.equal(r.completed, wf.tasks, 'every task completed');
      for (const out of wf.outputs) {
        const at = path.join(shared, out.name);
        assert.ok(existsSync(at), `output ${out.name} is in the shared directory`);
        assert.equal(statSync(at).size, Math.round(out.size * scale), `output ${out.name}: its recorded size × ${scale}`);
      }
      ExactlyOnce.range('workflow task completions', 0, wf.tasks).countAll(workflowCompletions(journalOf(shared)).map((x) => x.task)).assert('Montage replay');
    });
  },
};

// ---------------------------------------------------------------------------------------------
// Malleable

interface MalleableReport {
  verified: boolean;
  result: { checksum: string; iterations: number };
  stats: { iterations: number; rescales: Array<{ kind: string; iteration: number }>; rollbacks: number; nodesPerIteration: number[] };
}

/**
 * `tidepool malleable run stencil` on two nodes, shrunk to one at a third of its iterations and
 * expanded to two at two thirds, checked against the sequential run here: the same grid (checksum),
 * every iteration counted once. When a node was lost the job also rolls back and rescales on its own,
 * so only the schedule's expand is then asked for among its rescales.
 */
export const MALLEABLE: JobKindCase = {
  title: 'tidepool malleable run (stencil, one shrink and one expand) gives the sequential grid, each iteration counted once',
  ledger: false,
  async start(c, size) {
    const params = size === 'plain' ? { grid: 96, blocks: 4, iterations: 60 } : { grid: 256, blocks: 4, iterations: 600 };
    const { iterations } = params;
    const third = Math.floor(iterations / 3);
    return commandRun<MalleableReport>(c, ['malleable', 'run', 'stencil', '--grid', String(params.grid), '--blocks', String(params.blocks), '--iterations', String(iterations), '--nodes', '2', '--scale', `${third}it:1,${2 * third}it:2`], (r, fault) => {
      const sequential = runSequential<{ checksum: string }>(stencil, params);
      assert.equal(r.result.checksum, sequential.checksum, 'the grid equals the sequential one');
      assertCountedTotal('malleable iterations', r.stats.iterations, iterations, 'stencil');
      assert.equal(r.stats.nodesPerIteration.length, iterations, 'one record per iteration');
      const rescales = r.stats.rescales.map((x) => [x.kind, x.iteration]);
      if (!fault?.lost.size) assert.deepEqual(rescales, [['shrink', third], ['expand', 2 * third]], 'one shrink, one expand');
      else assert.ok(rescales.some(([k, i]) => k === 'expand' && i === 2 * third), `the schedule's expand at iteration ${2 * third}: ${JSON.stringify(rescales)}`);
    });
  },
};

// ---------------------------------------------------------------------------------------------
// Service

/** A certificate for the client host's address. */
function certificateFor(dir: string, address: string): { cert: string; key: string } {
  const cert = path.join(dir, 'service-cert.pem');
  const key = path.join(dir, 'service-key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${address}`,
    '-addext', `subjectAltName=IP:${address}`, '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

/** A task of the service batch: the primes in [20000·i, 20000·(i+1)), by trial division (a few ms each). */
function primesIn(i: number): number {
  let count = 0;
  for (let n = Math.max(2, i * 20_000); n < (i + 1) * 20_000; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) {
      if (n % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime) count++;
  }
  return count;
}

/** A `tidepool serve --zk` on a cluster's client host and a Distribution client of it in the test process. */
interface ServeOnHosts {
  process: HostProcess;
  dist: Distribution;
}

/** Each cluster's service, started by its first batch and kept running, as a service is (stopServices ends it). */
const services = new Map<HostCluster, Promise<ServeOnHosts>>();

async function startServe(c: HostCluster): Promise<ServeOnHosts> {
  const dir = c.client.dir('service');
  const tls = certificateFor(dir, c.client.address);
  const token = `across-hosts-token-${process.pid}`;
  writeFileSync(path.join(dir, 'token'), token, { mode: 0o600 });
  const serve = c.client.tidepool(['serve', '--zk', c.zkAddress, '--listen', `${c.client.address}:7480`, '--tls-cert', tls.cert, '--tls-key', tls.key, '--token-file', path.join(dir, 'token'), '--json'], { env: { TIDEPOOL_SECRET_FILE: c.secretFile, TIDEPOOL_LOG: 'warn' } });
  try {
    const ready = JSON.parse(await serve.line(/^\{/, 120_000)) as { url: string };
    return { process: serve, dist: await Distribution.connect(ready.url, { token, ca: readFileSync(tls.cert, 'utf8') }) };
  } catch (err) {
    serve.kill('SIGKILL');
    throw err;
  }
}

/** Stops the cluster's service, if it has one. */
export async function stopServices(c: HostCluster): Promise<void> {
  const service = services.get(c);
  services.delete(c);
  const s = await service?.catch(() => undefined);
  if (!s) return;
  await s.dist.close();
  if (s.process.exitCode !== undefined) return;
  s.process.kill('SIGTERM');
  await withDeadline(s.process.exited, 'tidepool serve to stop', 60_000);
}

/**
 * One batch through the cluster's `tidepool serve --zk` (started on the client host by the first one,
 * then kept) from a Distribution client in the test process: every task index has its result, equal
 * to the sequential one, and its side effect (a count in the client's array) applied once.
 */
export const SERVICE: JobKindCase = {
  title: 'a service batch through tidepool serve on the client host: every task index has its result',
  ledger: true,
  handover: 'offer',
  async start(c, size) {
    const tasks = size === 'plain' ? 24 : 600;
    if (!services.has(c)) services.set(c, startServe(c));
    const { process: serve, dist } = await services.get(c)!;
    if (serve.exitCode !== undefined) throw new Error(`tidepool serve on the client host ended (${serve.exitCode}):\n${serve.stderr()}`);
    // Each task also counts itself in the client's array: its side effects apply once, on arrival of its first outcome.
    const runs = new Array<number>(tasks).fill(0);
    const batch = Array.from({ length: tasks }, (_, i) => dist.task(() => {
      runs[i]! += 1;
      return [i, primesIn(i)] as const;
    }, `primes ${i}`));
    await dist.start(batch);
    const results = Promise.all(batch.map((t) => t.result));
    results.catch(() => undefined); // judged in finish()
    return {
      process: serve,
      async finish() {
        const checker = ExactlyOnce.range('service task indices', 0, tasks);
        for (const [index, count] of await withDeadline(results, `the batch of ${tasks} tasks`, RUN_DEADLINE_MS)) {
          assert.equal(count, primesIn(index), `task ${index}: the sequential result`);
        }
        runs.forEach((n, index) => n > 0 && checker.count(index, n));
        checker.assert('service batch (each task\'s effect on the client)');
      },
      // The service stays for the next batch.
      close: () => Promise.resolve(),
    };
  },
};

/** Every job kind, in the order the tests run them. */
export const JOB_KINDS: readonly JobKindCase[] = [TSP, CLIQUE, UNPRUNED_SEARCH, ITERATE, WORKFLOW, MALLEABLE, SERVICE];
