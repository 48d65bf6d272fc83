/**
 * Every DIMACS graph of the curated data set (its `clique/`, 30 graphs with published ω) solved
 * by `tidepool solve clique` as a user runs it: embedded (one process, the machine's cores) and on 3
 * `tidepool node` processes × 1 worker with a 3-server ZooKeeper ensemble, all on loopback. Each
 * answer is checked against the published ω, and the CLI checks its clique against the graph
 * (`verified`). Graphs travel through the data plane (MANN_a27's input is larger than a znode).
 *
 *   npm run bench:build && node dist/bench/clique-dimacs.js --data DIR [--graphs C125.9,MANN_a27,…] [--timeout 600]
 * (DIR: the curated data set's root, holding clique/omega.json; see bench/curated-data.ts)
 *
 * Writes bench/results/clique-dimacs.json.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startNodeProcess, stopNodeProcesses, type NodeProcess } from '../src/runtime/client/node-processes.js';
import { secretFile } from '../test/support/node-process.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';
import { curatedPath, DATA_OPTION } from './curated-data.js';
import { machineInfo, projectRoot, resultsFile } from './machine.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { graphs: { type: 'string' }, timeout: { type: 'string', default: '600' }, ...DATA_OPTION } });
const ROOT = projectRoot();
const OMEGA = curatedPath(values.data, 'clique/omega.json', 'bench/clique-dimacs');
const BIN = join(ROOT, 'bin', 'tidepool.mjs');
const TIMEOUT_MS = Number(values.timeout) * 1000;
const omega = JSON.parse(readFileSync(OMEGA, 'utf8')) as Record<string, { file: string; vertices: number; edges: number; omega: number }>;
const names = values.graphs ? values.graphs.split(',') : Object.keys(omega).sort((a, b) => omega[a]!.vertices * 1e6 + omega[a]!.edges - (omega[b]!.vertices * 1e6 + omega[b]!.edges));
for (const n of names) if (!omega[n]) throw new Error(`--graphs: ${n} is not in ${OMEGA}`);
/** Each graph's file, every one checked before anything runs. */
const files = new Map(names.map((n) => [n, curatedPath(values.data, `clique/${omega[n]!.file}`, 'bench/clique-dimacs')]));

interface Solve {
  objective: number;
  verified: boolean;
  stats: { seconds: number; searchNodes: number; tasks: number; steals: number };
}

/** Runs `tidepool solve clique FILE --json …` to its end; the last stdout line is its JSON answer. */
function solve(file: string, extra: string[]): Promise<Solve> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'solve', 'clique', file, '--json', ...extra], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TIDEPOOL_LOG: 'error' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`tidepool solve clique ${file} ${extra.join(' ')}: exit ${code}\n${err}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Solve);
    });
  });
}

interface Row {
  graph: string;
  vertices: number;
  edges: number;
  omega: number;
  embedded: { objective: number; verified: boolean; seconds: number; searchNodes: number };
  threeProcesses: { objective: number; verified: boolean; seconds: number; searchNodes: number };
}

const ensemble = await startEnsemble({ size: 3 });
const secret = secretFile();
let nodes: NodeProcess[] = [];
const rows: Row[] = [];
try {
  nodes = await Promise.all([0, 1, 2].map(() => startNodeProcess({ zk: ensemble.connectionString, secretFile: secret, workers: 1, entry: { execArgv: [], script: BIN } })));
  for (const name of names) {
    const g = omega[name]!;
    const file = files.get(name)!;
    const e = await solve(file, []);
    const z = await solve(file, ['--zk', ensemble.connectionString, '--secret-file', secret]);
    for (const [where, r] of [['embedded', e], ['3 node processes', z]] as const) {
      if (r.objective !== g.omega || !r.verified) throw new Error(`${name} (${where}): ω ${r.objective} (verified ${r.verified}), published ${g.omega}`);
    }
    rows.push({
      graph: name, vertices: g.vertices, edges: g.edges, omega: g.omega,
      embedded: { objective: e.objective, verified: e.verified, seconds: e.stats.seconds, searchNodes: e.stats.searchNodes },
      threeProcesses: { objective: z.objective, verified: z.verified, seconds: z.stats.seconds, searchNodes: z.stats.searchNodes },
    });
    console.error(`${name}: ω = ${g.omega} embedded ${e.stats.seconds.toFixed(2)} s, 3 node processes ${z.stats.seconds.toFixed(2)} s`);
  }
} finally {
  await stopNodeProcesses(nodes);
  await ensemble.stop();
}

printTable([
  ['graph', 'n', 'edges', 'ω (published)', 'embedded s', 'search nodes', '3 processes s', 'search nodes'],
  ...rows.map((r) => [r.graph, r.vertices, r.edges, r.omega, r.embedded.seconds, r.embedded.searchNodes, r.threeProcesses.seconds, r.threeProcesses.searchNodes]),
]);
console.log(`\n${rows.length} graphs: every published ω proved embedded and on 3 node processes over ZooKeeper, each clique verified against its graph.`);
writeFileSync(resultsFile('clique-dimacs'), `${JSON.stringify({ machine: machineInfo(), setup: 'embedded: 1 process, default workers; 3 tidepool node processes x 1 worker, 3-server ZooKeeper ensemble, loopback', rows }, null, 2)}\n`);
