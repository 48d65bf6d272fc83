/**
 * Seed 000's Fig. 5 workload (random 12-city TSP, pruning off: a fixed amount of work) on 2 node
 * processes × 1 worker over a 3-server ZooKeeper ensemble and TCP, all on loopback, against the
 * machine's ceiling measured in the same run with the ensemble running (two independent plain solvers
 * at once). Counts the ZooKeeper requests per task (the servers' `mntr` zk_packets_received, pings
 * included, from the nodes' start to their exit) and can run older checkouts' CLIs beside this one,
 * interleaved, for before/after figures. The same solve on 1 process × 2 worker threads (embedded) is
 * the reference for what the multi-process path itself costs. Writes bench/results/search-processes.json.
 *
 *   npx tsx bench/search-processes.ts [--checkouts DIR,DIR] [--seeds 1,2] [--n 12] [--repeat 3]
 * (each checkout built: `npm run build`; the first is the baseline, default: this checkout alone — then the
 * rows of other checkouts already in the results file are kept, with the date they were measured)
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { secretFile } from '../test/support/node-process.js';
import { fourLetterWord, startEnsemble, type ZkEnsemble } from '../test/support/zk-ensemble.js';
import { machineInfo, projectRoot, resultsFile } from './machine.js';
import { processCpuSeconds } from './proc-cpu.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: {
  checkouts: { type: 'string', default: '' }, seeds: { type: 'string', default: '1,2' },
  n: { type: 'string', default: '12' }, repeat: { type: 'string', default: '3' },
} });
const CHECKOUTS = values.checkouts === '' ? [projectRoot()] : values.checkouts.split(',').map((d) => resolve(d));
const SEEDS = values.seeds.split(',').map(Number);
const N = Number(values.n);
const REPEAT = Number(values.repeat);
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const run = promisify(execFile);
const best = (xs: number[]) => Math.min(...xs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One plain sequential solve in a fresh process (its JIT starts cold, as a node's worker does). */
async function plainSolve(seed: number): Promise<number> {
  const out = await run(process.execPath, [...(EXT === '.ts' ? ['--import', 'tsx'] : []), new URL(`./plain-solve${EXT}`, import.meta.url).pathname, String(N), String(seed), '--no-prune']);
  return Number(out.stdout.trim());
}

/** CPU seconds the ensemble's JVMs have used so far (Linux /proc; undefined elsewhere). */
function ensembleCpu(ensemble: ZkEnsemble): number | undefined {
  try {
    return ensemble.servers.reduce((sum, s) => sum + processCpuSeconds(s.pid!), 0);
  } catch {
    return undefined;
  }
}

/** Requests the ensemble's servers have received so far (pings included). */
async function packetsReceived(ensemble: ZkEnsemble): Promise<number> {
  let sum = 0;
  for (const s of ensemble.servers) {
    const m = /zk_packets_received\s+(\d+)/.exec(await fourLetterWord(s.clientPort, 'mntr'));
    if (!m) throw new Error(`no zk_packets_received in mntr of server ${s.id}`);
    sum += Number(m[1]);
  }
  return sum;
}

/** The same solve in one process: 1 embedded node × 2 worker threads (no ZooKeeper, no TCP). */
async function onThreads(checkout: string, seed: number): Promise<number> {
  const out = await run(process.execPath, [`${checkout}/bin/tidepool.mjs`, 'solve', 'tsp', `random:${N}:${seed}`, '--no-prune', '--nodes', '1', '--workers', '2', '--json'], { env: { ...process.env, TIDEPOOL_LOG: 'error' } });
  return (JSON.parse(out.stdout) as { stats: { seconds: number } }).stats.seconds;
}

interface ProcessRun { seconds: number; tasks: number; value: number; packets: number; steals: number; workerSeconds: number | undefined; zkCpu: number | undefined }

/** `tidepool solve tsp random:N:SEED --no-prune` with 2 local node processes of the given checkout. */
async function onProcesses(checkout: string, ensemble: ZkEnsemble, seed: number, secret: string): Promise<ProcessRun> {
  const before = await packetsReceived(ensemble);
  const cpuBefore = ensembleCpu(ensemble);
  const out = await run(process.execPath, [`${checkout}/bin/tidepool.mjs`, 'solve', 'tsp', `random:${N}:${seed}`, '--no-prune',
    '--zk', ensemble.connectionString, '--nodes', '2', '--workers', '1', '--secret-file', secret, '--json'], { env: { ...process.env, TIDEPOOL_LOG: 'error' }, maxBuffer: 64 << 20 });
  const packets = (await packetsReceived(ensemble)) - before;
  const cpuAfter = ensembleCpu(ensemble);
  const zkCpu = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
  const r = JSON.parse(out.stdout) as { objective: number; stats: { seconds: number; tasks: number; steals: number; workerSeconds?: number } };
  return { seconds: r.stats.seconds, tasks: r.stats.tasks, value: r.objective, packets, steals: r.stats.steals, workerSeconds: r.stats.workerSeconds, zkCpu };
}

