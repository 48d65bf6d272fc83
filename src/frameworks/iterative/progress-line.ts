/**
 * The iterative CLI's progress bar: iterations done of the total and the predicted time left, from
 * every node's figures (the threads' last measured speeds, as RUPER's remaining-time prediction).
 */
import type { NodeFigures } from './figures.js';

const BAR_WIDTH = 20;

/** `[#########...........]  1,234,567 / 2,000,000 histories (61 %)  410,000/s  ~2 s left`. */
export function progressLine(figures: ReadonlyArray<Pick<NodeFigures, 'done' | 'speeds'>>, total: number, unit: string): string {
  const done = Math.min(total, figures.reduce((a, f) => a + f.done, 0));
  const speed = figures.reduce((a, f) => a + f.speeds.reduce((x, y) => x + y, 0), 0);
  const filled = Math.floor((BAR_WIDTH * done) / total);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
  // No speed measured yet (the first reports come a tenth of Δt_pc in): no prediction.
  const left = speed > 0 ? `  ~${Math.ceil((total - done) / speed)} s left` : '';
  return `  ${bar}  ${done.toLocaleString('en')} / ${total.toLocaleString('en')} ${unit} (${Math.floor((100 * done) / total)} %)  ${Math.round(speed).toLocaleString('en')}/s${left}`;
}
