/**
 * Where a service batch's time goes, as CPU: the seed's Mandelbrot program (one parallel loop of 400
 * rows) through the service and through `Distribution.local()`, alternately, with the CPU time of
 * this process (client, service, the node's worker threads) and of its children (the sandbox
 * processes) per batch. CPU is measured rather than only wall time because the service's extra
 * work competes with the sandboxes for the same 2 cores, and because it stays readable on a loaded
 * machine where wall times do not.
 *
 *   npx tsx bench/service-cpu.ts [--batches 12]
 *
 * Writes bench/results/service-cpu.json (medians; the first batch of each, which starts processes, left out).
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Cluster } from '../src/runtime/client/cluster.js';
import { Distribution, startService } from '../src/frameworks/service/index.js';
import { mandelbrot } from '../examples/service/programs.js';
import { selfSignedCert } from '../test/frameworks/service/tls.js';
import { machineInfo, resultsFile } from './machine.js';
import { processCpuSeconds } from './proc-cpu.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { batches: { type: 'string', default: '12' } } });
const BATCHES = Number(values.batches);
const SIZE = { w: 2000, h: 400, it: 500 };

/** CPU milliseconds of this process's children so far (Linux: every thread's children, utime + stime in ticks of 10 ms). */
function childrenCpuMs(): number {
  let ms = 0;
  for (const thread of readdirSync(`/proc/${process.pid}/task`)) {
    for (const pid of readFileSync(`/proc/${process.pid}/task/${thread}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      try {
        ms += processCpuSeconds(Number(pid)) * 1000;
      } catch {
        // the child ended meanwhile
      }
    }
  }
  return ms;
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[xs.length >> 1]!;

const machine = machineInfo();
const tls = selfSignedCert();
const token = 'bench-token-0123456789abcdef';
const cluster = await Cluster.embedded({ nodes: 1, workers: 2 });
const service = await startService({ cluster, tls, token, port: 0, limits: { timeoutMs: 600_000, memoryMb: 256 } });
const runs = { service: await Distribution.connect(service.url, { token, ca: tls.cert }), local: Distribution.local({ workers: 2 }) };
type Sample = { wallMs: number; selfCpuMs: number; childCpuMs: number; taskMs: number };
const samples: Record<keyof typeof runs, Sample[]> = { service: [], local: [] };
for (let b = 0; b <= BATCHES; b++) {
  for (const [name, distribution] of Object.entries(runs) as [keyof typeof runs, Distribution][]) {
    const cpu0 = process.cpuUsage();
    const child0 = childrenCpuMs();
    const t0 = performance.now();
    await mandelbrot(distribution, SIZE.w, SIZE.h, SIZE.it);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (b > 0) samples[name].push({ wallMs, selfCpuMs: (cpu.user + cpu.system) / 1000, childCpuMs: childrenCpuMs() - child0, taskMs: distribution.lastCosts!.taskMs });
  }
}
const summary = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, {
  wallMs: median(s.map((x) => x.wallMs)),
  selfCpuMs: median(s.map((x) => x.selfCpuMs)),
  childCpuMs: median(s.map((x) => x.childCpuMs)),
  taskMs: median(s.map((x) => x.taskMs)),
}])) as Record<keyof typeof runs, Sample>;
const { service: svc, local } = summary;
printTable([
  [`Mandelbrot ${SIZE.w} x ${SIZE.h}, median of ${BATCHES} (ms)`, 'wall', 'CPU: this process', 'CPU: sandbox processes', 'CPU: total', 'Σ task time'],
  ['service (2 workers, same machine)', svc.wallMs, svc.selfCpuMs, svc.childCpuMs, svc.selfCpuMs + svc.childCpuMs, svc.taskMs],
  ['Distribution.local() (2 workers)', local.wallMs, local.selfCpuMs, local.childCpuMs, local.selfCpuMs + local.childCpuMs, local.taskMs],
  ['service / local', svc.wallMs / local.wallMs, svc.selfCpuMs / local.selfCpuMs, '', (svc.selfCpuMs + svc.childCpuMs) / (local.selfCpuMs + local.childCpuMs), svc.taskMs / local.taskMs],
]);
writeFileSync(resultsFile('service-cpu'), `${JSON.stringify({
  machine,
  loadAverageAtEnd: Number(os.loadavg()[0]!.toFixed(2)),
  note: 'CPU per batch of the client+service process (process.cpuUsage) and of its children, the sandbox processes (/proc), medians; the cluster is one embedded node with 2 workers sharing the client\'s 2 cores. Σ task time: the tasks\' own times as their sandboxes measured them (wall, so inflated by load).',
  size: SIZE, batches: BATCHES, summary, samples,
}, null, 2)}\n`);
await runs.service.close();
await runs.local.close();
await service.close();
await cluster.close();
