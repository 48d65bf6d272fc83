import type { Command } from 'commander';
import { MALLEABLE_APPS } from '../../frameworks/malleable/applications.js';
import type { GridResult } from '../../frameworks/malleable/apps/grid-blocks.js';
import { loadMalleableApp } from '../../frameworks/malleable/malleable-app.js';
import type { MalleableRuntimeOptions, RescaleAck } from '../../frameworks/malleable/runtime-options.js';
import { runSequential } from '../../frameworks/malleable/sequential.js';
import { malleableProgress, submitMalleable } from '../../frameworks/malleable/submit.js';
import { Cluster } from '../../runtime/cluster.js';
import { UsageError } from '../errors.js';
import { nonNegativeInt, positiveInt, zookeeperConnection } from '../options.js';

interface RunFlags {
  grid: string;
  blocks: string;
  iterations: string;
  nodes: string;
  rescaleAt?: string[];
  checkpointEvery?: string;
  strategy: string;
  check?: boolean;
  zk?: string;
  json?: boolean;
}

/** `ITER:N` → { iteration, nodes }. */
function parseRescale(spec: string): { iteration: number; nodes: number } {
  const m = /^(\d+):(\d+)$/.exec(spec);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new UsageError(`--rescale-at: "${spec}" is not ITER:NODES with ITER ≥ 1 and NODES ≥ 1 (e.g. 50:2)`);
  return { iteration: Number(m[1]), nodes: Number(m[2]) };
}

function describeRescale(r: RescaleAck, from: number): string {
  const p = r.phases;
  return `${r.kind} ${from}→${r.nodes.length} at iteration ${r.iteration}: ${r.tRescaleMs.toFixed(1)} ms (lb ${p.lb.toFixed(1)}, checkpoint ${p.checkpoint.toFixed(1)}, reconnect ${p.reconnect.toFixed(1)}, restore ${p.restore.toFixed(1)})`;
}

/** `tidepool malleable run stencil|wave`: an iterative application on an embedded cluster (or --zk), rescaled at sync points. */
export function registerMalleableCommand(program: Command): void {
  const malleable = program.command('malleable').description('malleable iterative applications: shrink and expand at sync points (see docs/malleable.md)');
  malleable
    .command('run')
    .argument('<app>', `one of: ${Object.keys(MALLEABLE_APPS).join(', ')}`)
    .description('run a malleable application on an embedded cluster (or on the cluster at --zk), rescaling it at chosen iterations')
    .option('--grid <n>', 'cells per side of the grid', '512')
    .option('--blocks <n>', 'blocks (objects) per side', '8')
    .option('--iterations <n>', 'iterations', '100')
    .option('--nodes <n>', 'nodes to start the job on', '2')
    .option('--rescale-at <iter:nodes...>', 'rescale to NODES nodes at iteration ITER (repeatable), e.g. 50:4 100:2')
    .option('--checkpoint-every <n>', 'coordinated checkpoint every N iterations (default: only at rescales)')
    .option('--strategy <name>', 'load balancing: refine or greedy', 'refine')
    .option('--check', 'also run the application sequentially here and compare the results bit for bit')
    .option('--zk <conn>', 'run on the cluster registered at this ZooKeeper ensemble instead of an embedded one')
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nExamples:\n  tidepool malleable run stencil --grid 1024 --iterations 200 --nodes 4 --rescale-at 60:2 120:4\n  tidepool malleable run wave --grid 256 --blocks 4 --check --json')
    .action(async (name: string, flags: RunFlags) => {
      const ref = MALLEABLE_APPS[name];
      if (!ref) throw new UsageError(`unknown application "${name}": choose one of ${Object.keys(MALLEABLE_APPS).join(', ')}`);
      const params = { grid: positiveInt(flags.grid, '--grid'), blocks: positiveInt(flags.blocks, '--blocks'), iterations: nonNegativeInt(flags.iterations, '--iterations') };
      const nodes = positiveInt(flags.nodes, '--nodes');
      if (flags.strategy !== 'refine' && flags.strategy !== 'greedy') throw new UsageError(`--strategy: "${flags.strategy}" is not one of refine, greedy`);
      const rescaleAt = (flags.rescaleAt ?? []).map(parseRescale);
      for (const r of rescaleAt) if (r.iteration >= params.iterations) throw new UsageError(`--rescale-at ${r.iteration}:${r.nodes}: iteration ${r.iteration} is not before the last (${params.iterations} iterations)`);
      const app = await loadMalleableApp(ref);
      const wrong = app.validate?.(params);
      if (wrong) throw new UsageError(`${name}: ${wrong.replace(/"(grid|blocks|iterations)"/, '--$1')}`);
      const runtime: MalleableRuntimeOptions = { strategy: flags.strategy, rescaleAt, ...(flags.checkpointEvery !== undefined ? { checkpointEvery: positiveInt(flags.checkpointEvery, '--checkpoint-every') } : {}) };
      const size = Math.max(nodes, ...rescaleAt.map((r) => r.nodes));
      const cluster = flags.zk ? await Cluster.connect(zookeeperConnection(flags.zk, '')) : await Cluster.embedded({ nodes: size, workers: 1, progressIntervalMs: 0 });
      const tty = process.stderr.isTTY && !flags.json;
      let timer: NodeJS.Timeout | undefined;
      try {
        const started = Date.now();
        const job = await submitMalleable<GridResult>(cluster, ref, params, { nodes, maxNodes: size, runtime });
        if (!flags.json) process.stdout.write(`${app.name}: ${params.grid}² grid in ${params.blocks}² blocks, ${params.iterations} iterations, job ${job.id} on ${nodes} node(s)\n`);
        if (tty) {
          timer = setInterval(() => {
            malleableProgress(cluster.coordination, job.id, 5_000)
              .then((p) => process.stderr.write(`\riteration ${p.iteration}/${p.iterations} on ${p.nodes.length} node(s)   `))
              .catch(() => undefined);
          }, 500);
        }
        const { result, stats } = await job.result();
        clearInterval(timer);
        if (tty) process.stderr.write('\n');
        const seconds = (Date.now() - started) / 1000;
        const verified = flags.check ? runSequential<GridResult>(app, params).checksum === result.checksum : null;
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ app: app.name, params, result, verified, seconds, stats })}\n`);
        } else {
          let from = nodes;
          for (const r of stats.rescales) {
            process.stdout.write(`${describeRescale(r, from)}\n`);
            from = r.nodes.length;
          }
          process.stdout.write(`checksum ${result.checksum}${verified === null ? '' : verified ? ' (bit-identical to the sequential run)' : ' (DIFFERS from the sequential run)'}\n`);
          process.stdout.write(`sum ${result.sum}; ${seconds.toFixed(2)} s, ${stats.rescales.length} rescale(s), ${stats.checkpoints} checkpoint(s), ${stats.rollbacks} rollback(s)\n`);
        }
        if (verified === false) process.exitCode = 1;
      } finally {
        clearInterval(timer);
        await cluster.close();
      }
    });
}
