import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { childEnv } from '../support/child-env.js';
import { Cluster } from '../../src/runtime/client/cluster.js';
import { listJobs } from '../../src/runtime/client/job-list.js';

const run = promisify(execFile);

it('examples/coordination.ts runs on the embedded backend and reports the recipes at work', { timeout: 60_000 }, async () => {
  const script = fileURLToPath(new URL('../../examples/coordination.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { timeout: 50_000, env: childEnv() });
  const out = JSON.parse(stdout) as { members: string[]; leader: string; terminated: boolean; bound: number; terminationStats: { transactions: number } };
  assert.deepEqual(out.members, ['node-0', 'node-1', 'node-2', 'node-3']);
  assert.match(out.leader, /^node-[0-3]$/);
  assert.equal(out.terminated, true);
  assert.equal(out.bound, Math.min(100, 93, 86, 79));
  assert.ok(out.terminationStats.transactions > 0);
});

it('examples/count-primes.ts counts the primes below 10^6 on an embedded cluster: π(10^6) = 78498', { timeout: 120_000 }, async () => {
  const script = fileURLToPath(new URL('../../examples/count-primes.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, '1000000', '2', '1'], { timeout: 110_000, env: childEnv() });
  assert.equal((JSON.parse(stdout) as { primes: number }).primes, 78498);
});

it('examples/dashboard.ts serves the dashboard of its own embedded cluster while it counts primes: π(2·10^6) = 148933', { timeout: 120_000 }, async () => {
  const script = fileURLToPath(new URL('../../examples/dashboard.ts', import.meta.url));
  const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', script, '2000000'], { timeout: 110_000, env: childEnv() });
  assert.match(stderr, /dashboard: http:\/\/127\.0\.0\.1:\d+\/ {2}metrics: http:\/\/127\.0\.0\.1:\d+\/metrics/);
  const out = JSON.parse(stdout) as { primes: number; job: { state: string; tasksDone: number }; mostNodesAtOnce: number };
  assert.equal(out.primes, 148933);
  assert.equal(out.job.state, 'done');
  assert.ok(out.job.tasksDone >= 1);
  assert.ok(out.mostNodesAtOnce >= 2, 'the monitor saw the job on its nodes');
});

it('examples/job-kind.ts runs a job of its own kind: exact sum, and the leader answers a control request', { timeout: 120_000 }, async () => {
  const script = fileURLToPath(new URL('../../examples/job-kind.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, '3000000'], { timeout: 110_000, env: childEnv() });
  const out = JSON.parse(stdout) as { sum: number; expected: number; greetingsAtLeader: { greetedBy?: number } };
  assert.equal(out.sum, (3_000_000 * 2_999_999) / 2);
  assert.equal(out.sum, out.expected);
  assert.equal(typeof out.greetingsAtLeader.greetedBy, 'number', JSON.stringify(out.greetingsAtLeader));
});

it('examples/roll-call.ts runs a job of a kind not built on the task pool: its leader ends it with every member\'s answer', { timeout: 120_000 }, async () => {
  const script = fileURLToPath(new URL('../../examples/roll-call.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { timeout: 110_000, env: childEnv() });
  const out = JSON.parse(stdout) as { question: string; members: Array<{ node: string; workers: number }> };
  assert.equal(out.question, 'who is here?');
  assert.equal(new Set(out.members.map((m) => m.node)).size, 3, 'all three nodes answered, each once');
  assert.ok(out.members.every((m) => /^n-[0-9a-f]{8}$/.test(m.node) && m.workers === 1), JSON.stringify(out.members));
});

it('the roll-call kind refuses a job without a question at submission, naming the field, and writes nothing', { timeout: 60_000 }, async () => {
  const cluster = await Cluster.embedded({ nodes: 1, workers: 1 });
  try {
    const kind = { module: new URL('../../examples/kinds/roll-call.ts', import.meta.url).href, export: 'default' };
    await assert.rejects(cluster.submitJob({ kind, kindSpec: { question: '' }, nodes: 1 }), /kind spec field "question" must be a string of 1 to 200 characters/);
    assert.deepEqual(await listJobs(cluster.coordination), []);
  } finally {
    await cluster.close();
  }
});
