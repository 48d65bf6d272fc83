/**
 * AME's dispatch figures at scale (§5.1, Fig. 6–9 of "AME: An Anyscale Many-Task Computing Engine",
 * Zhang, Katz, Ripeanu, Wilde and Foster, 2011): the engine's real code on simulated nodes
 * (bench/ame-scale-sim.ts) running AME's synthetic workload — TASKS_PER_CORE tasks per core, all of
 * one length (0, 1, 4, 16 or 64 s) — on 4-core nodes, centralized (the leader dispatches everything)
 * and decentralized (a dispatcher and a location-service shard per AME unit of 64 nodes, as AME ran).
 * For each run: the dispatch rate (tasks ÷ time to solution; Fig. 6–7) and Eq. 1's efficiency
 * E = task length × tasks per core ÷ time to solution (Fig. 8–9). Written to
 * bench/results/workflow-ame-scale.json and .svg (rate and efficiency against cores, a line per task
 * length, a panel per dispatch mode).
 *
 *   npx tsx bench/workflow-ame-scale.ts            # 256 to 8,192 cores, 16 tasks per core, 0–64 s tasks
 *   npx tsx bench/workflow-ame-scale.ts --short    # 64 and 1,024 cores, 2 tasks per core, 0, 1 and 4 s
 *   npx tsx bench/workflow-ame-scale.ts --cores 1024,8192 --lengths 0,4 [--tasks-per-core 16]
 *
 * The network and the nodes are simulated (latency 0.2 ms; 50 µs of a node's time per message and 5 µs per
 * task or file it lists): the
 * figures say how the engine's protocol scales, not how fast this machine is.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AME_UNITS } from '../src/frameworks/workflow/ame-units.js';
import type { DispatchMode } from '../src/frameworks/workflow/dispatcher.js';
import { WorkflowBuilder } from '../src/frameworks/workflow/workflow-builder.js';
import { runScaleSim } from './ame-scale-sim.js';
import { machineInfo, resultsFile, resultsSvg } from './machine.js';
import { writeSvg } from './plot.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { short: { type: 'boolean', default: false }, cores: { type: 'string' }, 'tasks-per-core': { type: 'string' }, lengths: { type: 'string' } } });
const SHORT = values.short === true;
const CORES_PER_NODE = 4;
const CORES = values.cores ? values.cores.split(',').map(Number) : SHORT ? [64, 1024] : [256, 1024, 2048, 4096, 8192];
const TASKS_PER_CORE = Number(values['tasks-per-core'] ?? (SHORT ? 2 : 16));
const LENGTHS = values.lengths ? values.lengths.split(',').map(Number) : SHORT ? [0, 1, 4] : [0, 1, 4, 16, 64];
const MODES: DispatchMode[] = ['centralized', 'decentralized'];
const NET = { latency: 0.0002, serviceSeconds: 0.00005, itemSeconds: 0.000005 };
if (CORES.some((c) => !Number.isInteger(c) || c < CORES_PER_NODE || c % CORES_PER_NODE !== 0)) throw new Error(`--cores ${values.cores}: multiples of ${CORES_PER_NODE}`);

function bag(tasks: number, length: number) {
  const b = new WorkflowBuilder(`bag-${tasks}x${length}s`);
  for (let t = 0; t < tasks; t++) b.task({ id: `t${t}`, runtime: length });
  return b.build();
}

interface Row { mode: DispatchMode; cores: number; nodes: number; length: number; tasks: number; timeToSolution: number; rate: number; efficiency: number; dispatchers: number; shards: number; messages: number; simulatedIn: number }
const rows: Row[] = [];
for (const cores of CORES) {
  for (const length of LENGTHS) {
    const workflow = bag(cores * TASKS_PER_CORE, length);
    for (const mode of MODES) {
      const wall = performance.now();
      const r = runScaleSim(workflow, { nodes: cores / CORES_PER_NODE, slots: CORES_PER_NODE, mode, units: AME_UNITS, ...NET });
      const row: Row = {
        mode, cores, nodes: cores / CORES_PER_NODE, length, tasks: workflow.tasks.length, timeToSolution: r.timeToSolution,
        rate: workflow.tasks.length / r.timeToSolution, efficiency: length === 0 ? 0 : (length * TASKS_PER_CORE) / r.timeToSolution,
        dispatchers: r.dispatchers, shards: r.shards, messages: r.messages, simulatedIn: (performance.now() - wall) / 1000,
      };
      rows.push(row);
      console.log(`${mode} ${cores} cores ${length} s: ${row.rate.toFixed(0)} tasks/s, E ${row.efficiency.toFixed(3)} (${row.simulatedIn.toFixed(1)} s to simulate)`);
    }
  }
}

printTable([['mode', 'cores', 'task s', 'tasks', 'time to solution (s)', 'dispatch rate (tasks/s)', 'efficiency (Eq. 1)', 'dispatchers', 'shards'],
  ...rows.map((r) => [r.mode, r.cores, r.length, r.tasks, r.timeToSolution.toFixed(2), r.rate.toFixed(0), r.length === 0 ? '–' : r.efficiency.toFixed(3), r.dispatchers, r.shards])]);
writeFileSync(resultsFile('workflow-ame-scale'), `${JSON.stringify({
  machine: machineInfo(), short: SHORT, coresPerNode: CORES_PER_NODE, tasksPerCore: TASKS_PER_CORE, units: AME_UNITS, network: NET,
  note: 'the engine\'s real code on simulated nodes and network (bench/ame-scale-sim.ts); AME §5.1 workload: tasks of one length, TASKS_PER_CORE per core',
  rows,
}, null, 1)}\n`);
const panel = (field: 'rate' | 'efficiency', title: string) => ({
  mark: { type: 'line' as const, point: true },
  encoding: {
    x: { field: 'cores', type: 'quantitative' as const, scale: { type: 'log' as const, base: 2 }, title: 'cores' },
    y: { field, type: 'quantitative' as const, ...(field === 'rate' ? { scale: { type: 'log' as const } } : {}), title },
    color: { field: 'length', type: 'nominal' as const, title: 'task length (s)' },
    column: { field: 'mode', type: 'nominal' as const, title: null },
  },
});
await writeSvg(resultsSvg('workflow-ame-scale'), {
  title: `AME Fig. 6–9 on the engine's code, simulated network (${TASKS_PER_CORE} tasks per core)`,
  vconcat: [
    { data: { values: rows }, ...panel('rate', 'dispatch rate (tasks/s)') },
    { data: { values: rows.filter((r) => r.length > 0) }, ...panel('efficiency', 'efficiency (Eq. 1)') },
  ],
});
console.log(`wrote ${resultsFile('workflow-ame-scale').pathname} and the .svg`);
