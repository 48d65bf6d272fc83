/**
 * A CPU quota for one process of a benchmark: a child cgroup of the cgroup v1 `cpu` hierarchy whose
 * CFS quota gives the processes moved into it exactly `cores` of CPU time (50000 µs per 100000 µs
 * period = half a core), however idle the machine is. A CPU hog beside a process only takes what the
 * scheduler lets it, which varies; a quota does not.
 *
 * Needs root and a writable cgroup v1 `cpu` hierarchy (cgroup v2's `cpu.max` is not implemented: on
 * this machine the cgroup2 mount has no cpu controller). Where that is missing, `createCpuQuota`
 * throws a `CpuQuotaUnavailable` naming the directory and the reason, and the scenario is reported as
 * not measurable.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CGROUP_V1_CPU = '/sys/fs/cgroup/cpu';
const PERIOD_US = 100_000;
/** statfs's f_type of a cgroup v1 hierarchy (linux/magic.h CGROUP_SUPER_MAGIC). */
const CGROUP_SUPER_MAGIC = 0x27e0eb;

export class CpuQuotaUnavailable extends Error {
  override name = 'CpuQuotaUnavailable';
}

export interface CpuQuota {
  /** The child cgroup's directory. */
  readonly path: string;
  readonly quotaUs: number;
  readonly periodUs: number;
  /** Moves a process, every thread of it, into the cgroup. */
  add(pid: number): void;
  /** Moves a process back to the hierarchy's root cgroup; nothing when it has exited. */
  release(pid: number): void;
  /** Thread ids in the cgroup now. */
  tasks(): number[];
  /** Moves whatever is still in the cgroup back to the root and deletes it; again is a no-op. */
  remove(): void;
}

let created = 0;

/** Creates `ROOT/tidepool-bench-PID-N` with a quota of `cores` (e.g. 0.5) per 100 ms period. */
export function createCpuQuota(opts: { cores: number; root?: string }): CpuQuota {
  const root = opts.root ?? CGROUP_V1_CPU;
  if (!(opts.cores > 0)) throw new RangeError(`createCpuQuota: cores must be > 0, got ${opts.cores}`);
  if (!existsSync(root)) throw new CpuQuotaUnavailable(`no cgroup v1 cpu hierarchy at ${root} (no such directory): a CPU quota cannot be set on this machine`);
  if (statfsSync(root).type !== CGROUP_SUPER_MAGIC || !existsSync(join(root, 'cpu.cfs_quota_us'))) {
    throw new CpuQuotaUnavailable(`${root} is not a cgroup v1 cpu hierarchy (not a cgroup filesystem with cpu.cfs_quota_us): a CPU quota cannot be set there`);
  }
  const path = join(root, `tidepool-bench-${process.pid}-${created++}`);
  const quotaUs = Math.round(opts.cores * PERIOD_US);
  try {
    mkdirSync(path);
  } catch (e) {
    throw new CpuQuotaUnavailable(`cannot create the cgroup ${path}: ${(e as Error).message} (a CPU quota needs root and a writable cgroup v1 cpu hierarchy)`);
  }
  try {
    writeFileSync(join(path, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(path, 'cpu.cfs_quota_us'), String(quotaUs));
  } catch (e) {
    rmdirSync(path);
    throw new CpuQuotaUnavailable(`cannot set the CPU quota of ${path}: ${(e as Error).message}`);
  }
  const moveTo = (dir: string, pid: number, what: string) => {
    try {
      // cgroup.procs takes a process id and moves every thread of that process.
      writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw new Error(`cannot move process ${pid} ${what} ${dir}: ${(e as Error).message}`);
    }
    return true;
  };
  const tasks = () => readFileSync(join(path, 'tasks'), 'utf8').split('\n').filter(Boolean).map(Number);
  let removed = false;
  return {
    path, quotaUs, periodUs: PERIOD_US, tasks,
    add(pid) {
      if (!moveTo(path, pid, 'into')) throw new Error(`cannot move process ${pid} into ${path}: no such process`);
    },
    release(pid) {
      moveTo(root, pid, 'back to');
    },
    remove() {
      if (removed) return;
      for (const pid of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) moveTo(root, Number(pid), 'back to');
      rmdirSync(path);
      removed = true;
    },
  };
}

/**
 * Removes the cgroup when the process exits, also on SIGINT / SIGTERM (then the signal is raised
 * again, so the process ends as it would have). Returns the function that unregisters it.
 */
export function removeOnExit(quota: CpuQuota): () => void {
  const onExit = () => {
    try {
      quota.remove();
    } catch (e) {
      console.error(`could not remove the cgroup ${quota.path}: ${(e as Error).message}`);
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    unregister();
    onExit();
    process.kill(process.pid, signal);
  };
  const unregister = () => {
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('exit', onExit);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return unregister;
}
