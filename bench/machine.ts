import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import { cpuCapacity } from '../src/util/capacity.js';

/** What a benchmark ran on, recorded beside every result. */
export function machineInfo() {
  const capacity = cpuCapacity();
  return {
    cpus: os.cpus().length,
    /** What the benchmarks may use: the affinity mask and any cgroup CPU quota (src/util/capacity.ts). */
    usableCores: capacity.cores,
    cgroupCpuQuota: capacity.quota ?? null,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    date: new Date().toISOString(),
    /** Work on the machine when this was called (1-minute load average; the benchmark's own included). */
    loadAverage: Number(os.loadavg()[0]!.toFixed(2)),
  };
}

/** The project's root directory (where package.json is), from sources or built benchmarks. */
export function projectRoot(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    if (existsSync(new URL('package.json', dir))) return decodeURIComponent(dir.pathname).replace(/\/$/, '');
    if (dir.pathname === '/') throw new Error('no package.json above the benchmark');
  }
}

/** Where a benchmark writes a chart: bench/results/NAME.svg beside its JSON. */
export function resultsSvg(name: string): URL {
  return new URL(resultsFile(name).href.replace(/\.json$/, '.svg'));
}

/** Where a benchmark writes its results: bench/results/NAME.json in the project, from sources or built. */
export function resultsFile(name: string): URL {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    if (existsSync(new URL('package.json', dir))) {
      const out = new URL('bench/results/', dir);
      mkdirSync(out, { recursive: true });
      return new URL(`${name}.json`, out);
    }
    if (dir.pathname === '/') throw new Error('no package.json above the benchmark');
  }
}
