/**
 * Reads a workflow file of any supported format, recognised by its content (not its extension):
 * `<` starts Pegasus DAX XML, `{` WfCommons JSON, anything else is tried as Pegasus 5 YAML.
 */
import { readFile } from 'node:fs/promises';
import { loadDax } from './load-dax.js';
import { loadPegasusYaml } from './load-pegasus-yaml.js';
import { loadWfFormat } from './load-wfformat.js';
import type { Workflow } from './workflow.js';
import { WorkflowError } from './workflow-error.js';

export function parseWorkflow(text: string, file: string): Workflow {
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start === '') throw new WorkflowError(file, 1, 'the file is empty');
  if (start.startsWith('<')) return loadDax(text, file);
  if (start.startsWith('{')) return loadWfFormat(text, file);
  return loadPegasusYaml(text, file);
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
