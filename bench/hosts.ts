/**
 * Issue 27's numbers across test hosts (test/support/host-cluster.ts: a 3-server ZooKeeper ensemble on
 * three network namespaces, `tidepool node` × 1 worker on two more, every link through a latency proxy),
 * with 0, 0.2 and 2 ms added on every link:
 * - seed 000's Fig. 5 workload (random N-city TSP, pruning off: a fixed amount of work) on both nodes,
 *   against the machine's ceiling measured in the same run (two plain solvers at once): efficiency,
 *   ZooKeeper requests per task (the servers' `mntr` zk_packets_received, pings included) and the steal
 *   latency percentiles (the nodes' tidepool_steal_latency_seconds histograms, as their /metrics give them);
 * - the elasticity run (seed 000 §5): the job starts on one node, the other (running, idle) is added at
 *   t1 and drained at t1 + d; S% = (S_E − S_1) / S_1 · 100 against the static run on one node.
 * The submitting client is this process, on the hosts' bridge, through the same proxies.
 *
 *   npx tsx bench/hosts.ts [--n 12] [--seed 1] [--latencies 0,0.2,2] [--repeat 3] [--t1 2] [--d 4] [--quick]
 *
 * Needs root (network namespaces; scripts/ensure-netns.sh). Writes bench/results/hosts.json
 * (--quick: n 10, one repetition, bench/results/hosts-quick.json, which git ignores).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs, promisify } from 'node:util';
import { fourLetterWord } from '../src/cli/local-cluster/zookeeper-server.js';
import { APPLICATIONS, type Application } from '../src/frameworks/search/applications.js';
import { solveOnCluster } from '../src/frameworks/search/solve.js';
import type { TspInstance } from '../src/frameworks/search/tsp/tsplib.js';
import { randomEuclideanInstance } from '../src/frameworks/search/tsp/tsp-tours.js';
import type { ScaleStep } from '../src/runtime/client/scale-schedule.js';
import { HostCluster } from '../test/support/host-cluster.js';
import { ZK_CLIENT_PORT } from '../test/support/host-zookeeper.js';
import { parsePrometheusText } from '../test/support/prometheus-text.js';
import { machineInfo, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: {
  n: { type: 'string', default: '12' }, seed: { type: 'string', default: '1' }, latencies: { type: 'string', default: '0,0.2,2' },
  repeat: { type: 'string', default: '3' }, t1: { type: 'string', default: '2' }, d: { type: 'string', default: '4' }, quick: { type: 'boolean', default: false },
} });
const QUICK = values.quick;
const N = QUICK ? 10 : Number(values.n);
const SEED = Number(values.seed);
const LATENCIES = values.latencies.split(',').map(Number);
const REPEAT = QUICK ? 1 : Number(values.repeat);
const T1 = Number(values.t1);
const D = Number(values.d);
for (const [flag, v] of [['--n', N], ['--repeat', REPEAT]] as const) if (!Number.isInteger(v) || v < 1) throw new Error(`${flag}: a whole number ≥ 1, got ${v}`);
if (LATENCIES.some((l) => !(l >= 0))) throw new Error(`--latencies: milliseconds ≥ 0, got ${values.latencies}`);

const METRICS_PORT = 9464;
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const run = promisify(execFile);
const best = (xs: number[]) => Math.min(...xs);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const instance: TspInstance = randomEuclideanInstance(N, SEED);
const app = APPLICATIONS.tsp as unknown as Application<TspInstance>;

/** One plain sequential solve in a fresh process (bench/plain-solve.ts), in seconds. */
async function plainSolve(): Promise<number> {
  const out = await run(process.execPath, [...(EXT === '.ts' ? ['--import', 'tsx'] : []), new URL(`./plain-solve${EXT}`, import.meta.url).pathname, String(N), String(SEED), '--no-prune']);
  return Number(out.stdout.trim());
}

/** Requests the ensemble's servers have received so far (pings included). */
async function packetsReceived(c: HostCluster): Promise<number> {
  let sum = 0;
  for (const s of c.zk.servers) {
    const m = /zk_packets_received\s+(\d+)/.exec(await fourLetterWord(s.host.address, ZK_CLIENT_PORT, 'mntr'));
    if (!m) throw new Error(`no zk_packets_received in mntr of ${s.host.name}`);
    sum += Number(m[1]);
  }
  return sum;
}

/** The nodes' steal-latency histograms summed: cumulative counts by bucket bound (seconds). */
async function stealBuckets(c: HostCluster): Promise<Map<number, number>> {
  const sum = new Map<number, number>();
  for (const host of c.nodeHosts) {
    const text = await (await fetch(`http://${host.address}:${METRICS_PORT}/metrics`)).text();
    const family = parsePrometheusText(text).get('tidepool_steal_latency_seconds');
    for (const s of family?.samples ?? []) {
      if (!s.name.endsWith('_bucket')) continue;
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      sum.set(le, (sum.get(le) ?? 0) + s.value);
    }
  }
  return sum;
}

/** Percentiles of the steals between two readings, as the bucket bound they fall under (seconds; undefined without steals). */
function percentiles(before: Map<number, number>, after: Map<number, number>, ps: number[]): Array<number | undefined> {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  return ps.map((p) => (total === 0 ? undefined : bounds[counts.findIndex((n) => n >= p * total)]));
}

