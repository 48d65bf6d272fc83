import { resolve } from 'node:path';
import { applyCatalogs, checkPrograms, type CatalogFiles } from '../../frameworks/workflow/catalog-resolution.js';
import { loadWorkflow } from '../../frameworks/workflow/load-workflow.js';
import { loadCompiled } from '../../frameworks/workflow/compiled-workflow.js';
import { readCatalogFile } from '../../frameworks/workflow/pegasus-catalogs.js';
import { plannedTasks, stampInputs } from '../../frameworks/workflow/prepare-run.js';
import { stateDirOf } from '../../frameworks/workflow/run-directory.js';
import { findRunDir, runStatistics, runStatus, statisticsText, statusText } from '../../frameworks/workflow/run-statistics.js';
import { parseUnits, type AmeUnits } from '../../frameworks/workflow/ame-units.js';
import { alreadyComplete, nothingToDo, planWorkflowRun, recordComplete, runWorkflow } from '../../frameworks/workflow/run-workflow.js';
import type { MemberReport, WorkflowJobConfig } from '../../frameworks/workflow/workflow-kind.js';
import { describeWorkflow, progressLine, summarizeRun } from '../../frameworks/workflow/workflow-report.js';
import { WorkflowError } from '../../frameworks/workflow/workflow-error.js';
import type { Workflow } from '../../frameworks/workflow/workflow.js';
import { dashboardOption, jsonOption, progressOption } from '../common-options.js';
import { dashboardPlace, withDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { clusterSecret, defaultWorkers, SECRET_FILE_TO_WRITE } from '../options.js';
import { Progress } from '../progress.js';
import { DEFAULT_TIMEOUT, ZK_HELP, kinds, oneOf } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { workCluster } from '../work-cluster.js';

interface CatalogFlags {
  tc?: string[];
  rc?: string[];
  sc?: string[];
  site: string;
}

interface RunFlags extends CatalogFlags {
  replay?: number;
  nodes: number;
  workers?: number;
  zk?: string;
  timeout: number;
  secretFile?: string;
  shared?: string;
  storage: WorkflowJobConfig['storage'];
  dispatch: WorkflowJobConfig['mode'];
  ameUnit?: AmeUnits;
  retries?: number;
  fresh?: boolean;
  dryRun?: boolean;
  detectChanges: 'mtime' | 'content';
  stateDir?: string;
  taskTimeout?: number;
  logBytes?: number;
  nodeMemory?: number;
  dashboard?: boolean | number;
  progress?: boolean | number;
  json?: boolean;
}

async function load(file: string): Promise<Workflow> {
  return usage(loadWorkflow(file));
}

/** A workflow that cannot run (FILE:LINE: …) is a usage error: exit 2, no stack. */
const usage = <T>(p: Promise<T> | (() => T)): Promise<T> => (typeof p === 'function' ? Promise.resolve().then(p) : p).catch((err: unknown) => {
  throw err instanceof WorkflowError ? new UsageError(err.message) : err;
});

/** The workflow the help examples run (a Pegasus DAX 2.1 instance in the repository, see test/data/README.md). */
const EXAMPLE_WORKFLOW = 'test/data/workflows/pegasus-dax-2.1/Montage_25.xml';
/** A Pegasus DAX 3.6 of shell scripts with its catalogs, run for real (examples/workflow/pegasus). */
const PEGASUS_DIR = 'examples/workflow/pegasus';
const PEGASUS_EXAMPLE = `${PEGASUS_DIR}/words.xml`;

/** `--tc/--rc/--sc FILE…` and `--site NAME`, on run and validate. */
function catalogOptions(cmd: SettingsCommand): SettingsCommand {
  return cmd
    .setting('--tc <file...>', 'transformation catalogs (Pegasus 5 YAML, or the 4.x text format): a job\'s transformation → its executable per site', kinds.list)
    .setting('--rc <file...>', 'replica catalogs (Pegasus 5 YAML, or the 4.x file format): a workflow input → where it is (a path or file URL)', kinds.list)
    .setting('--sc <file...>', 'site catalogs (Pegasus 5 YAML): the site\'s sharedScratch (the default shared directory) and localScratch (tasks\' working directories)', kinds.list)
    .setting('--site <name>', 'the site the run is on, as the catalogs name it', kinds.text, 'local');
}

const catalogFiles = (flags: CatalogFlags): CatalogFiles => ({
  tc: (flags.tc ?? []).map((f) => resolve(f)), rc: (flags.rc ?? []).map((f) => resolve(f)), sc: (flags.sc ?? []).map((f) => resolve(f)), site: flags.site,
});

/** The shared directory a site catalog file names for the site, if any (known before the workflow is loaded). */
function sharedFromSiteFiles(files: CatalogFiles): string | undefined {
  for (const f of files.sc ?? []) {
    const dir = readCatalogFile(f, 'sc').sites.get(files.site ?? 'local')?.sharedScratch;
    if (dir !== undefined) return dir;
  }
  return undefined;
}

function findRun(given: string): string {
  try {
    return findRunDir(given);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `tidepool workflow NAME RUN`: a report read from a run's directory alone, printed as text or JSON. */
function runReport<T>(wf: SettingsCommand, name: string, description: string, read: (runDir: string) => T, text: (report: T) => string): void {
  jsonOption(wf.command(name)
    .argument('<run>', 'a run directory (printed at the end of workflow run), or a shared directory (its latest run)')
    .description(description))
    .addHelpText('after', `\nExamples:\n  tidepool workflow run ${EXAMPLE_WORKFLOW} --replay 0.01 --shared run\n  tidepool workflow ${name} run\n  tidepool workflow ${name} run --json`)
    .action((given: string, flags: { json?: boolean }) => {
      const report = read(findRun(given));
      process.stdout.write(flags.json ? `${JSON.stringify(report)}\n` : `${text(report)}\n`);
    });
}

/** `tidepool workflow run|validate|info FILE`, `status|statistics RUN`: Pegasus and WfCommons workflows (after AME: Zhang, Katz, Ripeanu, Wilde, Foster). */
export function registerWorkflowCommands(program: SettingsCommand): void {
  const wf = program.command('workflow').description('run, check and describe Pegasus (DAX 2.1/3.x, YAML 5) and WfCommons (1.4/1.5) workflows (after AME, "An Anyscale Many-Task Computing Engine", Zhang, Katz, Ripeanu, Wilde, Foster)');

  jsonOption(catalogOptions(wf.command('validate')
    .argument('<file>', 'workflow file')
    .description('load a workflow and report its counts and quirks; with a transformation catalog (in the file or --tc) find every executable, with --shared (or a site catalog) every input; exit 2 with FILE:LINE if it cannot run'))
    .setting('--shared <dir>', 'check that every workflow input is in this directory (or where the replica catalog puts it)', kinds.path))
    .addHelpText('after', `\nExamples:\n  tidepool workflow validate ${EXAMPLE_WORKFLOW}\n  tidepool workflow validate ${PEGASUS_EXAMPLE} --tc ${PEGASUS_DIR}/tc.yml ${PEGASUS_DIR}/tc.txt --rc ${PEGASUS_DIR}/rc.txt --shared words-run`)
    .action(async (file: string, flags: CatalogFlags & { json?: boolean; shared?: string }) => {
      const w = await load(file);
      const files = catalogFiles(flags);
      const checked: string[] = [];
      await usage(async () => {
        const resolved = applyCatalogs(w, files);
        if ((w.catalogs?.transformations.length ?? 0) > 0 || files.tc!.length > 0) {
          checkPrograms(w, resolved);
          checked.push(`every program found (site ${resolved.site})`);
        }
        const shared = flags.shared ?? resolved.directories.sharedScratch;
        if (shared !== undefined) {
          const inputs = await stampInputs(w, resolve(shared), stateDirOf(resolve(shared)), 'mtime');
          checked.push(`${inputs.size} inputs found`);
        }
      });
      if (flags.json) process.stdout.write(`${JSON.stringify({ file, valid: true, format: w.format, ...w.counts, checked, warnings: w.warnings })}\n`);
      else process.stdout.write(`${file}: valid ${w.format}, ${w.counts.tasks} tasks, ${w.counts.edges} dependencies, ${w.counts.files} files${checked.map((c) => `; ${c}`).join('')}${w.warnings.map((x) => `\n  note: ${x}`).join('')}\n`);
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

  runReport(wf, 'status', 'a running or finished run, from its directory: done, up to date, running, left, failed attempts (as pegasus-status)', runStatus, statusText);
  runReport(wf, 'statistics', 'what a run did, from its provenance records (one per task attempt): per transformation counts and runtimes, wall time, cumulative time, bytes, per node (as pegasus-statistics)', runStatistics, statisticsText);

  const run = catalogOptions(wf.command('run')
    .argument('<file>', 'workflow file (every node must be able to read it)')
    .description('run a workflow on an embedded cluster, or on the cluster at --zk; run again, it runs only what changed')
    .setting('--replay <scale>', 'replay: tasks compute for their recorded runtime × SCALE and write outputs of recorded size × SCALE', kinds.factor)
    .setting('--nodes <n>', 'nodes (embedded: started here; with --zk: taken from the cluster)', kinds.positiveInt, '2')
    .setting('--workers <n>', 'worker threads per embedded node (default: cores / nodes)', kinds.positiveInt)
    .option('--zk <ensemble>', `run on the cluster registered at this ZooKeeper ensemble: ${ZK_HELP}`)
    .option('--timeout <duration>', 'with --zk: how long to wait for ZooKeeper to answer', DEFAULT_TIMEOUT)
    .option('--secret-file <file>', `with --zk: ${SECRET_FILE_TO_WRITE}`)
    .setting('--shared <dir>', 'shared directory: inputs are read from it, final outputs written to it (default: the site catalog\'s sharedScratch, else the file\'s directory)', kinds.path)
    .setting('--storage <mode>', 'intermediate files: collocated (peer to peer), isolated (on a storage node), shared (all through the shared directory)', oneOf(['collocated', 'isolated', 'shared']), 'collocated')
    .setting('--dispatch <mode>', 'decentralized (a dispatcher per AME unit, see --ame-unit; counts to the submitter) or centralized', oneOf(['decentralized', 'centralized']), 'decentralized')
    .setting('--ame-unit <n[:s[:d]]>', 'AME units: every N nodes run S location-service shards and D dispatchers (default 64:1:1, as AME ran)', {
      schema: { type: 'string', pattern: '^\\d+(:\\d+){0,2}$' }, what: 'NODES[:SHARDS[:DISPATCHERS]], whole numbers (e.g. 64:1:1)', decode: (v) => parseUnits(String(v)),
    })
    .option('--fresh', 'forget earlier runs in the shared directory: run every task again')
    .option('--dry-run', 'print which tasks would run and why (new, changed, input changed, output missing, upstream runs), run nothing')
    .setting('--detect-changes <how>', 'how a changed input or output is told apart: mtime (size and modification time) or content (SHA-256)', oneOf(['mtime', 'content']), 'mtime')
    .setting('--state-dir <dir>', 'where runs are recorded and compared with (default: SHARED/.tidepool)', kinds.path)
    .setting('--retries <n>', 'attempts per task before the workflow fails (default 3); a retry runs on another node if there is one', kinds.positiveInt)
    .setting('--task-timeout <seconds>', 'kill a command task (all its processes) running longer, unless its maxwalltime profile says otherwise', kinds.factor)
    .setting('--log-bytes <n>', 'bytes kept of each command task\'s stdout and stderr in RUN/logs/TASK.out|.err (default 1048576)', kinds.positiveInt)
    .setting('--node-memory <MiB>', 'memory each node offers command tasks (default: the machine\'s); cores offered: the node\'s worker threads', kinds.positiveInt));
  dashboardOption(run);
  progressOption(run);
  jsonOption(run)
    .addHelpText('after', `
A replay writes the workflow's inputs (at their recorded sizes × SCALE) and its outputs into the shared directory.
Run again in the same shared directory, only the tasks whose fingerprint (program, arguments, inputs, everything
upstream) changed or whose outputs are missing run, and what depends on them; a complete workflow prints
"nothing to do". Each run has a directory (printed at the end) with its journal, task logs and provenance.

Examples:
  tidepool workflow run ${EXAMPLE_WORKFLOW} --replay 0.01 --nodes 3 --shared run
  tidepool workflow run ${EXAMPLE_WORKFLOW} --replay 0.01 --shared run --dry-run
  tidepool workflow run ${PEGASUS_EXAMPLE} --tc ${PEGASUS_DIR}/tc.yml ${PEGASUS_DIR}/tc.txt --rc ${PEGASUS_DIR}/rc.txt --shared words-run
  tidepool workflow run ${EXAMPLE_WORKFLOW} --replay 0.01 --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --nodes 2 --shared run --json`)
    .action(async (file: string, flags: RunFlags) => {
      const { nodes, replay } = flags;
      const workers = flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / nodes));
      const secret = flags.zk ? clusterSecret(flags.secretFile) : undefined;
      if (flags.taskTimeout === 0) throw new UsageError('--task-timeout: a positive number of seconds, got 0');
      const catalogs = catalogFiles(flags);
      const sharedGiven = flags.shared ?? (replay === undefined ? await usage(() => sharedFromSiteFiles(catalogs)) : undefined);
      const planningIn = (shared: string) => ({
        file, shared: resolve(shared), detection: flags.detectChanges, fresh: flags.fresh === true, catalogs,
        ...(replay !== undefined ? { replay } : {}), ...(flags.stateDir !== undefined ? { stateDir: resolve(flags.stateDir) } : {}),
      });
      const printNothingToDo = (name: string, tasks: number) => {
        if (flags.json) process.stdout.write(`${JSON.stringify({ file, workflow: name, tasks, toRun: 0, upToDate: tasks, nothingToDo: true, ...(flags.dryRun ? { run: [] } : {}) })}\n`);
        else process.stdout.write(`${name}: nothing to do: all ${tasks} tasks are up to date\n`);
      };
      // A complete workflow is recognised from the file's bytes, before it is parsed (when the shared directory is known without it).
      const complete = sharedGiven !== undefined || replay !== undefined ? await alreadyComplete(planningIn(sharedGiven ?? resolve(file, '..'))) : undefined;
      if (complete) return printNothingToDo(complete.workflow, complete.tasks);
      // Through its compiled copy beside the runs when the shared directory (and so the state directory) is known already.
      const knownShared = sharedGiven ?? (replay !== undefined ? resolve(file, '..') : undefined);
      const workflow = knownShared !== undefined ? await usage(loadCompiled(file, stateDirOf(resolve(knownShared), flags.stateDir !== undefined ? resolve(flags.stateDir) : undefined))) : await load(file);
      const embeddedShared = replay === undefined && sharedGiven === undefined ? await usage(() => applyCatalogs(workflow, catalogs).directories.sharedScratch) : undefined;
      const planning = planningIn(sharedGiven ?? embeddedShared ?? resolve(file, '..'));
      const prepared = await usage(planWorkflowRun(workflow, planning));
      if (flags.dryRun) {
        const planned = plannedTasks(prepared);
        const { toRun, upToDate, recreate } = prepared.plan;
        if (planned.length === 0) return printNothingToDo(workflow.name, workflow.counts.tasks);
        if (flags.json) process.stdout.write(`${JSON.stringify({ file, workflow: workflow.name, tasks: workflow.counts.tasks, toRun, upToDate, recreate: recreate.length, nothingToDo: false, run: planned })}\n`);
        else {
          const width = Math.min(40, Math.max(0, ...planned.map((r) => r.id.length)));
          const head = `${workflow.name}: ${toRun} of ${workflow.counts.tasks} tasks would run (${upToDate} up to date${recreate.length > 0 ? `, ${recreate.length} of them run again to recreate files` : ''}):`;
          process.stdout.write(`${[head, ...planned.map((r) => `  ${r.id.padEnd(width)}  ${r.reason}`)].join('\n')}\n`);
        }
        return;
      }
      if (nothingToDo(prepared)) {
        await recordComplete(prepared, planning, undefined);
        return printNothingToDo(workflow.name, workflow.counts.tasks);
      }
      const place = dashboardPlace(flags.dashboard);
      const cluster = await workCluster({ ...(flags.zk ? { zk: flags.zk, secret } : {}), timeout: flags.timeout, nodes, workers, dashboard: place !== null });
      const started = performance.now();
      const progress = Progress.from(flags.progress, flags.json === true);
      const line = (members: MemberReport[]) => progressLine(workflow, members);
      try {
        const result = await withDashboard(cluster.coordination, place, () => runWorkflow(cluster, workflow, {
          ...planning, prepared, nodes, storage: flags.storage, mode: flags.dispatch, ...(flags.ameUnit ? { units: flags.ameUnit } : {}),
          ...(flags.retries !== undefined ? { maxAttempts: flags.retries } : {}),
          ...(flags.taskTimeout !== undefined ? { taskTimeout: flags.taskTimeout } : {}),
          ...(flags.logBytes !== undefined ? { logBytes: flags.logBytes } : {}),
          ...(flags.nodeMemory !== undefined ? { nodeMemoryMb: flags.nodeMemory } : {}),
          ...(progress.enabled ? { onProgress: (members: MemberReport[]) => progress.update(line(members)) } : {}),
        }));
        progress.end(progress.enabled ? line(result.members) : undefined);
        const summary = summarizeRun(workflow, result, (performance.now() - started) / 1000);
        if (flags.json) process.stdout.write(`${JSON.stringify({ file, ...summary })}\n`);
        else process.stdout.write(`${summary.text}\n`);
      } catch (err) {
        if (err instanceof WorkflowError) throw new UsageError(err.message);
        throw new Error(`${file}: ${(err as Error).message}`);
      } finally {
        await cluster.close();
      }
    });
}
