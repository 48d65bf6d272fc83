/**
 * A job for the resource manager as the CLI is given it — by `tidepool submit` flags, or by a line of
 * `tidepool manager --embedded --jobs FILE` — checked and built before anything is queued: a task
 * module (the task pool, or a kind of one's own) or a malleable application with its input. Every
 * error names where the value came from (the flag, or file:line and field).
 */
import { malleableJob } from '../../frameworks/malleable/malleable-kind-ref.js';
import { taskPoolJob } from '../../runtime/pool/task-pool-ref.js';
import { UsageError } from '../errors.js';
import { moduleRef, moduleSpecifier } from '../module-specifier.js';
import { malleableApplication, malleableInput } from './malleable-input.js';

export interface ManagedJobInput {
  /** The task module, or with `jobKind: 'malleable'` the malleable application (a built-in name or a module). */
  module: string;
  export: string;
  /** The root task's state (the task pool). */
  root: unknown;
  input?: unknown;
  /** 'malleable', a kind's MODULE#EXPORT, or undefined for the task pool. */
  jobKind?: string;
}

/** Where each value came from, for errors: `--input`, or `trial.jsonl:3: "input"`. */
export interface InputPlaces {
  module: string;
  input: string;
  jobKind: string;
}

/** The job's spec parts (without flexibility and sizes), checked. */
export async function managedJobOf(given: ManagedJobInput, at: InputPlaces) {
  if (given.jobKind === 'malleable') {
    // The application and its input are checked here, before anything is queued.
    if (given.input === undefined) throw new UsageError(`${at.input}: a malleable job needs its input {"params": {…}, "runtime": {…}}`);
    const app = await malleableApplication(given.export === 'default' ? given.module : `${given.module}#${given.export}`, at.module);
    const { params, runtime } = malleableInput(app, given.input, at.input);
    return malleableJob(app.ref, params, runtime);
  }
  const kind = given.jobKind === undefined ? undefined : moduleRef(given.jobKind, at.jobKind);
  return { ...taskPoolJob({ module: moduleSpecifier(given.module, at.module), export: given.export }, given.root, kind), ...(given.input !== undefined ? { input: given.input } : {}) };
}
