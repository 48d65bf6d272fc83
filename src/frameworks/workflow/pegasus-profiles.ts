import type { TaskDecl } from './workflow-builder.js';

/**
 * A job profile that says what a task needs or how long it may take: `pegasus` runtime (seconds), cores,
 * memory (MiB); `globus` maxwalltime and `pegasus` maxwalltime (minutes: the task's timeout); `condor`
 * request_cpus and request_memory. Returns what is wrong with the value, if anything; other profiles are ignored.
 */
export function applyProfile(job: TaskDecl, ns: string, key: string, value: string): string | undefined {
  const n = Number(value);
  const positive = Number.isFinite(n) && n > 0;
  switch (`${ns}.${key}`) {
    case 'pegasus.runtime':
      if (!(Number.isFinite(n) && n >= 0)) return `runtime profile "${value}" is not a non-negative number`;
      job.runtime = n;
      return undefined;
    case 'pegasus.cores':
    case 'condor.request_cpus':
      if (!(Number.isInteger(n) && n >= 1)) return `${ns} ${key} profile "${value}" is not a whole number of cores`;
      job.cores = n;
      return undefined;
    case 'pegasus.memory':
    case 'condor.request_memory':
      if (!positive) return `${ns} ${key} profile "${value}" is not a number of MiB`;
      job.memoryMb = n;
      return undefined;
    case 'globus.maxwalltime':
    case 'pegasus.maxwalltime':
      if (!positive) return `${ns} ${key} profile "${value}" is not a number of minutes`;
      job.timeoutSeconds = n * 60;
      return undefined;
    default:
      return undefined;
  }
}
