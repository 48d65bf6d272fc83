/**
 * The task pool's histograms (TASKWORK's runtime, see docs/papers.md): how long tasks run, and how long a thief waits
 * for the answer to a steal request. Registered through the job's `Metrics`, so they carry the kind.
 */
import type { Histogram, HistogramDefinition } from '../metrics/histogram.js';
import type { Metrics } from '../metrics/metrics-registry.js';

export const TASK_DURATION: HistogramDefinition<never> = {
  name: 'tidepool_task_duration_seconds',
  help: 'Run time of each completed task as its worker measured it (tasks a worker ran inline after another count each, with an equal share).',
  buckets: [0.00001, 0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
};

export const STEAL_LATENCY: HistogramDefinition<'outcome'> = {
  name: 'tidepool_steal_latency_seconds',
  help: 'From sending a steal request to its answer: "task" (a task was offered and claimed) or "empty" (the victim had nothing to give).',
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  labelNames: ['outcome'],
};

export interface TaskPoolHistograms {
  taskDuration: Histogram<never>;
  stealLatency: Histogram<'outcome'>;
}

export function taskPoolHistograms(metrics: Metrics): TaskPoolHistograms {
  return { taskDuration: metrics.histogram(TASK_DURATION), stealLatency: metrics.histogram(STEAL_LATENCY) };
}
