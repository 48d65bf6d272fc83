/**
 * What the task pool reports on a node (MemberContext.report): a task stolen, migrated (handed over by
 * a draining node) or placed on a chosen node, and a task completed. Declared in the seam's
 * KindEvents, so that a node's and a cluster's listeners get them typed.
 */
import type {} from '../kinds/job-kind.js';

/** A task that moved: `from` the node that gave it, `to` the node that claimed it. */
export interface TaskMove {
  from: string;
  to: string;
  taskId: string;
}

declare module '../kinds/job-kind.js' {
  interface KindEvents {
    steal: TaskMove;
    migration: TaskMove;
    /** TaskContext.spawn with `on`: a task placed on a chosen node and claimed there. */
    placement: TaskMove;
    'task-done': { taskId: string };
  }
}
