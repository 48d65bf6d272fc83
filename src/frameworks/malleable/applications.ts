/** The applications that ship with tidepool, by the name the CLI and the benchmark use. */
import type { AppRef } from './malleable-app.js';

/** By built-in name: each node loads its own installation's copy (runtime/worker/builtin-code.ts). */
export const MALLEABLE_APPS: Record<string, AppRef> = {
  stencil: { module: 'builtin:stencil', export: 'default' },
  wave: { module: 'builtin:wave', export: 'default' },
  leanmd: { module: 'builtin:leanmd', export: 'default' },
  lulesh: { module: 'builtin:lulesh', export: 'default' },
};

/** The parameters each built-in application runs with when none are given (`tidepool malleable run`). */
export const MALLEABLE_APP_DEFAULTS: Record<string, Record<string, unknown>> = {
  stencil: { grid: 512, blocks: 8, iterations: 100 },
  wave: { grid: 512, blocks: 8, iterations: 100 },
  leanmd: { cells: [4, 4, 4], atomsPerSide: 3, steps: 20 },
  lulesh: { elements: 65_536, blocks: 32, steps: 200 },
};
