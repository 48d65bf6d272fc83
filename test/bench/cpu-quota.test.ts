/**
 * bench/cpu-quota on this machine's real cgroup v1 cpu hierarchy (the tests run as root, like the
 * benchmark): the child cgroup carries the quota, a busy process moved in has every thread in it,
 * the cgroup is gone afterwards whether its process still runs or has exited, and a directory that is
 * no cgroup hierarchy gives a clear error. CPU use is never measured here (no timing assertions).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CGROUP_V1_CPU, createCpuQuota, CpuQuotaUnavailable, type CpuQuota } from '../../bench/cpu-quota.js';
import { waitFor, withDeadline } from '../support/wait.js';

const made: CpuQuota[] = [];
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const q of made) q.remove();
});

function quota(cores: number): CpuQuota {
  const q = createCpuQuota({ cores });
  made.push(q);
  return q;
}

/** A node process spinning forever on its main thread and on a worker thread, once both run. */
async function busyProcess(): Promise<ChildProcess> {
  const spin = "const { Worker } = require('node:worker_threads'); new Worker('for (;;) {}', { eval: true }).on('online', () => { console.log('spinning'); for (;;) {} })";
  const c = spawn(process.execPath, ['-e', spin], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(c);
  await withDeadline(once(c.stdout!, 'data'), 'the busy process to start its worker thread');
  return c;
}

const threadsOf = (pid: number) => readdirSync(`/proc/${pid}/task`).map(Number);
/** The process's cgroup in the cpu hierarchy, e.g. "/" or "/tidepool-bench-…". */
const cpuCgroupOf = (pid: number) => readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(l))!.split(':')[2];

/**
 * Whether this machine has a writable cgroup v1 cpu hierarchy (CI machines may not: a container
 * without it, no root). Where it has none, the bench reports the half-core rows as not measurable, and
 * each test below asserts exactly that refusal instead (the last test covers the refusal's wording).
 */
const unavailable: CpuQuotaUnavailable | undefined = (() => {
  try {
    createCpuQuota({ cores: 0.5 }).remove();
    return undefined;
  } catch (err) {
    if (err instanceof CpuQuotaUnavailable) return err;
    throw err;
  }
})();

/** A test of the real hierarchy; without one, the clear refusal the bench relies on. */
function onHierarchy(name: string, fn: () => void | Promise<void>): void {
  it(name, async () => {
    if (unavailable) {
      assert.throws(() => createCpuQuota({ cores: 0.5 }), (e: Error) => e instanceof CpuQuotaUnavailable && e.message.includes(CGROUP_V1_CPU));
      return;
    }
    await fn();
  });
}

