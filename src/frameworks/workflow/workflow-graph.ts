/**
 * Graph facts of a workflow: a topological order (Kahn), the critical path (the longest chain of
 * recorded runtimes: a lower bound on the makespan with unlimited workers and free transfers), the
 * depth, and a cycle named task by task when there is no order.
 */
import type { WorkflowTask } from './workflow.js';

export interface GraphFacts {
  order: Int32Array;
  totalRuntime: number;
  criticalPath: number;
  depth: number;
}

export function computeOrder(tasks: WorkflowTask[], onCycle: (cycle: number[]) => Error): GraphFacts {
  const n = tasks.length;
  const waiting = new Int32Array(n);
  let edgeCount = 0;
  for (let t = 0; t < n; t++) {
    waiting[t] = tasks[t]!.parents.length;
    edgeCount += waiting[t]!;
  }
  // Children in compressed rows: a million tasks without a million small arrays.
  const start = new Int32Array(n + 1);
  for (const task of tasks) for (const p of task.parents) start[p + 1]!++;
  for (let t = 0; t < n; t++) start[t + 1]! += start[t]!;
  const fill = start.slice(0, n);
  const child = new Int32Array(edgeCount);
  for (let t = 0; t < n; t++) for (const p of tasks[t]!.parents) child[fill[p]!++] = t;

  const order = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (let t = 0; t < n; t++) if (waiting[t] === 0) order[tail++] = t;
  const finish = new Float64Array(n);
  const level = new Int32Array(n);
  let totalRuntime = 0;
  let criticalPath = 0;
  let depth = 0;
  while (head < tail) {
    const t = order[head++]!;
    const task = tasks[t]!;
    let ready = 0;
    let lvl = 0;
    for (const p of task.parents) {
      if (finish[p]! > ready) ready = finish[p]!;
      if (level[p]! > lvl) lvl = level[p]!;
    }
    finish[t] = ready + task.runtime;
    level[t] = lvl + 1;
    totalRuntime += task.runtime;
    if (finish[t]! > criticalPath) criticalPath = finish[t]!;
    if (level[t]! > depth) depth = level[t]!;
    for (let i = start[t]!; i < start[t + 1]!; i++) {
      const c = child[i]!;
      if (--waiting[c]! === 0) order[tail++] = c;
    }
  }
  if (tail < n) throw onCycle(findCycle(tasks, waiting));
  return { order, totalRuntime, criticalPath, depth };
}

/** Walks parents among the tasks Kahn could not order until one repeats: that loop is a cycle. */
function findCycle(tasks: WorkflowTask[], waiting: Int32Array): number[] {
  let t = waiting.findIndex((w) => w > 0);
  const seenAt = new Map<number, number>();
  const path: number[] = [];
  while (!seenAt.has(t)) {
    seenAt.set(t, path.length);
    path.push(t);
    t = tasks[t]!.parents.find((p) => waiting[p]! > 0)!;
  }
  return path.slice(seenAt.get(t)!).reverse();
}
