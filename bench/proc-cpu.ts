/** CPU time from Linux /proc, for benchmarks that account the CPU of processes they do not run in-process. */
import { readFileSync } from 'node:fs';

/** utime + stime, in clock ticks (USER_HZ, 100 on Linux), from a `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat` file. */
export function statTicks(path: string): number {
  const stat = readFileSync(path, 'utf8');
  // Fields after the command's closing parenthesis (the command may contain spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds a process has used so far, every thread's, exited ones included. */
export function processCpuSeconds(pid: number): number {
  return statTicks(`/proc/${pid}/stat`) / 100;
}
