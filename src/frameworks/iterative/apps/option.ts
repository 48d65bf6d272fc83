/**
 * A European option priced by Monte Carlo under geometric Brownian motion, checked against the
 * Black–Scholes formula. Each path (one iteration) is simulated in a random number of exact
 * log-normal steps, 1 … maxSteps: the terminal price has exactly the same distribution whatever the
 * number of steps, while the cost of a path varies as Monte Carlo histories' do.
 */
import { defineIterative } from '../define-iterative.js';

export interface OptionParams {
  spot: number;
  strike: number;
  /** Risk-free rate (continuous, per year). */
  rate: number;
  volatility: number;
  /** Years to expiry. */
  expiry: number;
  type: 'call' | 'put';
  /** Paths take 1 … maxSteps steps. */
  maxSteps: number;
}

export interface OptionTally {
  paths: number;
  /** Sum of undiscounted payoffs and of their squares. */
  sum: number;
  sumSquares: number;
  steps: number;
}

export const OPTION_DEFAULTS: OptionParams = { spot: 100, strike: 105, rate: 0.03, volatility: 0.25, expiry: 1, type: 'call', maxSteps: 64 };

export default defineIterative<OptionTally, OptionParams>({
  name: 'european-option',
  iterate(first, count, t, ctx) {
    const { spot, strike, rate, volatility, expiry, type, maxSteps } = ctx.params;
    for (let i = first; i < first + count; i++) {
      const r = ctx.random(i);
      const steps = 1 + Math.floor(r.uniform() * maxSteps);
      const dt = expiry / steps;
      const drift = (rate - 0.5 * volatility * volatility) * dt;
      const diffusion = volatility * Math.sqrt(dt);
      let logS = Math.log(spot);
      for (let k = 0; k < steps; k++) logS += drift + diffusion * r.normal();
      const s = Math.exp(logS);
      const payoff = type === 'call' ? Math.max(s - strike, 0) : Math.max(strike - s, 0);
      t.paths++;
      t.sum += payoff;
      t.sumSquares += payoff * payoff;
      t.steps += steps;
    }
  },
  result: {
    initial: () => ({ paths: 0, sum: 0, sumSquares: 0, steps: 0 }),
    combine: (a, b) => ({ paths: a.paths + b.paths, sum: a.sum + b.sum, sumSquares: a.sumSquares + b.sumSquares, steps: a.steps + b.steps }),
  },
});

/** Standard normal distribution function (erf by Abramowitz & Stegun 7.1.26, |error| < 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/** The Black–Scholes price of a European call or put. */
export function blackScholes(p: OptionParams): number {
  const { spot: s, strike: k, rate: r, volatility: v, expiry: t } = p;
  const d1 = (Math.log(s / k) + (r + 0.5 * v * v) * t) / (v * Math.sqrt(t));
  const d2 = d1 - v * Math.sqrt(t);
  const discount = Math.exp(-r * t);
  return p.type === 'call' ? s * normalCdf(d1) - k * discount * normalCdf(d2) : k * discount * normalCdf(-d2) - s * normalCdf(-d1);
}

/** The Monte Carlo price, its standard error and the closed form. */
export function optionAnswer(p: OptionParams, t: OptionTally): { estimate: number; stderr: number; exact: number } {
  const discount = Math.exp(-p.rate * p.expiry);
  const mean = t.sum / t.paths;
  const variance = Math.max(0, t.sumSquares / t.paths - mean * mean);
  return { estimate: discount * mean, stderr: discount * Math.sqrt(variance / t.paths), exact: blackScholes(p) };
}
