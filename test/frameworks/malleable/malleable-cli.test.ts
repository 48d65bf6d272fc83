/** `tidepool malleable run` as a user runs it (the built CLI): rescales, verified results, JSON, bad input. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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

  it('prints the rescale phases and the verdict as text; the old --rescale-at ITER:N still works, with a note', { timeout: 120_000 }, async () => {
    const run = await tidepool(['malleable', 'run', 'wave', '--grid', '32', '--blocks', '2', '--iterations', '12', '--nodes', '2', '--rescale-at', '6:1', '--check']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^warning: deprecated: --rescale-at is now --scale/m);
    assert.match(run.stdout, /shrink 2→1 at iteration 6: [\d.]+ ms \(lb [\d.]+, checkpoint [\d.]+, reconnect [\d.]+, restore [\d.]+\)/);
    assert.match(run.stdout, /bit-identical to the sequential run/);
  });

  it('refuses bad input with a message naming the flag', async () => {
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--scale', '10:2']), /^error: --scale: "10:2": "10" is not an iteration: write iteration 10 as 10it$/m);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--scale', '2s:+1']), /--scale: "2s:\+1": "2s" is not an iteration: this plan counts iterations, not time/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--nodes', '2', '--scale', '10it:-2']), /--scale: "10it:-2" leaves the job without nodes/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--rescale-at', '10']), /^error: --rescale-at: "10" is not WHEN:SIZE/m);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--rescale-at', '10:2', '--scale', '20it:1']), /--rescale-at is the old name of --scale: give one of them/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--grid', '10', '--blocks', '11']), /--blocks must be a whole number from 1 to grid \(10\)/);
    assertCleanError(await tidepool(['malleable', 'run', 'heat']), /unknown application "heat": choose one of stencil, wave/);
    assertCleanError(await tidepool(['malleable', 'run', 'stencil', '--iterations', '20', '--scale', '20it:3']), /iteration 20 is not before the last/);
    const help = await tidepool(['malleable', 'run', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--scale <plan>/);
    assert.doesNotMatch(help.stdout, /--rescale-at </, 'the old flag is hidden');
    assert.match(help.stdout, /--json/);
  });
});
