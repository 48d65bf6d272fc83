/**
 * Pegasus DAX XML, schema 2.1 and 3.x, read as a stream of elements (never a DOM): `<job>` with
 * `<argument>` (its `<file>` references become the file names), `<uses file|name link size>`,
 * `<stdin|stdout|stderr>` redirects, profiles (pegasus-profiles.ts), `<child ref><parent ref/></child>`
 * edges; the embedded catalogs: `<executable>` entries with their `<pfn url site>` (the transformation
 * catalog) and top-level `<file>` entries with theirs (the replica catalog). `<uses>` inside
 * `<transformation>` or `<executable>` declares what a program needs installed, not job I/O, and is
 * skipped. The `jobCount` attribute is only compared with the jobs counted (it is often wrong).
 * A `<dax file>` or `<dag file>` job is a sub-workflow: the file it names (any format tidepool reads,
 * found through the embedded replica catalog or beside this file) joins this workflow as its tasks
 * (WorkflowBuilder.subworkflow); the job's `<argument>` (options for pegasus-plan) is not used.
 */
import type { SaxesTag } from 'saxes';
import { saxes } from './workflow-dependencies.js';
import { applyProfile } from './pegasus-profiles.js';
import { WorkflowBuilder, type FileUse, type SubworkflowReader, type TaskDecl } from './workflow-builder.js';
import { dirname, resolve } from 'node:path';
import { emptyCatalogs, mergeCatalogs, pfnFrom, type TransformationEntry } from './pegasus-catalogs.js';
import type { CommandSpec, Workflow } from './workflow.js';
import { WorkflowError } from './workflow-error.js';

const JOB_ELEMENTS = new Set(['job', 'dag', 'dax']);

