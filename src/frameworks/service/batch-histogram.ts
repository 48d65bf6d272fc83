/**
 * The service's histogram (Task Parallelization as a Service, see docs/papers.md): a batch's latency at the service,
 * from its request's arrival to its job's end (dispatch and execution), by how it ended.
 */
import type { HistogramDefinition } from '../../runtime/metrics/histogram.js';

export const BATCH_LATENCY: HistogramDefinition<'state'> = {
  name: 'tidepool_service_batch_latency_seconds',
  help: 'A batch\'s latency at the service, from its request\'s arrival to its job\'s end (dispatch and execution), by state (done, failed, cancelled).',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  labelNames: ['state'],
};
