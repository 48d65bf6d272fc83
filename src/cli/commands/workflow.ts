import { resolve } from 'node:path';
import { loadWorkflow } from '../../frameworks/workflow/load-workflow.js';
import { runWorkflow } from '../../frameworks/workflow/run-workflow.js';
import type { MemberReport, WorkflowJobConfig } from '../../frameworks/workflow/workflow-kind.js';
import { describeWorkflow, progressLine, summarizeRun } from '../../frameworks/workflow/workflow-report.js';
import { WorkflowError } from '../../frameworks/workflow/workflow-error.js';
import type { Workflow } from '../../frameworks/workflow/workflow.js';
import { dashboardOption, jsonOption, progressOption } from '../common-options.js';
import { dashboardPlace, withDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { defaultWorkers } from '../options.js';
import { Progress } from '../progress.js';
import { DEFAULT_TIMEOUT, ZK_HELP, kinds, oneOf } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { workCluster } from '../work-cluster.js';

interface RunFlags {
  replay?: number;
  nodes: number;
  workers?: number;
  zk?: string;
  timeout: number;
  shared?: string;
  storage: WorkflowJobConfig['storage'];
  dispatch: WorkflowJobConfig['mode'];
  retries?: number;
  fresh?: boolean;
  dashboard?: boolean | number;
  progress?: boolean | number;
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

/** The workflow the help examples run (a Pegasus DAX 2.1 instance in the repository, see test/data/README.md). */
const EXAMPLE_WORKFLOW = 'test/data/workflows/pegasus-dax-2.1/Montage_25.xml';

/** `tidepool workflow run|validate|info FILE`: Pegasus and WfCommons workflows (after AME: Zhang, Katz, Ripeanu, Wilde, Foster). */
export function registerWorkflowCommands(program: SettingsCommand): void {
  const wf = program.command('workflow').description('run, check and describe Pegasus (DAX 2.1/3.x, YAML 5) and WfCommons (1.4/1.5) workflows (after AME, "An Anyscale Many-Task Computing Engine", Zhang, Katz, Ripeanu, Wilde, Foster)');

  jsonOption(wf.command('validate')
    .argument('<file>', 'workflow file')
    .description('load a workflow and report its counts and quirks; exit 2 with FILE:LINE if it cannot run'))
    .addHelpText('after', `\nExample:\n  tidepool workflow validate ${EXAMPLE_WORKFLOW}`)
    .action(async (file: string, flags: { json?: boolean }) => {
      const w = await load(file);
      if (flags.json) process.stdout.write(`${JSON.stringify({ file, valid: true, format: w.format, ...w.counts, warnings: w.warnings })}\n`);
      else process.stdout.write(`${file}: valid ${w.format}, ${w.counts.tasks} tasks, ${w.counts.edges} dependencies, ${w.counts.files} files${w.warnings.map((x) => `\n  note: ${x}`).join('')}\n`);
    });

  jsonOption(wf.command('info')
    .argument('<file>', 'workflow file')
    .description('describe a workflow: counts, stages, critical path, data sizes'))
    .addHelpText('after', `\nExample:\n  tidepool workflow info ${EXAMPLE_WORKFLOW} --json`)
    .action(async (file: string, flags: { json?: boolean }) => {
      const info = describeWorkflow(await load(file));
      if (flags.json) process.stdout.write(`${JSON.stringify({ file, ...info })}\n`);
      else process.stdout.write(`${info.text}\n`);
    });

  const run = wf.command('run')
    .argument('<file>', 'workflow file (every node must be able to read it)')
    .description('run a workflow on an embedded cluster, or on the cluster at --zk')
    .setting('--replay <scale>', 'replay: tasks compute for their recorded runtime × SCALE and write outputs of recorded size × SCALE', kinds.factor)
    .setting('--nodes <n>', 'nodes (embedded: started here; with --zk: taken from the cluster)', kinds.positiveInt, '2')
    .setting('--workers <n>', 'worker threads per embedded node (default: cores / nodes)', kinds.positiveInt)
    .option('--zk <ensemble>', `run on the cluster registered at this ZooKeeper ensemble: ${ZK_HELP}`)
    .option('--timeout <duration>', 'with --zk: how long to wait for ZooKeeper to answer', DEFAULT_TIMEOUT)
    .setting('--shared <dir>', 'shared directory: inputs are read from it, final outputs written to it (default: the file\'s directory)', kinds.path)
    .setting('--storage <mode>', 'intermediate files: collocated (peer to peer), isolated (on a storage node), shared (all through the shared directory)', oneOf(['collocated', 'isolated', 'shared']), 'collocated')
    .setting('--dispatch <mode>', 'decentralized (dispatchers per node, counts to the submitter) or centralized', oneOf(['decentralized', 'centralized']), 'decentralized')
    .option('--fresh', 'ignore the journal of an earlier (stopped) run in the shared directory: run every task again')
    .setting('--retries <n>', 'attempts per task before the workflow fails (default 3)', kinds.positiveInt);
  dashboardOption(run);
  progressOption(run);
  jsonOption(run)
    .addHelpText('after', `
A replay writes the workflow's inputs (at their recorded sizes × SCALE) and its outputs into the shared directory.

Examples:
  tidepool workflow run ${EXAMPLE_WORKFLOW} --replay 0.01 --nodes 3 --shared run
  tidepool workflow run ${EXAMPLE_WORKFLOW} --replay 0.01 --zk 127.0.0.1:2181 --nodes 2 --shared run --json`)
    .action(async (file: string, flags: RunFlags) => {
      const { nodes, replay } = flags;
      const workers = flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / nodes));
      const workflow = await load(file);
      const place = dashboardPlace(flags.dashboard);
      const cluster = await workCluster({ ...(flags.zk ? { zk: flags.zk } : {}), timeout: flags.timeout, nodes, workers, dashboard: place !== null });
      const started = performance.now();
      const progress = Progress.from(flags.progress, flags.json === true);
      const line = (members: MemberReport[]) => progressLine(workflow, members);
      try {
        const result = await withDashboard(cluster.coordination, place, () => runWorkflow(cluster, workflow, {
          file, shared: resolve(flags.shared ?? resolve(file, '..')), nodes,
          storage: flags.storage, mode: flags.dispatch, fresh: flags.fresh === true,
          ...(replay !== undefined ? { replay } : {}), ...(flags.retries !== undefined ? { maxAttempts: flags.retries } : {}),
          ...(progress.enabled ? { onProgress: (members: MemberReport[]) => progress.update(line(members)) } : {}),
        }));
        progress.end(progress.enabled ? line(result.members) : undefined);
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
