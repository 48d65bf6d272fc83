/**
 * The manager's commands as a user meets them: help, and bad input refused with exit code 2 and a
 * one-line message naming the flag (no cluster needed). Run in this process through the CLI's
 * `main`, capturing what it prints; the ZooKeeper test runs the commands as processes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { main } from '../../../../src/cli/main.js';

delete process.env.TIDEPOOL_ZK; // the refusals below must not reach a cluster named in the environment

async function tidepool(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const write = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };
  process.stdout.write = ((chunk: string | Uint8Array) => ((out.stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((out.stderr += String(chunk)), true)) as typeof process.stderr.write;
  try {
    const code = await main(['node', 'tidepool', ...args]);
    return { code, ...out };
  } finally {
    process.stdout.write = write.stdout;
    process.stderr.write = write.stderr;
  }
}

describe('tidepool manager, submit, jobs --managed, scale, warn, clear (CLI)', () => {
  it('every command has --help with --json and an example', async () => {
    for (const cmd of ['manager', 'submit', 'jobs', 'scale', 'queue', 'rescale', 'warn', 'clear']) {
      const r = await tidepool([cmd, '--help']);
      assert.equal(r.code, 0, `${cmd} --help`);
      assert.match(r.stdout, /--json/, `${cmd} --help lists --json`);
      assert.match(r.stdout, /Example/, `${cmd} --help shows an example`);
    }
  });

  it('refuses bad input with exit code 2 and a message naming the flag', async () => {
    const refused = async (args: string[], pattern: RegExp) => {
      const r = await tidepool(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, pattern);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    };
    await refused(['submit', 'x.js', '--flexibility', 'elastic', '--zk', 'zk://127.0.0.1:1'], /--flexibility: "elastic" is not one of rigid, moldable, malleable/);
    await refused(['submit', 'x.js', '--kind', 'elastic', '--zk', 'zk://127.0.0.1:1'], /--kind: "elastic" is not one of rigid, moldable, malleable/);
    await refused(['submit', 'x.js', '--zk', 'zk://127.0.0.1:1'], /^error: --flexibility is required \(or TIDEPOOL_SUBMIT_FLEXIBILITY\): rigid, moldable or malleable$/m);
    await refused(['submit', 'x.js', '--kind', 'rigid', '--flexibility', 'rigid', '--zk', 'zk://127.0.0.1:1'], /--kind is the old name of --flexibility: give one of them/);
    await refused(['submit', 'x.js', '--flexibility', 'malleable', '--min', '4', '--max', '2', '--zk', 'zk://127.0.0.1:1'], /--max \(2\) is below --min \(4\)/);
    await refused(['submit', 'x.js', '--flexibility', 'malleable', '--root', '{oops', '--zk', 'zk://127.0.0.1:1'], /--root: not JSON/);
    await refused(['submit', './no-such-tasks.js', '--flexibility', 'rigid', '--zk', 'zk://127.0.0.1:1'],
      new RegExp(`^error: MODULE: no such file: ${process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/no-such-tasks\\.js \\(a module path is relative to the current directory\\)$`, 'm'));
    // --input: JSON (or @FILE) as the job kind takes it; a malleable job's is checked before anything is queued.
    await refused(['submit', 'x.js', '--flexibility', 'rigid', '--input', '{oops', '--zk', 'zk://127.0.0.1:1'], /^error: --input: not JSON/m);
    await refused(['submit', 'x.js', '--flexibility', 'rigid', '--input', '@no-such-input.json', '--zk', 'zk://127.0.0.1:1'], /^error: --input: cannot read .*no-such-input\.json: ENOENT$/m);
    const malleable = ['--job-kind', 'malleable', '--flexibility', 'malleable', '--zk', 'zk://127.0.0.1:1'];
    await refused(['submit', 'stencil', ...malleable], /^error: --input: a malleable job needs its input \{"params": \{…\}, "runtime": \{…\}\}$/m);
    await refused(['submit', 'stencil', ...malleable, '--input', '{"grid":64}'], /^error: --input: a malleable job's input is \{"params": \{…the application's parameters…\}, "runtime": \{…optional runtime options…\}\}, got \{"grid":64\}$/m);
    await refused(['submit', 'stencil', ...malleable, '--input', '{"params":{"grid":64,"blocks":100,"iterations":5}}'], /^error: --input params: stencil2d: "blocks" must be a whole number from 1 to grid \(64\), got 100$/m);
    await refused(['submit', 'stencil', ...malleable, '--input', '{"params":{"grid":64,"blocks":4,"iterations":5},"runtime":{"syncEvery":0}}'], /^error: --input: runtime.syncEvery must be a whole number ≥ 1, got 0$/m);
    await refused(['submit', 'stencil', ...malleable, '--input', '{"params":{},"extra":1}'], /^error: --input: a malleable job's input has "params" and "runtime", not "extra"$/m);
    await refused(['submit', 'heat', ...malleable, '--input', '{"params":{}}'], /^error: MODULE: "heat" is not one of stencil, wave, leanmd, lulesh, and not a module with a malleable application/m);
    await refused(['manager', '--policy', 'lottery', '--zk', 'zk://127.0.0.1:1'], /--policy: "lottery" is not one of fcfs, moldable, equipartition/);
    await refused(['manager', '--tgap', 'long', '--zk', 'zk://127.0.0.1:1'], /--tgap: "long" is not a duration/);
    await refused(['scale', 'j-1', 'two', '--zk', 'zk://127.0.0.1:1'], /NODES: "two" is not a whole number ≥ 0/);
    await refused(['rescale', 'j-1', 'two', '--zk', 'zk://127.0.0.1:1'], /NODES: "two" is not a whole number ≥ 0/);
    await refused(['manager', '--cost-factor', '-1', '--zk', 'zk://127.0.0.1:1'], /--cost-factor: "-1" is not a number ≥ 0/);
    await refused(['manager', '--rescale-overhead', '0', '--zk', 'zk://127.0.0.1:1'], /--rescale-overhead: "0" is not a number above 0, at most 1/);
    await refused(['manager', '--failure-feed', 'no-such-feed.jsonl', '--zk', 'zk://127.0.0.1:1'], /^error: --failure-feed: cannot read .*no-such-feed\.jsonl: ENOENT$/m);
    await refused(['scale', 'j-1', '2', '--release', '--zk', 'zk://127.0.0.1:1'], /^error: give NODES or --release, not both$/m);
    await refused(['scale', 'j-1', '--zk', 'zk://127.0.0.1:1'], /^error: NODES is required \(or --release, for a job of the resource manager\)$/m);
    await refused(['warn', 'n1', '--at', 'soon', '--zk', 'zk://127.0.0.1:1'], /^error: --at: "soon" is neither an ISO 8601 time \(2026-11-28T02:00:00Z\) nor a duration from now \(10m\)$/m);
    await refused(['warn', '--zk', 'zk://127.0.0.1:1'], /missing required argument 'node'/);
    await refused(['manager'], /^error: --zk: the manager places jobs on a cluster registered on ZooKeeper; or --embedded for a one-machine trial on a cluster of its own$/m);
    await refused(['manager', '--embedded', '--zk', 'zk://127.0.0.1:1'], /^error: --embedded starts a cluster of its own: leave out --zk$/m);
    await refused(['manager', '--jobs', 'trial.jsonl', '--zk', 'zk://127.0.0.1:1'], /^error: --jobs goes with --embedded/m);
    await refused(['manager', '--embedded', '--jobs', 'no-such-jobs.jsonl'], /^error: --jobs: cannot read .*no-such-jobs\.jsonl: ENOENT$/m);
    await refused(['manager', '--embedded', '--jobs', '-', '--failure-feed', '-'], /^error: --jobs and --failure-feed cannot both read stdin/m);
    await refused(['manager', '--spot-nodes', 'a', '--zk', 'zk://127.0.0.1:1'], /^error: --spot-nodes goes with --price-feed$/m);
    await refused(['manager', '--price-feed', 'prices.jsonl', '--spot-threshold', '0.05', '--zk', 'zk://127.0.0.1:1'], /^error: --price-feed: name the spot nodes it drives with --spot-nodes ID…$/m);
    await refused(['manager', '--price-feed', 'prices.jsonl', '--spot-nodes', 'a', '--zk', 'zk://127.0.0.1:1'], /^error: --price-feed: give the price from which spot nodes are not kept, --spot-threshold USD$/m);
    await refused(['manager', '--price-feed', '-', '--spot-nodes', 'a', '--spot-threshold', '0.05', '--speed', '0', '--zk', 'zk://127.0.0.1:1'], /^error: --speed: must be above 0, got 0$/m);
    await refused(['manager', '--price-feed', '-', '--failure-feed', '-', '--spot-nodes', 'a', '--spot-threshold', '0.05', '--zk', 'zk://127.0.0.1:1'], /^error: only one of --price-feed, --failure-feed and --jobs can read stdin/m);
    await refused(['manager', '--price-feed', 'no-such-prices.jsonl', '--spot-nodes', 'a', '--spot-threshold', '0.05', '--zk', 'zk://127.0.0.1:1'], /^error: --price-feed: cannot read .*no-such-prices\.jsonl: ENOENT$/m);
    await refused(['jobs', '--managed'], /--zk is required/);
    await refused(['queue'], /--zk is required/);
  });
});
