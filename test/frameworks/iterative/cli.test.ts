/**
 * `tidepool iterate` as a user runs it (needs `npm run build`): answers checked against the closed
 * forms; the balancer's settings, the application's parameters, several tasks and 64-bit seeds reach
 * the job; a user's module runs by path (from the caller's directory) and by package name.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import option from '../../../src/frameworks/iterative/apps/option.js';
import { iterateSequentially } from '../../../src/frameworks/iterative/run-iterative.js';
import { OPTION_DEFAULTS } from '../../../src/frameworks/iterative/apps/option.js';
import { assertCleanError, runCommand, tidepool } from '../../support/cli.js';
import type { IterativeTaskType } from '../../../src/frameworks/iterative/define-iterative.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin/tidepool.mjs');

test('tidepool iterate slab: text output checked against e^(-μx)', async () => {
  const run = await tidepool(['iterate', 'slab', '--iterations', '200000', '--nodes', '2', '--workers', '1']);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /uncollided transmission 0\.13\d+ ± 0\.000\d+; e\^\(-μx\) = 0\.135335/);
  assert.match(run.stdout, /200000 histories in/);
});

test('tidepool iterate --progress: a bar with iterations done and the predicted time left, done never going back', async () => {
  // About 4 s on one thread of an idle machine (slab runs ~4 M histories/s), longer when loaded: lines come once a second.
  const total = 16_000_000;
  const run = await tidepool(['iterate', 'slab', '--iterations', String(total), '--workers', '1', '--progress']);
  assert.equal(run.code, 0, run.stderr);
  const bars = [...run.stderr.matchAll(/\[([#.]{20})\] {2}([\d,]+) \/ 16,000,000 histories \((\d+) %\) {2}[\d,]+\/s(?: {2}~(\d+) s left)?/g)];
  assert.ok(bars.length > 0, `progress bars on stderr: ${run.stderr}`);
  const done = bars.map((m) => Number(m[2]!.replaceAll(',', '')));
  assert.deepEqual(done, [...done].sort((a, b) => a - b), 'iterations done never go back');
  for (const m of bars) {
    const d = Number(m[2]!.replaceAll(',', ''));
    assert.equal(Number(m[3]), Math.floor((100 * d) / total), 'the percentage');
    assert.equal(m[1]!.indexOf('.') === -1 ? 20 : m[1]!.indexOf('.'), Math.floor((20 * d) / total), 'the bar');
  }
  const midRun = bars.filter((m) => Number(m[2]!.replaceAll(',', '')) < total && m[4] !== undefined);
  assert.ok(midRun.length > 0, `a line before the end predicts the time left: ${run.stderr}`);
  assert.match(run.stdout, /16000000 histories in/);
});

test('tidepool iterate option --json: same result whatever the strategy and nodes, within 5 σ of Black–Scholes', async () => {
  const runs = await Promise.all([
    tidepool(['iterate', 'option', '--iterations', '30000', '--balance', 'steal', '--json']),
    tidepool(['iterate', 'option', '--iterations', '30000', '--balance', 'static', '--nodes', '2', '--workers', '1', '--json']),
  ]);
  const [a, b] = runs.map((r) => {
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { iterations: number; estimate: number; exact: number; verified: boolean; tally: unknown };
  });
  assert.equal(a!.iterations, 30000);
  assert.ok(a!.verified);
  assert.ok(Math.abs(a!.exact - 9.1218) < 1e-4, 'Black–Scholes for the default option');
  assert.deepEqual(b!.tally, a!.tally, 'bit-identical across strategies and node counts');
  assert.equal(b!.estimate, a!.estimate);
});

test('tidepool iterate: bad input is named, exit 2, no stack trace; --help documents the flags', async () => {
  const [cube, fair, zero, help] = await Promise.all([
    tidepool(['iterate', 'cube']), tidepool(['iterate', 'slab', '--balance', 'fair']), tidepool(['iterate', 'slab', '--iterations', '0']), tidepool(['iterate', '--help']),
  ]);
  assertCleanError(cube!, /APP: "cube" is not one of slab, option, and not a module that loads: Cannot find package 'cube'/);
  assertCleanError(fair!, /--balance: "fair" is not one of ruper, steal, static/);
  assertCleanError(zero!, /--iterations: "0" is not a positive whole number/);
  assert.equal(help!.code, 0);
  for (const flag of ['--iterations', '--nodes', '--workers', '--balance', '--json', '--checkpoint-interval', '--min-remaining', '--max-deviation', '--block-size', '--param', '--input', '--tasks', '--zk']) assert.ok(help!.stdout.includes(flag), flag);
});

type Json = Record<string, unknown> & { tally: Record<string, number>; verified: boolean };
const json = (run: { code: number | null; stdout: string; stderr: string }): Json => {
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as Json;
};

test('tidepool iterate: RUPER-LB\'s Δt_pc, t_min and ds_max, the block and chunk sizes reach the job; the fold follows the block size', async () => {
  const [small, large] = (await Promise.all([
    tidepool(['iterate', 'option', '--iterations', '20000', '--balance', 'ruper', '--checkpoint-interval', '500ms', '--min-remaining', '100ms', '--max-deviation', '0.2', '--block-size', '100', '--chunk-size', '10', '--nodes', '2', '--workers', '1', '--json']),
    tidepool(['iterate', 'option', '--iterations', '20000', '--balance', 'ruper', '--block-size', '5000', '--json']),
  ])).map(json);
  assert.deepEqual(small!.ruper, { checkpointInterval: 0.5, minRemaining: 0.1, maxDeviation: 0.2 }, 'durations in seconds');
  assert.deepEqual([small!.blockSize, small!.chunkSize, small!.blocks], [100, 10, 200]);
  assert.deepEqual(large!.ruper, { checkpointInterval: 1, minRemaining: 0.25, maxDeviation: 0.1 }, 'the defaults');
  assert.deepEqual([large!.blockSize, large!.chunkSize, large!.blocks], [5000, 1024, 4]);
  // The payoffs' float sum is folded block by block: the block size shows in its last bits, exactly as one thread folds it.
  const reference = (blockSize: number) => iterateSequentially(option, { iterations: 20_000, params: OPTION_DEFAULTS, blockSize, chunkSize: blockSize === 100 ? 10 : 1024 }).value;
  assert.deepEqual(small!.tally, reference(100));
  assert.deepEqual(large!.tally, reference(5000));
  assert.notEqual(small!.tally.sum, large!.tally.sum);
});

test('tidepool iterate: the application\'s parameters from --input (JSON or @file) and --param over it; bad ones named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tp-iterate-input-'));
  writeFileSync(join(dir, 'thick.json'), '{"thickness": 3, "albedo": 0.5}');
  const [params, file, bad, type, notObject] = await Promise.all([
    tidepool(['iterate', 'slab', '--iterations', '50000', '--param', 'thickness=3', '--param', 'mu=0.5', '--json']),
    runCommand(process.execPath, [BIN, 'iterate', 'slab', '--iterations', '50000', '--input', '@thick.json', '--param', 'thickness=4', '--json'], { cwd: dir }),
    tidepool(['iterate', 'slab', '--param', 'thick=3']),
    tidepool(['iterate', 'slab', '--param', 'thickness=deep']),
    tidepool(['iterate', 'slab', '--input', '[3]']),
  ]);
  const p = json(params!);
  assert.equal(p.exact, Math.exp(-1.5), 'e^(-μx) with μ = 0.5, x = 3');
  assert.ok(p.verified);
  const f = json(file!);
  assert.equal(f.exact, Math.exp(-4), '--param over the file\'s thickness');
  assert.ok(f.verified);
  assertCleanError(bad!, /--input\/--param: slab-transport has no parameter "thick" \(its parameters: thickness, mu, albedo\)/);
  assertCleanError(type!, /thickness must be a number \(like its default 2\), got "deep"/);
  assertCleanError(notObject!, /--input: the application's parameters must be a JSON object, got \[3\]/);
});

test('tidepool iterate --tasks: several tasks in one job, each checked against its own closed form', async () => {
  const tasks = [{ name: 'thin', iterations: 30_000, params: { thickness: 1 } }, { name: 'thick', iterations: 20_000, params: { thickness: 4 } }];
  const r = json(await tidepool(['iterate', 'slab', '--balance', 'ruper', '--nodes', '2', '--workers', '1', '--tasks', JSON.stringify(tasks), '--json']));
  assert.equal(r.iterations, 50_000);
  const got = r.tasks as Array<{ name: string; iterations: number; exact: number; verified: boolean; tally: { histories: number } }>;
  assert.deepEqual(got.map((t) => [t.name, t.iterations, t.tally.histories, t.exact]), [['thin', 30_000, 30_000, Math.exp(-1)], ['thick', 20_000, 20_000, Math.exp(-4)]]);
  assert.ok(got.every((t) => t.verified) && r.verified);
  assertCleanError(await tidepool(['iterate', 'slab', '--tasks', '[{"iterations": 0}]']), /--tasks: task 0: iterations must be a whole number ≥ 1, got 0/);
  assertCleanError(await tidepool(['iterate', 'slab', '--tasks', '[{"iterations": 10, "param": {}}]']), /--tasks: task 0 has "param" \(a task has name, iterations and params\)/);
});

test('tidepool iterate --seed: 64-bit, never cut (1 and 2^32 + 1 differ; 2^64 − 1 runs; 2^64 is refused)', async () => {
  const runs = await Promise.all(['1', '4294967297', '18446744073709551615'].map((seed) => tidepool(['iterate', 'slab', '--iterations', '20000', '--seed', seed, '--json'])));
  const [one, big, max] = runs.map(json);
  assert.notDeepEqual(big!.tally, one!.tally, 'seed 2^32 + 1 is not seed 1');
  assert.equal(big!.seed, '4294967297');
  assert.equal(max!.seed, '18446744073709551615');
  assert.notDeepEqual(max!.tally, one!.tally);
  assertCleanError(await tidepool(['iterate', 'slab', '--seed', '18446744073709551616']), /--seed: "18446744073709551616" is not a whole number from 0 to 2\^64 − 1/);
});

test('tidepool iterate MODULE: a user\'s module by path from the caller\'s directory, or by package name installed there', async () => {
  const project = mkdtempSync(join(tmpdir(), 'tp-iterate-module-'));
  const buffonFile = fileURLToPath(new URL('../../../examples/iterative/buffon.js', import.meta.url));
  // As in a user's project that installed tidepool: the module imports tidepool-runtime/iterative.
  writeFileSync(join(project, 'package.json'), '{"type": "module"}');
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'tidepool-runtime'));
  copyFileSync(buffonFile, join(project, 'needle.js'));
  const pkg = join(project, 'node_modules', 'needles');
  mkdirSync(pkg);
  copyFileSync(buffonFile, join(pkg, 'index.js'));
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'needles', type: 'module', exports: { '.': './index.js' } }));
  const run = (args: string[], cwd = project) => runCommand(process.execPath, [BIN, 'iterate', ...args], { cwd });
  const params = { needleLength: 1, lineSpacing: 2 };
  // A plain JavaScript module (no types): the sequential reference loads it as the nodes do.
  const buffon = ((await import(new URL('../../../examples/iterative/buffon.js', import.meta.url).href)) as { default: IterativeTaskType<unknown, unknown> }).default;
  const reference = iterateSequentially(buffon, { iterations: 40_000, params, blockSize: 1000 }).value;
  const [byPath, byPackage, text, notHere] = await Promise.all([
    run(['./needle.js', '--iterations', '40000', '--input', JSON.stringify(params), '--block-size', '1000', '--balance', 'ruper', '--nodes', '2', '--workers', '1', '--json']),
    run(['needles', '--iterations', '40000', '--param', 'needleLength=1', '--param', 'lineSpacing=2', '--block-size', '1000', '--json']),
    run(['needle.js', '--iterations', '1000']),
    run(['./needle.js', '--iterations', '1000'], tmpdir()),
  ]);
  assert.deepEqual(json(byPath!).value, reference, 'the file in the caller\'s directory, bit-identical to one thread');
  assert.deepEqual(json(byPackage!).value, reference, 'the package installed in the caller\'s project');
  assert.equal(text!.code, 0, text!.stderr);
  assert.match(text!.stdout, /result \{"dropped":1000,"crossed":\d+\}\n1000 iterations in/);
  assertCleanError(notHere!, new RegExp(`APP: no such file: ${join(tmpdir(), 'needle.js').replace(/[.]/g, '\\.')}`));
  assertCleanError(await run(['./needle.js']), /--iterations is required for a module/);
  assertCleanError(await runCommand(process.execPath, [BIN, 'iterate', 'examples/count.js', '--iterations', '10'], { cwd: ROOT }), /APP: examples\/count\.js exports a task type "default" that is not an iterative application/);
});
