/**
 * `tidepool manager --embedded --jobs FILE` as a process: a one-machine trial on a cluster of its own.
 * A malleable stencil takes the three nodes; a rigid job arriving a second later makes equipartition
 * shrink the stencil (split phase: the rigid job is launched only after the shrink is acknowledged);
 * the rigid job's count is exact; the stencil grows back when it ends; a malformed line is refused
 * naming its file:line and the trial goes on; SIGTERM ends it cleanly, its running job cancelled.
 * Each line of the jobs file is parsed as `parseTrialJob` says (checked here too).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseTrialJob } from '../../../../src/cli/commands/manager-job-feed.js';
import { withDeadline } from '../../../support/wait.js';
import { startCli } from './manager-scenario.js';

const COUNT = fileURLToPath(new URL('../../../../examples/count.js', import.meta.url));

describe('tidepool manager --embedded (a one-machine trial)', () => {
  it('queues the jobs of --jobs on its own cluster: a shrink for the rigid job, its exact count, the expand after; a bad line refused; SIGTERM stops it', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tp-trial-'));
    const jobs = join(dir, 'trial.jsonl');
    writeFileSync(jobs, [
      '# a long stencil, then a rigid job a second later',
      JSON.stringify({ app: 'stencil', flexibility: 'malleable', min: 1, max: 3, input: { params: { grid: 64, blocks: 6, iterations: 1_000_000 }, runtime: { checkpointEvery: 500 } } }),
      JSON.stringify({ module: COUNT, flexibility: 'rigid', nodes: 2, root: { n: 100_000 }, at: '1s' }),
      '{"module": "x.js", "flexibility": "elastic"}',
    ].join('\n'));
    const trial = await startCli(['manager', '--embedded', '--nodes', '3', '--workers', '1', '--tgap', '0', '--cost-factor', '0', '--jobs', jobs, '--json'], /"ready":true/);
    try {
      const lines = () => trial.out().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      const until = async (what: string, ok: (ls: Array<Record<string, unknown>>) => boolean) => {
        await withDeadline(new Promise<void>((resolve) => {
          const check = () => (ok(lines()) ? resolve() : undefined);
          trial.child.stdout!.on('data', check);
          check();
        }), what, 120_000);
      };
      const ready = lines().find((l) => l.ready === true)!;
      assert.equal((ready.embedded as { nodes: string[] }).nodes.length, 3, 'its own cluster of three nodes');
      await until('both jobs queued', (ls) => ls.filter((l) => l.queued).length === 2);
      const [stencil, rigid] = lines().filter((l) => l.queued).map((l) => String(l.queued));
      await until('the rigid job to finish', (ls) => ls.some((l) => l.finished === rigid));
      assert.deepEqual(lines().find((l) => l.finished === rigid), { finished: rigid, status: 'done', value: 9592 }, 'the primes below 100 000, counted exactly');
      await until('the stencil to grow back to 3 nodes', (ls) => ls.some((l) => l.type === 'expand' && l.job === stencil && (l.nodes as string[]).length === 3));
      const events = lines().filter((l) => typeof l.type === 'string').map((l) => [l.type, l.job, (l.nodes as string[]).length]);
      const at = (e: unknown[]) => events.findIndex((x) => JSON.stringify(x) === JSON.stringify(e));
      assert.ok(at(['launch', stencil, 3]) >= 0, `the stencil launched on the three nodes: ${JSON.stringify(events)}`);
      assert.ok(at(['shrink-acked', stencil, 1]) > at(['shrink-sent', stencil, 1]), `the stencil shrunk to one node: ${JSON.stringify(events)}`);
      assert.ok(at(['launch', rigid, 2]) > at(['shrink-acked', stencil, 1]), 'the rigid job launched only after the stencil acknowledged its shrink');
      assert.match(trial.out(), /trial\.jsonl:4: "flexibility" must be rigid, moldable or malleable, got "elastic"; skipped/, 'the bad line, refused by file:line');
    } finally {
      trial.child.kill('SIGTERM');
      assert.equal(await withDeadline(trial.exited, 'the trial to stop on SIGTERM', 60_000), 0, `stops cleanly: ${trial.out()}`);
    }
  });

  it('reads a job per line: app or module, sizes, input, arrival; refuses what is not a job by file:line', () => {
    assert.deepEqual(parseTrialJob('{"app": "wave", "flexibility": "moldable", "max": 2, "input": {"params": {}}, "at": "1m30s"}', 'j:1'),
      { where: 'j:1', at: 90_000, job: { module: 'wave', export: 'default', root: null, input: { params: {} }, jobKind: 'malleable' }, flexibility: 'moldable', min: 1, max: 2 });
    assert.deepEqual(parseTrialJob('{"module": "t.js", "export": "count", "flexibility": "rigid", "nodes": 2, "root": {"n": 5}, "at": 250}', 'j:2'),
      { where: 'j:2', at: 250, job: { module: 't.js', export: 'count', root: { n: 5 } }, flexibility: 'rigid', min: 1, nodes: 2 });
    assert.equal(parseTrialJob('  # a comment', 'j:3'), null);
    const refused = (line: string, message: string) => assert.throws(() => parseTrialJob(line, 'j:7'), { message: `j:7: ${message}` });
    refused('{"app": "wave", "module": "t.js", "flexibility": "rigid"}', 'a job has either "app" (a malleable application) or "module" (a task module)');
    refused('{"module": "t.js", "flexibility": "rigid", "size": 2}', 'a job has "app", "module", "export", "flexibility", "min", "max", "nodes", "input", "root", "jobKind" and "at", not "size"');
    refused('{"module": "t.js", "flexibility": "rigid", "min": 0}', '"min" must be a whole number of nodes ≥ 1, got 0');
    refused('{"module": "t.js", "flexibility": "malleable", "min": 3, "max": 2}', '"max" (2) is below "min" (3)');
    refused('{"module": "t.js", "flexibility": "rigid", "at": "soon"}', '"at" must be a duration after the start (3s, 1m) or milliseconds, got "soon"');
    refused('[1]', 'a job is a JSON object {"app" or "module": …, "flexibility": …}, got [1]');
  });
});
