/**
 * The main job as the README gives it: `npx tidepool demo --quick --json`, run verbatim from the
 * README, checked against the published optimum and a tour length recomputed here from the file.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertCleanError, runCommand, tidepool, type Run } from '../support/cli.js';
import { withDeadline } from '../support/wait.js';
import { childEnv } from '../support/child-env.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function shell(command: string, timeoutMs: number): Promise<Run> {
  return runCommand('sh', ['-c', command], { cwd: ROOT, timeoutMs });
}

/** TSPLIB's ATT (pseudo-Euclidean) distance, written out here apart from the solver's reader. */
function attTourLength(file: string, tour: number[]): number {
  const coords = new Map<number, [number, number]>();
  let inCoords = false;
  for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
    if (/^NODE_COORD_SECTION/.test(line.trim())) inCoords = true;
    else if (/^EOF/.test(line.trim())) break;
    else if (inCoords && line.trim()) {
      const [i, x, y] = line.trim().split(/\s+/).map(Number) as [number, number, number];
      coords.set(i, [x, y]);
    }
  }
  let total = 0;
  for (let k = 0; k < tour.length; k++) {
    const [x1, y1] = coords.get(tour[k]!)!;
    const [x2, y2] = coords.get(tour[(k + 1) % tour.length]!)!;
    const r = Math.sqrt(((x1 - x2) ** 2 + (y1 - y2) ** 2) / 10);
    const t = Math.round(r);
    total += t < r ? t + 1 : t;
  }
  return total;
}

interface DemoJson {
  objective: number;
  optimum: number | null;
  verified: boolean;
  solution: number[];
  dashboard: string | null;
  instance: { name: string; file: string };
  stats: { seconds: number; steals: number; migrations: number; nodesJoined: number; nodesLeft: number };
  timeline: Array<{ t: number; nodes: number }>;
}

describe('tidepool demo', () => {
  it('the README\'s quick demo command, as written: optimal verified tour, a node joined and one left', { timeout: 180_000 }, async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const command = /^(npx tidepool demo --quick --json)$/m.exec(readme)?.[1];
    assert.ok(command, 'the README gives the quick demo command on a line of its own');
    const run = await shell(command, 170_000);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as DemoJson;
    assert.equal(out.verified, true);
    assert.equal(out.instance.name, 'att48');
    const optimum = (JSON.parse(readFileSync(join(ROOT, 'data/tsplib/optima.json'), 'utf8')) as Record<string, { optimal_tour_length: number }>).att48!.optimal_tour_length;
    assert.equal(out.objective, optimum);
    assert.equal(out.optimum, optimum);
    assert.deepEqual([...out.solution].sort((a, b) => a - b), Array.from({ length: 48 }, (_, i) => i + 1), 'a permutation of the 48 cities');
    assert.equal(out.solution[0], 1);
    assert.equal(attTourLength(join(ROOT, 'data/tsplib/att48.tsp'), out.solution), optimum, 'the tour re-measured from the file');
    assert.ok(out.stats.nodesJoined >= 1, `a node joined: ${JSON.stringify(out.stats)}`);
    assert.ok(out.stats.nodesLeft >= 1, `a node left: ${JSON.stringify(out.stats)}`);
    assert.ok(out.timeline.some((p) => p.nodes === 2), 'two nodes worked together at some point');
    assert.match(out.dashboard ?? '', /^http:\/\/127\.0\.0\.1:\d+\/$/);
    for (const key of ['seconds', 'steals', 'migrations'] as const) assert.equal(typeof out.stats[key], 'number');
  });

  it('human output: the live milestones, the tour and the S% comparison with the static run', { timeout: 180_000 }, async () => {
    const run = await tidepool(['demo', '--quick', '--compare', '--no-dashboard']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /static run on 1 node\(s\) first/);
    assert.match(run.stdout, /node n-\w+ joined → 2 node\(s\)/);
    assert.match(run.stdout, /node n-\w+ drained \(its tasks migrated\) → 1 node\(s\)/);
    assert.match(run.stdout, /optimal tour of att48 \(48 cities\): length 10628 — verified/);
    assert.match(run.stdout, /S% = [+-]?\d+(\.\d)?%/);
    assert.doesNotMatch(run.stdout, /dashboard:/);
  });

  it('prints the dashboard URL before the solve starts, and the page is served while the demo runs', { timeout: 180_000 }, async () => {
    // --stay keeps the demo (and its dashboard) up after the run until SIGINT: fetch the page, then stop it.
    const child = spawn(process.execPath, [join(ROOT, 'bin/tidepool.mjs'), 'demo', '--quick', '--dashboard', '0', '--stay'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
    let stdout = '';
    let stderr = '';
    const changed: Array<() => void> = [];
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); changed.forEach((f) => f()); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); changed.forEach((f) => f()); });
    /** Resolves once `test` holds for the output so far (checked now and on every new output). */
    const until = (test: () => boolean, what: string, ms: number) => withDeadline(new Promise<void>((resolve) => {
      const check = () => test() && resolve();
      changed.push(check);
      check();
    }), what, ms);
    try {
      await until(() => /^dashboard: http:\/\/127\.0\.0\.1:\d+\//m.test(stdout), 'the dashboard URL', 60_000);
      const url = /^dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/m.exec(stdout)![1]!;
      assert.ok(!stdout.includes('optimal tour') || stdout.indexOf('dashboard:') < stdout.indexOf('optimal tour'), 'the URL comes before the result');
      const page = await fetch(url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
      await until(() => stdout.includes('optimal tour') && /dashboard stays up/.test(stderr), 'the demo to finish and stay up', 120_000);
      assert.equal((await fetch(new URL('api/snapshot', url))).status, 200, '--stay keeps the dashboard up after the run');
    } finally {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });

  it('bad flags and a malformed instance: one clear line, exit 2', { timeout: 60_000 }, async () => {
    assertCleanError(await tidepool(['demo', '--nodes', '0']), /--nodes: "0" is not a positive whole number/);
    assertCleanError(await tidepool(['demo', '--scale-out', '5', '--scale-in', '2']), /--scale-in \(2 s\) must come after --scale-out \(5 s\)/);
    assertCleanError(await tidepool(['demo', '--scale-out', 'soon']), /--scale-out: "soon" is not a duration/);
    assertCleanError(await tidepool(['demo', '--scale', '2s:+1', '--scale-in', '3']), /--scale replaces --scale-out\/--scale-in/);
    assertCleanError(await tidepool(['demo', '--dashboard', '99999']), /--dashboard: "99999" is not a port number/);
    assertCleanError(await tidepool(['demo', '--instance', '/nonexistent.tsp']), /--instance: cannot read \/nonexistent\.tsp: ENOENT/);
    const bad = join(mkdtempSync(join(tmpdir(), 'tp-demo-')), 'bad.tsp');
    writeFileSync(bad, 'NAME: bad\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n');
    assertCleanError(await tidepool(['demo', '--instance', bad, '--no-dashboard']), new RegExp(`${bad.replace(/[.]/g, '\\.')}:\\d+: .*DIMENSION`));
  });
});
