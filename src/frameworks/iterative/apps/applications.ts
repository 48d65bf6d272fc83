/** The Monte Carlo applications `tidepool iterate` runs, with their defaults and how to check their answer. */
import type { TaskRef } from '../../../runtime/worker/task.js';
import { optionAnswer, OPTION_DEFAULTS, type OptionParams, type OptionTally } from './option.js';
import { slabAnswer, SLAB_DEFAULTS, type SlabParams, type SlabTally } from './slab.js';

export interface Answer {
  /** What is estimated, in words. */
  quantity: string;
  estimate: number;
  stderr: number;
  /** The closed form and its name. */
  exact: number;
  closedForm: string;
}

export interface IterativeApplication<T = unknown, P = unknown> {
  name: string;
  ref: TaskRef;
  params: P;
  iterations: number;
  unit: string;
  describe(p: P): string;
  answer(p: P, tally: T): Answer;
  /** Why these parameters cannot be run (beyond the defaults' keys and types), or undefined. */
  check?(p: P): string | undefined;
}

/** By built-in name: each node loads its own installation's copy (runtime/worker/builtin-code.ts). */
const ref = (name: string): TaskRef => ({ module: `builtin:${name}`, export: 'default' });

const slab: IterativeApplication<SlabTally, SlabParams> = {
  name: 'slab-transport',
  ref: ref('slab'),
  params: SLAB_DEFAULTS,
  iterations: 2_000_000,
  unit: 'histories',
  describe: (p) => `photons through a slab of ${p.thickness} cm, μ = ${p.mu}/cm, albedo ${p.albedo}`,
  answer: (p, t) => ({ quantity: 'uncollided transmission', ...slabAnswer(p, t), closedForm: 'e^(-μx)' }),
};

const option: IterativeApplication<OptionTally, OptionParams> = {
  name: 'european-option',
  ref: ref('option'),
  params: OPTION_DEFAULTS,
  iterations: 400_000,
  unit: 'paths',
  describe: (p) => `European ${p.type}, S=${p.spot} K=${p.strike} r=${p.rate} σ=${p.volatility} T=${p.expiry}, 1–${p.maxSteps} steps a path`,
  answer: (p, t) => ({ quantity: 'price', ...optionAnswer(p, t), closedForm: 'Black–Scholes' }),
  check: (p) => (p.type === 'call' || p.type === 'put' ? undefined : `type must be "call" or "put", got ${JSON.stringify(p.type)}`),
};

export const ITERATIVE_APPLICATIONS: Record<string, IterativeApplication> = {
  slab: slab as IterativeApplication,
  option: option as IterativeApplication,
};

/**
 * An application's parameters: `given` over its defaults. A parameter it does not have, or of another
 * type than its default, is refused with its name (errors start with `where`).
 */
export function applicationParams(app: IterativeApplication, given: Record<string, unknown>, where: string): unknown {
  const defaults = app.params as Record<string, unknown>;
  for (const [key, value] of Object.entries(given)) {
    if (!Object.hasOwn(defaults, key)) throw new Error(`${where}: ${app.name} has no parameter "${key}" (its parameters: ${Object.keys(defaults).join(', ')})`);
    if (typeof value !== typeof defaults[key]) throw new Error(`${where}: ${key} must be a ${typeof defaults[key]} (like its default ${JSON.stringify(defaults[key])}), got ${JSON.stringify(value)}`);
  }
  const params = { ...defaults, ...given };
  const why = app.check?.(params);
  if (why) throw new Error(`${where}: ${why}`);
  return params;
}
