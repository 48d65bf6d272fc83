#!/usr/bin/env node
// Core figures before and after a change, measured in one session on one machine: runs the small-task
// (Piscina peer) and runtime benchmarks alternately in an older checkout and in this one, ROUNDS times,
// and writes bench/results/core-before-after.json (fastest of all rounds per side, every sample kept).
//
//   git worktree add ../before <rev> && (cd ../before && npm ci && npm run bench:build)
//   npm run bench:build && node scripts/bench-before-after.mjs ../before [ROUNDS] [--small-only]
// (--small-only: the small-task benchmark alone, when the runtime benchmark's figures are not in question)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const before = resolve(positional[0] ?? '');
const smallOnly = process.argv.includes('--small-only');
const rounds = Number(positional[1] ?? 3);
if (positional.length === 0 || !existsSync(join(before, 'dist/bench/peers/small-tasks.js'))) {
  console.error('usage: node scripts/bench-before-after.mjs BEFORE_CHECKOUT [ROUNDS]  (BEFORE_CHECKOUT built with npm run bench:build)');
  process.exit(2);
}
const after = resolve('.');
const rev = (dir) => spawnSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();

function run(dir, bench, args) {
  // A run that hangs (a bench bug in one of the two checkouts) is given up after 150 s and counted as missing.
  const r = spawnSync(process.execPath, [`dist/bench/${bench}.js`, ...args], { cwd: dir, encoding: 'utf8', timeout: 150_000, env: { ...process.env, TIDEPOOL_LOG: 'error' } });
  if (r.status !== 0) {
    console.error(`${bench} in ${dir} did not finish (${r.signal ?? `exit ${r.status}`}); this sample is missing`);
    failures.push({ dir, bench, error: r.signal ?? `exit ${r.status}` });
    return undefined;
  }
  const name = bench.replace('/', '-');
  return JSON.parse(readFileSync(join(dir, 'bench/results', `${name === 'peers-small-tasks' ? 'peers-small-tasks' : name}.json`), 'utf8'));
}

const samples = { before: { small: [], runtime: [] }, after: { small: [], runtime: [] } };
const failures = [];
for (let i = 0; i < rounds; i++) {
  for (const [side, dir] of i % 2 === 0 ? [['before', before], ['after', after]] : [['after', after], ['before', before]]) {
    console.error(`round ${i + 1}/${rounds}: ${side}`);
    const small = run(dir, 'peers/small-tasks', ['--repeat', '3']);
    if (small) samples[side].small.push(Object.fromEntries(small.rows.map((r) => [r.name, r.perSecond])));
    const runtime = smallOnly ? undefined : run(dir, 'runtime', []);
    if (runtime) samples[side].runtime.push({ overheadPercent: runtime.overheadPercent, twoWorkers: runtime.rows[2].efficiency, twoNodes: runtime.rows[3].efficiency, joinMs: Math.min(...runtime.joinToFirstTaskMs), drainMs: Math.min(...runtime.drain.map((d) => d.ms)) });
  }
}
// Interference only slows a run down: each side's best figure is its own.
const best = (side, pick, better) => (samples[side].runtime.length === 0 ? null : samples[side].runtime.map(pick).reduce((a, b) => (better(b, a) ? b : a)));
const summary = {};
for (const side of ['before', 'after']) {
  const rows = samples[side].small;
  const names = Object.keys(rows[0]);
  const piscina = names.find((n) => n.startsWith('Piscina'));
  summary[side] = {
    commit: rev(side === 'before' ? before : after),
    tasksPerSecond: Object.fromEntries(names.map((n) => [n, Math.max(...rows.map((r) => r[n]))])),
    // The ratio to Piscina within each round (same minute, same load), best round.
    ratioToPiscina: Object.fromEntries(names.filter((n) => n !== piscina).map((n) => [n, Math.max(...rows.map((r) => r[n] / r[piscina]))])),
    overheadPercent: best(side, (r) => r.overheadPercent, (a, b) => a < b),
    efficiencyTwoWorkers: best(side, (r) => r.twoWorkers, (a, b) => a > b),
    efficiencyTwoNodes: best(side, (r) => r.twoNodes, (a, b) => a > b),
    joinToFirstTaskMs: best(side, (r) => r.joinMs, (a, b) => a < b),
    drainMs: best(side, (r) => r.drainMs, (a, b) => a < b),
  };
}
const out = { date: new Date().toISOString(), rounds, summary, samples, failures };
writeFileSync(join(after, 'bench/results/core-before-after.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify(summary, null, 2));
