/** The applications that ship with tidepool, by the name the CLI and the benchmark use. */
import type { TaskRef } from '../../runtime/task.js';

// Sources run under tsx (.ts), the built package as JavaScript (.js).
const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const ref = (file: string): TaskRef => ({ module: new URL(`./apps/${file}${ext}`, import.meta.url).href, export: 'default' });

export const MALLEABLE_APPS: Record<string, TaskRef> = {
  stencil: ref('stencil2d'),
  wave: ref('wave2d'),
  leanmd: ref('leanmd'),
  lulesh: ref('lulesh'),
};
