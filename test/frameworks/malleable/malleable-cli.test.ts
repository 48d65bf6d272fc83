/**
 * `tidepool malleable run` as a user runs it (the built CLI): built-in applications and a user's
 * module, their parameters from flags, --input (inline and @FILE) and --param, the runtime's
 * --lb-every, --sync-every and --workers, rescales, verified results, JSON, bad input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertCleanError, tidepool } from '../../support/cli.js';
import { plainStencil } from './plain-grids.js';

describe('tidepool malleable run', () => {
  it('runs Stencil2D with an expand and a shrink, bit-identical, as JSON', { timeout: 120_000 }, async () => {
    const run = await tidepool(['malleable', 'run', 'stencil', '--grid', '64', '--blocks', '4', '--iterations', '40', '--nodes', '2', '--scale', '10it:4,25it:1', '--check', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { verified: boolean; result: { checksum: string }; stats: { rescales: Array<{ kind: string; nodes: string[]; iteration: number }> } };
    assert.equal(out.verified, true);
    assert.equal(out.result.checksum, plainStencil(64, 40, 4).checksum);
    assert.deepEqual(out.stats.rescales.map((r) => [r.kind, r.iteration, r.nodes.length]), [['expand', 10, 4], ['shrink', 25, 1]]);
  });

  it('--workers sets the object threads per node: Stencil2D on 2 nodes of 2 threads, balanced as it runs, bit-identical', { timeout: 120_000 }, async () => {
    const run = await tidepool(['malleable', 'run', 'stencil', '--grid', '64', '--blocks', '4', '--iterations', '30', '--nodes', '2', '--workers', '2', '--lb-every', '10', '--scale', '15it:1', '--check']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^stencil2d: 16 objects, 30 iterations, job \S+ on 2 node\(s\) of 2 object thread\(s\)$/m);
    assert.match(run.stdout, /shrink 2→1 at iteration 15/);
    assert.match(run.stdout, /bit-identical to the sequential run/);
  });

  it('prints the rescale phases and the verdict as text; the old --rescale-at ITER:N still works, with a note', { timeout: 120_000 }, async () => {
    const run = await tidepool(['malleable', 'run', 'wave', '--grid', '32', '--blocks', '2', '--iterations', '12', '--nodes', '2', '--rescale-at', '6:1', '--check']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^warning: deprecated: --rescale-at is now --scale/m);
    assert.match(run.stdout, /shrink 2→1 at iteration 6: [\d.]+ ms \(lb [\d.]+, checkpoint [\d.]+, reconnect [\d.]+, restore [\d.]+\)/);
    assert.match(run.stdout, /bit-identical to the sequential run/);
  });

  it('runs a user\'s module with parameters from a file, balancing and sync points as asked; its convergence test ends it', { timeout: 120_000 }, async () => {
    const heat = fileURLToPath(new URL('../../../examples/malleable/heat.js', import.meta.url));
    const file = join(mkdtempSync(join(tmpdir(), 'tidepool-malleable-')), 'heat.json');
    writeFileSync(file, JSON.stringify({ cells: 800, segments: 8, loss: 0.2, tol: 1e-10, iterations: 4000 }));
    const run = await tidepool(['malleable', 'run', heat, '--input', `@${file}`, '--param', 'segments=10', '--nodes', '3', '--lb-every', '7', '--sync-every', '3', '--scale', '30it:2', '--check', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { app: string; params: { segments: number }; verified: boolean; result: { iterations: number }; stats: { iterations: number; syncPoints: number; balancings: number; rescales: Array<{ kind: string; iteration: number }>; nodesPerIteration: number[] } };
    assert.equal(out.app, 'heat-rod');
    assert.equal(out.params.segments, 10, '--param over --input');
    assert.equal(out.verified, true);
    assert.ok(out.stats.iterations < 4000 && out.stats.iterations === out.result.iterations, `ended by its convergence test after ${out.stats.iterations} iterations`);
    assert.deepEqual(out.stats.rescales.map((r) => [r.kind, r.iteration]), [['shrink', 30]]);
    assert.deepEqual([out.stats.nodesPerIteration[29], out.stats.nodesPerIteration[30]], [3, 2]);
    // A sync point at most every 3 iterations, and one more wherever a balancing (every 7) or the rescale (30) falls.
    const n = out.stats.iterations;
    assert.ok(out.stats.syncPoints >= Math.ceil(n / 3) && out.stats.syncPoints <= Math.ceil(n / 3) + Math.ceil(n / 7) + 1, `${out.stats.syncPoints} sync points in ${n} iterations`);
    assert.equal(out.stats.balancings, Math.floor((n - 1) / 7), 'a balancing at every multiple of 7 before the end');
  });

  it('runs LeanMD and Lulesh with parameters from --input and --param, bit-identical', { timeout: 120_000 }, async () => {
    const lulesh = await tidepool(['malleable', 'run', 'lulesh', '--param', 'elements=2000', '--param', 'blocks=8', '--param', 'steps=40', '--nodes', '2', '--scale', '40it:1', '--check']);
    assert.equal(lulesh.code, 0, lulesh.stderr);
    assert.match(lulesh.stdout, /^lulesh: 8 objects, 80 iterations/m);
    assert.match(lulesh.stdout, /checksum [0-9a-f]{64} \(bit-identical to the sequential run\)/);
    const leanmd = await tidepool(['malleable', 'run', 'leanmd', '--input', '{"cells":[3,3,3],"atomsPerSide":2,"steps":4}', '--nodes', '2', '--scale', '6it:1', '--check', '--json']);
    assert.equal(leanmd.code, 0, leanmd.stderr);
    const out = JSON.parse(leanmd.stdout) as { verified: boolean; result: { atoms: number; energies: number[] } };
    assert.equal(out.verified, true);
    assert.equal(out.result.atoms, 27 * 8);
    assert.equal(out.result.energies.length, 8, 'kinetic and potential energy of each of the 4 steps');
  });

  it('refuses bad input with a message naming the flag', async () => {
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--scale', '10:2']), /^error: --scale: "10:2": "10" is not an iteration: write iteration 10 as 10it$/m);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--scale', '2s:+1']), /--scale: "2s:\+1": "2s" is not an iteration: this plan counts iterations, not time/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--nodes', '2', '--scale', '10it:-2']), /--scale: "10it:-2" leaves the job without nodes/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--rescale-at', '10']), /^error: --rescale-at: "10" is not WHEN:SIZE/m);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--rescale-at', '10:2', '--scale', '20it:1']), /--rescale-at is the old name of --scale: give one of them/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--grid', '10', '--blocks', '11']), /--blocks must be a whole number from 1 to grid \(10\)/);
    assertCleanError(await tidepool(['malleable', 'run', 'heat']), /^error: APP: "heat" is not one of stencil, wave, leanmd, lulesh, and not a module with a malleable application: /m);
    assertCleanError(await tidepool(['malleable', 'run', './no-such-app.js']), /^error: APP: no such file: .*no-such-app\.js/m);
    assertCleanError(await tidepool(['malleable', 'run', 'leanmd', '--grid', '64']), /^error: --grid is a parameter of stencil and wave: give leanmd's parameters with --input or --param$/m);
    assertCleanError(await tidepool(['malleable', 'run', 'lulesh', '--input', '{"elements":', '--nodes', '1']), /^error: --input: not JSON/m);
    assertCleanError(await tidepool(['malleable', 'run', 'lulesh', '--param', 'blocks=0']), /^error: --input\/--param: lulesh: "blocks" must be a whole number ≥ 1, got 0$/m);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--sync-every', '0']), /--sync-every/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--workers', '0']), /--workers/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--iterations', '20', '--scale', '20it:3']), /iteration 20 is not before the last/);
    const help = await tidepool(['malleable', 'run', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--scale <plan>/);
    assert.doesNotMatch(help.stdout, /--rescale-at </, 'the old flag is hidden');
    assert.match(help.stdout, /--json/);
  });
});
