/** Pools and jobs written by hand for the policy tests: nodes n00, n01, …; a malleable job of 4–16 nodes unless told. */
import type { ManagedJob, ManagedView } from '../../../../src/frameworks/malleable/manager/managed-job.js';

export const ids = (n: number) => Array.from({ length: n }, (_, i) => `n${String(i).padStart(2, '0')}`);

export function job(id: string, createdAt: number, extra: Partial<ManagedJob> = {}): ManagedJob {
  return { id, createdAt, minNodes: 4, maxNodes: 16, desired: 4, finished: false, started: false, flexibility: 'malleable', ...extra };
}

/** A pool of `size` nodes at time `now`, `holders` naming each job's nodes. */
export function view(now: number, holders: Record<string, string[]>, jobs: ManagedJob[], size = 16): ManagedView {
  const owner = new Map(Object.entries(holders).flatMap(([j, ns]) => ns.map((n) => [n, j] as const)));
  return { now, nodes: ids(size).map((id) => ({ id, assignment: owner.get(id) ?? '', assignedAt: 0 })), jobs };
}
