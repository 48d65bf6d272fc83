import { InputError } from '../search/input-error.js';

/**
 * A workflow file (or a workflow built in code) that cannot be run: an InputError, so the message is
 * exactly `FILE:LINE: detail` with the offending task or file named in the detail, printed by the CLI
 * as `error: FILE:LINE: …` with no stack trace.
 */
export class WorkflowError extends InputError {
  override readonly name = 'WorkflowError';
}

/** Where a loader's tasks came from: the file name and a way to find the line of a task. */
export interface SourceInfo {
  file: string;
  /** 1-based line where the task with this id (or name) is declared, if it can be found. */
  lineOf?(taskId: string): number | undefined;
}

/** The 1-based line of the first occurrence of `needle` in `text` (counting only when asked: errors are rare). */
export function lineOfText(text: string, needle: string, from = 0): number | undefined {
  const at = text.indexOf(needle, from);
  if (at < 0) return undefined;
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
