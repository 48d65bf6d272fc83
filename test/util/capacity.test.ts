/**
 * The capacity helper on fake cgroup trees (a directory standing for "/", holding proc/self/cgroup,
 * proc/self/mountinfo and the mounted hierarchies): v2, v1, hybrid, "max", nested limits, container
 * mounts, missing and malformed files.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { cpuCapacity, usableCores } from '../../src/util/capacity.js';

const V2_MOUNT = '30 22 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';
const V1_CPU_MOUNT = '31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:12 - cgroup cgroup rw,cpu,cpuacct';
const V1_MEM_MOUNT = '34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory';

/** Writes `files` (path relative to the fake root → content) and returns the root. */
function fakeRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'tp-cgroup-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('usable cores', () => {
  it('cgroup v2: cpu.max quota/period, rounded up, capped by the scheduler count', () => {
    const root = fakeRoot({
      'proc/self/cgroup': '0::/app.slice/job\n',
      'proc/self/mountinfo': `${V2_MOUNT}\n`,
      'sys/fs/cgroup/app.slice/job/cpu.max': '150000 100000\n',
    });
    const c = cpuCapacity({ root, parallelism: 8 });
    assert.equal(c.quota, 1.5);
    assert.equal(c.cores, 2, '1.5 cores round up to 2 threads');
    assert.equal(c.quotaSource, join(root, 'sys/fs/cgroup/app.slice/job/cpu.max'));
    assert.equal(usableCores({ root, parallelism: 1 }), 1, 'a quota never raises the count');
    assert.equal(usableCores({ root: fakeRoot({ 'proc/self/cgroup': '0::/\n', 'proc/self/mountinfo': `${V2_MOUNT}\n`, 'sys/fs/cgroup/cpu.max': '400000 100000\n' }), parallelism: 64 }), 4, 'an exact multiple is not rounded up');
  });

  it('cgroup v2 "max" means no limit; a parent\'s limit binds a nested cgroup', () => {
    const unlimited = fakeRoot({
      'proc/self/cgroup': '0::/a/b\n',
      'proc/self/mountinfo': `${V2_MOUNT}\n`,
      'sys/fs/cgroup/a/b/cpu.max': 'max 100000\n',
      'sys/fs/cgroup/a/cpu.max': 'max 100000\n',
    });
    assert.deepEqual(cpuCapacity({ root: unlimited, parallelism: 6 }), { cores: 6, parallelism: 6, quota: undefined, quotaSource: undefined });
    const nested = fakeRoot({
      'proc/self/cgroup': '0::/a/b/c\n',
      'proc/self/mountinfo': `${V2_MOUNT}\n`,
      'sys/fs/cgroup/a/b/c/cpu.max': 'max 100000\n',
      'sys/fs/cgroup/a/b/cpu.max': '300000 100000\n',
      'sys/fs/cgroup/a/cpu.max': '50000 20000\n',
    });
    const c = cpuCapacity({ root: nested, parallelism: 16 });
    assert.equal(c.quota, 2.5, 'the tightest level wins (a: 2.5 < a/b: 3)');
    assert.equal(c.cores, 3);
  });

  it('cgroup v1: cfs_quota_us / cfs_period_us on the cpu hierarchy; -1 is no limit', () => {
    const files = {
      'proc/self/cgroup': '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n',
      'proc/self/mountinfo': `${V1_CPU_MOUNT}\n${V1_MEM_MOUNT}\n`,
      'sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '250000\n',
      'sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
      'sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us': '-1\n',
      'sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us': '100000\n',
    };
    const c = cpuCapacity({ root: fakeRoot(files), parallelism: 32 });
    assert.equal(c.quota, 2.5);
    assert.equal(c.cores, 3);
    const none = fakeRoot({ ...files, 'sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '-1\n' });
    assert.equal(usableCores({ root: none, parallelism: 32 }), 32);
  });

  it('hybrid (v1 cpu controller beside a v2 unified mount): the tighter of both', () => {
    const root = fakeRoot({
      'proc/self/cgroup': '4:cpu,cpuacct:/svc\n0::/svc\n',
      'proc/self/mountinfo': `${V1_CPU_MOUNT}\n40 22 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n`,
      'sys/fs/cgroup/cpu,cpuacct/svc/cpu.cfs_quota_us': '300000\n',
      'sys/fs/cgroup/cpu,cpuacct/svc/cpu.cfs_period_us': '100000\n',
      'sys/fs/cgroup/unified/svc/cpu.max': '100000 100000\n',
    });
    assert.equal(usableCores({ root, parallelism: 8 }), 1);
  });

  it('a container that mounts its own cgroup as the hierarchy root: the path outside it reads the mount itself', () => {
    const root = fakeRoot({
      'proc/self/cgroup': '0::/kubepods/pod1/ctr\n',
      'proc/self/mountinfo': '30 22 0:27 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n',
      'sys/fs/cgroup/cpu.max': '200000 100000\n',
    });
    assert.equal(usableCores({ root, parallelism: 64 }), 2);
    const outside = fakeRoot({
      'proc/self/cgroup': '0::/\n',
      'proc/self/mountinfo': '30 22 0:27 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n',
      'sys/fs/cgroup/cpu.max': '100000 100000\n',
    });
    assert.equal(usableCores({ root: outside, parallelism: 64 }), 1);
  });

  it('missing /proc files, missing cpu files, malformed values and a zero quota: no limit', () => {
    assert.equal(usableCores({ root: fakeRoot({}), parallelism: 5 }), 5, 'no /proc at all');
    assert.equal(usableCores({ root: fakeRoot({ 'proc/self/cgroup': '0::/x\n', 'proc/self/mountinfo': `${V2_MOUNT}\n` }), parallelism: 5 }), 5, 'no cpu.max (controller not enabled)');
    assert.equal(usableCores({ root: fakeRoot({ 'proc/self/cgroup': '0::/x\n', 'proc/self/mountinfo': '' }), parallelism: 5 }), 5, 'cgroup2 not mounted');
    for (const bad of ['', 'garbage', '1.5 100000', '100000', '0 100000', '100000 0', '-5 100000']) {
      const root = fakeRoot({ 'proc/self/cgroup': 'garbage line\n0::/x\n', 'proc/self/mountinfo': `not a mount line\n${V2_MOUNT}\n`, 'sys/fs/cgroup/x/cpu.max': bad });
      assert.equal(usableCores({ root, parallelism: 5 }), 5, JSON.stringify(bad));
    }
    const v1Missing = fakeRoot({ 'proc/self/cgroup': '4:cpu,cpuacct:/s\n', 'proc/self/mountinfo': `${V1_CPU_MOUNT}\n`, 'sys/fs/cgroup/cpu,cpuacct/s/cpu.cfs_quota_us': '50000\n' });
    assert.equal(usableCores({ root: v1Missing, parallelism: 5 }), 5, 'quota without a period');
  });

  it('a quota below one core still gives one worker', () => {
    const root = fakeRoot({ 'proc/self/cgroup': '0::/\n', 'proc/self/mountinfo': `${V2_MOUNT}\n`, 'sys/fs/cgroup/cpu.max': '20000 100000\n' });
    assert.deepEqual(cpuCapacity({ root, parallelism: 4 }).cores, 1);
  });

  it('mount points with escaped spaces', () => {
    const root = fakeRoot({
      'proc/self/cgroup': '0::/a\n',
      'proc/self/mountinfo': '30 22 0:27 / /my\\040cgroups rw - cgroup2 none rw\n',
      'my cgroups/a/cpu.max': '100000 100000\n',
    });
    assert.equal(usableCores({ root, parallelism: 4 }), 1);
  });

  it('on this machine: between 1 and os.availableParallelism()', async () => {
    const os = await import('node:os');
    const c = cpuCapacity();
    assert.ok(c.cores >= 1 && c.cores <= os.availableParallelism(), JSON.stringify(c));
  });
});
