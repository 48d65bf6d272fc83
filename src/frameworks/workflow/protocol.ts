/**
 * The workflow layer's messages between members (all batched: one message carries many tasks or
 * files) and their shape checks. Tasks and files travel as their numbers: every member loaded the
 * same workflow, so a number is all a peer needs (AME's dispatchers read task descriptions from
 * the shared file system too; only control traffic crosses the network).
 */
import type { LayerBody } from '../../runtime/kinds/job-kind.js';
import type { FileLocation } from './location-shard.js';
import type { StolenTask } from './worker-tasks.js';

export interface View {
  epoch: number;
  members: string[];
  leader: string;
}

export type WorkflowMessage =
  | { type: 'wf-view'; view: View }
  | { type: 'wf-assign'; epoch: number; tasks: number[]; recreate?: boolean }
  | { type: 'wf-query'; files: number[]; probe?: number }
  | { type: 'wf-located'; files: [number, FileLocation][]; waited?: boolean }
  | { type: 'wf-update'; files: [number, FileLocation][]; probe?: number }
  /** The shard handled the query or update batch that carried `probe` (a sampled round trip, Fig. 14). */
  | { type: 'wf-ack'; probe: number }
  | { type: 'wf-got'; tasks: number[] }
  | { type: 'wf-done'; tasks: number[] }
  | { type: 'wf-held?'; epoch: number }
  | { type: 'wf-held'; epoch: number; tasks: number[] }
  | { type: 'wf-count'; epoch: number; partitions: [number, number][] }
  | { type: 'wf-failed'; task: number; error: string }
  | { type: 'wf-steal'; want: number }
  | { type: 'wf-stolen'; tasks: StolenTask[] }
  /** Tasks handed to this member unasked: a retry moved off the member it failed on, or a task too big for its member. */
  | { type: 'wf-push'; tasks: StolenTask[] }
  /** What this member offers command tasks: cores and memory (MiB). */
  | { type: 'wf-capacity'; cores: number; memoryMb: number };

const isInts = (v: unknown) => Array.isArray(v) && v.every((x) => Number.isInteger(x) && (x as number) >= 0);
const isLocation = (v: unknown) => typeof v === 'object' && v !== null && typeof (v as FileLocation).node === 'string';
const isProbe = (v: unknown) => v === undefined || Number.isInteger(v);
const isLocated = (v: unknown) => Array.isArray(v) && v.every((e) => Array.isArray(e) && Number.isInteger(e[0]) && isLocation(e[1]));

/** Undefined when `body` is a well-formed workflow message, else what is wrong (the node drops it). */
export function validateWorkflowMessage(body: LayerBody): string | undefined {
  const ok = (cond: boolean, what: string) => (cond ? undefined : `${body.type}: ${what}`);
  switch (body.type) {
    case 'wf-view': {
      const v = body.view as View | undefined;
      return ok(!!v && typeof v.epoch === 'number' && Array.isArray(v.members) && v.members.every((m) => typeof m === 'string') && typeof v.leader === 'string', 'needs view {epoch, members, leader}');
    }
    case 'wf-assign': return ok(typeof body.epoch === 'number' && isInts(body.tasks), 'needs epoch and task numbers');
    case 'wf-query': return ok(isInts(body.files) && isProbe(body.probe), 'needs file numbers (and a whole-number probe, if any)');
    case 'wf-located': return ok(isLocated(body.files), 'needs [file, location] pairs');
    case 'wf-update': return ok(isLocated(body.files) && isProbe(body.probe), 'needs [file, location] pairs (and a whole-number probe, if any)');
    case 'wf-ack': return ok(Number.isInteger(body.probe), 'needs a probe number');
    case 'wf-done':
    case 'wf-got': return ok(isInts(body.tasks), 'needs task numbers');
    case 'wf-held?': return ok(typeof body.epoch === 'number', 'needs an epoch');
    case 'wf-held': return ok(typeof body.epoch === 'number' && isInts(body.tasks), 'needs epoch and task numbers');
    case 'wf-count': return ok(typeof body.epoch === 'number' && Array.isArray(body.partitions), 'needs epoch and partitions');
    case 'wf-failed': return ok(Number.isInteger(body.task) && typeof body.error === 'string', 'needs task and error');
    case 'wf-steal': return ok(Number.isInteger(body.want), 'needs want');
    case 'wf-stolen':
    case 'wf-push': return ok(Array.isArray(body.tasks) && (body.tasks as StolenTask[]).every((s) => Number.isInteger(s.task) && Array.isArray(s.inputs) && (s.attempts === undefined || Number.isInteger(s.attempts)) && (s.failedOn === undefined || (Array.isArray(s.failedOn) && s.failedOn.every((n) => typeof n === 'string')))), 'needs tasks');
    case 'wf-capacity': return ok(Number.isInteger(body.cores) && typeof body.memoryMb === 'number', 'needs cores and memoryMb');
    default: return `unknown workflow message "${body.type}"`;
  }
}

/** At most this many tasks or files in one message: a member handles one message in one go, so none holds its event loop long. */
export const MESSAGE_ITEMS = 2_000;

/** The tasks or files a message carries (1 for a message of another kind): what its handling costs, roughly. */
export function itemsOf(m: WorkflowMessage): number {
  switch (m.type) {
    case 'wf-assign':
    case 'wf-done':
    case 'wf-got':
    case 'wf-held':
    case 'wf-stolen':
    case 'wf-push': return Math.max(1, m.tasks.length);
    case 'wf-query':
    case 'wf-located':
    case 'wf-update': return Math.max(1, m.files.length);
    default: return 1;
  }
}

/**
 * A message cut into messages of at most `max` tasks or files each, in order (the message itself when
 * it is small, or of a kind that is not cut: a held list must arrive whole, stolen tasks are capped
 * where they are stolen). A probe goes with the last piece: its round trip ends when the whole batch was handled.
 */
export function sliceMessage(m: WorkflowMessage, max = MESSAGE_ITEMS): WorkflowMessage[] {
  switch (m.type) {
    case 'wf-assign':
    case 'wf-done':
    case 'wf-got':
      return m.tasks.length <= max ? [m] : cut(m.tasks, max).map((tasks) => ({ ...m, tasks }));
    case 'wf-located':
      return m.files.length <= max ? [m] : cut(m.files, max).map((files) => ({ ...m, files }));
    case 'wf-query':
    case 'wf-update': {
      if (m.files.length <= max) return [m];
      const { probe, ...rest } = m;
      const pieces = cut<unknown>(m.files, max).map((files) => ({ ...rest, files }) as WorkflowMessage);
      if (probe !== undefined) Object.assign(pieces[pieces.length - 1]!, { probe });
      return pieces;
    }
    default: return [m];
  }
}

function cut<T>(items: readonly T[], max: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += max) out.push(items.slice(i, i + max));
  return out;
}