async function main(): Promise<void> {
  const machine = machineInfo();
  // Results name each checkout by its commit (a directory is this machine's business, not the result's).
  const revs = await Promise.all(CHECKOUTS.map(async (c) => (await run('git', ['-C', c, 'rev-parse', '--short', 'HEAD'])).stdout.trim()));
  const revOf = new Map(CHECKOUTS.map((c, i) => [c, revs[i]!]));
  if (new Set(revs).size !== revs.length) throw new Error(`--checkouts: two of them are at the same commit (${revs.join(', ')}); commit the change to compare`);
  const ensemble = await startEnsemble({ size: 3 });
  const secret = secretFile();
  const rows: Array<Record<string, unknown>> = [];
  try {
    for (const seed of SEEDS) {
      const plain: number[] = [];
      const pair: number[] = [];
      const runs = new Map<string, ProcessRun[]>(CHECKOUTS.map((c) => [c, []]));
      const threads = new Map<string, number[]>(CHECKOUTS.map((c) => [c, []]));
      for (let r = 0; r < REPEAT; r++) {
        plain.push(await plainSolve(seed));
        pair.push(Math.max(...(await Promise.all([plainSolve(seed), plainSolve(seed)]))));
        // Alternate the order of the checkouts between rounds so that neither always runs first.
        for (const c of r % 2 === 0 ? CHECKOUTS : [...CHECKOUTS].reverse()) {
          runs.get(c)!.push(await onProcesses(c, ensemble, seed, secret));
          threads.get(c)!.push(await onThreads(c, seed));
        }
        console.error(`rand${N}-${seed}: round ${r + 1}/${REPEAT} done`);
      }
      const values = new Set([...runs.values()].flat().map((x) => x.value));
      if (values.size !== 1) throw new Error(`rand${N}-${seed}: the checkouts disagree on the optimum (${[...values].join(', ')})`);
      const plainT = best(plain);
      const ceiling = plainT / best(pair);
      for (const [checkout, xs] of runs) {
        const fastest = xs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
        const efficiency = plainT / fastest.seconds / 2;
        const twoThreads = best(threads.get(checkout)!);
        rows.push({
          instance: `rand${N}-${seed}`, checkout: revOf.get(checkout)!, plain: plainT, pairOfPlain: best(pair), ceiling, twoProcesses: fastest.seconds,
          efficiency, relativeEfficiency: efficiency / ceiling, twoThreads, processesOverThreads: fastest.seconds / twoThreads, tasks: fastest.tasks, steals: fastest.steals,
          zkRequestsPerTask: median(xs.map((x) => x.packets / x.tasks)), zkRequests: median(xs.map((x) => x.packets)),
          // The share of the run the 2 workers spent in tasks (checkouts that report their workers' time).
          ...(fastest.workerSeconds !== undefined ? { workersBusy: fastest.workerSeconds / (2 * fastest.seconds) } : {}),
          // The ensemble's CPU from the nodes' start to their exit (session set-up included), as a share of the run's 2 cores.
          ...(fastest.zkCpu !== undefined ? { zkCpuSeconds: median(xs.map((x) => x.zkCpu ?? 0)), zkCpuShare: median(xs.map((x) => (x.zkCpu ?? 0) / (2 * x.seconds))) } : {}),
          samples: { plain, pair, twoProcesses: xs.map((x) => x.seconds), twoThreads: threads.get(checkout)!, packets: xs.map((x) => x.packets), tasks: xs.map((x) => x.tasks), workerSeconds: xs.map((x) => x.workerSeconds ?? null), zkCpu: xs.map((x) => x.zkCpu ?? null) },
        });
      }
    }
  } finally {
    await ensemble.stop();
  }
  printTable([
    ['instance', 'checkout', 'plain [s]', 'ceiling', '2 processes [s]', 'efficiency', 'eff./ceiling', 'workers busy', '2 threads [s]', 'processes ÷ threads', 'tasks', 'steals', 'ZK requests/task', 'ZK CPU share'],
    ...rows.map((r) => [r.instance, r.checkout, r.plain, r.ceiling, r.twoProcesses, r.efficiency, r.relativeEfficiency, r.workersBusy ?? '-', r.twoThreads, r.processesOverThreads, r.tasks, r.steals, r.zkRequestsPerTask, r.zkCpuShare ?? '-'] as never),
  ]);
  console.log('\nceiling: the efficiency of two independent plain solvers at once (what two cores deliver here, the ensemble running); all on loopback, the 3 ZooKeeper JVMs share the 2 cores.');
  console.log('ZK CPU share: the 3 ZooKeeper JVMs\' CPU time from the nodes\' start to their exit over 2 × the run (what they took from the workers\' cores; median).');
  console.log('workers busy: the share of the 2-process run its 2 workers spent running tasks (the rest is start-up, steals and the end; how fast the machine ran the tasks is apart from it).');
  const checkouts = revs.map((rev) => ({ rev, measured: machine.date }));
  // Run on this checkout alone (as `npm run bench` does), the earlier run's baseline rows are kept, with their date.
  const file = resultsFile('search-processes');
  const earlier = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { machine: { date: string }; checkouts: Array<{ rev: string; measured?: string }>; rows: Array<Record<string, unknown>> }) : undefined;
  const baseline = earlier && earlier.checkouts.length > 1 ? earlier.checkouts[0]! : undefined;
  const kept = CHECKOUTS.length === 1 && baseline && baseline.rev !== revs[0] ? [{ ...baseline, measured: baseline.measured ?? earlier!.machine.date }] : [];
  const keptRows = earlier?.rows.filter((r) => kept.some((c) => c.rev === r.checkout)) ?? [];
  writeFileSync(file, `${JSON.stringify({ machine, n: N, repeat: REPEAT, checkouts: [...kept, ...checkouts], rows: [...keptRows, ...rows] }, null, 2)}\n`);
}

await main();
