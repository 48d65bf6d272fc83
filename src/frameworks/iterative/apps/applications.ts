/** The Monte Carlo applications `tidepool iterate` runs, with their defaults and how to check their answer. */
import type { TaskRef } from '../../../runtime/task.js';
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
}

const ref = (file: string): TaskRef => ({ module: new URL(`./${file}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href, export: 'default' });

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
};

export const ITERATIVE_APPLICATIONS: Record<string, IterativeApplication> = {
  slab: slab as IterativeApplication,
  option: option as IterativeApplication,
};
