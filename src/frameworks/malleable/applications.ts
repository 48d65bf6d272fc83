/** The applications that ship with tidepool, by the name the CLI and the benchmark use. */
import type { AppRef } from './malleable-app.js';

// Sources run under tsx (.ts), the built package as JavaScript (.js).
const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const ref = (file: string): AppRef => ({ module: new URL(`./apps/${file}${ext}`, import.meta.url).href, export: 'default' });

export const MALLEABLE_APPS: Record<string, AppRef> = {
  stencil: ref('stencil2d'),
  wave: ref('wave2d'),
  leanmd: ref('leanmd'),
  lulesh: ref('lulesh'),
};

/** The parameters each built-in application runs with when none are given (`tidepool malleable run`). */
export const MALLEABLE_APP_DEFAULTS: Record<string, Record<string, unknown>> = {
  stencil: { grid: 512, blocks: 8, iterations: 100 },
  wave: { grid: 512, blocks: 8, iterations: 100 },
  leanmd: { cells: [4, 4, 4], atomsPerSide: 3, steps: 20 },
  lulesh: { elements: 65_536, blocks: 32, steps: 200 },
};
