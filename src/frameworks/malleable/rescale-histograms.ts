/**
 * The malleable job's histograms (Malleable jobs, see docs/papers.md; the phases of its Table II): how long each rescale took, from
 * the sync point to the job ready to run again, and its phases. Recorded by the leader into the node's
 * metrics (`MemberContext.metrics`, so they carry `kind`).
 */
import type { HistogramDefinition } from '../../runtime/metrics/histogram.js';
import type { Metrics } from '../../runtime/metrics/metrics-registry.js';
import type { RescaleAck } from './runtime-options.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const RESCALE_TIME: HistogramDefinition<'change'> = {
  name: 'tidepool_malleable_rescale_seconds',
  help: 'T_rescale of each rescale of a malleable job, by change (expand, shrink, replace).',
  buckets: BUCKETS,
  labelNames: ['change'],
};

export const RESCALE_PHASE_TIME: HistogramDefinition<'phase'> = {
  name: 'tidepool_malleable_rescale_phase_seconds',
  help: 'Time of each phase of a rescale of a malleable job (lb, checkpoint, reconnect, restore).',
  buckets: BUCKETS,
  labelNames: ['phase'],
};

/** Records a rescale as its acknowledgement states it (nothing for a rescale that changed nothing). */
export function rescaleRecorder(metrics: Metrics): (ack: RescaleAck) => void {
  const total = metrics.histogram(RESCALE_TIME);
  const phases = metrics.histogram(RESCALE_PHASE_TIME);
  return (ack) => {
    if (ack.kind === 'none') return;
    total.observe(ack.tRescaleMs / 1000, { change: ack.kind });
    for (const [phase, ms] of Object.entries(ack.phases)) phases.observe(ms / 1000, { phase });
  };
}
