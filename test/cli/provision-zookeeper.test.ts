/**
 * `tidepool provision` as a user runs it: a local provider for a cluster with no node; `tidepool solve`
 * waits, the provider starts a node, the optimum comes back, the node is stopped once idle, and
 * SIGTERM ends the provider. Bad flags are refused with a clear error.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { assertCleanError, tidepool } from '../support/cli.js';
import { secretFile } from '../support/node-process.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { withDeadline } from '../support/wait.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));
const GR17 = fileURLToPath(new URL('../data/tsplib/gr17.tsp', import.meta.url));
const OPTIMA = JSON.parse(readFileSync(new URL('../data/tsplib/optima.json', import.meta.url), 'utf8')) as Record<string, { optimal_tour_length: number }>;

describe('tidepool provision', () => {
  let zk: ZkEnsemble;
  before(async () => {
    zk = await startEnsemble({ size: 1 });
  });
  after(() => zk?.stop());

  it('refuses an unknown provider and ssh without hosts', async () => {
    const secret = secretFile();
    assertCleanError(await tidepool(['provision', '--zk', zk.connectionString, '--secret-file', secret, '--provider', 'cloud']), /--provider: "cloud" is not one of local, ssh, slurm/);
    assertCleanError(await tidepool(['provision', '--zk', zk.connectionString, '--secret-file', secret, '--provider', 'ssh']), /--provider ssh needs --hosts/);
    assertCleanError(await tidepool(['provision', '--zk', zk.connectionString, '--secret-file', secret, '--hosts', 'a,b']), /--hosts is for --provider ssh/);
  });

  it('starts a node for a waiting job, stops it when idle, and ends on SIGTERM', async () => {
    const secret = secretFile();
    const provider = spawn(process.execPath, [BIN, 'provision', '--zk', zk.connectionString, '--secret-file', secret, '--provider', 'local', '--max-nodes', '1', '--idle', '1s', '--workers', '1', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: Array<Record<string, unknown>> = [];
    let stderr = '';
    provider.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let buffered = '';
    const seen = new Set<string>();
    const waiters: Array<() => void> = [];
    provider.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        const line = JSON.parse(buffered.slice(0, i)) as Record<string, unknown>;
        buffered = buffered.slice(i + 1);
        lines.push(line);
        if (typeof line.state === 'string') seen.add(line.state);
        waiters.forEach((w) => w());
      }
    });
    const until = (state: string) => withDeadline(new Promise<void>((resolve) => {
      const check = () => seen.has(state) && resolve();
      waiters.push(check);
      check();
    }), `the provider to report a node ${state} (stderr: ${stderr})`, 90_000);
    const exited = new Promise<number | null>((resolve) => provider.once('exit', (code) => resolve(code)));
    try {
      await withDeadline(new Promise<void>((resolve) => waiters.push(() => lines.length > 0 && resolve())), 'the provider to start', 30_000);
      assert.equal(lines[0]!.provider, 'local');
      const solved = await tidepool(['solve', 'tsp', GR17, '--zk', zk.connectionString, '--secret-file', secret, '--json'], 120_000);
      assert.equal(solved.code, 0, solved.stderr);
      assert.equal((JSON.parse(solved.stdout) as { objective: number }).objective, OPTIMA.gr17!.optimal_tour_length);
      await until('joined');
      await until('released');
      const states = lines.filter((l) => typeof l.state === 'string').map((l) => l.state);
      assert.deepEqual(states, ['requested', 'starting', 'joined', 'releasing', 'released']);
    } finally {
      provider.kill('SIGTERM');
    }
    assert.equal(await withDeadline(exited, 'the provider to exit on SIGTERM', 60_000), 0, stderr);
  });
});
