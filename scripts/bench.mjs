#!/usr/bin/env node
// `npm run bench`: builds the benchmarks, runs every one (each writes bench/results/<name>.json),
// then regenerates bench/RESULTS.md. `--peers` runs only the peer comparisons (Piscina, Dask).
// Extra arguments after `--` go to every benchmark, e.g. `npm run bench -- --repeat 1`.
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const peersOnly = args.includes('--peers');
const passThrough = args.includes('--') ? args.slice(args.indexOf('--') + 1) : [];

// The core's benchmarks take the pass-through arguments; the layers' have flags of their own and run with their defaults.
const CORE = ['termination', 'transport', 'data-plane', 'runtime', 'search', 'clique-dimacs', 'elasticity', 'binomial-tree', 'peers/small-tasks', 'peers/dask'];
const LAYERS = ['search-processes', 'iterative', 'service', 'malleable-rescale', 'malleable-scheduling', 'malleable-traces', 'malleable-spot', 'workflow-load', 'workflow', 'workflow-peers'];
const ALL = [...CORE, ...LAYERS];
const benches = peersOnly ? ALL.filter((b) => b.startsWith('peers/') || b === 'workflow-peers') : ALL;

function run(cmd, argv) {
  const r = spawnSync(cmd, argv, { stdio: 'inherit' });
  return r.status ?? 1;
}

if (run('npm', ['run', '--silent', 'bench:build']) !== 0) process.exit(1);
const failed = [];
for (const [i, name] of benches.entries()) {
  console.log(`\n=== [${i + 1}/${benches.length}] bench/${name} ===\n`);
  const started = Date.now();
  if (run(process.execPath, [`dist/bench/${name}.js`, ...(CORE.includes(name) ? passThrough : [])]) !== 0) failed.push(name);
  console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
}
run(process.execPath, ['dist/bench/results-md.js']);
if (failed.length > 0) {
  console.error(`error: these benchmarks failed: ${failed.join(', ')} (their previous results, if any, stay in bench/results/)`);
  process.exit(1);
}
