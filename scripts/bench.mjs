#!/usr/bin/env node
// `npm run bench -- --data DIR`: builds the benchmarks, runs every one (each writes
// bench/results/<name>.json), then regenerates bench/RESULTS.md. `--peers` runs only the peer
// comparisons (Piscina, Dask, Snakemake). `--data DIR` is the curated data set's root (TSPLIB, DIMACS,
// workflows, traces; not in this repository; see bench/curated-data.ts): the benchmarks that read it
// get it, and without it nothing runs. Extra arguments after a second `--` go to every core
// benchmark, e.g. `npm run bench -- --data DIR -- --repeat 1`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const all = process.argv.slice(2);
const args = all.includes('--') ? all.slice(0, all.indexOf('--')) : all;
const passThrough = all.includes('--') ? all.slice(all.indexOf('--') + 1) : [];
const peersOnly = args.includes('--peers');
const dataAt = args.indexOf('--data');
const data = dataAt >= 0 ? args[dataAt + 1] : undefined;

// The core's benchmarks take the pass-through arguments; the layers' have flags of their own and run with their defaults.
const CORE = ['termination', 'transport', 'data-plane', 'runtime', 'search', 'clique-dimacs', 'elasticity', 'binomial-tree', 'peers/small-tasks', 'peers/dask'];
const LAYERS = ['access-cost', 'search-processes', 'hosts', 'iterative', 'service', 'malleable-rescale', 'malleable-scheduling', 'malleable-traces', 'malleable-spot', 'workflow-load', 'workflow-rerun', 'workflow-curated', 'workflow', 'workflow-peers'];
const ALL = [...CORE, ...LAYERS];
/** The benchmarks that read the curated data set (each refuses to start without `--data DIR`). */
const NEEDS_DATA = ['clique-dimacs', 'malleable-traces', 'malleable-spot', 'workflow-curated', 'workflow', 'workflow-peers'];
const benches = peersOnly ? ALL.filter((b) => b.startsWith('peers/') || b === 'workflow-peers') : ALL;
if (benches.some((b) => NEEDS_DATA.includes(b)) && (data === undefined || data.startsWith('--') || !existsSync(data))) {
  console.error(`error: ${data === undefined || data.startsWith('--') ? 'no --data DIR' : `--data ${data}: no such directory`}: ${benches.filter((b) => NEEDS_DATA.includes(b)).join(', ')} read the curated data set; run npm run bench -- --data DIR (DIR: the set's root, holding tsplib/, clique/, workflows/ and traces/)`);
  process.exit(2);
}

function run(cmd, argv) {
  const r = spawnSync(cmd, argv, { stdio: 'inherit' });
  return r.status ?? 1;
}

if (run('npm', ['run', '--silent', 'bench:build']) !== 0) process.exit(1);
const failed = [];
for (const [i, name] of benches.entries()) {
  console.log(`\n=== [${i + 1}/${benches.length}] bench/${name} ===\n`);
  const started = Date.now();
  const dataArgs = NEEDS_DATA.includes(name) || (name === 'search' && data !== undefined) ? ['--data', data] : [];
  if (run(process.execPath, [`dist/bench/${name}.js`, ...dataArgs, ...(CORE.includes(name) ? passThrough : [])]) !== 0) failed.push(name);
  console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
}
run(process.execPath, ['dist/bench/results-md.js']);
if (failed.length > 0) {
  console.error(`error: these benchmarks failed: ${failed.join(', ')} (their previous results, if any, stay in bench/results/)`);
  process.exit(1);
}