interface Solve { seconds: number; tasks: number; steals: number; objective: number }

/** One search on the cluster's nodes: `jobNodes` at the start, then the scale schedule. */
async function solve(c: HostCluster, jobNodes: number, schedule: ScaleStep[]): Promise<Solve> {
  const out = await solveOnCluster(app, instance, {
    nodes: 0, workers: 1, zk: `zk://${c.zkAddress}`, secret: c.secret(), noPrune: true, jobNodes, schedule, startNodesOnScaleOut: false,
  });
  return { seconds: out.stats.seconds, tasks: out.stats.tasks, steals: out.stats.steals, objective: out.result.value ?? Number.NaN };
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const plain: number[] = [];
  const pair: number[] = [];
  for (let r = 0; r < REPEAT; r++) {
    plain.push(await plainSolve());
    pair.push(Math.max(...(await Promise.all([plainSolve(), plainSolve()]))));
  }
  const t1 = best(plain);
  const ceiling = t1 / best(pair);
  console.error(`plain solve of rand${N}-${SEED}: ${t1.toFixed(2)} s; two at once: ${best(pair).toFixed(2)} s (ceiling ${ceiling.toFixed(2)})`);
  const c = await HostCluster.start({ latency: { latencyMs: 0 }, nodeArgs: ['--metrics-port', String(METRICS_PORT)] });
  const rows: Array<Record<string, unknown>> = [];
  try {
    await c.startNodes();
    for (const latencyMs of LATENCIES) {
      c.setLatency({ latencyMs });
      const fig5: Array<Solve & { packets: number; p50?: number; p90?: number; p99?: number }> = [];
      const statics: Solve[] = [];
      const elastic: Solve[] = [];
      for (let r = 0; r < REPEAT; r++) {
        const [packets0, steals0] = [await packetsReceived(c), await stealBuckets(c)];
        const s = await solve(c, 2, []);
        const [packets1, steals1] = [await packetsReceived(c), await stealBuckets(c)];
        const [p50, p90, p99] = percentiles(steals0, steals1, [0.5, 0.9, 0.99]);
        fig5.push({ ...s, packets: packets1 - packets0, ...(p50 !== undefined ? { p50 } : {}), ...(p90 !== undefined ? { p90 } : {}), ...(p99 !== undefined ? { p99 } : {}) });
        statics.push(await solve(c, 1, []));
        elastic.push(await solve(c, 1, [{ atMs: T1 * 1000, delta: 1 }, { atMs: (T1 + D) * 1000, delta: -1 }]));
        console.error(`${latencyMs} ms: round ${r + 1}/${REPEAT} done`);
      }
      const values = new Set([...fig5, ...statics, ...elastic].map((x) => x.objective));
      if (values.size !== 1) throw new Error(`${latencyMs} ms: the runs disagree on the optimum (${[...values].join(', ')})`);
      const fastest = fig5.reduce((a, b) => (b.seconds < a.seconds ? b : a));
      const efficiency = t1 / fastest.seconds / 2;
      const s1 = t1 / mean(statics.map((x) => x.seconds));
      const sE = t1 / mean(elastic.map((x) => x.seconds));
      rows.push({
        latencyMs, plain: t1, ceiling, twoNodes: fastest.seconds, efficiency, relativeEfficiency: efficiency / ceiling, tasks: fastest.tasks, steals: fastest.steals,
        zkRequestsPerTask: fastest.packets / fastest.tasks, stealLatencyP50: fastest.p50 ?? null, stealLatencyP90: fastest.p90 ?? null, stealLatencyP99: fastest.p99 ?? null,
        staticOneNode: mean(statics.map((x) => x.seconds)), elastic: mean(elastic.map((x) => x.seconds)), speedupChangePercent: ((sE - s1) / s1) * 100,
        samples: { twoNodes: fig5.map((x) => x.seconds), packets: fig5.map((x) => x.packets), staticOneNode: statics.map((x) => x.seconds), elastic: elastic.map((x) => x.seconds) },
      });
    }
  } finally {
    await c.teardown();
  }
  const ms = (s: unknown) => (typeof s === 'number' ? (s === Infinity ? '> 2.5 s' : `≤ ${(s * 1000).toFixed(1)} ms`) : '-');
  printTable([
    ['added latency', 'efficiency', 'eff./ceiling', 'ZK requests/task', 'steals', 'steal p50', 'steal p90', 'steal p99', 'S%'],
    ...rows.map((r) => [`${r.latencyMs as number} ms`, r.efficiency, r.relativeEfficiency, r.zkRequestsPerTask, r.steals, ms(r.stealLatencyP50), ms(r.stealLatencyP90), ms(r.stealLatencyP99), r.speedupChangePercent] as never),
  ]);
  console.log(`\nrand${N}-${SEED} without pruning; 2 nodes × 1 worker on test hosts, every link through a proxy adding the latency; S%: 1 node, the other added at ${T1} s and drained at ${T1 + D} s.`);
  console.log('steal percentiles: the bucket bound of tidepool_steal_latency_seconds each falls under.');
  const file = resultsFile(QUICK ? 'hosts-quick' : 'hosts');
  writeFileSync(file, `${JSON.stringify({ machine, n: N, seed: SEED, repeat: REPEAT, t1: T1, d: D, rows }, null, 2)}\n`);
  console.log(`wrote ${file.pathname}`);
}

await main();
