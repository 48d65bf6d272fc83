import { join } from 'node:path';
import type { WorkflowFile } from './workflow.js';

/** A file name as a path in the shared directory (names may contain slashes: they are escaped, not followed). */
export function sharedPath(shared: string, name: string): string {
  return join(shared, name.replace(/%/g, '%25').replace(/\//g, '%2F'));
}

/**
 * The name a workflow's file has in the shared directory: its own name, except an intermediate copy
 * of a name several tasks write (`fit.txt@mDiffFit_3`), which is kept under its key so that copies
 * saved or written there do not overwrite one another.
 */
export function sharedName(file: WorkflowFile): string {
  return file.producer >= 0 && file.consumers.length > 0 ? file.key : file.name;
}
