/**
 * How many cores this process may really use.
 *
 * `os.availableParallelism()` sees the CPU affinity mask (cpusets) but, on Node 20 (libuv 1.46), not a
 * cgroup CPU quota: a container limited to 2 CPUs on a 64-core host reports 64, and 64 busy workers
 * then share 2 cores' worth of time slices. So the quota is read here, from the cgroup the process is
 * in (found through /proc/self/cgroup and /proc/self/mountinfo), for cgroup v2 (`cpu.max`) and v1
 * (`cpu.cfs_quota_us` / `cpu.cfs_period_us`), on every level from the process's cgroup up to the
 * mounted root (a parent's limit binds its children too).
 *
 * Rounding: a quota of q cores becomes ⌈q⌉ threads (at least 1). A fractional share still runs a
 * thread for part of every period, so rounding down would leave quota unused (1.5 cores → 1 thread
 * wastes a third); rounding up over-subscribes by less than one thread. The quota never raises the
 * count above `os.availableParallelism()`.
 *
 * Files that are missing, unreadable or malformed count as "no limit": capacity is a default, and a
 * kernel layout this code does not know must not stop a node from starting.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join, posix } from 'node:path';

export interface CapacityOptions {
  /** Filesystem root under which /proc and the cgroup mounts are read (tests point it at a fake tree). */
  root?: string;
  /** The scheduler's count (default `os.availableParallelism()`). */
  parallelism?: number;
}

export interface Capacity {
  /** Worker threads to use: min(parallelism, ⌈quota⌉), at least 1. */
  cores: number;
  parallelism: number;
  /** The tightest cgroup CPU quota in cores (e.g. 1.5), or undefined when none applies. */
  quota: number | undefined;
  /** Where the quota came from (the file read), for diagnostics. */
  quotaSource: string | undefined;
}

/** The cores this process may use; see the module comment for the rules. */
export function usableCores(opts: CapacityOptions = {}): number {
  return cpuCapacity(opts).cores;
}

export function cpuCapacity(opts: CapacityOptions = {}): Capacity {
  const parallelism = Math.max(1, opts.parallelism ?? os.availableParallelism());
  const limit = cgroupCpuQuota(opts.root ?? '/');
  // The epsilon keeps 2.0000000001 (float division of exact multiples) from becoming 3.
  const cores = limit ? Math.max(1, Math.min(parallelism, Math.ceil(limit.cores - 1e-9))) : parallelism;
  return { cores, parallelism, quota: limit?.cores, quotaSource: limit?.file };
}

interface Limit { cores: number; file: string }

/** The tightest CPU quota over the process's cgroup(s) and their ancestors, v1 and v2. */
export function cgroupCpuQuota(root = '/'): Limit | undefined {
  const memberships = readLines(join(root, 'proc/self/cgroup')).map(parseCgroupLine).filter((m) => m !== undefined);
  const mounts = readLines(join(root, 'proc/self/mountinfo')).map(parseMountLine).filter((m) => m !== undefined);
  let best: Limit | undefined;
  for (const m of memberships) {
    const v2 = m.controllers.length === 0;
    if (!v2 && !m.controllers.includes('cpu')) continue;
    const mount = mounts.find((mt) => (v2 ? mt.fsType === 'cgroup2' : mt.fsType === 'cgroup' && mt.superOptions.includes('cpu')));
    if (!mount) continue;
    for (const dir of cgroupDirs(mount, m.path)) {
      const limit = v2 ? readV2(join(root, dir)) : readV1(join(root, dir));
      if (limit && (!best || limit.cores < best.cores)) best = limit;
    }
  }
  return best;
}

interface Membership { controllers: string[]; path: string }
interface Mount { root: string; mountPoint: string; fsType: string; superOptions: string[] }

/** "4:cpu,cpuacct:/docker/abc" → v1 controllers and path; "0::/user.slice" → v2 (no controllers). */
function parseCgroupLine(line: string): Membership | undefined {
  const first = line.indexOf(':');
  const second = line.indexOf(':', first + 1);
  if (first < 0 || second < 0) return undefined;
  const list = line.slice(first + 1, second);
  return { controllers: list === '' ? [] : list.split(','), path: line.slice(second + 1) };
}

/** A mountinfo line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL…] - FSTYPE SOURCE SUPEROPTS. */
function parseMountLine(line: string): Mount | undefined {
  const fields = line.split(' ');
  const dash = fields.indexOf('-');
  if (fields.length < 5 || dash < 0 || fields.length < dash + 3) return undefined;
  return {
    root: unescapeMount(fields[3]!), mountPoint: unescapeMount(fields[4]!), fsType: fields[dash + 1]!,
    superOptions: (fields[dash + 3] ?? '').split(','),
  };
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * The directories of the cgroup and its ancestors, leaf first, up to the mount point. The path in
 * /proc/self/cgroup is relative to the hierarchy's root; the mount shows the hierarchy from `mount.root`
 * down (a container usually mounts its own cgroup as root, and then sees "/" or a path outside it).
 */
function cgroupDirs(mount: Mount, path: string): string[] {
  let rel = posix.normalize(path);
  if (mount.root !== '/') {
    if (rel === mount.root || rel.startsWith(`${mount.root}/`)) rel = rel.slice(mount.root.length);
    else rel = '/'; // outside what is mounted: only the mounted root is visible
  }
  const dirs: string[] = [];
  for (let p = rel === '' ? '/' : rel; ; p = posix.dirname(p)) {
    dirs.push(posix.join(mount.mountPoint, p));
    if (p === '/' || p === '.') break;
  }
  return dirs;
}

/** cgroup v2 `cpu.max`: "QUOTA PERIOD" or "max PERIOD". */
function readV2(dir: string): Limit | undefined {
  const file = join(dir, 'cpu.max');
  const [quota, period] = (readText(file) ?? '').trim().split(/\s+/);
  return quotaLimit(quota, period, file);
}

/** cgroup v1: `cpu.cfs_quota_us` (-1 = none) over `cpu.cfs_period_us`. */
function readV1(dir: string): Limit | undefined {
  const file = join(dir, 'cpu.cfs_quota_us');
  return quotaLimit(readText(file)?.trim(), readText(join(dir, 'cpu.cfs_period_us'))?.trim(), file);
}

function quotaLimit(quota: string | undefined, period: string | undefined, file: string): Limit | undefined {
  if (quota === undefined || period === undefined || !/^\d+$/.test(quota) || !/^\d+$/.test(period)) return undefined;
  const q = Number(quota);
  const p = Number(period);
  return q > 0 && p > 0 ? { cores: q / p, file } : undefined;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function readLines(file: string): string[] {
  return (readText(file) ?? '').split('\n').filter((l) => l !== '');
}
