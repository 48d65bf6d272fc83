/**
 * The node-to-worker channel of an iterative job (TaskContext.send / receive): a task tells its node
 * which blocks it holds, the node answers layout questions and gives the process level's transfers. Both
 * directions are checked on arrival; anything malformed is ignored.
 */
export type FromTask =
  | { type: 'it-range'; lo: number; hi: number }
  | { type: 'it-shed'; lo: number; hi: number; to?: string }
  | { type: 'it-layout?' };

export interface LayoutAnswer {
  type: 'it-layout';
  peers: string[];
  workers: number;
}

/** (The thread level's assignments go through the slots' budget words in shared memory, not here.) */
export type FromKind =
  | LayoutAnswer
  /** Process level: send this many iterations to node `to`. */
  | { type: 'it-shed'; iterations: number; to: string };

const count = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;

export function fromTask(body: unknown): FromTask | undefined {
  const m = body as Record<string, unknown> | null;
  if (typeof m !== 'object' || m === null) return undefined;
  if (m.type === 'it-layout?') return { type: 'it-layout?' };
  if ((m.type === 'it-range' || m.type === 'it-shed') && count(m.lo) && count(m.hi)) return m as FromTask;
  return undefined;
}

export function toTask(body: unknown): FromKind | undefined {
  const m = body as Record<string, unknown> | null;
  if (typeof m !== 'object' || m === null) return undefined;
  if (m.type === 'it-layout' && Array.isArray(m.peers) && count(m.workers)) return m as unknown as LayoutAnswer;
  if (m.type === 'it-shed' && count(m.iterations) && typeof m.to === 'string') return m as FromKind;
  return undefined;
}
