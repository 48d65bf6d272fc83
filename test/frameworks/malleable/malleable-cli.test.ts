/** `tidepool malleable run` as a user runs it (the built CLI): rescales, verified results, JSON, bad input. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCleanError, tidepool } from '../../support/cli.js';
import { plainStencil } from './plain-grids.js';

describe('tidepool malleable run', () => {
  it('runs Stencil2D with an expand and a shrink, bit-identical, as JSON', { timeout: 120_000 }, async () => {
    const run = await tidepool(['malleable', 'run', 'stencil', '--grid', '64', '--blocks', '4', '--iterations', '40', '--nodes', '2', '--rescale-at', '10:4', '25:1', '--check', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { verified: boolean; result: { checksum: string }; stats: { rescales: Array<{ kind: string; nodes: string[]; iteration: number }> } };
    assert.equal(out.verified, true);
    assert.equal(out.result.checksum, plainStencil(64, 40, 4).checksum);
    assert.deepEqual(out.stats.rescales.map((r) => [r.kind, r.iteration, r.nodes.length]), [['expand', 10, 4], ['shrink', 25, 1]]);
  });

  it('prints the rescale phases and the verdict as text', { timeout: 120_000 }, async () => {
    const run = await tidepool(['malleable', 'run', 'wave', '--grid', '32', '--blocks', '2', '--iterations', '12', '--nodes', '2', '--rescale-at', '6:1', '--check']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /shrink 2→1 at iteration 6: [\d.]+ ms \(lb [\d.]+, checkpoint [\d.]+, reconnect [\d.]+, restore [\d.]+\)/);
    assert.match(run.stdout, /bit-identical to the sequential run/);
  });

  it('refuses bad input with a message naming the flag', async () => {
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--rescale-at', '10']), /--rescale-at: "10" is not ITER:NODES/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--grid', '10', '--blocks', '11']), /--blocks must be a whole number from 1 to grid \(10\)/);
    assertCleanError(await tidepool(['malleable', 'run', 'heat']), /unknown application "heat": choose one of stencil, wave/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--iterations', '20', '--rescale-at', '20:2']), /iteration 20 is not before the last/);
    const help = await tidepool(['malleable', 'run', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--rescale-at <iter:nodes\.\.\.>/);
    assert.match(help.stdout, /--json/);
  });
});