describe('CPU quota cgroup', () => {
  onHierarchy('is created under the cpu hierarchy with the quota and period written', () => {
    const half = quota(0.5);
    assert.match(half.path, /^\/sys\/fs\/cgroup\/cpu\/tidepool-bench-\d+-\d+$/);
    assert.equal(readFileSync(join(half.path, 'cpu.cfs_quota_us'), 'utf8').trim(), '50000');
    assert.equal(readFileSync(join(half.path, 'cpu.cfs_period_us'), 'utf8').trim(), '100000');
    const more = quota(1.5);
    assert.notEqual(more.path, half.path);
    assert.equal(readFileSync(join(more.path, 'cpu.cfs_quota_us'), 'utf8').trim(), '150000');
    assert.deepEqual([half.quotaUs, half.periodUs, more.quotaUs], [50_000, 100_000, 150_000]);
  });

  onHierarchy('takes every thread of a busy process, and on removal gives it back to the root cgroup', async () => {
    const q = quota(0.5);
    const c = await busyProcess();
    const pid = c.pid!;
    q.add(pid);
    const tids = threadsOf(pid);
    assert.ok(tids.length > 2, `node's threads, its worker's among them (${tids.length})`);
    const inside = new Set(q.tasks());
    for (const tid of tids) assert.ok(inside.has(tid), `thread ${tid} of ${pid} is in ${q.path}`);
    assert.equal(cpuCgroupOf(pid), q.path.replace('/sys/fs/cgroup/cpu', ''));
    q.remove();
    assert.equal(existsSync(q.path), false);
    assert.equal(cpuCgroupOf(pid), '/');
    q.remove(); // again: nothing
  });

  onHierarchy('release moves a process back out; the cgroup is removed after its process exited', async () => {
    const q = quota(0.5);
    const [stays, exits] = [await busyProcess(), await busyProcess()];
    q.add(stays.pid!);
    q.add(exits.pid!);
    q.release(stays.pid!);
    assert.equal(cpuCgroupOf(stays.pid!), '/');
    assert.ok(!q.tasks().some((t) => threadsOf(stays.pid!).includes(t)));
    exits.kill('SIGKILL');
    await once(exits, 'exit');
    await waitFor(() => q.tasks().length === 0, 'the exited process to leave the cgroup');
    q.release(exits.pid!); // exited: nothing to move
    q.remove();
    assert.equal(existsSync(q.path), false);
    assert.throws(() => q.add(stays.pid!), /cannot move process/);
  });

  for (const end of ['SIGINT', 'exit'] as const) {
    onHierarchy(`removeOnExit deletes the cgroup when its process ends (${end})`, async () => {
      const script = [
        `import { createCpuQuota, removeOnExit } from ${JSON.stringify(new URL('../../bench/cpu-quota.ts', import.meta.url).href)};`,
        'const q = createCpuQuota({ cores: 0.5 }); removeOnExit(q); q.add(process.pid); console.log(q.path);',
        end === 'exit' ? 'process.exit(3);' : 'setInterval(() => {}, 1000);',
      ].join('\n');
      const c = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(c);
      const exited = once(c, 'exit');
      const [line] = await withDeadline(once(c.stdout!, 'data'), 'the script to create its cgroup', 30_000);
      const path = String(line).trim();
      assert.match(path, /^\/sys\/fs\/cgroup\/cpu\/tidepool-bench-/);
      if (end === 'SIGINT') c.kill('SIGINT');
      const [code, signal] = await withDeadline(exited, 'the script to end', 30_000);
      // It ends as it would have without the handler: killed by the signal, or with its exit code.
      assert.deepEqual([code, signal], end === 'SIGINT' ? [null, 'SIGINT'] : [3, null]);
      assert.equal(existsSync(path), false);
    });
  }

  onHierarchy('adding a process that does not exist names it', () => {
    const q = quota(0.5);
    assert.throws(() => q.add(2 ** 22 + 1), (e: Error) => e.message.includes(`process ${2 ** 22 + 1}`) && e.message.includes(q.path));
  });

  it('a clear error where no cgroup v1 cpu hierarchy is', () => {
    const missing = join(tmpdir(), `no-such-cgroup-${process.pid}`);
    assert.throws(() => createCpuQuota({ cores: 0.5, root: missing }), (e: Error) => e instanceof CpuQuotaUnavailable && e.message.includes(missing) && /no such directory/.test(e.message));
    // A plain directory dressed as one: it has the file, but is no cgroup filesystem, so nothing is created there.
    const fake = mkdtempSync(join(tmpdir(), 'tp-fake-cgroup-'));
    writeFileSync(join(fake, 'cpu.cfs_quota_us'), '-1\n');
    assert.throws(() => createCpuQuota({ cores: 0.5, root: fake }), (e: Error) => e instanceof CpuQuotaUnavailable && e.message.includes(fake) && /not a cgroup v1 cpu hierarchy/.test(e.message));
    assert.deepEqual(readdirSync(fake), ['cpu.cfs_quota_us']);
    rmSync(fake, { recursive: true });
    assert.throws(() => createCpuQuota({ cores: 0 }), /cores must be > 0/);
  });
});
