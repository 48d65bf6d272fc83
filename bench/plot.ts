/**
 * SVG charts for bench/RESULTS.md, rendered headlessly with Vega-Lite (no browser, no canvas):
 * the specs are data, so a chart is a few lines and its axes, legends and scales are Vega's.
 */
import { writeFileSync } from 'node:fs';
import * as vega from 'vega';
import * as vl from 'vega-lite';

export type Spec = vl.TopLevelSpec;

export async function renderSvg(spec: Spec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export async function writeSvg(file: URL, spec: Spec): Promise<void> {
  writeFileSync(file, await renderSvg({ background: 'white', ...spec } as Spec));
}
