/**
 * One finished batch's cost breakdown (seed 002 Table 1) as an event for the dashboard's view of
 * recent batches: what the service measured — dispatch (handing the batch to its job), execution (from
 * then to the last outcome), diffing in the sandboxes (Σ over its tasks) — and what the client reported
 * once it had every outcome: serialization (capture and encoding) and transfer. The client's applying of
 * the changes is only in its own `lastCosts`.
 */
import type { TimedEvent } from '../../runtime/kinds/kind-events.js';
import type { BatchCosts } from './executor.js';

export interface ClientCosts {
  serializationMs: number;
  transferMs: number;
}

/** `"ms":N` and `"dms":N` close every successful outcome (the sandbox writes them last). */
const TIMES = /"ms":(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?:,"dms":(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))?\}$/;

/** A task's time in its sandbox and its diffing time, read from its outcome's text. */
export function outcomeTimes(outcome: string): { ms: number; dms: number } {
  const m = TIMES.exec(outcome);
  return { ms: m ? Number(m[1]) : 0, dms: m?.[2] !== undefined ? Number(m[2]) : 0 };
}

export function batchCostEvent(batchId: string, jobId: string, at: number, costs: Partial<BatchCosts>, client?: ClientCosts): TimedEvent {
  const ms = (x: number | undefined) => Math.round((x ?? 0) * 100) / 100;
  return {
    id: batchId, job: jobId, at,
    values: {
      ...(client ? { serializationMs: ms(client.serializationMs), transferMs: ms(client.transferMs) } : {}),
      dispatchMs: ms(costs.dispatchMs), executionMs: ms(costs.executionMs), diffingMs: ms(costs.diffingMs),
    },
  };
}

/** The client's report, or undefined when malformed (it is only shown). */
export function clientCosts(body: unknown): ClientCosts | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const r = body as Record<string, unknown>;
  const ok = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x < 1e9;
  return ok(r.serializationMs) && ok(r.transferMs) ? { serializationMs: r.serializationMs, transferMs: r.transferMs } : undefined;
}
