/**
 * Scale plans: when a job's node count changes during a run. One grammar for every command:
 *
 *   PLAN = STEP[,STEP…]      STEP = WHEN:SIZE
 *   WHEN = a duration after the job started (`2s`, `500ms`, `1m`)   — time plans (solve, demo)
 *        | `Nit`: when iteration N begins (`60it`)                   — iteration plans (malleable run)
 *   SIZE = `+N` / `-N` (add or remove N nodes) | `N` (N nodes)
 *
 * Why two clocks: a task-pool job can grow or shrink at any moment (new nodes steal, leaving nodes
 * migrate their tasks), so its plan is in time; a malleable job changes size only at an iteration
 * boundary, where its objects are consistent, so its plan counts iterations. The rest is shared.
 */
import { parseDuration } from './durations.js';

export type PlanClock = 'time' | 'iteration';

export interface PlanStep {
  /** Milliseconds (time plans) or the iteration (iteration plans). */
  at: number;
  change: { by: number } | { to: number };
  /** The step as written, for messages. */
  text: string;
}

export const PLAN_HELP: Readonly<Record<PlanClock, string>> = {
  time: 'WHEN:SIZE[,…] with WHEN a time after the start (2s, 500ms) and SIZE +N, -N or N nodes, e.g. 2s:+2,5s:-1',
  iteration: 'WHEN:SIZE[,…] with WHEN an iteration (60it) and SIZE +N, -N or N nodes, e.g. 60it:2,120it:4',
};

/** Parses a plan; throws an Error naming the offending step. Steps come back in order of `at`. */
export function parsePlan(text: string, clock: PlanClock): PlanStep[] {
  const steps = text.split(',').map((item) => item.trim()).filter((item) => item !== '').map((item) => parseStep(item, clock));
  if (steps.length === 0) throw new Error('the plan is empty');
  steps.sort((a, b) => a.at - b.at);
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]!.at === steps[i - 1]!.at) throw new Error(`"${steps[i - 1]!.text}" and "${steps[i]!.text}" are at the same ${clock === 'time' ? 'time' : 'iteration'}`);
  }
  return steps;
}

function parseStep(item: string, clock: PlanClock): PlanStep {
  const colon = item.lastIndexOf(':');
  const when = colon < 0 ? '' : item.slice(0, colon).trim();
  const size = colon < 0 ? '' : item.slice(colon + 1).trim();
  const m = /^([+-]?)(\d+)$/.exec(size);
  if (colon < 0 || !m) throw new Error(`"${item}" is not WHEN:SIZE (${PLAN_HELP[clock]})`);
  const n = Number(m[2]);
  const change: PlanStep['change'] = m[1] === '' ? { to: n } : { by: m[1] === '-' ? -n : n };
  if ('by' in change && change.by === 0) throw new Error(`"${item}" changes nothing`);
  if ('to' in change && change.to < 1) throw new Error(`"${item}" leaves the job without nodes`);
  if (clock === 'time') {
    const ms = parseDuration(when);
    if (ms === undefined) {
      const hint = /^\d+(\.\d+)?$/.test(when) ? `: give it a unit, e.g. ${when}s` : /^\d+it$/.test(when) ? ': this plan is in time, not iterations' : '';
      throw new Error(`"${item}": "${when}" is not a time after the start${hint}`);
    }
    return { at: ms, change, text: item };
  }
  const it = /^(\d+)it$/.exec(when);
  if (!it) {
    const hint = /^\d+$/.test(when) ? `: write iteration ${when} as ${when}it` : parseDuration(when) !== undefined ? ': this plan counts iterations, not time' : '';
    throw new Error(`"${item}": "${when}" is not an iteration${hint}`);
  }
  const iteration = Number(it[1]);
  if (iteration < 1) throw new Error(`"${item}": iterations count from 1`);
  return { at: iteration, change, text: item };
}

/** The node count after each step, starting from `start` nodes; throws when a step changes nothing or leaves none. */
export function planSizes(steps: readonly PlanStep[], start: number): Array<{ step: PlanStep; from: number; to: number }> {
  let current = start;
  return steps.map((step) => {
    const to = 'to' in step.change ? step.change.to : current + step.change.by;
    if (to < 1) throw new Error(`"${step.text}" leaves the job without nodes (it has ${current} then)`);
    if (to === current) throw new Error(`"${step.text}" changes nothing (the job has ${current} node(s) then)`);
    const out = { step, from: current, to };
    current = to;
    return out;
  });
}

/** Whether every step is relative (+N/-N): such a plan needs no known start. */
export function isRelative(steps: readonly PlanStep[]): boolean {
  return steps.every((s) => 'by' in s.change);
}
