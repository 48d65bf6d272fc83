/**
 * Command tasks as an operator expects them, on an embedded cluster: a task past its timeout is
 * killed with every process it started and its retry runs on the other node (each attempt's log kept,
 * naming the node); stdout and stderr land in `<run>/logs/<task>.out|.err` byte for byte, cut at the
 * size limit with a line saying so; a failed workflow names the task, the nodes it failed on, its exit
 * code and the end of its stderr; a task needing 2 cores never runs beside another task on a 2-core
 * node, and one needing more than any node offers fails at once, saying so.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { waitFor } from '../../support/wait.js';

const T = { timeout: 180_000 };

describe('command tasks: logs, timeouts, retries elsewhere, cores and memory', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'wf-limits-'));
    dirs.push(d);
    return d;
  };
  const clusters: Cluster[] = [];
  after(async () => {
    await Promise.all(clusters.map((c) => c.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const cluster = async (workers: number) => {
    const c = await Cluster.embedded({ nodes: 2, workers });
    clusters.push(c);
    return c;
  };

  it('a timeout kills the sleeping task and everything it started; the retry runs on the other node', T, async () => {
    const c = await cluster(1);
    const shared = fresh();
    const pidFile = join(fresh(), 'sleep.pid');
    // Attempt 1 starts a background sleep (a grandchild) and waits for it; attempt 2 finishes at once.
    const script = `echo "attempt $TIDEPOOL_ATTEMPT of $TIDEPOOL_TASK on $TIDEPOOL_NODE"; if [ "$TIDEPOOL_ATTEMPT" = 1 ]; then sleep 300 & echo $! > ${pidFile}; wait; fi; echo done > out.txt`;
    const builder = new WorkflowBuilder('sleepy').command('sleepy', ['sh', '-c', script], { outputs: ['out.txt'], timeoutSeconds: 2 });
    const result = await runWorkflow(c, builder.build(), { builder, shared, nodes: 2, maxAttempts: 2 });
    assert.equal(result.tasks, 1);
    assert.equal(result.members.reduce((n, m) => n + m.retries, 0), 1);
    assert.equal(readFileSync(join(shared, 'out.txt'), 'utf8'), 'done\n');
    const logs = join(result.run!, 'logs');
    const first = /^attempt 1 of sleepy on (\S+)\n$/.exec(readFileSync(join(logs, 'sleepy.try1.out'), 'utf8'));
    const second = /^attempt 2 of sleepy on (\S+)\n$/.exec(readFileSync(join(logs, 'sleepy.out'), 'utf8'));
    assert.ok(first && second, 'each attempt logged where it ran');
    assert.notEqual(second[1], first[1], 'the retry ran on the other node');
    assert.deepEqual(new Set([first[1], second[1]]), new Set(result.members.map((m) => m.node)));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    }, `the background sleep ${pid} to be gone`, 30_000);
  });

  it('stdout and stderr in <run>/logs byte for byte, cut at the limit with a line saying so', T, async () => {
    const c = await cluster(1);
    const shared = fresh();
    const builder = new WorkflowBuilder('logs')
      .command('small', ['sh', '-c', 'printf "out: a\\tb\\n"; printf "err: \\303\\251\\n" >&2; echo x > small.txt'], { outputs: ['small.txt'] })
      .command('big', ['sh', '-c', 'i=0; while [ $i -lt 30 ]; do printf "0123456789"; i=$((i+1)); done; echo y > big.txt'], { outputs: ['big.txt'] })
      .command('weird/id with space', ['sh', '-c', 'echo hi; echo z > z.txt'], { outputs: ['z.txt'] });
    const result = await runWorkflow(c, builder.build(), { builder, shared, nodes: 2, logBytes: 100 });
    const logs = join(result.run!, 'logs');
    assert.equal(readFileSync(join(logs, 'small.out'), 'utf8'), 'out: a\tb\n');
    assert.deepEqual(readFileSync(join(logs, 'small.err')), Buffer.from('err: \u00e9\n'));
    assert.equal(readFileSync(join(logs, 'big.out'), 'utf8'), `${'0123456789'.repeat(10)}\n[tidepool: stdout cut at 100 bytes; 200 more bytes were dropped]\n`);
    assert.equal(readFileSync(join(logs, 'big.err'), 'utf8'), '');
    assert.equal(readFileSync(join(logs, 'weird%2Fid%20with%20space.out'), 'utf8'), 'hi\n');
  });

  it('a failed workflow names the task, the nodes it failed on, its exit code and the end of its stderr', T, async () => {
    const c = await cluster(1);
    const builder = new WorkflowBuilder('broken').command('boom', ['sh', '-c', 'i=1; while [ $i -le 20 ]; do echo "line $i" >&2; i=$((i+1)); done; exit 7'], { outputs: ['x'] });
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 11}`).join('\n');
    await assert.rejects(runWorkflow(c, builder.build(), { builder, shared: fresh(), nodes: 2, maxAttempts: 2 }), (err: Error) => {
      const m = /^job \S+ failed: task boom failed 2 times \(on (\S+), (\S+)\): sh exited with code 7; the end of its stderr \(logs\/boom\.err\): ([^]*)$/.exec(err.message);
      assert.ok(m, err.message);
      assert.notEqual(m[1], m[2], 'the two attempts on different nodes');
      assert.equal(m[3], lines);
      return true;
    });
  });

  it('a task needing 2 cores runs alone on a 2-core node; one needing more than any node offers fails at once', T, async () => {
    const c = await cluster(2);
    const shared = fresh();
    const span = 'echo "$(date +%s%N) $TIDEPOOL_NODE"; sleep 0.4; echo "$(date +%s%N)"';
    const builder = new WorkflowBuilder('cores');
    for (let i = 0; i < 3; i++) builder.command(`wide${i}`, ['sh', '-c', `${span}; echo w > w${i}`], { outputs: [`w${i}`], cores: 2 });
    for (let i = 0; i < 6; i++) builder.command(`narrow${i}`, ['sh', '-c', `${span}; echo n > n${i}`], { outputs: [`n${i}`] });
    const result = await runWorkflow(c, builder.build(), { builder, shared, nodes: 2 });
    assert.equal(result.tasks, 9);
    const spans = builder.build().tasks.map((t) => {
      const [first, last] = readFileSync(join(result.run!, 'logs', `${t.id}.out`), 'utf8').trim().split('\n');
      const [start, node] = first!.split(' ');
      return { id: t.id, node: node!, start: BigInt(start!), end: BigInt(last!), cores: t.cores ?? 1 };
    });
    for (const s of spans) {
      const beside = spans.filter((o) => o !== s && o.node === s.node && o.start < s.end && s.start < o.end);
      const at = (when: bigint) => s.cores + beside.filter((o) => o.start <= when && when < o.end).reduce((n, o) => n + o.cores, 0);
      for (const when of [s.start, ...beside.map((o) => o.start).filter((w) => w >= s.start && w < s.end)]) {
        assert.ok(at(when) <= 2, `${s.id} on ${s.node}: ${at(when)} cores in use at once`);
      }
    }
    const tooBig = new WorkflowBuilder('too-big').command('huge', ['true'], { cores: 3 }).command('hungry', ['true'], { memoryMb: 4096, outputs: [] });
    await assert.rejects(runWorkflow(c, tooBig.build(), { builder: tooBig, shared: fresh(), nodes: 2, nodeMemoryMb: 1000 }),
      /job \S+ failed: task (huge needs 3 cores and 0 MiB|hungry needs 1 core and 4096 MiB), more than any member offers \(\S+: 2 cores, 1000 MiB; \S+: 2 cores, 1000 MiB\)$/);
  });
});
