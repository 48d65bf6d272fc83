/**
 * Every command that runs work serves the live dashboard of its cluster with `--dashboard` and
 * writes progress to stderr with `--progress` also when stderr is not a terminal (plain lines, no
 * carriage returns). Each run is given far more work than the test needs: the test reads the
 * dashboard and the progress lines while it runs, then stops it.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DashboardHello } from '../../src/dashboard/snapshot.js';
import { waitFor } from '../support/wait.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));
const MONTAGE = fileURLToPath(new URL('../data/workflows/pegasus-dax-2.1/Montage_25.xml', import.meta.url));
const T = { timeout: 120_000 };

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(args: string[]): Running {
  // Without the caller's TIDEPOOL_* variables (a TIDEPOOL_ZK would send the run to that cluster).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEPOOL_')));
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function stop(run: Running): Promise<void> {
  run.child.kill('SIGKILL');
  await run.exited;
}

async function snapshot(url: string): Promise<DashboardHello['snapshot']> {
  return ((await (await fetch(new URL('api/snapshot', url))).json()) as DashboardHello).snapshot;
}

/** Runs `args` (with --dashboard 0 and --progress), checks its dashboard shows `nodes` nodes in a running job and that progress lines matching `line` come; then stops it. */
async function dashboardAndProgress(args: string[], nodes: number, line: RegExp): Promise<void> {
  const run = start([...args, '--dashboard', '0', '--progress', '100ms', '--json']);
  try {
    await waitFor(() => /^dashboard: http:\/\/127\.0\.0\.1:\d+\//m.test(run.stderr()) || run.child.exitCode !== null, 'the dashboard\'s address on stderr', 60_000);
    const url = /^dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/m.exec(run.stderr())?.[1];
    assert.ok(url, `no dashboard address: ${run.stderr()}`);
    await waitFor(async () => {
      const s = await snapshot(url);
      return s.nodes.length === nodes && s.jobs.some((j) => j.state === 'running') && s.nodes.every((n) => n.job !== null);
    }, `the dashboard to show the job running on ${nodes} nodes`, 60_000);
    const progress = () => run.stderr().split('\n').filter((l) => line.test(l));
    await waitFor(() => progress().length >= 2, `two progress lines (${line}) on stderr`, 60_000);
    assert.doesNotMatch(run.stderr(), /\r/, 'plain lines when stderr is not a terminal');
  } finally {
    await stop(run);
  }
}

describe('--dashboard and --progress on the commands that run work', () => {
  it('solve', T, () => dashboardAndProgress(['solve', 'tsp', 'random:14:1', '--no-prune', '--nodes', '2', '--workers', '1'], 2,
    /^\d+\.\ds {2}nodes 2 {2}steals \d+ {2}migrations \d+( {2}bound \d+)?$/));

  it('iterate', T, () => dashboardAndProgress(['iterate', 'slab', '--iterations', '2000000000', '--nodes', '2', '--workers', '1'], 2,
    /^\d+\.\ds {2}nodes 2 .*histories/));

  it('workflow run', T, () => dashboardAndProgress(['workflow', 'run', MONTAGE, '--replay', '20', '--nodes', '2', '--workers', '1', '--shared', mkdtempSync(join(tmpdir(), 'tp-wf-'))], 2,
    /^tasks \d+\/25 done, \d+ running, \d+ ready, \d+ waiting; moved /));

  it('malleable run', T, () => dashboardAndProgress(['malleable', 'run', 'stencil', '--grid', '512', '--iterations', '100000', '--nodes', '2'], 2,
    /^iteration \d+\/100000 on 2 node\(s\)$/));

  it('serve: its ready line names the dashboard of the cluster behind the service', T, async () => {
    const token = join(mkdtempSync(join(tmpdir(), 'tp-serve-')), 'token');
    writeFileSync(token, 'a-token-of-enough-length');
    const run = start(['serve', '--insecure', '--token-file', token, '--port', '0', '--nodes', '2', '--workers', '1', '--dashboard', '0', '--json']);
    try {
      await waitFor(() => run.stdout().includes('\n') || run.child.exitCode !== null, 'the ready line', 60_000);
      const ready = JSON.parse(run.stdout().split('\n')[0]!) as { url: string; dashboard: string };
      assert.match(ready.dashboard, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      await waitFor(async () => (await snapshot(ready.dashboard)).nodes.length === 2, 'the dashboard to show the 2 embedded nodes', 60_000);
    } finally {
      await stop(run);
    }
  });
});
