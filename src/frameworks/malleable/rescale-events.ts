/**
 * A malleable job's rescales as the dashboard draws them: one event per rescale in the leader's
 * `rescale-phases` list (published with its node's stats), its values the phases the leader measured
 * — lb, checkpoint, reconnect, restore in ms (the phases of Table II of "Towards Realizing the
 * Potential of Malleable Jobs", Gupta, Acun, Sarood, Kalé) — so each rescale is a stacked bar whose
 * height is its T_rescale. The list is the stats' `rescales`, which the durable state keeps across
 * leaders: a new leader publishes its predecessors' rescales too.
 */
import type { TimedEvent } from '../../runtime/kinds/kind-events.js';
import type { RescaleAck } from './runtime-options.js';

/** The name of the list (a kind's event lists are keyed by name on the dashboard). */
export const RESCALE_PHASES_LIST = 'rescale-phases';

/** The `index`-th rescale of the job (from 1) as a breakdown event; undefined for one that changed nothing. */
export function rescalePhaseEvent(ack: RescaleAck, index: number): TimedEvent | undefined {
  if (ack.kind === 'none') return undefined;
  const ms = (x: number) => Math.round(x * 1000) / 1000;
  return {
    id: `${index} ${ack.kind} → ${ack.nodes.length} @${ack.iteration}`,
    at: ack.startedAt ?? 0,
    values: { lb: ms(ack.phases.lb), checkpoint: ms(ack.phases.checkpoint), reconnect: ms(ack.phases.reconnect), restore: ms(ack.phases.restore) },
  };
}
