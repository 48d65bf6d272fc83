/**
 * The jobs of a one-machine trial (`tidepool manager --embedded --jobs FILE|-`): one JSON object a line,
 * each a job as `tidepool submit` takes it, queued when it arrives (`at`, after the manager is ready):
 *
 *     {"app": "stencil", "flexibility": "malleable", "min": 1, "max": 4, "input": {"params": {"grid": 256, "blocks": 8, "iterations": 400}}}
 *     {"module": "examples/count.js", "flexibility": "rigid", "nodes": 2, "root": {"n": 300000}, "at": "3s"}
 *
 * `app` is a malleable application (a built-in name or a module, `--job-kind malleable`), `module` a
 * task module (the task pool, or `jobKind` MODULE#EXPORT); `min`, `max`, `nodes`, `input`, `root` and
 * `export` as submit's flags; `at` a duration (`3s`) or ms. Blank lines and `#` comments are skipped.
 */
import { isFlexibility, type Flexibility } from '../../frameworks/malleable/manager/managed-job.js';
import { FeedLineError, jsonObjectLine, type LineShape } from '../../util/line-feed.js';
import { parseDuration } from '../settings/durations.js';
import type { ManagedJobInput } from './managed-job-input.js';

export interface TrialJob {
  /** `file:line`, for what is said of the job. */
  where: string;
  /** When it is queued: ms after the manager is ready. */
  at: number;
  job: ManagedJobInput;
  flexibility: Flexibility;
  min: number;
  max?: number;
  nodes?: number;
}

const JOB: LineShape = {
  what: 'a job', shape: '{"app" or "module": …, "flexibility": …}',
  fields: ['app', 'module', 'export', 'flexibility', 'min', 'max', 'nodes', 'input', 'root', 'jobKind', 'at'],
};

/** One line of a trial's jobs: a job, or null for a blank or comment line; throws FeedLineError naming `where`. */
export function parseTrialJob(line: string, where: string): TrialJob | null {
  const v = jsonObjectLine(line, where, JOB);
  if (v === null) return null;
  const fail = (message: string) => new FeedLineError(`${where}: ${message}`);
  if ((v.app === undefined) === (v.module === undefined)) throw fail('a job has either "app" (a malleable application) or "module" (a task module)');
  const module = v.app ?? v.module;
  if (typeof module !== 'string' || module === '') throw fail(`"${v.app !== undefined ? 'app' : 'module'}" must be a name or a path, got ${JSON.stringify(module)}`);
  if (v.export !== undefined && (typeof v.export !== 'string' || v.export === '')) throw fail(`"export" must be a name, got ${JSON.stringify(v.export)}`);
  if (v.jobKind !== undefined && (v.app !== undefined || typeof v.jobKind !== 'string')) throw fail('"jobKind" (MODULE#EXPORT) goes with "module" only');
  if (!isFlexibility(v.flexibility)) throw fail(`"flexibility" must be rigid, moldable or malleable, got ${JSON.stringify(v.flexibility)}`);
  const count = (key: 'min' | 'max' | 'nodes') => {
    const n = v[key];
    if (n !== undefined && (!Number.isInteger(n) || (n as number) < 1)) throw fail(`"${key}" must be a whole number of nodes ≥ 1, got ${JSON.stringify(n)}`);
    return n as number | undefined;
  };
  const [min = 1, max, nodes] = [count('min'), count('max'), count('nodes')];
  if (max !== undefined && max < min) throw fail(`"max" (${max}) is below "min" (${min})`);
  const at = v.at === undefined ? 0 : typeof v.at === 'number' && v.at >= 0 ? v.at : typeof v.at === 'string' ? parseDuration(v.at) : undefined;
  if (at === undefined) throw fail(`"at" must be a duration after the start (3s, 1m) or milliseconds, got ${JSON.stringify(v.at)}`);
  const job: ManagedJobInput = {
    module, export: (v.export as string | undefined) ?? 'default', root: v.root ?? null,
    ...(v.input !== undefined ? { input: v.input } : {}),
    ...(v.app !== undefined ? { jobKind: 'malleable' } : v.jobKind !== undefined ? { jobKind: v.jobKind as string } : {}),
  };
  return { where, at, job, flexibility: v.flexibility, min, ...(max !== undefined ? { max } : {}), ...(nodes !== undefined ? { nodes } : {}) };
}
