import type { Command } from 'commander';
import { resolve } from 'node:path';
import { loadWorkflow } from '../../frameworks/workflow/load-workflow.js';
import { runWorkflow } from '../../frameworks/workflow/run-workflow.js';
import type { MemberReport } from '../../frameworks/workflow/workflow-kind.js';
import { describeWorkflow, progressLine, summarizeRun } from '../../frameworks/workflow/workflow-report.js';
import { WorkflowError } from '../../frameworks/workflow/workflow-error.js';
import type { Workflow } from '../../frameworks/workflow/workflow.js';
import { Cluster } from '../../runtime/cluster.js';
import { UsageError } from '../errors.js';
import { defaultWorkers, positiveInt, zookeeperConnection } from '../options.js';

interface RunFlags {
  replay?: string;
  nodes?: string;
  workers?: string;
  zk?: string;
  shared?: string;
  storage: string;
  dispatch: string;
  retries?: string;
  fresh?: boolean;
  progress?: boolean;
  json?: boolean;
}

async function load(file: string): Promise<Workflow> {
  try {
    return await loadWorkflow(file);
  } catch (err) {
    if (err instanceof WorkflowError) throw new UsageError(err.message);
    throw err;
  }
}

/** `tidepool workflow run|validate|info FILE`: Pegasus and WfCommons workflows. */
export function registerWorkflowCommands(program: Command): void {
  const wf = program.command('workflow').description('run, check and describe Pegasus (DAX 2.1/3.x, YAML 5) and WfCommons (1.4/1.5) workflows');

  wf.command('validate')
    .argument('<file>', 'workflow file')
    .description('load a workflow and report its counts and quirks; exit 2 with FILE:LINE if it cannot run')
    .option('--json', 'print one JSON object')
    .action(async (file: string, flags: { json?: boolean }) => {
      const w = await load(file);
      if (flags.json) process.stdout.write(`${JSON.stringify({ file, valid: true, format: w.format, ...w.counts, warnings: w.warnings })}\n`);
      else process.stdout.write(`${file}: valid ${w.format}, ${w.counts.tasks} tasks, ${w.counts.edges} dependencies, ${w.counts.files} files${w.warnings.map((x) => `\n  note: ${x}`).join('')}\n`);
    });

  wf.command('info')
    .argument('<file>', 'workflow file')
    .description('describe a workflow: counts, stages, critical path, data sizes')
    .option('--json', 'print one JSON object')
    .action(async (file: string, flags: { json?: boolean }) => {
      const info = describeWorkflow(await load(file));
      if (flags.json) process.stdout.write(`${JSON.stringify({ file, ...info })}\n`);
      else process.stdout.write(`${info.text}\n`);
    });

  wf.command('run')
    .argument('<file>', 'workflow file (every node must be able to read it)')
    .description('run a workflow on an embedded cluster, or on the cluster at --zk')
    .option('--replay <scale>', 'replay: tasks compute for their recorded runtime × SCALE and write outputs of recorded size × SCALE')
    .option('--nodes <n>', 'nodes (embedded: started here; with --zk: taken from the cluster)', '2')
    .option('--workers <n>', 'worker threads per embedded node (default: cores / nodes)')
    .option('--zk <conn>', 'run on the cluster registered at this ZooKeeper ensemble')
    .option('--shared <dir>', 'shared directory: inputs are read from it, final outputs written to it (default: the file\'s directory)')
    .option('--storage <mode>', 'intermediate files: collocated (peer to peer), isolated (on a storage node), shared (all through the shared directory)', 'collocated')
    .option('--dispatch <mode>', 'decentralized (dispatchers per node, counts to the submitter) or centralized', 'decentralized')
    .option('--fresh', 'ignore the journal of an earlier (stopped) run in the shared directory: run every task again')
    .option('--retries <n>', 'attempts per task before the workflow fails (default 3)')
    .option('--progress', 'print a progress line on stderr every second and at the end (the default on a terminal, without --json)')
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nExamples:\n  tidepool workflow run Montage_25.xml --replay 0.01 --nodes 3\n  tidepool workflow run wf.yml --zk 127.0.0.1:2181 --nodes 4 --json')
    .action(async (file: string, flags: RunFlags) => {
      const replay = flags.replay === undefined ? undefined : Number(flags.replay);
      if (replay !== undefined && !(Number.isFinite(replay) && replay >= 0)) throw new UsageError(`--replay: a non-negative scale, got "${flags.replay}"`);
      if (!['collocated', 'isolated', 'shared'].includes(flags.storage)) throw new UsageError(`--storage: collocated, isolated or shared, got "${flags.storage}"`);
      if (!['decentralized', 'centralized'].includes(flags.dispatch)) throw new UsageError(`--dispatch: decentralized or centralized, got "${flags.dispatch}"`);
      const nodes = positiveInt(flags.nodes ?? '2', '--nodes');
      const workers = flags.workers === undefined ? Math.max(1, Math.floor(defaultWorkers() / nodes)) : positiveInt(flags.workers, '--workers');
      const maxAttempts = flags.retries === undefined ? undefined : positiveInt(flags.retries, '--retries');
      const workflow = await load(file);
      const zk = flags.zk === undefined ? undefined : zookeeperConnection(flags.zk, '');
      const cluster = zk ? await Cluster.connect(zk) : await Cluster.embedded({ nodes, workers });
      const started = performance.now();
      const progress = flags.progress === true || (process.stderr.isTTY && !flags.json);
      const printProgress = (members: MemberReport[]) => process.stderr.write(`${progressLine(workflow, members)}\n`);
      try {
        const result = await runWorkflow(cluster, workflow, {
          file, shared: resolve(flags.shared ?? resolve(file, '..')), nodes,
          storage: flags.storage as never, mode: flags.dispatch as never, fresh: flags.fresh === true,
          ...(replay !== undefined ? { replay } : {}), ...(maxAttempts !== undefined ? { maxAttempts } : {}),
          ...(progress ? { onProgress: printProgress } : {}),
        });
        if (progress) printProgress(result.members);
        const summary = summarizeRun(workflow, result, (performance.now() - started) / 1000);
        if (flags.json) process.stdout.write(`${JSON.stringify({ file, ...summary })}\n`);
        else process.stdout.write(`${summary.text}\n`);
      } catch (err) {
        throw new Error(`${file}: ${(err as Error).message}`);
      } finally {
        await cluster.close();
      }
    });
}