export function loadDax(text: string, file: string, readSubworkflow?: SubworkflowReader): Workflow {
  const lines = new Map<string, number>();
  let builder: WorkflowBuilder | undefined;
  let jobCount: string | undefined;
  let job: (TaskDecl & { inputs: FileUse[]; outputs: FileUse[] }) | undefined;
  let argument: string[] | undefined;
  /** The job profile being read (pegasus runtime/cores/memory, globus maxwalltime, condor request_cpus/request_memory) and its text. */
  let profile: { ns: string; key: string; text: string } | undefined;
  let child: string | undefined;
  /** The file a `<dax>`/`<dag>` job (being read) names. */
  let subworkflowFile: string | undefined;
  const negative: string[] = [];
  let negativeRuntimes = 0;
  let depthInDeclaration = 0; // inside <transformation>/<executable>
  const catalogs = emptyCatalogs();
  /** The `<executable>` being read (a transformation catalog entry), the top-level `<file>` (a replica catalog entry). */
  let executable: TransformationEntry | undefined;
  let replica: string | undefined;
  let args: string[] | undefined;
  let redirects: Pick<CommandSpec, 'stdin' | 'stdout' | 'stderr'> = {};
  const parser = new (saxes().SaxesParser)({ position: true });
  const fail = (detail: string): never => {
    throw new WorkflowError(file, parser.line, detail);
  };
  const attr = (tag: SaxesTag, name: string) => {
    const v = tag.attributes[name];
    return typeof v === 'string' ? v : undefined;
  };
  parser.on('error', (err) => fail(`malformed XML: ${err.message.replace(/^[^:]*:\d+:\d+: /, '')}`));
  parser.on('opentag', (tag) => {
    const name = tag.name.replace(/^.*:/, '');
    if (name === 'adag') {
      const version = attr(tag, 'version') ?? '?';
      jobCount = attr(tag, 'jobCount');
      builder = new WorkflowBuilder(attr(tag, 'name') ?? file, { file, lineOf: (id) => lines.get(id) }, `Pegasus DAX ${version}`);
      return;
    }
    if (!builder) fail(`<${name}> before <adag>: not a Pegasus DAX file`);
    if (name === 'executable' && !job) {
      const exe = attr(tag, 'name') ?? fail('<executable> without a name');
      executable = { name: exe, sites: new Map(), from: `${file}:${parser.line}`, ...(attr(tag, 'namespace') ? { namespace: attr(tag, 'namespace')! } : {}), ...(attr(tag, 'version') ? { version: attr(tag, 'version')! } : {}) };
    }
    if (name === 'transformation' || name === 'executable') return void depthInDeclaration++;
    if (name === 'pfn' && (executable || replica !== undefined)) {
      const url = attr(tag, 'url') ?? fail('<pfn> without a url');
      const site = attr(tag, 'site') ?? 'local';
      if (executable) executable.sites.set(site, pfnFrom(url, dirname(resolve(file))));
      else catalogs.replicas.set(replica!, (catalogs.replicas.get(replica!) ?? new Map<string, string>()).set(site, pfnFrom(url, dirname(resolve(file)))));
      return;
    }
    if (depthInDeclaration > 0) return;
    if (name === 'file' && !job && !argument) return void (replica = attr(tag, 'name') ?? attr(tag, 'file') ?? fail('<file> without a name'));
    if (JOB_ELEMENTS.has(name)) {
      const id = attr(tag, 'id') ?? fail(`<${name}> without an id`);
      if (job) fail(`job ${id} declared inside job ${job.id}`);
      const runtime = attr(tag, 'runtime');
      const seconds = runtime === undefined ? undefined : Number(runtime);
      if (seconds !== undefined && !Number.isFinite(seconds)) fail(`job ${id}: runtime "${runtime}" is not a number of seconds`);
      if (seconds !== undefined && seconds < 0) negativeRuntimes++; // kept as recorded (the graph facts use it); a replay runs it as 0
      const program = attr(tag, 'name') ?? attr(tag, 'file') ?? name;
      lines.set(id, parser.line);
      subworkflowFile = name === 'job' ? undefined : attr(tag, 'file') ?? attr(tag, 'name') ?? fail(`<${name}> ${id} without a file`);
      const namespace = attr(tag, 'namespace');
      const version = attr(tag, 'version');
      job = {
        id, name: program, category: program, inputs: [], outputs: [], line: parser.line, ...(seconds !== undefined ? { runtime: seconds } : {}),
        transformation: { name: program, ...(namespace ? { namespace } : {}), ...(version ? { version } : {}) },
      };
      args = undefined;
      redirects = {};
      return;
    }
    if ((name === 'stdin' || name === 'stdout' || name === 'stderr') && job) {
      redirects[name] = attr(tag, 'name') ?? attr(tag, 'file') ?? fail(`job ${job.id}: <${name}> without a file name`);
      return;
    }
    if (name === 'argument' && job) return void (argument = []);
    if (name === 'file' && argument) return void argument.push(attr(tag, 'name') ?? attr(tag, 'file') ?? '');
    if (name === 'profile' && job) return void (profile = { ns: attr(tag, 'namespace') ?? '', key: attr(tag, 'key') ?? '', text: '' });
    if (name === 'uses' && job) {
      const lfn = attr(tag, 'file') ?? attr(tag, 'name') ?? fail(`job ${job.id}: <uses> without a file name`);
      const link = attr(tag, 'link');
      const sizeText = attr(tag, 'size');
      let size = sizeText === undefined ? undefined : Number(sizeText);
      if (size !== undefined && !Number.isFinite(size)) fail(`job ${job.id}: file ${lfn}: size "${sizeText}" is not a number of bytes`);
      if (size !== undefined && size < 0) {
        // The 2008 generator overflowed a few sizes (Epigenomics_997: -6585019): keep the file, size unknown.
        negative.push(`${parser.line}`);
        size = undefined;
      }
      if (attr(tag, 'executable') === 'true') return;
      const use = size === undefined ? { name: lfn } : { name: lfn, size };
      if (link === 'input') job.inputs.push(use);
      else if (link === 'output') job.outputs.push(use);
      else if (link === 'inout') fail(`job ${job.id}: file ${lfn} is read and written by the same job (link="inout"): files are written once`);
      else if (link !== undefined && link !== 'none' && link !== 'checkpoint') fail(`job ${job.id}: file ${lfn}: unknown link "${link}"`);
      return;
    }
    if (name === 'child') return void (child = attr(tag, 'ref') ?? fail('<child> without a ref'));
    if (name === 'parent') {
      if (child === undefined) fail('<parent> outside <child>');
      builder!.dependsOn(child!, attr(tag, 'ref') ?? fail(`<parent> of ${child} without a ref`));
    }
  });
  parser.on('text', (text) => {
    if (argument) argument.push(text);
    else if (profile) profile.text += text;
  });
  parser.on('closetag', (tag) => {
    const name = tag.name.replace(/^.*:/, '');
    if (name === 'executable' && executable && depthInDeclaration === 1) {
      catalogs.transformations.push(executable);
      executable = undefined;
    }
    if (name === 'transformation' || name === 'executable') return void depthInDeclaration--;
    if (depthInDeclaration > 0) return;
    if (name === 'file' && replica !== undefined && !argument) replica = undefined;
    else if (name === 'argument' && job && argument) {
      args = argument.join('').split(/\s+/).filter((s) => s !== '');
      argument = undefined;
    } else if (name === 'profile' && profile && job) {
      const applied = applyProfile(job, profile.ns, profile.key, profile.text.trim());
      if (applied) fail(`job ${job.id}: ${applied}`);
      profile = undefined;
    }
    else if (JOB_ELEMENTS.has(name) && job && subworkflowFile !== undefined) {
      if (!readSubworkflow) fail(`job ${job.id}: a sub-workflow job (<${name}>) needs its file read (load the workflow through parseWorkflow)`);
      const line = job.line ?? parser.line;
      const sub = readSubworkflow!(subworkflowFile, line, catalogs.replicas.get(subworkflowFile));
      builder!.subworkflow(job.id, sub.workflow, sub.path, line);
      job = undefined;
      subworkflowFile = undefined;
    } else if (JOB_ELEMENTS.has(name) && job) {
      // Every job is a command: its transformation (the job's name, or what the catalog says) with its arguments.
      job.command = { program: job.name!, args: args ?? [], ...redirects };
      builder!.task(job);
      job = undefined;
    } else if (name === 'child') child = undefined;
  });
  parser.write(text).close();
  if (!builder) throw new WorkflowError(file, 1, 'no <adag> element: not a Pegasus DAX file');
  const workflow = builder.build();
  if (catalogs.transformations.length > 0 || catalogs.replicas.size > 0) workflow.catalogs = workflow.catalogs ? mergeCatalogs(catalogs, workflow.catalogs) : catalogs;
  if (negativeRuntimes > 0) workflow.warnings.push(`${negativeRuntimes} negative runtime(s) kept as recorded; a replay runs them as 0 s`);
  if (negative.length > 0) workflow.warnings.push(`${negative.length} negative file size(s) read as unknown (0), at line(s) ${negative.slice(0, 5).join(', ')}${negative.length > 5 ? ', …' : ''}`);
  if (jobCount !== undefined && Number(jobCount) !== workflow.counts.tasks) {
    workflow.warnings.push(`jobCount says ${jobCount} but the file holds ${workflow.counts.tasks} jobs (the jobs were counted)`);
  }
  return workflow;
}
