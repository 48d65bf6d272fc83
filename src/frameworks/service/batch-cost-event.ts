/**
 * One finished batch's cost breakdown (seed 002 Table 1) as an event for the dashboard's view of
 * recent batches: what the service measured — dispatch (turning the batch into a job), execution (the
 * job's wall time), diffing in the sandboxes (Σ over its tasks) — and what the client reported with
 * its await request: serialization (capture and encoding) and transfer so far. The client's applying
 * of the changes comes after and is only in its own `lastCosts`.
 */
import type { TimedEvent } from '../../runtime/kinds/kind-events.js';
import type { BatchCosts } from './executor.js';

/** The request header a client reports its side of a batch's costs in (JSON, milliseconds). */
export const CLIENT_COSTS_HEADER = 'x-tidepool-client-costs';

export interface ClientCosts {
  serializationMs: number;
  transferMs: number;
}

/** `"dms":N` closes every successful outcome (the sandbox writes it last). */
const DIFF_MS = /"dms":(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\}$/;

export function batchCostEvent(batchId: string, jobId: string, at: number, costs: Partial<BatchCosts>, outcomes: (string | undefined)[], client?: ClientCosts): TimedEvent {
  let diffingMs = 0;
  for (const o of outcomes) {
    const m = o === undefined ? null : DIFF_MS.exec(o);
    if (m) diffingMs += Number(m[1]);
  }
  const ms = (x: number | undefined) => Math.round((x ?? 0) * 100) / 100;
  return {
    id: batchId, job: jobId, at,
    values: {
      ...(client ? { serializationMs: ms(client.serializationMs), transferMs: ms(client.transferMs) } : {}),
      dispatchMs: ms(costs.dispatchMs), executionMs: ms(costs.executionMs), diffingMs: ms(diffingMs),
    },
  };
}

/** The client's report from its header, or undefined when absent or malformed (it is only shown). */
export function clientCosts(header: unknown): ClientCosts | undefined {
  if (typeof header !== 'string' || header.length > 200) return undefined;
  try {
    const r = JSON.parse(header) as Record<string, unknown>;
    const ok = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x < 1e9;
    return ok(r.serializationMs) && ok(r.transferMs) ? { serializationMs: r.serializationMs, transferMs: r.transferMs } : undefined;
  } catch {
    return undefined;
  }
}
