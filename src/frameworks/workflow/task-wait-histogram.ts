/**
 * The workflow kind's histogram (AME, see docs/papers.md): how long a task waited on the member that
 * runs it, from its arrival there (assigned by its partition's dispatcher, or stolen in) to its start
 * on a thread: waiting for its input files and for a free thread.
 */
import type { HistogramDefinition } from '../../runtime/metrics/histogram.js';

export const TASK_WAIT: HistogramDefinition<never> = {
  name: 'tidepool_workflow_task_wait_seconds',
  help: 'How long a workflow task waited on its member, from arriving there (assigned or stolen in) to starting on a thread (inputs and a free thread).',
  buckets: [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
};
