/**
 * What cluster security costs on the hot paths (docs/security.md): the ledger's batched termination
 * transactions (seed 000, Algorithm 2 batched) with and without the cluster's access lists — on the
 * embedded backend every operation checks them, on ZooKeeper every create carries them and the server
 * checks them — and signing and checking a job spec (once per submission and per node joining a job),
 * over a spec with the largest inline input (64 KiB).
 *
 * Open and secured runs alternate, so a machine that slows down mid-run does not favour either.
 *
 *   npx tsx bench/access-cost.ts [--tasks N] [--rounds R]
 *
 * Writes bench/results/access-cost.json.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connect } from '../src/coord/connect.js';
import { TaskTracker, TerminationList } from '../src/coord/recipes/termination-detection.js';
import type { CoordClient } from '../src/coord/types.js';
import { CodeAdmission } from '../src/runtime/job/code-admission.js';
import { signSpec } from '../src/runtime/job/job-signature.js';
import type { JobSpec } from '../src/runtime/job/job-spec.js';
import { ClusterSecret, type SecretInput } from '../src/util/cluster-secret.js';
import { Rng } from '../src/util/rng.js';
import { randomSplitTree } from '../test/support/split-tree.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '3' } } });
const TASKS = Number(values.tasks);
const ROUNDS = Number(values.rounds);
const CLIENTS = 3;

/** Tasks per second of batched termination detection through `open`'s sessions. */
async function termination(open: () => Promise<CoordClient>, base: string): Promise<number> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, open));
  const coordClient = await open();
  const terminationList = new TerminationList(coordClient, base);
  await terminationList.init('t0');
  const finished = terminationList.finished();
  const rng = new Rng(42);
  const tree = randomSplitTree(rng, TASKS);
  const trackers = clients.map((c) => new TaskTracker(c, base, { maxBatch: 64 }));
  const order = [...tree.keys()].sort(() => rng.next() - 0.5);
  const start = performance.now();
  await Promise.all(order.map((id, i) => trackers[i % CLIENTS]!.completed(id, tree.get(id)!)));
  await finished;
  const seconds = (performance.now() - start) / 1000;
  await Promise.all([...clients, coordClient].map((c) => c.close()));
  return TASKS / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Row { backend: string; openTasksPerSecond: number; securedTasksPerSecond: number; ratio: number }

async function compare(backend: string, conn: string): Promise<Row> {
  const secret = ClusterSecret.random();
  const open: number[] = [];
  const secured: number[] = [];
  const session = (s?: SecretInput) => () => connect(conn, s ? { secret: s } : {});
  // One round of each first, not counted (compilation, connections); then each round in turn goes first.
  for (let r = -1; r < ROUNDS; r++) {
    const runOpen = async () => {
      const rate = await termination(session(), `/bench-open-${Date.now()}-${r}`);
      if (r >= 0) open.push(rate);
    };
    // Under a root the secured session made, as a cluster's znodes are: every op is checked against its list.
    const runSecured = async () => {
      const rate = await termination(session(secret), `/bench-secured-${Date.now()}-${r}`);
      if (r >= 0) secured.push(rate);
    };
    if (r % 2 === 0) {
      await runOpen();
      await runSecured();
    } else {
      await runSecured();
      await runOpen();
    }
  }
  const o = median(open);
  const s = median(secured);
  return { backend, openTasksPerSecond: o, securedTasksPerSecond: s, ratio: s / o };
}

/** Microseconds to sign, and to check (signature and modules), a spec with a 64 KiB inline input. */
function specCost(): { signMicros: number; admitMicros: number } {
  const secret = ClusterSecret.random();
  const spec: JobSpec = {
    id: 'j-bench', kind: { module: 'builtin:task-pool', export: 'taskPoolKind' }, kindSpec: { ref: { module: 'builtin:tsp', export: 'default' }, varNames: ['bound'] },
    createdAt: Date.now(), label: 'builtin:tsp', nodes: { requested: 4, min: 1 },
    input: { matrix: Array.from({ length: 145 }, (_, i) => Array.from({ length: 145 }, (__, j) => (i * 31 + j * 17) % 1000)) },
  };
  const admission = new CodeAdmission({ secret });
  const n = 200;
  let signed = signSpec(spec, secret);
  let start = performance.now();
  for (let i = 0; i < n; i++) signed = signSpec(spec, secret);
  const signMicros = ((performance.now() - start) * 1000) / n;
  start = performance.now();
  for (let i = 0; i < n; i++) admission.admitJob(signed, 'j-bench');
  return { signMicros, admitMicros: ((performance.now() - start) * 1000) / n };
}

const rows: Row[] = [await compare('embedded', 'embedded:access-bench')];
const zk = await startEnsemble({ size: 3 });
try {
  rows.push(await compare('zookeeper x3', zk.connectionString));
} finally {
  await zk.stop();
}
const spec = specCost();

console.log(`access lists on the ledger's batched termination transactions: ${TASKS} tasks, ${CLIENTS} clients, median of ${ROUNDS} rounds after a warm-up, each in turn going first\n`);
printTable([['backend', 'open tasks/s', 'secured tasks/s', 'secured / open'], ...rows.map((r) => [r.backend, r.openTasksPerSecond, r.securedTasksPerSecond, `${r.ratio.toFixed(3)}x`])]);
console.log(`\njob spec with a 64 KiB input: sign ${spec.signMicros.toFixed(0)} µs (once per submission), check ${spec.admitMicros.toFixed(0)} µs (once per node joining the job)`);
writeFileSync(resultsFile('access-cost'), `${JSON.stringify({ machine: machineInfo(), tasks: TASKS, clients: CLIENTS, rounds: ROUNDS, termination: rows, spec }, null, 2)}\n`);
