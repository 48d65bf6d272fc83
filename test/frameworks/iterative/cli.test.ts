/** `tidepool iterate` as a user runs it (needs `npm run build`): answers checked against the closed forms. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertCleanError, tidepool } from '../../support/cli.js';

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
  assertCleanError(cube!, /unknown application "cube": choose one of slab, option/);
  assertCleanError(fair!, /--balance: "fair" is not one of ruper, steal, static/);
  assertCleanError(zero!, /--iterations: "0" is not a positive whole number/);
  assert.equal(help!.code, 0);
  for (const flag of ['--iterations', '--nodes', '--workers', '--balance', '--json']) assert.ok(help!.stdout.includes(flag), flag);
});
