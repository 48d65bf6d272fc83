/**
 * Applying the catalogs to a loaded workflow, the same way on the submitting side and on every
 * member: each job's transformation becomes the executable the transformation catalog names for the
 * run's site (when there is a transformation catalog; without one the job's name is the program, run
 * from PATH), each workflow input the replica catalog places gets its location, and the site's
 * directories are returned. The workflow's own catalogs come first; files given apart add to them.
 * `checkPrograms` then finds every executable before anything runs.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { emptyCatalogs, localPath, mergeCatalogs, readCatalogFile, type Catalogs, type SiteEntry, type TransformationEntry } from './pegasus-catalogs.js';
import { WorkflowError } from './workflow-error.js';
import type { TransformationRef, Workflow } from './workflow.js';

export interface CatalogFiles {
  /** Transformation, replica and site catalog files (`--tc`, `--rc`, `--sc`). */
  tc?: string[];
  rc?: string[];
  sc?: string[];
  /** The site the run is on (default `local`). */
  site?: string;
}

export interface Resolved {
  site: string;
  directories: SiteEntry;
  /** For a program the catalog chose: where it was declared. */
  origin: Map<string, string>;
}

export function readCatalogs(workflow: Workflow, files: CatalogFiles): Catalogs {
  const all = mergeCatalogs(emptyCatalogs(), workflow.catalogs ?? emptyCatalogs());
  for (const f of files.tc ?? []) mergeCatalogs(all, readCatalogFile(f, 'tc'));
  for (const f of files.rc ?? []) mergeCatalogs(all, readCatalogFile(f, 'rc'));
  for (const f of files.sc ?? []) mergeCatalogs(all, readCatalogFile(f, 'sc'));
  return all;
}

const describe = (t: TransformationRef) => `${t.namespace ? `${t.namespace}::` : ''}${t.name}${t.version ? `:${t.version}` : ''}`;

/** The catalog entry a job's transformation names: same name, and the same namespace and version where both say one. */
function lookup(entries: TransformationEntry[], ref: TransformationRef): TransformationEntry | undefined {
  let best: TransformationEntry | undefined;
  let bestScore = -1;
  for (const e of entries) {
    if (e.name !== ref.name) continue;
    if (ref.namespace && e.namespace && ref.namespace !== e.namespace) continue;
    if (ref.version && e.version && ref.version !== e.version) continue;
    const score = (ref.namespace && e.namespace ? 2 : 0) + (ref.version && e.version ? 1 : 0);
    if (score > bestScore) {
      best = e;
      bestScore = score;
    }
  }
  return best;
}

export function applyCatalogs(workflow: Workflow, files: CatalogFiles): Resolved {
  const catalogs = readCatalogs(workflow, files);
  const site = files.site ?? 'local';
  const origin = new Map<string, string>();
  const fail = (taskId: string, detail: string): never => {
    throw new WorkflowError(workflow.source, workflow.lineOf?.(taskId), `task ${taskId}: ${detail}`);
  };
  if (catalogs.transformations.length > 0) {
    for (const task of workflow.tasks) {
      if (!task.command || !task.transformation) continue;
      const entry = lookup(catalogs.transformations, task.transformation);
      if (!entry) fail(task.id, `transformation ${describe(task.transformation)} is not in the transformation catalog`);
      const pfn = entry!.sites.get(site);
      if (pfn === undefined) fail(task.id, `transformation ${describe(task.transformation)} has no executable for site ${site} in the transformation catalog (${entry!.from}; sites: ${[...entry!.sites.keys()].join(', ') || 'none'})`);
      const path = localPath(pfn!);
      if (path === undefined) fail(task.id, `transformation ${describe(task.transformation)}: ${pfn} is not a local path or file URL (${entry!.from})`);
      task.command.program = path!;
      origin.set(path!, `transformation ${describe(task.transformation)}, ${entry!.from}, site ${site}`);
    }
  }
  for (const file of workflow.files) {
    if (file.producer >= 0 || file.marker) continue;
    const sites = catalogs.replicas.get(file.name);
    if (!sites) continue;
    const pfn = sites.get(site) ?? sites.get('local') ?? (sites.size === 1 ? [...sites.values()][0] : undefined);
    const path = pfn === undefined ? undefined : localPath(pfn);
    if (path === undefined) {
      const reader = workflow.tasks[file.consumers[0]!]!;
      fail(reader.id, `input ${file.name}: the replica catalog has no local path or file URL for it on site ${site} (${[...sites].map(([s, p]) => `${s}: ${p}`).join(', ')})`);
    }
    file.location = path!;
  }
  return { site, directories: catalogs.sites.get(site) ?? {}, origin };
}

/**
 * Every command task's program is an executable file here (a path, or a name found on PATH): refused
 * otherwise, naming the first task that runs it and, if the catalog chose it, where.
 */
export function checkPrograms(workflow: Workflow, resolved: Resolved | undefined, path = process.env.PATH ?? ''): void {
  const seen = new Set<string>();
  for (const task of workflow.tasks) {
    if (!task.command || task.fn) continue;
    const program = task.command.program;
    if (seen.has(program)) continue;
    seen.add(program);
    const from = resolved?.origin.get(program);
    const where = from ? ` (${from})` : '';
    const problem = program.includes('/') ? notExecutable(isAbsolute(program) ? program : join(process.cwd(), program)) : onPath(program, path) ? undefined : `was not found on PATH`;
    if (problem) throw new WorkflowError(workflow.source, workflow.lineOf?.(task.id), `task ${task.id}: program ${program} ${problem}${where}`);
  }
}

function notExecutable(path: string): string | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 'does not exist';
  if (!st.isFile()) return 'is not a file';
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return 'is not executable';
  }
  return undefined;
}

function onPath(name: string, path: string): boolean {
  return path.split(delimiter).some((dir) => dir !== '' && notExecutable(join(dir, name)) === undefined);
}
