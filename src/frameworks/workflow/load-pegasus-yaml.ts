/**
 * Pegasus 5 YAML workflows: `jobs[]` (`id`, `name`, `namespace`, `version`, `arguments` — `{lfn}`
 * entries become file names —, `uses[]` with `lfn`, `type: input|output|checkpoint` and an optional
 * `size`, `stdin`/`stdout`/`stderr` redirects, profiles as pegasus-profiles.ts reads them) and
 * `jobDependencies[]` (`id`, `children`), with the embedded `transformationCatalog`, `replicaCatalog`
 * and `siteCatalog` (pegasus-catalogs.ts). The `requires` of transformations in the catalog are what
 * a program needs installed, not job I/O, and are not read. Lines come from the YAML parser's own
 * positions of every job. A job of `type: pegasusWorkflow` or `condorWorkflow` is a sub-workflow:
 * its `file` (any format tidepool reads, found through the replica catalog or beside this file) joins
 * this workflow as its tasks (WorkflowBuilder.subworkflow).
 */
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import { catalogsFromYaml, mergeCatalogs } from './pegasus-catalogs.js';
import { applyProfile } from './pegasus-profiles.js';
import { WorkflowBuilder, type FileUse, type SubworkflowReader, type TaskDecl } from './workflow-builder.js';
import type { Workflow } from './workflow.js';
import { WorkflowError } from './workflow-error.js';

interface YamlJob {
  type?: string;
  file?: unknown;
  id?: unknown;
  name?: unknown;
  arguments?: unknown[];
  uses?: { lfn?: unknown; type?: unknown; size?: unknown }[];
  profiles?: Record<string, Record<string, unknown> | undefined>;
  namespace?: unknown;
  version?: unknown;
  stdin?: unknown;
  stdout?: unknown;
  stderr?: unknown;
}

const SUBWORKFLOW_TYPES = new Set(['pegasusWorkflow', 'condorWorkflow']);

export function loadPegasusYaml(text: string, file: string, readSubworkflow?: SubworkflowReader): Workflow {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new WorkflowError(file, e.linePos?.[0].line, `malformed YAML: ${e.message.split('\n')[0]}`);
  }
  const data = doc.toJS() as { name?: unknown; pegasus?: unknown; jobs?: YamlJob[]; jobDependencies?: { id?: unknown; children?: unknown[] }[] };
  const jobsNode = doc.get('jobs', true);
  const lineAt = (i: number): number | undefined => {
    const item = isSeq(jobsNode) ? jobsNode.items[i] : undefined;
    const range = isMap(item) ? item.range : undefined;
    return range ? counter.linePos(range[0]).line : undefined;
  };
  if (!Array.isArray(data?.jobs)) throw new WorkflowError(file, 1, 'no "jobs" list: not a Pegasus 5 workflow');
  const lines = new Map<string, number>();
  const builder = new WorkflowBuilder(typeof data.name === 'string' ? data.name : file, { file, lineOf: (id) => lines.get(id) }, `Pegasus YAML ${String(data.pegasus ?? '5.0')}`);
  const catalogs = catalogsFromYaml(doc, counter, file);
  data.jobs.forEach((job, i) => {
    const line = lineAt(i);
    if (typeof job?.id !== 'string') throw new WorkflowError(file, line, `jobs[${i}] has no string "id"`);
    const id = job.id;
    lines.set(id, line ?? 0);
    if (job.type !== undefined && job.type !== 'job') {
      if (!SUBWORKFLOW_TYPES.has(job.type)) throw new WorkflowError(file, line, `task ${id}: type must be job, pegasusWorkflow or condorWorkflow, got ${JSON.stringify(job.type)}`);
      if (typeof job.file !== 'string' || job.file === '') throw new WorkflowError(file, line, `task ${id}: a ${job.type} job needs a "file"`);
      if (!readSubworkflow) throw new WorkflowError(file, line, `task ${id}: a sub-workflow job needs its file read (load the workflow through parseWorkflow)`);
      const sub = readSubworkflow(job.file, line ?? 0, catalogs.replicas.get(job.file));
      builder.subworkflow(id, sub.workflow, sub.path, line);
      return;
    }
    const inputs: FileUse[] = [];
    const outputs: FileUse[] = [];
    for (const use of job.uses ?? []) {
      if (typeof use?.lfn !== 'string') throw new WorkflowError(file, line, `task ${id}: a "uses" entry has no "lfn"`);
      const size = use.size === undefined ? undefined : Number(use.size);
      if (size !== undefined && !(Number.isFinite(size) && size >= 0)) throw new WorkflowError(file, line, `task ${id}: file ${use.lfn}: size is not a number of bytes`);
      const entry = size === undefined ? { name: use.lfn } : { name: use.lfn, size };
      if (use.type === 'input') inputs.push(entry);
      else if (use.type === 'output' || use.type === 'checkpoint') outputs.push(entry);
      else throw new WorkflowError(file, line, `task ${id}: file ${use.lfn}: type must be input, output or checkpoint, got ${JSON.stringify(use.type)}`);
    }
    const program = typeof job.name === 'string' ? job.name : id;
    const redirects: Record<string, string> = {};
    for (const key of ['stdin', 'stdout', 'stderr'] as const) {
      const value = job[key];
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string') throw new WorkflowError(file, line, `task ${id}: ${key} must be a file name`);
      redirects[key] = value;
    }
    const namespace = typeof job.namespace === 'string' ? job.namespace : undefined;
    const version = typeof job.version === 'string' || typeof job.version === 'number' ? String(job.version) : undefined;
    const decl: TaskDecl = {
      id, name: program, category: program, inputs, outputs, line: line ?? 0,
      command: { program, args: (job.arguments ?? []).map((a) => (typeof a === 'object' && a !== null && 'lfn' in a ? String((a as { lfn: unknown }).lfn) : String(a))), ...redirects },
      transformation: { name: program, ...(namespace ? { namespace } : {}), ...(version ? { version } : {}) },
    };
    for (const [ns, values] of Object.entries(job.profiles ?? {})) {
      for (const [key, value] of Object.entries(values ?? {})) {
        const wrong = applyProfile(decl, ns, key, String(value));
        if (wrong) throw new WorkflowError(file, line, `task ${id}: ${wrong}`);
      }
    }
    builder.task(decl);
  });
  for (const dep of data.jobDependencies ?? []) {
    if (typeof dep?.id !== 'string') throw new WorkflowError(file, undefined, 'a jobDependencies entry has no string "id"');
    for (const child of dep.children ?? []) builder.dependsOn(String(child), dep.id);
  }
  const workflow = builder.build();
  if (catalogs.transformations.length > 0 || catalogs.replicas.size > 0 || catalogs.sites.size > 0) workflow.catalogs = workflow.catalogs ? mergeCatalogs(catalogs, workflow.catalogs) : catalogs;
  return workflow;
}
