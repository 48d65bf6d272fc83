/**
 * Reads a workflow file of any supported format, recognised by its content (not its extension):
 * `<` starts Pegasus DAX XML, `{` WfCommons JSON, anything else is tried as Pegasus 5 YAML. The
 * files its sub-workflow jobs name are read the same way, from the directory of the file naming
 * them (or where its replica catalog places them), when it is loaded.
 */
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadDax } from './load-dax.js';
import { loadPegasusYaml } from './load-pegasus-yaml.js';
import { loadWfFormat } from './load-wfformat.js';
import { localPath } from './pegasus-catalogs.js';
import type { SubworkflowReader } from './workflow-builder.js';
import type { Workflow } from './workflow.js';
import { WorkflowError } from './workflow-error.js';

/** `within`: the files of the workflows including this one (a sub-workflow including itself is refused). */
export function parseWorkflow(text: string, file: string, within: string[] = []): Workflow {
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start === '') throw new WorkflowError(file, 1, 'the file is empty');
  if (start.startsWith('<')) return loadDax(text, file, subworkflowReader(file, within));
  if (start.startsWith('{')) return loadWfFormat(text, file);
  return loadPegasusYaml(text, file, subworkflowReader(file, within));
}

function subworkflowReader(file: string, within: string[]): SubworkflowReader {
  return (ref, line, replicas) => {
    const pfn = replicas?.get('local') ?? [...(replicas?.values() ?? [])][0];
    const path = pfn === undefined ? resolve(dirname(resolve(file)), ref) : localPath(pfn);
    if (path === undefined) throw new WorkflowError(file, line, `sub-workflow ${ref}: the replica catalog places it at ${pfn}, which is not a local path or file URL`);
    const chain = [...within, resolve(file)];
    if (chain.includes(path)) throw new WorkflowError(file, line, `sub-workflow ${ref} includes itself: ${[...chain, path].join(' -> ')}`);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new WorkflowError(file, line, `sub-workflow ${ref}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (sub-workflows are read when the workflow is loaded; tasks a task decides at run time are added through $TIDEPOOL_ADD_TASKS)`);
    }
    return { workflow: parseWorkflow(text, path, chain), path };
  };
}

export async function loadWorkflow(path: string): Promise<Workflow> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new WorkflowError(path, undefined, `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseWorkflow(text, path);
}
